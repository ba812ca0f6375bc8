"""The rehearsal of a judge-scored environment (see ``vlab.hosted.rehearse``).

A judge environment's reward calls an LLM judge over the network. The rehearsal never calls the
config's judge: offline it cannot be reached, and online it would need the key and cost money. Its
scoring runs against test_reward's loopback stub judge instead (``vlab.reward.judge``: the same
server, given to the package by the same arguments, judge_base_url / judge_api_key_var /
judge_model), which also counts the calls each scored rollout makes. The config's own judge
settings are checked apart (``settings_check``: the key by variable NAME only, its value never
read); the judge calls a training step makes are projected from the measured calls per rollout
and the config's batch size (``cost_check``); the dollar cost needs the user's prices.

An environment is judge-scored when its config passes one of the judge arguments, or its
installed code names ``judge_base_url`` (the argument through which the stub can stand in).
"""

from __future__ import annotations

import contextlib
import os
import re
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

from vlab.core.result import Check
from vlab.hosted.rehearse_common import EPS, Source, _check, module_name

JUDGE_ARGS = ("judge_base_url", "judge_api_key_var", "judge_model")  # the names reward.judge.env_args gives
DEFAULT_BATCH = 128  # prime-rl's orchestrator.batch_size when the config leaves it out
_DEFAULT = re.compile(r"\b(judge_base_url|judge_api_key_var|judge_model)\s*:\s*str\s*=\s*[\"']([^\"'\n]*)[\"']")
_STUB = "against the loopback stub judge (a stand-in that grades by word overlap with the reference; no key, no cost)"


@dataclass(frozen=True)
class JudgePlan:
    names: frozenset[str]  # the judge arguments the stub replaces: those the code names or the config passes
    defaults: dict[str, str]  # the package's own defaults as its code writes them (best effort)
    folder: Path | None


def package_text(wheel, folder: Path | None, module: str) -> str:
    """The package's Python source: the wheel's modules (what the run installs), else the source folder's."""
    if wheel is not None:
        with contextlib.suppress(OSError, zipfile.BadZipFile), zipfile.ZipFile(wheel.path) as zf:
            names = [n for n in zf.namelist() if n.endswith(".py") and ".dist-info/" not in n]
            return "\n".join(zf.read(n).decode("utf-8", "replace") for n in names)
    if folder is None:
        return ""
    files = [*folder.glob("*.py"), *(folder / module).glob("**/*.py")]
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in files if p.is_file())


def plan_for(src: Source, wheel, folder: Path | None) -> JudgePlan | None:
    """A JudgePlan for a judge-scored environment, None for any other."""
    text = package_text(wheel, folder, module_name(src.env_id))
    passed = {a for a in JUDGE_ARGS if a in src.args}
    if "judge_base_url" not in text and not passed:
        return None
    named = {a for a in JUDGE_ARGS if a in text} | passed
    defaults: dict[str, str] = {}
    for arg, value in _DEFAULT.findall(text):
        defaults.setdefault(arg, value)
    return JudgePlan(frozenset(named), defaults, folder)


def _masked_url(url: str) -> str:
    return re.sub(r"//[^/@\s]*@", "//***@", url)  # credentials written into a URL are never shown


def settings_check(src: Source, plan: JudgePlan, target: str) -> Check:
    """rehearse-judge: the judge model, endpoint and key variable the config names (the key by name only)."""
    from vlab.hosted.rules_secrets import is_var_name

    parts, warned, bad_url, fixes = [], False, False, []
    for arg in JUDGE_ARGS:
        value = src.args.get(arg)
        if value is None:
            default = plan.defaults.get(arg)
            parts.append(f"{arg} not named (the package's default{f' {default!r}' if default else ''} applies)")
            fixes.append(f"name {arg} in the config (--env-arg {arg}=...), so the run does not depend on a default")
            warned = True
        elif arg == "judge_api_key_var" and not is_var_name(value):
            parts.append(f"{arg} does not name a variable (its value is not shown; see judge-key)")
            warned = True
        elif arg == "judge_base_url" and not re.match(r"^https?://", str(value)):
            parts.append(f"{arg} = {_masked_url(str(value))!r} is not an http(s) URL")
            bad_url = True
        else:
            parts.append(f"{arg} = {_masked_url(value) if arg == 'judge_base_url' else value!r}")
    var = src.args.get("judge_api_key_var", plan.defaults.get("judge_api_key_var"))
    if is_var_name(var):
        present = bool(os.environ.get(var))  # presence only: the value is never read into anything
        parts.append(f"{var} is {'' if present else 'not '}set on this machine")
        warned |= not present  # reported, never fatal: the run reads it where it runs
        fixes.append(
            f"add a secret named {var} to the environment on the Environments Hub (Hosted Training injects it)"
            if target == "hosted"
            else f"export {var} where the prime-rl orchestrator runs"
        )
    if bad_url:
        fixes.insert(0, "give judge_base_url the judge's http(s) endpoint, e.g. https://api.openai.com/v1")
    message = (
        f"{src.where} ({src.env_id}): judge-scored; the config's judge: {'; '.join(parts)}. The rehearsal scores "
        f"{_STUB}, so these settings are checked here, never called"
    )
    status = "fail" if bad_url else "warn" if warned else "pass"
    return _check(status, message, "" if status == "pass" else "; ".join(dict.fromkeys(fixes)), id="rehearse-judge")


