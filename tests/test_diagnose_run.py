"""diagnose_run on synthesised runs of every failure signature, in every shape it reads.

The runs come from tests/diagnose_fixtures.py (simulated GRPO batches with group noise, the
dynamics of each failure documented there). Each test checks the finding, the config delta,
and a stop condition that fires on the run; the healthy runs must get no alarm at all.
"""

from __future__ import annotations

import json
import threading
import time
import tomllib
from pathlib import Path

import diagnose_fixtures as F
import pytest
from conftest import SKILL_ROOT, assert_result, run_script

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

TOOL = "diagnose_run"

# kind -> (finding id, delta: (key ending, "up"/"down") or None, stop condition that fires or None)
EXPECT = {
    "flat-low": ("reward-flat-low", ("group_size", "up"), "no-rise"),
    "saturated": ("reward-saturated", ("group_size", "up"), "converged"),
    "collapse": ("reward-collapse", ("lr", "down"), "collapse"),
    "unstable": ("reward-unstable", ("lr", "down"), "collapse"),
    "zero-advantage": ("zero-advantage", ("group_size", "up"), "no-rise"),
    "truncation": ("truncation", ("max_completion_tokens", "up"), "truncation"),
    "length-explode": ("length-explode", ("lr", "down"), "length-explode"),
    "length-collapse": ("length-collapse", ("kl_tau", "up"), "length-collapse"),
    "entropy-collapse": ("entropy-collapse", ("lr", "down"), "entropy-collapse"),
    "grad-spikes": ("grad-spikes", ("lr", "down"), "grad-spikes"),
    "non-finite": ("non-finite", ("lr", "down"), "non-finite"),
    "rollout-errors": ("rollout-errors", None, "errors"),
    "throughput-drop": ("throughput-drop", None, None),
    "eval-divergence": ("eval-divergence", ("lr", "down"), "eval-drop"),
}
SHAPES = ("local", "prime-rl", "wandb-csv")


def write(kind: str, shape: str, tmp: Path, seed: int = 0) -> Path:
    rows = F.simulate(kind, seed=seed)
    if shape == "local":
        return F.write_local(rows, tmp / f"{kind}-local")
    if shape == "prime-rl":
        return F.write_prime_rl(rows, tmp / "outputs" / f"{kind}-run")
    return F.write_wandb_csv(rows, tmp / f"{kind}.csv", run_name="my-run")


def call(capsys, *argv: str) -> tuple[int, dict]:
    import diagnose_run

    capsys.readouterr()
    code = diagnose_run.main(["--json", *argv])
    return code, assert_result(json.loads(capsys.readouterr().out), TOOL, code)


def checks(obj: dict, status: tuple = ("fail", "warn")) -> dict[str, dict]:
    return {c["id"]: c for c in obj["checks"] if c["status"] in status}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("kind", sorted(EXPECT))
