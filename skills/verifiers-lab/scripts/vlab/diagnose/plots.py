"""Pictures, with matplotlib (the optional ``plot`` extra: ``pip install 'verifiers-lab[plot]'``).

- ``plot_run``: a training run, one panel per quantity over the steps: mean reward with a band
  for its spread (and eval reward), zero-advantage share, truncated share, completion length,
  plus entropy and gradient norm when the run logged them; each finding marked on the steps
  it refers to. ``.png``/``.svg``/``.pdf`` are images; ``.html`` is a page with the same figure
  (SVG) and a read-out of every panel's value at the step under the pointer.
- ``plot_distribution``: the per-function reward histograms and the per-example pass-rate
  histogram of an eval (check_reward_distribution --plot), from plain lists.

Both take plain arrays/lists; neither knows where the numbers came from.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlab.core.files import ensure_writable
from vlab.core.result import PrerequisiteError, UsageError

INSTALL_HINT = "pip install 'verifiers-lab[plot]' (or: pip install matplotlib)"
FORMATS = (".png", ".svg", ".pdf", ".html")
COLORS = {"fail": "#d62728", "warn": "#ff7f0e", "pass": "#2ca02c"}

# finding id -> the panel it is drawn on
FINDING_PANEL = {
    "zero-advantage": "zero_adv_frac",
    "truncation": "truncated_frac",
    "length-explode": "completion_len",
    "length-collapse": "completion_len",
    "entropy-collapse": "entropy",
    "grad-spikes": "grad_norm",
}


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise PrerequisiteError("plotting needs matplotlib, which is not installed", hint=INSTALL_HINT) from err
    return plt


def _target(path: str | os.PathLike, force: bool) -> Path:
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        raise UsageError(f"--plot {p}: unknown picture format", hint="use a .png, .svg, .pdf or .html file name")
    return ensure_writable(p, force)


def _save(fig, target: Path, page: str | None = None) -> Path:
    """Write the figure (or the HTML page) next to the target, then rename over it: never half a file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent)
    os.close(fd)
    try:
        if page is not None:
            Path(tmp).write_text(page, encoding="utf-8")
        else:
            fig.savefig(tmp, dpi=110, bbox_inches=None)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's 0600 is for secrets; a picture is not one
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def run_panels(cols: dict[str, Sequence[float]]) -> list[tuple[str, str]]:
    """(field, title) of each panel drawn for these columns, top to bottom."""
    panels = [
        ("reward_mean", "mean reward (band: spread)"),
        ("zero_adv_frac", "zero-advantage share"),
        ("truncated_frac", "truncated share"),
        ("completion_len", "completion length (tokens)"),
    ]
    for name, title in (("entropy", "entropy"), ("grad_norm", "gradient norm")):
        values = np.asarray(cols.get(name, []), dtype=float)
        if values.size and np.isfinite(values).any():
            panels.append((name, title))
    return panels