@contextlib.contextmanager
def stub_judge(src: Source, plan: JudgePlan):
    """(server, arguments): the config's arguments with the judge ones pointed at a running stub judge."""
    from vlab.reward.judge import LIMIT_ARG, JudgeSettings, env_args, start_server

    settings = JudgeSettings(judge="stub")
    server = start_server(settings)
    try:
        given = env_args(settings, server, str(plan.folder) if plan.folder else None)
        keep = {k: v for k, v in given.items() if k in plan.names or k == LIMIT_ARG}
        yield server, {**src.args, **keep}
    finally:
        server.stop()


def _error(score) -> str | None:
    err = score.scoring_error or next(iter((score.errors or {}).values()), None)
    return f"{err.type}: {err.message[:200]}" if err else None


def measure(env, rows: list, server, timeout: float) -> dict:
    """The gold as the reply, once per row: the judge calls and tokens one scored rollout makes."""
    from vlab.reward import probes as rp

    items = [(row, str(g)) for row in rows if (g := rp.gold_value(row.answer)) is not None and str(g).strip()]
    for _ in range(2):  # a first scoring that errored before any call (a cold start on a busy machine): again
        server.reset()
        scores = env.score_sync(items, timeout, 16) if items else []
        usage = server.usage()
        errors = [(row.index, e) for (row, _), s in zip(items, scores) if (e := _error(s))]
        if usage["calls"] or not errors:
            break
    n, calls = len(items), usage["calls"]
    return {
        "scored_against": "the loopback stub judge",
        "rollouts": n,
        "calls": calls,
        "calls_per_rollout": round(calls / n, 3) if n else None,
        "prompt_tokens_per_call": round(usage["prompt_tokens"] / calls, 1) if calls else None,
        "completion_tokens_per_call": round(usage["completion_tokens"] / calls, 1) if calls else None,
        "errors": len(errors),
        "first_error": f"row {errors[0][0]}: {errors[0][1]}" if errors else None,
    }


def gold_check(src: Source, scored: dict, n_rows: int, rewards: list[str], full, measured: dict, folder) -> Check:
    """rehearse-gold of a judge environment: the stub's verdicts, judge failures named."""
    from vlab.core.invocation import command
    from vlab.hosted.rehearse_common import gold_check as plain_gold_check

    base = plain_gold_check(src, scored, n_rows, rewards, full)
    if base.status == "pass" or not scored:
        return replace(base, message=f"{base.message}, {_STUB}") if base.status == "pass" else base
    tried = f"{command('test_reward')} {folder or 'environments/<module>/'} --judge stub"
    values = [b for _, b in scored.values() if b is not None]
    if values and max(values) > EPS:  # the stub grades words, not substance: a short reference can get less
        return replace(
            base,
            status="warn",
            message=f"{base.message}, {_STUB}",
            hint=f"the stub gives less to references with few words of 3+ letters; {tried} shows each probe's "
            "score (a real judge grades substance)",
        )
    named = f"{src.where} ({src.env_id})"
    if not measured.get("calls"):
        return _check(
            "fail",
            f"{named}: the gold earns no reward and no judge call reached the stub judge given as judge_base_url"
            + (f" ({measured['first_error']})" if measured.get("first_error") else ""),
            "take the judge's endpoint from the judge_base_url argument, as the judge templates do, so the "
            f"rehearsal and `{tried}` can stand in for the judge",
            id="rehearse-gold",
        )
    if measured.get("first_error"):
        return _check(
            "fail",
            f"{named}: the judge reward raised on {measured['errors']} of {measured['rollouts']} gold replies "
            f"scored {_STUB}: {measured['first_error']}",
            f"`{tried}` names the failing step (the judge prompt, its verdict parsing)",
            id="rehearse-gold",
        )
    return _check(
        "fail",
        f"{named}: the gold earns no reward on any of {len(scored)} rows, scored {_STUB} "
        f"({measured['calls']} judge calls answered)",
        f"{tried} shows each probe's score: the answer column or the judge prompt's reference field is wrong",
        id="rehearse-gold",
    )


