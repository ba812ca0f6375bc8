"""The config's token budget (submit_training): does ``seq_len`` hold each train source's turns?

A multi-turn or tool rollout is trained as one sequence of at most ``seq_len`` tokens: the prompt,
every model turn and every tool reply between two turns. The numbers are the config's own:

- ``seq_len`` (top-level; prime-rl's default 2048 when unset, ``document.config_seq_len``);
- the tokens per model turn: the source's ``sampling.max_completion_tokens``, else
  ``[orchestrator.train.sampling]``'s;
- the turn limit: the environment's own as the rehearsal loaded it with the config's arguments
  (``Capabilities.max_turns``: a v1 taskset's ``task.max_turns``), else the arguments' ``max_turns``
  / ``task.max_turns``; a single-turn environment takes one turn;
- the prompt: the longest of the rehearsed rows, the tool definitions the model is offered included
  (``rehearse_load.size_rollout``); a tool reply is assumed at ``TOOL_OUTPUT_TOKENS``.

Where the user named no seq_len (no ``--seq-len``, none in the starting file: the template's 2048), a
seq_len that cannot hold a source's turns is not a failure: ``config_budget`` returns the one that holds
every train source (``Budget.fitting_seq_len``: the sum rounded up to a multiple of 1024), checks the
sources against it and says so in a ``seq-len`` check; submit_training writes it into the config.

Without a rehearsal (``--no-rehearse``, or a load that failed) only a turn limit the arguments name is
checked, against an assumed prompt; an unknown turn limit is a skip that says so (the environment's
code is never imported here). The arithmetic and the verdict are ``train.turns``' (``Budget``,
``check_config_budget``): the same sum test_reward ``--seq-len`` and local_train's hand-off name.
"""

from __future__ import annotations

from typing import Any

from vlab.core.result import Result
from vlab.hosted.document import config_seq_len, get
from vlab.inspect.references import budget_verdict
from vlab.train.memory import DEFAULT_PROMPT_TOKENS
from vlab.train.turns import TOOL_OUTPUT_TOKENS, Budget, check_config_budget, max_turns

SEQ_FLAG = "--seq-len"


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _turns_key(args: dict, loaded: bool) -> str:
    """Where the turn limit is set: the source's ``max_turns`` argument, or a v1 taskset's ``task.max_turns``."""
    v1 = "max_turns" not in args and (loaded or isinstance(args.get("task"), dict))
    return ("task.max_turns" if v1 else "max_turns") + " in the source's env.taskset arguments"


def source_budget(
    result: Result, where: str, env_id: str, args: dict, source: dict, plain: dict, rollout, rehearsing: bool = True
) -> dict:
    """One train source's ``token-budget`` check; returns its numbers for ``data.token_budget``."""
    seq_len = config_seq_len(plain)
    own = get(source, "sampling.max_completion_tokens")
    tokens = own if own is not None else get(plain, "orchestrator.train.sampling.max_completion_tokens")
    named = f"{where} ({env_id})"
    record: dict[str, Any] = {"where": where, "env_id": env_id, "seq_len": seq_len, "turn_tokens": tokens}
    if not _positive(seq_len) or not _positive(tokens):  # the completion-tokens rule names what is wrong
        result.skip(
            "token-budget",
            f"{named}: not checked: seq_len or max_completion_tokens is not set to a positive integer",
            "set seq_len and [orchestrator.train.sampling] max_completion_tokens",
        )
        return record
    tokens_key = f"{where}.sampling.max_completion_tokens" if own is not None else "--max-tokens, max_completion_tokens"
    refs = rollout.get("references") if rollout else _file_references(env_id, args)
    completion_check(result, named, tokens, tokens_key, refs)
    arg_turns = max_turns(args)
    loaded = rollout.get("max_turns") if rollout else None
    if rollout and not rollout.get("multi_turn") and arg_turns is None:
        turns, limit = 1, "one turn (a single-turn environment)"
    elif loaded is not None:
        turns = loaded
        limit = f"max_turns={loaded} turns" + ("" if arg_turns == loaded else " (the environment's own, as loaded)")
    elif arg_turns is not None:
        turns, limit = arg_turns, f"max_turns={arg_turns} turns"
    else:
        turns, limit = None, ""
    if rollout:
        prompt = rollout["prompt_tokens"]
        sizes = (
            "prompt: the longest rehearsed row"
            + (", the offered tools included" if rollout.get("tools_counted") else ", tool definitions not counted")
            + f", {rollout.get('counted_by', 'estimated')}; a tool reply assumed {TOOL_OUTPUT_TOKENS}"
        )
    else:
        prompt = DEFAULT_PROMPT_TOKENS
        sizes = f"prompt assumed {prompt} tokens and a tool reply {TOOL_OUTPUT_TOKENS}: the environment was not loaded"
    record.update({"turns": turns, "prompt_tokens": prompt, "output_tokens": TOOL_OUTPUT_TOKENS})
    budget = Budget(seq_len, tokens, turns or 1, prompt, TOOL_OUTPUT_TOKENS)
    if turns is None and rollout:  # loaded, multi-turn, and nothing stops it
        result.warn(
            "token-budget",
            f"{named}: a multi-turn environment with no turn limit: seq_len {seq_len} holds about {budget.fit} "
            f"turn(s) ({sizes}); a longer rollout is cut before its final answer",
            f"set a turn limit that fits ({_turns_key(args, True)})",
        )
        return record
    if turns is None:
        result.skip(
            "token-budget",
            f"{named}: not checked: the turn limit is unknown (no max_turns argument, and the environment was not "
            "loaded by a rehearsal)",
            (
                "once the rehearsal loads the environment (fix the failed rehearse checks) it is checked"
                if rehearsing
                else "let the rehearsal load the environment (drop --no-rehearse)"
            )
            + ", or name the limit in the source's env.taskset arguments (max_turns, or task.max_turns for a v1 taskset)",
        )
        return record
    record.update({"needed": budget.needed(), "fitting_seq_len": budget.fitting_seq_len(), "turns_named": limit})
    check_config_budget(result, named, budget, limit, sizes, (SEQ_FLAG, tokens_key, _turns_key(args, bool(rollout))))
    return record


