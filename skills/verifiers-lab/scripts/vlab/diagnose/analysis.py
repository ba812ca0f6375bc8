"""A run read and judged: its series from any source, the signatures, the config deltas and the stop conditions
(``Diagnosis``). Below ``run`` (the one-shot flow) and ``watch`` (the polling loop), which both call it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vlab.diagnose import deltas as dl
from vlab.diagnose import stops as st
from vlab.diagnose.request import DiagnoseRequest
from vlab.diagnose.series import Series
from vlab.diagnose.signatures import Context, Finding, detect
from vlab.diagnose.sources import Located, read_located


@dataclass
class Diagnosis:
    series: Series
    findings: list[Finding]
    ctx: Context
    deltas: list[dl.Delta] = field(default_factory=list)
    stops: list[st.Stop] = field(default_factory=list)
    fired: list[dict[str, Any]] = field(default_factory=list)
    flavour: str = "prime-rl"
    config: dict | None = None
    config_text: str | None = None


def read_series(found: Located, request: DiagnoseRequest) -> Series:
    if found.kind == "hosted":
        from vlab.diagnose.hosted import read_hosted

        return read_hosted(found.run_id or request.run, timeout=request.timeout)
    return read_located(found)


def _max_steps(request: DiagnoseRequest, s: Series, cfg: dict | None, flavour: str) -> int | None:
    if request.max_steps:
        return request.max_steps
    if isinstance(s.info.get("max_steps"), int):
        return s.info["max_steps"]
    value, src = dl.current_value(cfg, flavour, "max_steps") if cfg else (None, "")
    if isinstance(value, int) and src == "config":
        return value
    # a finished run of unknown plan: the next run of the same length; a watched one: unknown
    return None if request.watch else s.last_step()


def analyse(s: Series, request: DiagnoseRequest, stops: list[st.Stop] | None = None) -> Diagnosis:
    findings, ctx = detect(s, request.reward_range)
    text = cfg = None
    cfg_from = "config"
    if request.config:
        text, cfg, flavour = dl.read_config(request.config)
        cfg_from = "config"
    elif isinstance(s.info.get("config"), dict):
        cfg, flavour = s.info["config"], s.info.get("config_flavour", "prime-rl")
        cfg_from = "run config"
    else:
        flavour = "local" if s.keys.get("reward_mean") == "reward_mean" else "prime-rl"
    for knob, value in dl.logged_values(s).items():
        s.info.setdefault(knob, value)
    d = Diagnosis(s, findings, ctx, flavour=flavour, config=cfg, config_text=text)
    d.deltas = dl.propose(findings, flavour, cfg, dl.logged_values(s), cfg_from)
    d.stops = stops if stops is not None else st.build(s, ctx.lo, ctx.hi, _max_steps(request, s, cfg, flavour))
    d.fired = st.evaluate(d.stops, s)
    return d
