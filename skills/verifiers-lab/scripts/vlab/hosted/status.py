"""submit_training --status RUN_ID: a submitted run's state and progress through the prime CLI.

A run it could not read is never reported with a made-up state: an id the platform does not
know is bad input (exit 2, as in diagnose_run), a CLI that hangs a timeout (exit 4), an answer
without a status a platform failure (exit 4).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vlab.core.result import EXIT_EXTERNAL, EXIT_USAGE, Result
from vlab.hosted import prime

if TYPE_CHECKING:
    from vlab.hosted.request import SubmitRequest

TERMINAL_FAILED = {"FAILED", "STOPPED"}


def run_status(req: SubmitRequest, result: Result) -> None:
    """The run's state and progress through `prime train get/progress`; a run it could not read is never reported."""
    run_id = req.status
    result.data["run_id"] = run_id
    result.data["dashboard_url"] = prime.dashboard_url(run_id)
    got = prime.train_get(run_id, timeout=req.timeout)
    run = got.data.get("run") if got.ok and isinstance(got.data, dict) else None
    if not got.ok or not isinstance(run, dict) or not isinstance(run.get("status"), str):
        _status_failed(result, run_id, got, req.timeout)
        return
    status = run["status"]
    result.data["status"] = status
    result.data["run"] = {
        k: run.get(k)
        for k in (
            "id",
            "name",
            "status",
            "base_model",
            "max_steps",
            "batch_size",
            "rollouts_per_example",
            "created_at",
            "started_at",
            "completed_at",
            "error_message",
        )
        if k in run
    }
    progress = prime.train_progress(run_id, timeout=req.timeout)
    latest = None
    if progress.ok and isinstance(progress.data, dict):
        latest = progress.data.get("latest_step")
        result.data["progress"] = progress.data
    max_steps = run.get("max_steps")
    where = f"step {latest if latest is not None else '?'}" + (f"/{max_steps}" if max_steps else "")
    if status in TERMINAL_FAILED:
        result.fail(
            "run-status",
            f"run {run_id} is {status} at {where}"
            + (f": {run.get('error_message')}" if run.get("error_message") else ""),
            f"read `prime train logs {run_id}`; fix the config and submit again",
        )
    else:
        result.passed("run-status", f"run {run_id} is {status} at {where}")
    if not progress.ok:
        result.warn("run-progress", f"could not read progress: {progress.message}", "retry in a minute")
    result.summary = f"run {run_id}: {status} ({where})"
    result.step(f"prime train logs {run_id}")
    result.step(f"open {result.data['dashboard_url']}")


def _status_failed(result: Result, run_id: str, got: prime.PrimeCall, timeout: float) -> None:
    """--status could not read the run: an id the platform does not know is bad input (exit 2, as in
    diagnose_run), a hanging CLI a timeout (4), never a run reported with an unknown status."""
    if got.state in ("not_found", "rejected"):
        message, hint, code = (
            f"no run {run_id} on the platform: {got.message}",
            "check the id with `prime train list`",
            EXIT_USAGE,
        )
    elif got.state == "timeout":
        message, hint, code = (
            f"could not get run {run_id}: {got.message}",
            f"raise --timeout (now {timeout:g} s), or check the network",
            EXIT_EXTERNAL,
        )
    elif got.ok:  # rc 0 but no run record with a status: never guess the state
        message, hint, code = (
            f"`prime train get {run_id}` answered without a run status",
            "run `prime train get RUN_ID` yourself; the CLI and the platform may disagree on the format",
            EXIT_EXTERNAL,
        )
    else:
        message, hint, code = (
            f"could not get run {run_id}: {got.message}",
            "check the network and `prime whoami`",
            got.exit_code,
        )
    result.fail("run-status", message, hint, exit_code=code)
    result.summary = f"run {run_id}: {message}"