def test_signature_is_found_with_delta_and_stop(tmp_path, capsys, kind, shape):
    fid, delta, stop = EXPECT[kind]
    code, obj = call(capsys, "--run", str(write(kind, shape, tmp_path)))
    found = checks(obj)
    assert fid in found, (kind, shape, obj["checks"])
    finding = next(f for f in obj["data"]["findings"] if f["id"] == fid)
    assert finding["evidence"] and finding["message"]
    assert code == (1 if any(c["status"] == "fail" for c in obj["checks"]) else 0)
    if delta is not None and (shape != "wandb-csv" or delta[0] == "lr" or kind == "eval-divergence"):
        # a CSV export carries no config: only what the run logged (lr) or the defaults give old values
        key, way = delta
        hits = [d for d in obj["data"]["deltas"] if d["key"].endswith(key)]
        if shape == "wandb-csv" and not hits:
            pytest.skip("no old value for this key in a bare CSV export")
        assert hits, (kind, shape, obj["data"]["deltas"])
        d = hits[0]
        assert (d["new"] > d["old"]) if way == "up" else (d["new"] < d["old"]), d
        assert d["reason"] and d["evidence"] and d["finding"]
        keyset = "local" if shape == "local" else "prime-rl"
        if keyset == "prime-rl":
            assert d["key"].split(".")[0] in ("trainer", "orchestrator", "max_steps", "seq_len"), d
        else:
            assert not d["key"].startswith(("trainer.", "orchestrator.")), d
    if stop is not None:
        fired = {f["id"]: f for f in obj["data"]["stops_fired"]}
        assert stop in fired, (kind, shape, obj["data"]["stops_fired"])
        cond = next(c for c in obj["data"]["stop_conditions"] if c["id"] == stop)
        assert cond["rule"] and cond["text"] and fired[stop]["step"] >= 1


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_healthy_runs_get_no_false_alarm(tmp_path, capsys, shape, seed):
    code, obj = call(capsys, "--run", str(write("healthy", shape, tmp_path, seed)))
    assert code == 0, obj["checks"]
    assert not checks(obj), obj["checks"]
    assert obj["data"]["deltas"] == []
    assert not [f for f in obj["data"]["stops_fired"] if f["verdict"] == "fail"]
    assert any(c["id"] == "reward-rising" and c["status"] == "pass" for c in obj["checks"])
    assert "healthy" in obj["summary"]


def test_source_is_named_and_fields_mapped(tmp_path, capsys):
    run_dir = write("collapse", "prime-rl", tmp_path)
    code, obj = call(capsys, "--run", str(run_dir.parent))  # the output_dir: the newest run inside
    run = obj["data"]["run"]
    assert run["source"] == "prime-rl" and "newest run collapse-run" in run["found"]
    assert run["fields"]["reward_mean"] == "train/agg/all/agent/reward/mean"
    assert run["fields"]["entropy"] == "entropy/all/mean"
    # trainer and orchestrator rows of one step are merged into one step
    assert run["steps"] == F.STEPS
    assert obj["data"]["config"]["from"].endswith("configs/rl.json")
    lr = next(d for d in obj["data"]["deltas"] if d["key"] == "trainer.optim.lr")
    assert lr["old"] == 1e-6 and lr["old_from"] == "run config"


def test_saved_hosted_metrics_answer_is_read(tmp_path, capsys):
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"metrics": F.hosted_records(F.simulate("collapse"))}, indent=2))
    code, obj = call(capsys, "--run", str(path))
    assert code == 1 and obj["data"]["run"]["source"] == "hosted-export"
    assert "reward-collapse" in checks(obj)


def test_bad_inputs_are_exit_2(tmp_path, capsys):
    code, obj = call(capsys, "--run", str(tmp_path / "nope" / "x.jsonl"))
    assert code == 2 and "no such file" in obj["summary"]
    empty = tmp_path / "empty"
    empty.mkdir()
    code, obj = call(capsys, "--run", str(empty))
    assert code == 2 and "holds no metrics" in obj["summary"]
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "metrics.jsonl").write_text("")
    code, obj = call(capsys, "--run", str(tmp_path))
    assert code == 2 and "no steps" in obj["summary"]
    run = write("healthy", "local", tmp_path)
    code, obj = call(capsys, "--run", str(run), "--write", str(tmp_path / "new.toml"))
    assert code == 2 and "--config" in obj["summary"]
    code, obj = call(capsys, "--run", str(run), "--reward-range", "1", "0")
    assert code == 2


def test_a_half_written_last_line_is_skipped(tmp_path, capsys):
    run = write("collapse", "local", tmp_path)
    path = run / "logs" / "metrics.jsonl"
    path.write_text(path.read_text() + '{"step": 61, "reward_me')
    code, obj = call(capsys, "--run", str(run))
    assert obj["data"]["run"]["steps"] == F.STEPS and obj["data"]["run"]["info"]["malformed_lines"] == 1


# -- --config / --write ----------------------------------------------------------------------------

