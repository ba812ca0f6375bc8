"""The demo's page: one self-contained HTML file (inline SVG and base64 PNG, no scripts, no fonts).

Each step's verdict and command; the base model's reward distribution and diagnose_run's panels
(the PNGs the pack's own --plot options draw), the training curve (inline SVG from the run's
logs/metrics.jsonl), the migration's proof table and the Hosted Training config.
"""

from __future__ import annotations

import base64
import html
import json
import os
from pathlib import Path

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#1d2330}
h1{font-size:1.6em;margin-bottom:.2em} .sub{color:#556;margin-top:0}
.step{border:1px solid #d7dbe3;border-radius:8px;padding:.7em 1em;margin:1em 0}
.step h2{font-size:1.1em;margin:.1em 0 .4em} .ok{color:#13795b} .bad{color:#b42318} .warn{color:#9a6700}
.badge{display:inline-block;font-size:.8em;padding:.1em .5em;border-radius:4px;margin-right:.5em;color:#fff}
.badge.ok{background:#13795b} .badge.bad{background:#b42318}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
pre{background:#f5f6f8;padding:.6em;border-radius:6px;overflow-x:auto;white-space:pre-wrap}
table{border-collapse:collapse;font-size:.85em;margin:.4em 0} td,th{border:1px solid #d7dbe3;padding:.2em .5em;text-align:left}
ul.checks{margin:.3em 0;padding-left:1.2em;font-size:.9em} img{max-width:100%;border:1px solid #eee}
.verdict{font-weight:600} .secs{color:#778;font-size:.85em;float:right}
"""


def _esc(text) -> str:
    return html.escape(str(text))


def _png(path: Path) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f'<img alt="" src="data:image/png;base64,{data}">'


def curve_svg(metrics_path: Path, width: int = 640, height: int = 260) -> str:
    """The training curve: mean reward per step (and the share of groups with no signal), inline SVG."""
    rows = [json.loads(line) for line in Path(metrics_path).read_text().splitlines() if line.strip()]
    if not rows:
        return "<p>no steps logged</p>"
    left, right, top, bottom = 48, 16, 16, 36
    w, h = width - left - right, height - top - bottom
    n = max(r["step"] for r in rows)

    def xy(step, value):
        return left + (step - 1) / max(1, n - 1) * w, top + (1 - value) * h

    def line(key, colour, dash=""):
        pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in (xy(r["step"], r[key]) for r in rows if key in r))
        return f'<polyline fill="none" stroke="{colour}" stroke-width="2" {dash} points="{pts}"/>'

    grid = "".join(
        f'<line x1="{left}" x2="{left + w}" y1="{top + (1 - v) * h:.1f}" y2="{top + (1 - v) * h:.1f}" stroke="#e3e6ec"/>'
        f'<text x="{left - 6}" y="{top + (1 - v) * h + 4:.1f}" text-anchor="end" font-size="11">{v:g}</text>'
        for v in (0, 0.25, 0.5, 0.75, 1.0)
    )
    ticks = "".join(
        f'<text x="{xy(s, 0)[0]:.1f}" y="{top + h + 16}" text-anchor="middle" font-size="11">{s}</text>'
        for s in sorted({1, n, *range(5, n + 1, 5)})
    )
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.5" fill="#2456c7"/>'
        for x, y in (xy(r["step"], r["reward_mean"]) for r in rows)
    )
    legend = (
        f'<rect x="{left + 10}" y="{top + 6}" width="12" height="3" fill="#2456c7"/>'
        f'<text x="{left + 28}" y="{top + 11}" font-size="11">mean reward per step</text>'
        f'<rect x="{left + 170}" y="{top + 6}" width="12" height="3" fill="#c2410c"/>'
        f'<text x="{left + 188}" y="{top + 11}" font-size="11">share of groups with one reward (no signal)</text>'
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="training curve" font-family="sans-serif">{grid}{ticks}'
        f'<text x="{left + w / 2}" y="{height - 4}" text-anchor="middle" font-size="12">step</text>'
        + line("zero_adv_group_frac", "#c2410c", 'stroke-dasharray="4 3"')
        + line("reward_mean", "#2456c7")
        + f"{dots}{legend}</svg>"
    )


def _checks(result: dict) -> str:
    items = []
    for c in result.get("checks", []):
        cls = {"pass": "ok", "fail": "bad", "warn": "warn"}.get(c.get("status"), "")
        mark = {"pass": "✓", "fail": "✗", "warn": "!"}.get(c.get("status"), "·")
        items.append(f'<li><span class="{cls}">{mark} {_esc(c["id"])}</span>: {_esc(c.get("message", ""))}</li>')
    return f'<ul class="checks">{"".join(items)}</ul>' if items else ""


def _table(title: str, header: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_esc(v)}</td>" for v in r) + "</tr>" for r in rows)
    return f"<p><b>{_esc(title)}</b></p><table><tr>{head}</tr>{body}</table>"


def _proof_table(result: dict) -> str:
    """migrate_env's tables, as its own render draws them: what became what, and the proof."""
    data = result.get("data") or {}
    parts = []
    if data.get("mapping"):
        rows = [[m["classic"], m["v1"], m.get("note", "")] for m in data["mapping"]]
        parts.append(_table("what became what", ["classic", "v1", "note"], rows))
    comp = data.get("comparison")
    if comp:
        title = (
            f"proof: {comp['probes']} probes on {comp['rows']} rows scored by verifiers "
            f"{(data.get('classic') or {}).get('verifiers')} (classic) and {(data.get('v1') or {}).get('verifiers')} "
            f"(v1), {comp['mismatched']} differences; mean total per probe category"
        )
        parts.append(_table(title, ["probe category", "mean total"], list(comp["mean_total_by_category"].items())))
    return "".join(parts)


def _extra(step, out: Path) -> str:
    parts = []
    if step.name == "data" and step.result.get("rows"):
        parts.append("<pre>" + _esc("\n".join(json.dumps(r) for r in step.result["rows"])) + "</pre>")
    if step.name == "local_train" and (out / "project/outputs/local-train/logs/metrics.jsonl").is_file():
        parts.append(curve_svg(out / "project/outputs/local-train/logs/metrics.jsonl"))
    if step.name == "migrate_env":
        parts.append(_proof_table(step.result))
    if step.name == "submit_training" and step.result.get("config_text"):
        parts.append(
            "<details><summary>the config</summary><pre>" + _esc(step.result["config_text"]) + "</pre></details>"
        )
    for caption, path in step.images.items():
        if Path(path).is_file():
            parts.append(f"<figure>{_png(path)}<figcaption>{_esc(caption)}</figcaption></figure>")
    return "".join(parts)


def render(steps, out: Path, seconds: float, failed=None) -> str:
    status = (
        f'<span class="bad">failed at step {len(steps)} ({_esc(failed.name)})</span>'
        if failed
        else f'<span class="ok">every step passed</span> in {seconds:.0f} s'
    )
    blocks = []
    for i, st in enumerate(steps, 1):
        badge = '<span class="badge ok">PASS</span>' if st.ok else '<span class="badge bad">FAIL</span>'
        text = st.verdict if st.ok else st.why
        blocks.append(
            f'<div class="step" id="{_esc(st.name)}"><h2>{badge}{i}. {_esc(st.title)}'
            f'<span class="secs">{st.seconds:.1f} s</span></h2>'
            f'<div class="verdict {"ok" if st.ok else "bad"}">{_esc(text)}</div>'
            f"<pre>$ {_esc(st.command)}</pre>{_checks(st.result)}{_extra(st, out)}</div>"
        )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>verifiers-lab demo</title>'
        f"<style>{CSS}</style></head><body><h1>verifiers-lab: the v1 road, end to end</h1>"
        f'<p class="sub">{status}. Offline, on CPU, in the project folder <code>{_esc(out / "project")}</code>. '
        "The training task is a toy, chosen so a run visibly learns in a minute or two on CPU: a 0.1M-parameter "
        "model learns by RL which colour each of three things is (balanced answers: a constant answer scores 1/3). "
        "It is warmed up first by supervised steps that teach the answer format and to read the question (boxing "
        "the thing named, or a colour drawn whatever the thing is: nothing about which colour is right): "
        "a model this small writes nothing "
        "parseable without them. Every other step is what you run on a real environment.</p>"
        f"{''.join(blocks)}</body></html>"
    )


def write(path: Path, steps, out: Path, seconds: float, failed=None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(render(steps, out, seconds, failed), encoding="utf-8")
    os.replace(tmp, path)
    return path.resolve()
