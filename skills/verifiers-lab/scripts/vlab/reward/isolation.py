"""test_reward's checks of what the environment's process did besides scoring: exits, crashes and hangs
of the worker (``vlab.env.remote`` incidents), and what it printed."""

from __future__ import annotations

from vlab.core.result import Result

_INCIDENT_HINTS = {
    "exit": "a reward function or loader must return a value, never call sys.exit/os._exit",
    "crash": "the process died (a segfault or a kill): find the native call or memory use in the reward",
    "timeout": (
        "make the reward return promptly; a blocking call (time.sleep, a synchronous client) inside async def holds "
        "the whole event loop: await an async one, or bound it yourself"
    ),
}
_LOAD_TIMEOUT_HINT = (
    "find what blocks at import or in load_environment (a network call, input(), a lock); "
    "if it is a slow dataset download, raise --load-timeout"
)


def isolation_checks(
    result: Result, incidents: list[dict], output: dict | None, recovered: set[str] = frozenset()
) -> None:
    """What the environment's process did besides scoring: exits, crashes, hangs, printing. A hang is named on the
    evidence of the call's own time (``vlab.env.evidence``): it waited, or had its bound on a CPU. A call the machine
    starved is retried alone; if all its functions then returned (``recovered``), it was the machine: a warning."""
    for kind in ("exit", "crash", "timeout"):
        seen = [i for i in incidents if i["kind"] == kind]
        if seen:
            loading = seen[0]["during"] == "loading the environment"
            hint = _LOAD_TIMEOUT_HINT if kind == "timeout" and loading else _INCIDENT_HINTS[kind]
            running = seen[0].get("functions") or []
            where = f" in {', '.join(running)}" if running else ""
            message = f"{seen[0]['reason']} while {seen[0]['during']}{where} ({len(seen)}x)"
            if kind == "timeout" and all(i.get("functions") and set(i["functions"]) <= recovered for i in seen):
                result.warn(
                    f"worker_{kind}",
                    f"{message}, then returned when scored again alone: the machine starved it, not the reward "
                    "(those probes' scores are the retry's)",
                    "run test_reward again on a quieter machine to see the reward's own speed",
                )
                continue
            result.fail(f"worker_{kind}", message, hint)
    if output:
        result.data["user_output"] = output
        result.warn(
            "user_output",
            f"the environment printed {output['bytes']} bytes to stdout/stderr (kept out of this report's stdout)",
            "use logging instead of print in reward functions; the excerpt is in user_output",
        )
