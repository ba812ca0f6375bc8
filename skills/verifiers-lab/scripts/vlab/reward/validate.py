"""The environment's own model-free check of its rows (a v1 task's ``validate()``, what vf-validate runs).

A taskset that defines ``validate()`` says what a sound row is (the classification template: the
reference label is one of the labels offered). test_reward runs it on the checked rows and fails
naming the rows it rejects. It is called the way ``vf-validate --runtime.type subprocess`` calls it (a
fresh local runtime, the task's ``setup`` first), so a check that reads or runs files really runs; a
row it raises on, or a task that needs a container, is a warning (not checked here).
"""

from __future__ import annotations

from vlab.core.result import Result
from vlab.env import Row

SHOWN = 10


def check_validate(result: Result, env, scope: list[Row], timeout: float) -> None:
    verdicts = env.validate([r.index for r in scope], timeout)
    if verdicts is None:
        return
    rejected = [v["index"] for v in verdicts if v["valid"] is False]
    errors = [v for v in verdicts if v.get("error")]
    checked = sum(1 for v in verdicts if v["valid"] is not None)
    result.data["validate"] = {"rows": len(verdicts), "rejected": rejected[:100], "errors": len(errors)}
    if rejected:
        ids = ", ".join(map(str, rejected[:SHOWN])) + (" ..." if len(rejected) > SHOWN else "")
        result.fail(
            "validate",
            f"the taskset's own validate() rejects {len(rejected)}/{len(verdicts)} checked rows (example_id {ids}): "
            "vf-validate fails them too, and no reply can earn their reward",
            "read the task's validate() for what it requires of a row, and fix the data or the environment's "
            "loading (for labels: each gold one of the labels offered)",
        )
    elif errors:
        result.warn(
            "validate",
            f"the taskset's validate() could not check {len(errors)}/{len(verdicts)} rows in a local runtime: "
            f"{errors[0]['error']}",
            "fix what it raised, or run vf-validate with the runtime the task needs (docker, prime) on those rows",
        )
    elif checked:
        result.passed("validate", f"the taskset's own validate() accepts all {checked} checked rows")