def _train_share(plain: dict, where: str) -> float | None:
    """A train source's share of a step's rollouts: by ratio when every train source has one; None: unknown."""
    orch = plain.get("orchestrator") if isinstance(plain.get("orchestrator"), dict) else {}
    train = orch.get("train") if isinstance(orch.get("train"), dict) else {}
    sources = [s for s in train.get("source") or [] if isinstance(s, dict)]
    found = re.search(r"\[(\d+)\]$", where)
    if not found or int(found.group(1)) >= len(sources):
        return None
    if len(sources) == 1:
        return 1.0
    ratios = [s.get("ratio") for s in sources]
    if all(isinstance(r, (int, float)) and not isinstance(r, bool) and r > 0 for r in ratios):
        return ratios[int(found.group(1))] / sum(ratios)
    return None


def _calls(n: float) -> str:
    return f"{n:g} judge call" + ("" if n == 1 else "s")


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def cost_check(plain: dict, tried: list[dict]) -> tuple[Check, dict] | None:
    """rehearse-judge-cost: judge calls per training step for the config's batch size, from the measured
    calls per rollout; the dollar cost needs the user's prices (test_reward --judge-price-in/-out)."""
    from vlab.core.invocation import command

    judged = [t for t in tried if (t.get("judge") or {}).get("calls_per_rollout") is not None]
    train = [t for t in judged if t["where"].startswith("orchestrator.train.")]
    if not judged:
        return None
    orch = plain.get("orchestrator") if isinstance(plain.get("orchestrator"), dict) else {}
    batch = _int(orch.get("batch_size")) or DEFAULT_BATCH
    group = _int(orch.get("group_size"))
    shape = f" ({batch // group} prompts x group_size {group})" if group and batch % group == 0 else ""
    rows, total, bound = [], 0.0, False
    for t in train:
        judge = t["judge"]
        share = _train_share(plain, t["where"])
        bound |= share is None
        per_step = judge["calls_per_rollout"] * batch * (1.0 if share is None else share)
        total += per_step
        rows.append(
            {
                "where": t["where"],
                "env_id": t["env_id"],
                "calls_per_rollout": judge["calls_per_rollout"],
                "rollouts_measured": judge["rollouts"],
                "share_of_step": None if share is None else round(share, 4),
                "calls_per_step": round(per_step, 1),
                "prompt_tokens_per_call": judge["prompt_tokens_per_call"],
            }
        )
    if bound:  # several sources without ratios: the step's share of each is unknown
        total = max((r["calls_per_step"] for r in rows), default=0.0)
    data = {
        "batch_size": batch,
        "group_size": group,
        "calls_per_step": round(total, 1) if train else None,
        "calls_per_step_is_upper_bound": bound,
        "sources": rows,
        "measured_against": "the loopback stub judge, the gold as the reply (tokens: 4 characters a token)",
        "usd_per_step": None,
        "prices": "needed: the judge's USD per million prompt and completion tokens",
    }
    folder = next((t.get("folder") for t in judged if t.get("folder")), None) or "environments/<module>/"
    hint = (
        "dollars per step = calls x (prompt tokens x USD per 1M in + completion tokens x USD per 1M out) / 1e6 at "
        f"your judge's prices; `{command('test_reward')} {folder} --judge stub --judge-batch-size {batch} "
        "--judge-price-in USD --judge-price-out USD` computes it"
    )
    if not train:
        listed = ", ".join(f"{t['env_id']} {_calls(t['judge']['calls_per_rollout'])} per rollout" for t in judged)
        return _check(
            "pass",
            f"judge-scored eval source(s) only: the judge is called at every eval ({listed}); "
            "the dollar cost needs your judge's prices",
            hint,
            id="rehearse-judge-cost",
        ), data
    if not any(r["calls_per_rollout"] for r in rows):
        return _check(
            "warn",
            "no judge call reached the stub judge while the gold was scored, so the judge calls per step are unknown",
            "take the judge's endpoint from the judge_base_url argument, as the judge templates do",
            id="rehearse-judge-cost",
        ), data
    each = "; ".join(
        f"{r['env_id']}: {_calls(r['calls_per_rollout'])} per rollout x "
        + (
            f"batch_size {batch} rollouts{shape}"
            if r["share_of_step"] in (None, 1.0)
            else f"{r['share_of_step']:.0%} of batch_size {batch}"
        )
        + (
            f", ~{r['prompt_tokens_per_call']:.0f} prompt tokens a call with the gold as the reply"
            if r["prompt_tokens_per_call"]
            else ""
        )
        for r in rows
    )
    message = (
        f"judge calls per training step: {'at most ' if bound else ''}{total:,.0f} ({each}), measured in the "
        "rehearsal against the loopback stub judge"
        + ("; eval sources call the judge at every eval too" if len(judged) > len(train) else "")
        + "; the dollar cost needs your judge's prices"
    )
    return _check("pass", message, hint, id="rehearse-judge-cost"), data
