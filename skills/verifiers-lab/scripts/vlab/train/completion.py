"""local_train's ``completion_budget``: ``sampling.max_completion_tokens`` against the data's own references.

The data file the environment arguments name (``dataset_path`` and the like, looked up as test_reward looks it up:
``reward.data_file``) is read for its worked solutions, reference programs and long answers
(``inspect.references``); a budget below what a reply needs to write one out warns: every rollout cut before its
answer scores 0. Without such a file, or without long references, nothing is said.
"""

from __future__ import annotations

from typing import Any

from vlab.core.result import Result, UsageError
from vlab.inspect.references import MAX_RECORDS, budget_verdict, completion_budget


def check_completion_budget(env_id: str | None, env_args: dict[str, Any], tokens: int, result: Result) -> None:
    from vlab.inspect.readers import read_file
    from vlab.reward.data_file import data_paths

    if not env_id:
        return
    try:
        paths = data_paths(env_args or {}, env_id)
    except UsageError:
        return
    for path in paths:
        try:
            records = read_file(path, MAX_RECORDS).rows
        except (UsageError, OSError, ValueError):
            continue
        budget = completion_budget(records)
        if budget is None:
            return
        cuts, said = budget_verdict(budget.to_dict(), tokens)
        said = f"sampling.max_completion_tokens = {tokens}; in {path.name}, {said}"
        if cuts:
            result.warn(
                "completion_budget",
                said + ": the budget cuts a typical reply before its answer, and every cut rollout scores 0",
                f"raise sampling.max_completion_tokens to {budget.needed} (--set sampling.max_completion_tokens="
                f"{budget.needed}; model.seq_len with it), or train on shorter problems",
            )
        else:
            result.passed("completion_budget", said)
        return
