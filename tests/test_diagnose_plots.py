"""--plot: the pictures diagnose_run and check_reward_distribution draw, checked as images."""

from __future__ import annotations

import json

import diagnose_fixtures as F
import numpy as np
import pytest
from conftest import assert_result, run_script
from evalfile_fixtures import mixed_run, write_classic_run

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

pytest.importorskip("matplotlib")


def image(path):
    import matplotlib.image as mpimg

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return mpimg.imread(str(path))


def panel_count(img: np.ndarray) -> int:
    """Axes frames in a column down the middle: each panel has a dark top and bottom spine."""
    gray = img[..., :3].mean(axis=2) if img.ndim == 3 else img
    h, w = gray.shape
    dark_rows = (gray[:, int(w * 0.3) : int(w * 0.7)] < 0.2).mean(axis=1) > 0.9  # a spine crosses the middle
    edges = np.flatnonzero(np.diff(dark_rows.astype(int)) == 1)
    return (len(edges) + (1 if dark_rows[0] else 0)) // 2


def test_run_plot_is_an_image_with_one_panel_per_quantity(tmp_path):
    run = F.write_local(F.simulate("collapse"), tmp_path / "run")
    out = tmp_path / "run.png"
    r = run_script("diagnose_run", "--run", str(run), "--plot", str(out), "--json")
    obj = assert_result(r.json, "diagnose_run", 1)
    drawn = obj["data"]["plot"]
    # reward, zero-advantage, truncation, completion length, + entropy and gradient norm (logged by this run)
    assert drawn["panels"] == [
        "reward_mean",
        "zero_adv_frac",
        "truncated_frac",
        "completion_len",
        "entropy",
        "grad_norm",
    ]
    img = image(out)
    assert img.shape[0] == drawn["size_px"][1] and img.shape[1] == drawn["size_px"][0]
    assert img.shape[0] > 600 and img.shape[1] > 800
    assert img[..., :3].std() > 0.05  # not a blank canvas
    assert panel_count(img) == 6
    assert drawn["markers"] >= 2  # the collapse and the entropy drop are marked
    # a second run refuses to overwrite the picture
    again = run_script("diagnose_run", "--run", str(run), "--plot", str(out), "--json")
    assert again.returncode == 2 and "already exists" in again.json["summary"]


def test_run_plot_without_entropy_has_the_four_base_panels(tmp_path):
    run = F.write_prime_rl(F.simulate("healthy"), tmp_path / "run")
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    (run / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows if "entropy/all/mean" not in x))
    out = tmp_path / "run.png"
    r = run_script("diagnose_run", "--run", str(run), "--plot", str(out), "--json")
    obj = assert_result(r.json, "diagnose_run", 0)
    assert len(obj["data"]["plot"]["panels"]) == 4
    assert panel_count(image(out)) == 4


def test_html_plot_has_the_figure_and_the_readout_data(tmp_path):
    run = F.write_local(F.simulate("truncation"), tmp_path / "run")
    out = tmp_path / "run.html"
    r = run_script("diagnose_run", "--run", str(run), "--plot", str(out), "--json")
    assert_result(r.json, "diagnose_run", 1)
    page = out.read_text()
    assert page.startswith("<!doctype html>") and "<svg" in page and "mousemove" in page
    data = json.loads(page.split("const DATA = ", 1)[1].split(";\n", 1)[0])
    assert data["steps"][:3] == [1, 2, 3] and "truncated share" in data["series"]


def test_plot_without_matplotlib_says_how_to_get_it(tmp_path):
    blocker = tmp_path / "block"
    (blocker / "matplotlib").mkdir(parents=True)
    (blocker / "matplotlib" / "__init__.py").write_text("raise ImportError('blocked for the test')\n")
    run = F.write_local(F.simulate("healthy"), tmp_path / "run")
    r = run_script(
        "diagnose_run", "--run", str(run), "--plot", str(tmp_path / "x.png"), "--json", env={"PYTHONPATH": str(blocker)}
    )
    obj = assert_result(r.json, "diagnose_run", 3)
    plot = next(c for c in obj["checks"] if c["id"] == "plot")
    assert "verifiers-lab[plot]" in plot["hint"] and obj["data"]["findings"]  # the diagnosis is still there
    assert not (tmp_path / "x.png").exists()


def test_check_reward_distribution_plot(tmp_path):
    folder = write_classic_run(tmp_path / "eval", mixed_run(40, 4))
    out = tmp_path / "dist.png"
    r = run_script("check_reward_distribution", "--results", str(folder), "--plot", str(out), "--json")
    obj = r.json
    drawn = obj["data"]["plot"]
    functions = list(obj["data"]["functions"])
    assert drawn["functions"] == functions and drawn["panels"] == len(functions) + 1  # + pass rate per example
    img = image(out)
    assert img.shape[1] == drawn["size_px"][0] and img[..., :3].std() > 0.05
    assert any(c["id"] == "plot" and c["status"] == "pass" for c in obj["checks"])


def test_pass_rates_follow_the_checkers_rule():
    from types import SimpleNamespace as R

    from vlab.diagnose.plots import eval_plot_inputs

    data = {
        "functions": {"correct": {"histogram": {"edges": [0, 0.5, 1], "counts": [3, 3]}}},
        "correctness_function": "correct",
        "thresholds": {"pass_threshold": 0.5},
    }
    rolls = [
        R(example=e, reward=0.0, scores={"correct": s}) for e, s in [(1, 1), (1, 0), (2, 0), (2, 0), (3, 1), (3, 1)]
    ]
    functions, rates = eval_plot_inputs(data, rolls)
    assert functions == {"correct": ([0, 0.5, 1], [3, 3])} and sorted(rates) == [0.0, 0.5, 1.0]
