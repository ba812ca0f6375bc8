"""The human report of test_reward: the tables drawn above the checks (rich when available, plain text otherwise)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vlab.core.result import Result

if TYPE_CHECKING:  # checks pulls in the environment loader; test_reward --help should not wait for it
    from vlab.reward.request import TestRewardRequest


def render(result: Result, console: Any, request: TestRewardRequest, outcome: Any = None) -> None:
    """Tables before the checks: mean reward per probe and function, then disagreeing labelled rows."""
    env = result.data.get("environment") or {}
    names = [f["name"] for f in env.get("reward_functions", [])]
    timing = result.data.get("timing") or {}
    fmt = lambda v: "-" if v is None else (f"{v:.3g}" if isinstance(v, float) else str(v))  # noqa: E731
    tables = []
    board = result.data.get("scoreboard")
    if board and board.get("families"):
        mark = lambda e: (  # noqa: E731
            ("ok" if e["close_to_gold"] else "BELOW GOLD")
            if e["should_be"] == "gold"
            else ("CLOSE TO GOLD" if e["close_to_gold"] else "")
        )
        judged = board.get("function") or "total"
        rows = [[e["family"], e["n"], e["total"], e["correctness"], mark(e)] for e in board["families"]]
        tables.append(("scoreboard: mean reward per probe family", ["probe", "n", "total", judged, "vs gold"], rows))
    probes = result.data.get("probes")
    if probes:
        rows = [[p["probe"], p["total"], *(p["functions"].get(n) for n in names)] for p in probes["by_probe"]]
        rows.append(["mean call ms", None, *((timing.get(n) or {}).get("mean_ms") for n in names)])
        tables.append(
            (
                f"mean reward per probe over {probes['rows']} rows ({probes['probes_per_second']} probes/s)",
                ["probe", "total", *names],
                rows,
            )
        )
    agreement = result.data.get("label_agreement") or {}
    if agreement.get("disagreeing"):
        rows = [
            [d["line"], d["example_id"], d["label"], d["reward"], d["completion"]] for d in agreement["disagreeing"]
        ]
        tables.append(
            (
                f"reward vs label: {len(agreement['disagreeing'])} disagreeing rows (first 20)",
                ["line", "example_id", "is_correct", agreement["function"], "completion"],
                rows,
            )
        )
    for title, header, rows in tables:
        if console is None:
            print(title)
            print("  ".join(header))
            for r in rows:
                print("  ".join(fmt(v) for v in r))
            continue
        from rich.markup import escape
        from rich.table import Table

        table = Table(title=title, title_justify="left")
        for h in header:
            table.add_column(escape(str(h)), justify="left" if h in ("probe", "completion") else "right")
        for r in rows:
            table.add_row(*(escape(fmt(v)) for v in r))
        console.print(table)