PRIME_RL_TOML = """\
# my run: keep this comment
max_steps = 60
seq_len = 4096

[model]
name = "Qwen/Qwen3-4B-Instruct-2507"

[trainer.optim]
lr = 3e-6  # tuned by hand

[orchestrator]
batch_size = 128
group_size = 8

[orchestrator.train.sampling]
max_completion_tokens = 1024

[[orchestrator.train.source]]
name = "reverse-text"
[orchestrator.train.source.env.taskset]
id = "primeintellect/reverse-text"
"""

LOCAL_TOML = """\
# local run
max_steps = 60
batch_size = 32
group_size = 8

[model]
name = "tiny-random"

[optim]
lr = 0.3  # too high on purpose

[env]
id = "toy"
"""


def test_write_applies_deltas_keeps_comments_and_validates(tmp_path, capsys):
    cfg = tmp_path / "rl.toml"
    cfg.write_text(PRIME_RL_TOML)
    new = tmp_path / "next.toml"
    run = write("collapse", "local", tmp_path)
    code, obj = call(capsys, "--run", str(run), "--config", str(cfg), "--write", str(new))
    assert new.is_file()
    text = new.read_text()
    assert "# my run: keep this comment" in text and "# tuned by hand" in text
    doc = tomllib.loads(text)
    assert doc["trainer"]["optim"]["lr"] == pytest.approx(7.5e-7)  # 3e-6 / 4
    assert doc["trainer"]["loss"]["kl_tau"] == pytest.approx(1e-2)
    lr = next(d for d in obj["data"]["deltas"] if d["key"] == "trainer.optim.lr")
    assert lr["old"] == 3e-6 and lr["old_from"] == "config"
    valid = [c for c in obj["checks"] if c["id"].startswith("config:")]
    assert valid and all(c["status"] != "fail" for c in valid), valid
    assert obj["data"]["written"]["valid"] is True and obj["data"]["written"]["schema"] == "hosted"
    # never over an existing file without --force; the original is untouched
    code, obj = call(capsys, "--run", str(run), "--config", str(cfg), "--write", str(new))
    assert code == 2 and "already exists" in obj["summary"]
    assert cfg.read_text() == PRIME_RL_TOML
    code, obj = call(capsys, "--run", str(run), "--config", str(cfg), "--write", str(new), "--force")
    assert obj["data"]["written"]["path"] == str(new)


def test_write_local_config_loads_in_local_train(tmp_path, capsys):
    cfg = tmp_path / "local.toml"
    cfg.write_text(LOCAL_TOML)
    new = tmp_path / "local-next.toml"
    run = write("flat-low", "local", tmp_path)
    code, obj = call(capsys, "--run", str(run), "--config", str(cfg), "--write", str(new))
    doc = tomllib.loads(new.read_text())
    assert doc["group_size"] == 16 and doc["batch_size"] == 64  # 4 prompts per step, divisible
    assert "# too high on purpose" in new.read_text()
    assert any(c["id"] == "config-valid" and c["status"] == "pass" for c in obj["checks"])
    assert obj["data"]["config"]["flavour"] == "local"


def test_written_config_that_fails_validation_is_exit_1(tmp_path, capsys):
    cfg = tmp_path / "rl.toml"
    cfg.write_text(PRIME_RL_TOML.replace("batch_size = 128", "batch_size = 100"))  # not divisible by 8
    code, obj = call(
        capsys,
        "--run",
        str(write("healthy", "local", tmp_path)),
        "--config",
        str(cfg),
        "--write",
        str(tmp_path / "n.toml"),
    )
    assert code == 1
    assert any(c["id"] == "config:batch-divisible" and c["status"] == "fail" for c in obj["checks"])


# -- stop conditions and --watch -------------------------------------------------------------------


