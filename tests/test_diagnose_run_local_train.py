"""diagnose_run on real local_train CPU runs: one healthy, one with a learning rate high enough to
collapse the policy, one whose reward is always 0. Each run trains once per module, in the first test that reads it.

The toy environment (classic or v1, whichever this venv's verifiers runs) rewards 4 * share('a') * share('b') of the reply: its best answers mix two
letters, so a policy that collapses onto one token scores 0 (with the plain share-of-'a' reward a
collapse would be the optimum, and no failure at all). The healthy run's reward is that product over
the two halves of the alphabet, so that its first steps already carry a signal (HALVES_TOY below).

local_train's runs are reproducible (a rollout's sample depends on its seed, never on the timing of
its sampler batch: tests/test_train_reproducible.py), so these runs give the same curves on a busy
machine as on an idle one.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import SKILL_ROOT, VERIFIERS, assert_result, run_script
from train_fixtures import CLASSIC_TOY, V1_TOY, write_env_package

pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow

# the toy environment in the generation this venv runs (classic on verifiers 0.3, a v1 taskset on 0.4)
TOY = CLASSIC_TOY if VERIFIERS.classic else V1_TOY
REWARD = 'return text.count("a") / len(text) if text else 0.0'
AB_TOY = TOY.replace(
    REWARD, 'return 4 * (text.count("a") / len(text)) * (text.count("b") / len(text)) if text else 0.0'
)
# The healthy run's reward is the same product over two halves of the alphabet: 4 * share(a-m) * share(n-z).
# A random model's replies already hold letters of both halves (reward ~0.08 with a spread in every group),
# so the run learns from its first step, as a healthy run does. With the two single letters a random model
# rarely writes both in 12 characters: nearly every group of the first steps had no signal and whether the
# reward rose 0.05 by step 10 (the no-rise stop) depended on the sampling seed; a credit per letter added
# to it made the gradient norm grow tenfold as the reward left zero (a grad-spike warning).
HALVES_TOY = TOY.replace(
    REWARD,
    'return 4 * sum(c in "abcdefghijklm" for c in text) * sum(c in "nopqrstuvwxyz" for c in text) / len(text) ** 2'
    " if text else 0.0",
)
ZERO_TOY = TOY.replace(REWARD, "return 0.0  # a reward that never fires")

CONFIG = """\
# toy run for diagnose_run's tests
max_steps = {steps}
batch_size = 32
group_size = 8

[model]
name = "{model}"

[sampling]
max_completion_tokens = 12

[optim]
lr = {lr}  # the knob under test

[eval]
final = false

[env]
id = "{env}"
{extra}"""

# The high-lr run keeps the PPO-style clip: prime-rl's default loss (local_train's default) masks the
# tokens that move too far, which makes a collapse at lr 0.3 borderline on this toy; the test is about
# naming a collapse, not about which loss produces it.
PPO_CLIP = '\n[loss]\ntype = "ppo_clip"\n'
RUNS = {  # name -> (environment source, lr, steps, extra config)
    "healthy": (HALVES_TOY, 1e-2, 16, ""),
    # 16 steps: with a seed per rollout the 0.3.1 toy collapses at step 11 (a one-step reward spike at step 10
    # keeps the entropy stop's "while the reward has not risen" clause from counting the steps before it), and a
    # stop needs 3 steps below its level to fire
    "high-lr": (AB_TOY, 0.3, 16, PPO_CLIP),
    "zero-reward": (ZERO_TOY, 1e-2, 12, ""),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``runs(name)``: the run's output folder and config, trained on first use (one run a test: each test under a
    minute on a loaded machine; run side by side they shared the same cores anyway)."""
    from vlab.train.tiny import save_tiny_model

    root = tmp_path_factory.mktemp("diag-runs")
    model = save_tiny_model(root / "tiny-qwen2")
    assert REWARD in TOY and AB_TOY != TOY and HALVES_TOY != TOY and ZERO_TOY != TOY
    trained: dict[str, tuple] = {}

    def train(name: str) -> tuple:
        if name in trained:
            return trained[name]
        source, lr, steps, extra = RUNS[name]
        env = write_env_package(root / "envs", name.replace("-", "_"), source)
        cfg = root / f"{name}.toml"
        cfg.write_text(CONFIG.format(steps=steps, model=model, lr=lr, env=env, extra=extra))
        proc = subprocess.run(
            [
                sys.executable,
                str(SKILL_ROOT / "scripts" / "local_train.py"),
                str(cfg),
                "--output-dir",
                str(root / name),
                "--no-progress",
                "--json",
            ],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            text=True,
            cwd=root,
            timeout=900,
        )
        assert proc.returncode in (0, 1), (name, proc.stderr[-3000:])
        assert (root / name / "logs" / "metrics.jsonl").is_file(), (name, proc.stdout[-2000:], proc.stderr[-2000:])
        trained[name] = (root / name, cfg)
        return trained[name]

    return train