def _file_references(env_id: str, args: dict) -> dict | None:
    """Without a rehearsal: the references of the data file the arguments name (from the current folder, or the
    environment's folder here), as the rehearsal reads it."""
    from vlab.hosted.rehearse import RehearseOptions, find_folder
    from vlab.hosted.rehearse_load import data_file_records
    from vlab.inspect.references import completion_budget

    folder = find_folder(env_id, RehearseOptions())
    records = data_file_records(args, str(folder) if folder else None)
    budget = completion_budget(records) if records else None
    return budget.to_dict() if budget else None


def completion_check(result: Result, named: str, tokens: int, key: str, refs: dict | None) -> None:
    """completion-budget: a warning when max_completion_tokens is below what the data's references need (the
    rehearsal's figures, ``inspect.references``); nothing to say without long references."""
    if not refs:
        return
    cuts, said = budget_verdict(refs, tokens)
    said = f"{named}: max_completion_tokens = {tokens}; {said}"
    if cuts:
        result.warn(
            "completion-budget",
            said + ": the budget cuts a typical reply before its answer, and every cut rollout scores 0",
            f"raise max_completion_tokens to {refs['needed_completion_tokens']} ({key}; seq_len with it), or train on "
            "shorter problems",
        )
    else:
        result.passed("completion-budget", said)


def config_budget(result: Result, plain: dict, rehearsing: bool = True, choose: bool = False) -> int | None:
    """A ``token-budget`` check for each train source, from the config and what the rehearsal (if it ran)
    recorded in ``result.data["rehearsal"]``; the numbers go to ``result.data["token_budget"]``.

    ``choose``: the user named no seq_len, so one that cannot hold a source's turns is replaced by the
    smallest that holds them all (returned, and said in a ``seq-len`` check); None when the config's stands."""
    from vlab.hosted.gate import _sources, source_id_and_args

    rehearsal = result.data.get("rehearsal") or {}
    rollouts = {s.get("where"): s.get("rollout") for s in rehearsal.get("sources", []) if isinstance(s, dict)}
    train = []
    for where, source in _sources(plain):
        env_id, args, legacy = source_id_and_args(source)
        if where.startswith("orchestrator.train.") and env_id and not legacy:
            train.append((where, env_id, args, source))  # eval rollouts are not trained; legacy blocks not loaded

    def check_all(into: Result, doc: dict) -> list[dict]:
        return [source_budget(into, w, e, a, s, doc, rollouts.get(w), rehearsing) for w, e, a, s in train]

    chosen = None
    if choose:
        seq_len = config_seq_len(plain)
        short = [r for r in check_all(Result(result.tool), plain) if r.get("needed", 0) > seq_len]
        if short and _positive(seq_len):
            chosen = max(seq_len, *(r["fitting_seq_len"] for r in short))
            plain = {**plain, "seq_len": chosen}
            widest = max(short, key=lambda r: r["needed"])
            result.passed(
                "seq-len",
                f"seq_len = {chosen}, chosen because none was named: the default {seq_len} cannot hold {widest['where']} "
                f"({widest['env_id']})'s {widest['turns_named']} ({widest['needed']} tokens), rounded up to a "
                f"multiple of 1024; pass {SEQ_FLAG} N to set your own (one that cannot hold the turns fails)",
            )
    result.data["token_budget"] = check_all(result, plain)
    return chosen