def test_stop_conditions_json_round_trips_into_watch(tmp_path, capsys):
    run = write("collapse", "local", tmp_path)
    code, obj = call(capsys, "--run", str(run))
    saved = tmp_path / "diag.json"
    saved.write_text(json.dumps(obj))
    assert {"no-rise", "collapse", "non-finite", "converged"} <= {c["id"] for c in obj["data"]["stop_conditions"]}
    code, watched = call(capsys, "--run", str(run), "--watch", "--stops", str(saved), "--max-polls", "1")
    assert code == 1
    stop = checks(watched)["stop-condition"]
    assert "collapse" in stop["message"] and "fired at step 37" in stop["message"]
    assert watched["data"]["watch"]["fired"]["id"] == "collapse"


def test_watch_follows_a_growing_file_and_stops_when_a_condition_fires(tmp_path, capsys):
    rows = F.simulate("collapse")
    run = F.write_local(rows[:20], tmp_path / "live")
    full = F.write_local(rows, tmp_path / "full") / "logs" / "metrics.jsonl"
    lines = full.read_text().splitlines()[20:]
    path = run / "logs" / "metrics.jsonl"

    def grow():
        for line in lines:
            time.sleep(0.01)
            with path.open("a") as f:
                f.write(line + "\n")

    writer = threading.Thread(target=grow, daemon=True)
    writer.start()
    code, obj = call(capsys, "--run", str(run), "--watch", "--interval", "0.05", "--idle-timeout", "10")
    writer.join()
    assert code == 1, obj["checks"]
    fired = obj["data"]["watch"]["fired"]
    assert fired["verdict"] == "fail" and fired["id"] in ("collapse", "entropy-collapse", "below-baseline")
    assert 30 < fired["step"] <= 45


def test_watch_on_a_healthy_run_ends_without_a_stop(tmp_path, capsys):
    run = write("healthy", "local", tmp_path)
    code, obj = call(capsys, "--run", str(run), "--watch", "--interval", "0.01", "--max-polls", "2")
    assert code == 0
    assert "no stop condition fired" in obj["checks"][0]["message"] or any(
        c["id"] == "stop-condition" and c["status"] == "pass" for c in obj["checks"]
    )
    assert obj["data"]["watch"]["stopped_because"] == "2 polls (--max-polls)"


def test_watch_human_output_and_exit_code_in_a_subprocess(tmp_path):
    run = write("non-finite", "local", tmp_path)
    r = run_script(TOOL, "--run", str(run), "--watch", "--interval", "0.01", "--max-polls", "1")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "stop condition non-finite fired at step 40" in r.stdout.replace("\n", " ")


# -- the thresholds table is the documented one ----------------------------------------------------


def test_thresholds_table_is_in_the_training_guide():

    from vlab.diagnose.thresholds import markdown_table

    guide = (SKILL_ROOT / "references" / "training-guide.md").read_text()
    assert markdown_table() in guide, "regenerate the table in references/training-guide.md from thresholds.py"


# -- rollouts that ran out of turns ---------------------------------------------------------------


def test_a_run_whose_rollouts_ran_out_of_turns_is_named(tmp_path, capsys):
    out = F.write_local(F.simulate("healthy"), tmp_path / "turns")
    path = out / "logs" / "metrics.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        if "reward_mean" in r:
            r["turn_limited_frac"] = 0.8  # local_train: most rollouts ended by the turn limit mid tool use
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, obj = call(capsys, "--run", str(out))
    found = checks(obj)
    assert code == 1 and found["turn-limit"]["status"] == "fail", obj["checks"]
    assert found["turn-limit"]["message"].startswith("ran out of turns") and "max_turns" in found["turn-limit"]["hint"]
    # without the field (or with few such rollouts) nothing is said
    for r in rows:
        r["turn_limited_frac"] = 0.0
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _, obj = call(capsys, "--run", str(out))
    assert "turn-limit" not in {c["id"] for c in obj["checks"]}


