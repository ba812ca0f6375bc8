"""The human report of submit_training: the flat-key mappings, the config (or its diff) and the run's address."""

from __future__ import annotations

from typing import Any

from vlab.core.result import Result
from vlab.hosted.request import SubmitRequest


def render(result: Result, con: Any, request: SubmitRequest, outcome: Any = None) -> None:
    """Drawn above the checks; plain print without rich."""
    data = result.data
    text = data.get("config_text")
    out = con.print if con is not None else print
    if data.get("mappings"):
        out("flat config -> current keys:")
        for m in data["mappings"]:
            arrow = f"-> {m['to']}" if m["to"] else "(dropped)"
            out(f"  {m['action']:<8} {m['from']} {arrow}: {m['reason']}", **({"markup": False} if con else {}))
    if text:
        shown = data.get("diff") or text
        if con is not None:
            con.print(shown, markup=False, highlight=False, soft_wrap=True)
        else:
            print(shown)
    if data.get("run_id"):
        out(f"run {data['run_id']}: {data.get('dashboard_url', '')}", **({"markup": False} if con else {}))