def diagnose(run_dir, cfg, *extra):
    r = run_script("diagnose_run", "--run", str(run_dir), "--config", str(cfg), "--json", *extra)
    return r.returncode, r.json


def test_healthy_run_has_no_false_alarm(runs, tmp_path):
    run_dir, cfg = runs("healthy")
    code, obj = diagnose(run_dir, cfg, "--plot", str(tmp_path / "healthy.png"))
    assert_result(obj, "diagnose_run", 0)
    assert not [c for c in obj["checks"] if c["status"] in ("fail", "warn")], obj["checks"]
    assert any(c["id"] == "reward-rising" for c in obj["checks"]), obj["checks"]
    assert obj["data"]["deltas"] == [] and not [f for f in obj["data"]["stops_fired"] if f["verdict"] == "fail"]
    assert obj["data"]["run"]["fields"]["entropy"] == "entropy"  # local_train logs its entropy estimate
    assert obj["data"]["run"]["fields"]["solved_all"] == "solved_all_frac"  # and how many groups all pass
    assert (tmp_path / "healthy.png").stat().st_size > 10_000


def test_high_learning_rate_collapse_is_named_with_lr_delta_and_stop(runs, tmp_path):
    run_dir, cfg = runs("high-lr")
    new = tmp_path / "next.toml"
    code, obj = diagnose(run_dir, cfg, "--write", str(new))
    assert_result(obj, "diagnose_run", 1)
    failed = {c["id"] for c in obj["checks"] if c["status"] == "fail"}
    assert failed & {"entropy-collapse", "reward-collapse"}, obj["checks"]
    lr = next(d for d in obj["data"]["deltas"] if d["key"] == "optim.lr")
    assert lr["old"] == 0.3 and lr["new"] <= 0.075 and lr["old_from"] == "config"
    fired = {f["id"] for f in obj["data"]["stops_fired"] if f["verdict"] == "fail"}
    assert fired & {"entropy-collapse", "collapse", "below-baseline", "no-rise"}, obj["data"]["stops_fired"]
    # the written config loads in local_train, with the smaller learning rate and the comments kept
    text = new.read_text()
    assert "# the knob under test" in text
    from vlab.train.config import load_config

    assert load_config(new).optim.lr == lr["new"]


def test_reward_always_zero_points_at_test_reward(runs):
    run_dir, cfg = runs("zero-reward")
    code, obj = diagnose(run_dir, cfg)
    assert_result(obj, "diagnose_run", 1)
    flat = next(c for c in obj["checks"] if c["id"] == "reward-flat-low")
    assert flat["status"] == "fail" and "never fired" in flat["message"]
    assert any("test_reward.py" in s for s in obj["next_steps"])
    group = next(d for d in obj["data"]["deltas"] if d["key"] == "group_size")
    assert group["old"] == 8 and group["new"] == 16
    batch = next(d for d in obj["data"]["deltas"] if d["key"] == "batch_size")
    assert batch["new"] % group["new"] == 0
    fired = {f["id"] for f in obj["data"]["stops_fired"]}
    assert {"no-rise", "zero-advantage"} <= fired, obj["data"]["stops_fired"]


def test_metrics_file_itself_is_accepted(runs):
    run_dir, _ = runs("zero-reward")
    r = run_script("diagnose_run", "--run", str(run_dir / "logs" / "metrics.jsonl"), "--json")
    obj = assert_result(r.json, "diagnose_run", 1)
    assert obj["data"]["run"]["source"] == "local-train"
    lines = (run_dir / "logs" / "metrics.jsonl").read_text().splitlines()
    assert obj["data"]["run"]["steps"] == len([x for x in lines if "reward_mean" in json.loads(x)])