def _prime_rl_with_stops(
    tmp_path, name: str, stops: dict[str, float], num_turns_max: float, every: int = 1, num_turns_min: float = 1
) -> Path:
    """A prime-rl run whose orchestrator rows carry train/agg/all/agent/stop_condition/<name> shares (prime-rl
    src/prime_rl/orchestrator/metrics.py, TraceMetrics.to_dict: only the names seen that step) and num_turns."""
    run = F.write_prime_rl(F.simulate("healthy"), tmp_path / name)
    path = run / "metrics.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        if "train/agg/all/agent/reward/mean" in r:
            r["train/agg/all/agent/num_turns/max"] = num_turns_max
            r["train/agg/all/agent/num_turns/min"] = num_turns_min
            r["train/agg/all/agent/stop_condition/generation_truncated"] = 0.0
            if r["step"] % every == 0:
                r.update({f"train/agg/all/agent/stop_condition/{k}": v for k, v in stops.items()})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run


def test_prime_rl_s_turn_limit_stop_conditions_are_read(tmp_path, capsys):
    # v1 0.4.0: the agent's max_turns ("max_turns") plus a task's own turn stop, summed
    run = _prime_rl_with_stops(tmp_path, "v1", {"max_turns": 0.4, "turn_limit": 0.3, "agent_completed": 0.3}, 6)
    code, obj = call(capsys, "--run", str(run))
    found = checks(obj)
    assert code == 1 and found["turn-limit"]["status"] == "fail", obj["checks"]
    finding = next(f for f in obj["data"]["findings"] if f["id"] == "turn-limit")
    assert "stop_condition/max_turns + " in finding["evidence"]["key"], finding
    # a name logged only at some steps: the others had none of it (0), so the share is a warning
    run = _prime_rl_with_stops(tmp_path, "some", {"max_turns": 0.6}, 6, every=2)
    _, obj = call(capsys, "--run", str(run))
    assert checks(obj)["turn-limit"]["status"] == "warn", obj["checks"]


def test_prime_rl_classic_max_turns_reached_of_single_turn_rollouts_is_not_a_turn_limit(tmp_path, capsys):
    # a classic SingleTurnEnv (prime-rl 0.8.0 legacy block): every rollout stops with max_turns_reached after one turn
    run = _prime_rl_with_stops(tmp_path, "single", {"max_turns_reached": 1.0}, 1)
    _, obj = call(capsys, "--run", str(run))
    assert "turn-limit" not in checks(obj), obj["checks"]
    run = _prime_rl_with_stops(tmp_path, "multi", {"max_turns_reached": 0.9}, 8)
    _, obj = call(capsys, "--run", str(run))
    assert checks(obj)["turn-limit"]["status"] == "fail", obj["checks"]
    # every rollout two turns and stopped by the limit: a conversation of fixed length
    run = _prime_rl_with_stops(tmp_path, "fixed", {"max_turns_reached": 1.0}, 2, num_turns_min=2)
    _, obj = call(capsys, "--run", str(run))
    assert "turn-limit" not in checks(obj), obj["checks"]


def _solved_run(out: Path, learned: bool) -> Path:
    """local_train's metrics where the zero-advantage share climbs 0.1 -> 0.85: in one run because the model
    comes to solve every group (reward 0.2 -> 0.95), in the other because groups come to fail together."""
    rows = []
    for i in range(30):
        t = i / 29
        zero = 0.1 + 0.75 * t
        solved_all = (0.82 * t) if learned else 0.2 * t
        reward = (0.2 + 0.75 * t) if learned else 0.3
        rows.append(
            {
                "step": i + 1,
                "reward_mean": reward,
                "reward_std": 0.3,
                "zero_adv_group_frac": zero,
                "solved_all_frac": solved_all,
                "solved_none_frac": zero - solved_all,
                "num_rollouts": 128,
                "num_train_sequences": int(128 * (1 - zero)),
                "errors": 0,
                "truncated_frac": 0.0,
                "completion_len_mean": 100.0,
                "entropy": 1.0 - 0.1 * t,
                "loss": 0.0,
                "grad_norm": 0.3,
                "lr": 1e-6,
            }
        )
    path = out / "logs" / "metrics.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def test_zero_advantage_from_groups_all_solved_is_learning_not_an_alarm(tmp_path, capsys):
    code, obj = call(capsys, "--run", str(_solved_run(tmp_path / "learned", learned=True)))
    finding = next(f for f in obj["data"]["findings"] if f["id"] == "zero-advantage")
    assert finding["status"] == "pass", finding
    assert "all pass" in finding["message"] and "zero-advantage" not in checks(obj)
    code, obj = call(capsys, "--run", str(_solved_run(tmp_path / "lost", learned=False)))
    found = checks(obj)
    assert "zero-advantage" in found, obj["checks"]
    assert "does not solve every time" in found["zero-advantage"]["message"]


