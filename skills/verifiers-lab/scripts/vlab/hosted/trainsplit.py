"""submit_training's ``train-split``: a train source on a test or validation (dev) split fails unless the user says it
is meant (``--train-on-eval-split``).

The evidence, per train source: its arguments (``dataset_split = "test"``, a file named ``test.jsonl``,
``math_test.parquet`` or ``NQ-open.dev.jsonl``: the naming rules are ``inspect.splits``'), and what the rehearsal
loaded with them (most rows' ids starting ``test/``, a ``split`` column reading test: ``rehearse_load``). Arguments
meant for held-out data (``eval_*``, ``test_*``) are not read, and eval sources are never checked: evaluating on a
test split is what it is for.
"""

from __future__ import annotations

from vlab.core.result import Result
from vlab.inspect.splits import args_split_evidence

FLAG = "--train-on-eval-split"
WORDS = {"test": "a test split", "validation": "a validation (dev) split"}


def check_train_split(result: Result, plain: dict, allowed: bool) -> None:
    """One ``train-split`` check over the config's train sources (see the module's docstring)."""
    from vlab.hosted.gate import _sources, source_id_and_args

    rehearsal = result.data.get("rehearsal") or {}
    loaded = {s.get("where"): s for s in rehearsal.get("sources", []) if isinstance(s, dict)}
    found: list[tuple[str, str, str]] = []  # (where (env id), split, evidence)
    checked = 0
    for where, source in _sources(plain):
        if not where.startswith("orchestrator.train."):
            continue
        env_id, args, _ = source_id_and_args(source)
        checked += 1
        evidence, _ = args_split_evidence(args)
        evidence += [tuple(e) for e in (loaded.get(where, {}).get("split_evidence") or [])]
        for split, text in evidence:
            found.append((f"{where} ({env_id})", split, text))
    if not checked:
        return
    if not found:
        result.passed(
            "train-split", f"no train source names a test or dev split ({checked} source(s): arguments, rehearsed ids)"
        )
        return
    said = "; ".join(f"{where}: {WORDS[split]} ({text})" for where, split, text in found)
    if allowed:
        result.warn(
            "train-split",
            f"training on {said}, as {FLAG} says is meant: its scores on that benchmark say nothing afterwards",
            "evaluate on other data than the rows trained on",
        )
        return
    result.fail(
        "train-split",
        f"a train source is {said}: training on it spoils every evaluation on that benchmark and leaves no "
        "held-out rows to evaluate on",
        f'train on the train split (its file, or dataset_split="train"), and evaluate on the test or dev split; '
        f"if training on it is meant (e.g. a dataset with no other split), pass {FLAG}",
    )