def plot_run(
    steps: Sequence[int],
    cols: dict[str, Sequence[float]],
    findings: list[dict[str, Any]],
    path: str | os.PathLike,
    title: str = "",
    force: bool = False,
    reward_range: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Draw the run; ``findings`` are dicts with id, status, steps. Returns what was drawn."""
    target = _target(path, force)
    plt = _pyplot()
    x = np.asarray(steps, dtype=float)
    panels = run_panels(cols)
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 2.1 * len(panels) + 0.6), sharex=True, squeeze=False)
    axes = axes[:, 0]
    for ax, (name, label) in zip(axes, panels):
        y = np.asarray(cols.get(name, np.full(x.size, np.nan)), dtype=float)
        if not np.isfinite(y).any():
            ax.text(0.5, 0.5, "not logged by this run", ha="center", va="center", transform=ax.transAxes, color="gray")
        else:
            ok = np.isfinite(y)
            sparse = ok.mean() < 0.5  # steps without a value (no update): draw the points that exist
            ax.plot(x[ok], y[ok], "o" if sparse else "-", color="#1f77b4", lw=1.2, ms=3)
        if name == "reward_mean":
            lo, hi = _band(cols, y)
            if lo is not None:
                if reward_range is not None:
                    lo, hi = np.clip(lo, *reward_range), np.clip(hi, *reward_range)
                ax.fill_between(x, lo, hi, color="#1f77b4", alpha=0.18, lw=0)
            ev = np.asarray(cols.get("eval_reward", []), dtype=float)
            if ev.size == x.size and np.isfinite(ev).any():
                ok = np.isfinite(ev)
                ax.plot(x[ok], ev[ok], "o-", color="#9467bd", ms=3, lw=1, label="eval reward")
                ax.legend(loc="best", fontsize=7)
        ax.set_ylabel(label, fontsize=8)
        ax.grid(alpha=0.3)
    marked = 0
    for f in findings:
        panel = FINDING_PANEL.get(f["id"], "reward_mean")
        idx = next((i for i, (n, _) in enumerate(panels) if n == panel), 0)
        for j, s in enumerate(f.get("steps", [])[:20]):
            axes[idx].axvline(s, color=COLORS.get(f["status"], "gray"), ls="--", lw=1, alpha=0.8)
            if j == 0:
                axes[idx].annotate(
                    f["id"],
                    (s, 1.0),
                    xycoords=("data", "axes fraction"),
                    xytext=(2, -10),
                    textcoords="offset points",
                    fontsize=7,
                    color=COLORS.get(f["status"], "gray"),
                )
            marked += 1
    axes[-1].set_xlabel("step")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    if target.suffix.lower() == ".html":
        page = _html_page(fig, axes, panels, x, cols, title)
        _save(fig, target, page)
    else:
        _save(fig, target)
    size = [int(v) for v in fig.get_size_inches() * 110]
    plt.close(fig)
    return {"path": str(target), "panels": [n for n, _ in panels], "markers": marked, "size_px": size}


def _band(cols: dict, mean: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    std = np.asarray(cols.get("reward_std", []), dtype=float)
    if std.size == mean.size and np.isfinite(std).any():
        return mean - std, mean + std
    for a, b in (("reward_p10", "reward_p90"), ("reward_min", "reward_max")):
        lo, hi = np.asarray(cols.get(a, []), dtype=float), np.asarray(cols.get(b, []), dtype=float)
        if lo.size == mean.size and hi.size == mean.size and np.isfinite(lo).any():
            return lo, hi
    return None, None


def _html_page(fig, axes, panels, x, cols, title: str) -> str:
    """The figure as inline SVG, and a read-out of each panel's value at the step under the pointer."""
    import io

    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    svg = buf.getvalue()
    svg = svg[svg.find("<svg") :]
    w, h = fig.canvas.get_width_height()
    first, last = axes[0].get_window_extent(), axes[-1].get_window_extent()
    x0, x1 = axes[-1].get_xlim()
    box = {"left": first.x0 / w, "right": first.x1 / w, "x0": float(x0), "x1": float(x1)}
    step = max(1, x.size // 5000)  # the read-out needs no more than ~5,000 points
    data = {"steps": [int(v) for v in x[::step]], "series": {}}
    for name, label in panels:
        y = np.asarray(cols.get(name, []), dtype=float)[::step]
        data["series"][label] = [None if not np.isfinite(v) else round(float(v), 5) for v in y]
    del first, last
    return _HTML.format(
        title=title or "training run",
        svg=svg,
        data=json.dumps(data),
        box=json.dumps(box),
    )


_HTML = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;margin:1em}}#fig{{position:relative;display:inline-block}}
#fig svg{{width:100%;height:auto;max-width:1100px}}
#cursor{{position:absolute;top:0;bottom:0;width:1px;background:#444;pointer-events:none;display:none}}
#readout{{font-family:monospace;white-space:pre;margin-top:.5em;min-height:8em}}</style></head>
<body><h3>{title}</h3><div id="fig">{svg}<div id="cursor"></div></div><div id="readout">point at the figure</div>
<script>
const DATA = {data};
const BOX = {box};
const fig = document.getElementById("fig"), cur = document.getElementById("cursor"), out = document.getElementById("readout");
fig.addEventListener("mousemove", e => {{
  const r = fig.getBoundingClientRect(), fx = (e.clientX - r.left) / r.width;
  if (fx < BOX.left || fx > BOX.right) {{ cur.style.display = "none"; return; }}
  const want = BOX.x0 + (fx - BOX.left) / (BOX.right - BOX.left) * (BOX.x1 - BOX.x0);
  let lo = 0, hi = DATA.steps.length - 1;
  while (lo < hi) {{ const mid = (lo + hi) >> 1; if (DATA.steps[mid] < want) lo = mid + 1; else hi = mid; }}
  if (lo > 0 && Math.abs(DATA.steps[lo - 1] - want) < Math.abs(DATA.steps[lo] - want)) lo -= 1;
  const s = DATA.steps[lo], px = BOX.left + (s - BOX.x0) / (BOX.x1 - BOX.x0) * (BOX.right - BOX.left);
  cur.style.left = (px * r.width) + "px"; cur.style.display = "block";
  let text = "step " + s;
  for (const [name, ys] of Object.entries(DATA.series)) {{ const v = ys[lo]; text += "\\n" + name + ": " + (v === null ? "-" : v); }}
  out.textContent = text;
}});
</script></body></html>
"""


def plot_distribution(
    functions: dict[str, tuple[Sequence[float], Sequence[int]]],
    pass_rates: Sequence[float] | None,
    path: str | os.PathLike,
    title: str = "",
    force: bool = False,
) -> dict[str, Any]:
    """One histogram panel per reward function (``{name: (bin edges, counts)}``) and one of the
    per-example pass rates (raw values, binned here into 10ths)."""
    target = _target(path, force)
    if target.suffix.lower() == ".html":
        raise UsageError("--plot for the reward distribution draws images only", hint="use .png, .svg or .pdf")
    plt = _pyplot()
    names = list(functions)
    n = len(names) + (1 if pass_rates is not None else 0)
    if n == 0:
        raise UsageError("nothing to plot: no reward functions and no pass rates")
    cols = min(3, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 2.8 * rows), squeeze=False)
    flat = list(axes.ravel())
    for ax, name in zip(flat, names):
        edges, counts = functions[name]
        edges = np.asarray(edges, dtype=float)
        counts = np.asarray(counts, dtype=float)
        if edges.size == counts.size + 1 and counts.size:
            ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color="#1f77b4", edgecolor="white")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("score", fontsize=8)
        ax.set_ylabel("rollouts", fontsize=8)
    if pass_rates is not None:
        ax = flat[len(names)]
        pr = np.asarray(pass_rates, dtype=float)
        ax.hist(pr[np.isfinite(pr)], bins=np.linspace(0, 1, 11), color="#2ca02c", edgecolor="white")
        ax.set_title("pass rate per example", fontsize=9)
        ax.set_xlabel("share of its rollouts solved", fontsize=8)
        ax.set_ylabel("examples", fontsize=8)
    for ax in flat[n:]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    _save(fig, target)
    size = [int(v) for v in fig.get_size_inches() * 110]
    plt.close(fig)
    return {"path": str(target), "panels": n, "functions": names, "size_px": size}


def eval_plot_inputs(data: dict[str, Any], rollouts) -> tuple[dict[str, tuple[list, list]], list[float] | None]:
    """check_reward_distribution's result data (+ its rollouts, read again) -> plot_distribution's lists.

    The histograms per function are the ones the checker computed; the pass rate of an example is the
    share of its rollouts solved by the checker's own rule (``data["solved_by"]``: the correctness
    function, else the reward, at ``thresholds.pass_threshold``).
    """
    functions = {
        name: (st["histogram"]["edges"], st["histogram"]["counts"])
        for name, st in (data.get("functions") or {}).items()
        if isinstance(st, dict) and isinstance(st.get("histogram"), dict)
    }
    if not functions and isinstance((data.get("reward") or {}).get("histogram"), dict):
        functions["reward"] = (data["reward"]["histogram"]["edges"], data["reward"]["histogram"]["counts"])
    threshold = (data.get("thresholds") or {}).get("pass_threshold")
    if threshold is None:
        return functions, None
    correct = data.get("correctness_function")
    solved: dict[Any, list[int]] = {}
    for r in rollouts:
        score = r.scores.get(correct) if correct else r.reward
        if score is None or score != score:
            continue
        tally = solved.setdefault(r.example, [0, 0])
        tally[0] += int(score >= threshold)
        tally[1] += 1
    return functions, [s / n for s, n in solved.values() if n]


def draw_eval(result, source, path: str, force: bool = False, pass_rates: list[float] | None = None) -> None:
    """check_reward_distribution --plot: draw, and report it as a check (exit 3 without matplotlib).
    ``pass_rates``: the checker's own per-example pass rates (else they are read again from the rollouts)."""
    from vlab.core.result import EXIT_PREREQ
    from vlab.evals.read import iter_rows

    data = result.data
    if not data.get("functions") and not data.get("reward"):
        result.skip("plot", f"--plot {path}: no rollouts with rewards to draw")
        return
    try:
        functions, read_rates = eval_plot_inputs(data, iter_rows(source) if pass_rates is None else ())
        pass_rates = read_rates if pass_rates is None else pass_rates
        drawn = plot_distribution(functions, pass_rates, path, title=str(source.path), force=force)
    except PrerequisiteError as err:
        result.fail("plot", f"--plot {path} not drawn: {err.message}", err.hint, exit_code=EXIT_PREREQ)
        return
    data["plot"] = drawn
    result.passed("plot", f"drew {drawn['panels']} panels to {drawn['path']}")