# The demo's own run (make demo, 25 local_train steps of 64 rollouts, as logged): the reward rises 0.14 -> 0.89
# while the entropy falls, 57% in one step at step 17, then holds. That is convergence, not a collapse.
DEMO_REWARD = [0.141, 0.203, 0.359, 0.328, 0.438, 0.312, 0.641, 0.422, 0.797, 0.625, 0.703, 0.641, 0.734]
DEMO_REWARD += [0.766, 0.781, 0.656, 0.875, 0.859, 0.859, 0.844, 0.891, 0.906, 0.891, 0.938, 0.891]
DEMO_ENTROPY = [0.244, 0.282, 0.23, 0.215, 0.242, 0.262, 0.162, 0.209, 0.188, 0.215, 0.14, 0.165, 0.109]
DEMO_ENTROPY += [0.146, 0.165, 0.189, 0.082, 0.1, 0.105, 0.101, 0.069, 0.093, 0.07, 0.069, 0.093]


def _local_run(tmp: Path, name: str, reward: list[float], entropy: list[float]) -> Path:
    path = tmp / name / "logs" / "metrics.jsonl"
    path.parent.mkdir(parents=True)
    rows = [
        {"step": i + 1, "reward_mean": r, "reward_std": 0.3, "num_rollouts": 64, "entropy": e, "loss": 0.0}
        for i, (r, e) in enumerate(zip(reward, entropy))
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path.parent.parent


@pytest.mark.parametrize(
    "after",
    [DEMO_REWARD[16:], [0.84, 0.86, 0.82, 0.84, 0.85, 0.83, 0.84, 0.86, 0.83]],  # as logged; flat at the 0.84
    ids=["as-logged", "flat-after-the-drop"],
)
def test_an_entropy_fall_that_the_reward_paid_for_and_kept_is_convergence_not_a_collapse(capsys, tmp_path, after):
    run = _local_run(tmp_path, "demo", DEMO_REWARD[:16] + after, DEMO_ENTROPY)
    code, obj = call(capsys, "--run", str(run))
    entropy = [c for c in obj["checks"] if c["id"] == "entropy-collapse"]
    assert code == 0 and all(c["status"] != "fail" for c in entropy), obj["checks"]
    # the one-step fall is still named, as a warning that reads the reward
    assert entropy and entropy[0]["status"] == "warn" and "step 17" in entropy[0]["message"], entropy


def test_an_entropy_fall_after_which_the_reward_gives_its_gain_back_is_a_collapse(capsys, tmp_path):
    lost = [0.62, 0.5, 0.41, 0.3, 0.22, 0.2, 0.18, 0.16, 0.17]  # the drop at step 17, then the gain is lost
    run = _local_run(tmp_path, "lost", DEMO_REWARD[:16] + lost, DEMO_ENTROPY)
    code, obj = call(capsys, "--run", str(run))
    failed = {c["id"] for c in obj["checks"] if c["status"] == "fail"}
    assert code == 1 and "entropy-collapse" in failed, obj["checks"]
