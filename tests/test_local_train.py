"""scripts/local_train.py end to end on toy verifiers environments, offline, on CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from conftest import assert_result, run_script  # noqa: E402
from train_fixtures import (
    CLASSIC_BROKEN_TOY,
    CLASSIC_MULTITURN_TOY,
    CLASSIC_RAISING_TOY,
    CLASSIC_TOY,  # noqa: E402
    V1_TOY,
    save_tiny_model,
    write_env_package,
)

TOY_SETTINGS = [
    "--set",
    "batch_size=32",
    "--set",
    "group_size=8",
    "--set",
    "sampling.max_completion_tokens=12",
    "--set",
    "optim.lr=1e-2",
    "--set",
    "eval.num_examples=8",
    "--set",
    "eval.rollouts_per_example=4",
]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return save_tiny_model(tmp_path_factory.mktemp("model") / "tiny-qwen2")


def call(*argv: str, capsys) -> tuple[int, dict]:
    """Run local_train in this process (cheaper than a subprocess); returns (exit code, JSON result)."""
    import local_train

    capsys.readouterr()
    code = local_train.main(["--json", "--no-progress", *argv])
    out = capsys.readouterr().out
    return code, assert_result(json.loads(out), "local_train", code)


def _proof(tmp_path, tiny_model, env_source: str, name: str):
    env = write_env_package(tmp_path / "envs", name, env_source)
    out = tmp_path / "run"
    r = run_script(
        "local_train",
        "--env",
        str(env),
        "--model",
        str(tiny_model),
        "--max-steps",
        "20",
        "--output-dir",
        str(out),
        "--json",
        *TOY_SETTINGS,
        timeout=600,
    )
    obj = assert_result(r.json, "local_train", 0)
    d = obj["data"]
    assert d["steps"] == 20 and d["device"] == "cpu"
    # The CPU proof: the mean reward rises from its start to >= 0.8 in 20 steps.
    assert d["reward_first"] < 0.3 and d["reward_last"] >= 0.8, d
    assert d["logprob_diff_max_first_step"] < 1e-5  # recomputed on packed rows: the sampler's logprobs
    assert d["packed_sequences"] is True and 0 <= d["padding_frac"] < 1
    checks = {c["id"]: c["status"] for c in obj["checks"]}
    assert checks["learning"] == "pass" and checks["logprob_agreement"] == "pass"
    metrics = [json.loads(line) for line in (out / "logs" / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == list(range(1, 21))
    assert "metrics/share_of_a/mean" in metrics[0] and "loss" in metrics[0]
    # The final eval is in vf-eval's shape, and the distribution checker's reader takes it.
    from vlab.evals.read import iter_rows
    from vlab.evals.source import locate

    folder = Path(d["eval"]["results_dir"])
    assert (folder / "results.jsonl").is_file() and (folder / "metadata.json").is_file()
    source = locate(folder)
    assert source.shape == "classic-vf-eval"
    rollouts = list(iter_rows(source))
    assert len(rollouts) == 32 and "share_of_a" in rollouts[0].scores
    meta = json.loads((folder / "metadata.json").read_text())
    assert meta["rollouts_per_example"] == 4 and meta["num_examples"] == 8
    assert abs(meta["avg_reward"] - d["eval"]["avg_reward"]) < 1e-9
    # `check_reward_distribution --results OUTPUT_DIR` finds the eval, not the training metrics
    assert locate(out).path == folder / "results.jsonl"
    return out, env


@pytest.mark.classic
def test_cpu_proof_classic_environment(tmp_path, tiny_model, capsys):
    out, env = _proof(tmp_path, tiny_model, CLASSIC_TOY, "toy_classic")
    # A second run into the same folder is refused without --force / --resume ...
    code, obj = call("--env", str(env), "--model", str(tiny_model), "--output-dir", str(out), capsys=capsys)
    assert code == 2 and "already holds a training run" in obj["summary"]
    # ... and --resume latest continues from the final checkpoint.
    code, obj = call(
        "--env",
        str(env),
        "--model",
        str(tiny_model),
        "--output-dir",
        str(out),
        "--max-steps",
        "21",
        "--resume",
        "latest",
        "--set",
        "eval.final=false",
        *TOY_SETTINGS,
        capsys=capsys,
    )
    assert code == 0, obj
    assert obj["data"]["steps"] == 21
    assert any(c["id"] == "resume" and "step 20" in c["message"] for c in obj["checks"])
    assert len((out / "logs" / "metrics.jsonl").read_text().splitlines()) == 21


@pytest.mark.v1
def test_cpu_proof_v1_taskset(tmp_path, tiny_model):
    _proof(tmp_path, tiny_model, V1_TOY, "toy_v1")


@pytest.mark.classic
def test_multiturn_rollouts_train_as_one_masked_sequence(tmp_path, tiny_model):
    import torch
    from transformers import AutoModelForCausalLM

    from vlab.train.config import load_config
    from vlab.train.envsource import VerifiersSource
    from vlab.train.model import load_tokenizer
    from vlab.train.trainer import Trainer

    env = write_env_package(tmp_path / "envs", "toy_multi", CLASSIC_MULTITURN_TOY)
    cfg = load_config(
        None,
        [
            (["max_steps"], 2),
            (["batch_size"], 8),
            (["group_size"], 4),
            (["sampling", "max_completion_tokens"], 6),
            (["output_dir"], str(tmp_path / "run")),
            (["filter_zero_advantages"], False),
        ],
    )
    source = VerifiersSource.load(str(env))
    assert source.env.capabilities.multi_turn
    tok = load_tokenizer(str(tiny_model))
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model))
    hist = Trainer(cfg, model, tok, source, torch.device("cpu")).train()
    # Every rollout had two model turns; they merge into one sequence each (the env's turn masked
    # out). A turn whose text does not re-tokenize to the sampled ids (a random model emits odd
    # characters) cannot merge and trains as a sequence of its own: which ones do depends on the samples,
    # so most rollouts, not all, are asked to merge (unmerged, every step would train 16 sequences).
    assert hist[0]["num_rollouts"] == 8
    assert all(m["num_rollouts"] <= m["num_train_sequences"] <= m["num_rollouts"] + 2 for m in hist), [
        m["num_train_sequences"] for m in hist
    ]
    assert hist[0]["completion_len_mean"] > 6  # two turns' worth of tokens
    assert hist[0]["logprob_diff_max"] < 1e-5 and hist[0]["packed_sequences"]  # packed rows, the sampler's logprobs


@pytest.mark.classic
def test_environment_that_errors_is_reported(tmp_path, tiny_model, capsys):
    env = write_env_package(tmp_path / "envs", "toy_broken", CLASSIC_BROKEN_TOY)
    code, obj = call("--env", str(env), "--model", str(tiny_model), "--output-dir", str(tmp_path / "o"), capsys=capsys)
    assert code == 1 and "the dataset file is missing" in obj["summary"]
    # a reward function that raises on every rollout: the classic Rubric would score 0 silently
    env = write_env_package(tmp_path / "envs", "toy_raising", CLASSIC_RAISING_TOY)
    code, obj = call(
        "--env",
        str(env),
        "--model",
        str(tiny_model),
        "--output-dir",
        str(tmp_path / "o2"),
        "--set",
        "batch_size=8",
        "--set",
        "group_size=4",
        capsys=capsys,
    )
    assert code == 1 and "every rollout of step 1 failed" in obj["summary"] and "parsed_number" in obj["summary"]


def test_missing_model_is_reported(tmp_path, capsys, monkeypatch):
    code, obj = _model_only(tmp_path, str(tmp_path / "no-such-model"), capsys)
    assert code == 2 and "does not exist" in obj["summary"]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, obj = _model_only(tmp_path, "vlab-test/no-such-model-xyz", capsys)
    assert code == 4 and "not in the local cache and hub access is off" in obj["summary"]  # at once, no retries


def _model_only(tmp_path, model: str, capsys):
    from vlab.core.cli import to_json
    from vlab.core.result import Result, ToolError
    from vlab.train.config import load_config
    from vlab.train.runner import run_builtin

    cfg = load_config(None, [(["model", "name"], model), (["output_dir"], str(tmp_path / "o2"))])
    result = Result("local_train")

    class Source:
        env_id, num_examples = "fake", 4

    try:
        run_builtin(cfg, result, source=Source(), progress=False)
    except ToolError as err:
        result.error = err
    return result.exit_code(), json.loads(to_json(result))


def test_gpu_sized_model_on_cpu_is_refused(tmp_path, capsys):
    from transformers import Qwen2Config

    big = tmp_path / "big-model"
    Qwen2Config(
        hidden_size=1024,
        intermediate_size=4096,
        num_hidden_layers=24,
        num_attention_heads=16,
        num_key_value_heads=4,
        vocab_size=32000,
    ).save_pretrained(big)  # config only: ~400M parameters
    save_tiny_model(tmp_path / "tok")
    for f in (tmp_path / "tok").iterdir():  # tokenizer + chat template, no weights
        if f.name != "config.json" and not f.name.endswith(".safetensors"):
            (big / f.name).write_bytes(f.read_bytes())
    code, obj = _model_only(tmp_path, str(big), capsys)
    assert code == 3 and "no GPU" in obj["summary"] and "allow_cpu" in obj["next_steps"][0]


def test_bad_config_and_missing_inputs_are_usage_errors(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('model = "Qwen/Qwen2.5-0.5B"\nmax_steps = 10\n')
    code, obj = call(str(bad), capsys=capsys)
    assert code == 2 and "[model]" in obj["summary"]
    bad.write_text("[optim]\nlearning_rate = 1e-5\n")
    code, obj = call(str(bad), capsys=capsys)
    assert code == 2 and "unknown config key 'optim.learning_rate'" in obj["summary"]
    code, obj = call("--model", "x", "--output-dir", str(tmp_path / "o"), capsys=capsys)
    assert code == 2 and "no environment" in obj["summary"]
    code, obj = call("--env-args", "{nope", capsys=capsys)
    assert code == 2 and "--env-args" in obj["summary"]


# -- the prime-rl engine --------------------------------------------------------------


def test_prime_rl_dry_run_writes_a_valid_rl_toml(tmp_path, capsys):
    import tomllib

    out = tmp_path / "prl"
    args = [
        "--engine",
        "prime-rl",
        "--env",
        "primeintellect/reverse-text",
        "--model",
        "Qwen/Qwen3-0.6B",
        "--output-dir",
        str(out),
        "--dry-run",
        "--set",
        "lora.enabled=true",
        "--set",
        "optim.lr=2e-5",
    ]
    code, obj = call(*args, "--gpus", "2", capsys=capsys)
    assert code == 0, obj
    doc = tomllib.loads((out / "rl.toml").read_text())
    assert doc["deployment"] == {"type": "single_node", "num_train_gpus": 1, "num_infer_gpus": 1, "gpus_per_node": 2}
    assert doc["model"]["name"] == "Qwen/Qwen3-0.6B" and doc["trainer"]["optim"]["lr"] == 2e-5
    assert doc["trainer"]["model"]["lora"]["rank"] == 16
    assert doc["orchestrator"]["train"]["source"][0]["env"]["taskset"]["id"] == "primeintellect/reverse-text"
    assert any(c["id"] == "unknown-keys" and c["status"] == "pass" for c in obj["checks"])
    assert obj["data"]["commands"][0].endswith(f"uv run rl @ {(out / 'rl.toml').resolve()}")
    # never overwritten without --force
    code, obj = call(*args, "--gpus", "2", capsys=capsys)
    assert code == 2 and "already exists" in obj["summary"]
    code, obj = call(*args, "--gpus", "8", "--nodes", "2", "--force", capsys=capsys)
    assert code == 0, obj
    doc = tomllib.loads((out / "rl.toml").read_text())
    assert doc["deployment"]["type"] == "multi_node" and doc["deployment"]["gpus_per_node"] == 8
    assert "slurm" in doc
    # a dry run may be prepared on another machine: a missing checkout only warns
    code, obj = call(*args, "--gpus", "2", "--force", "--prime-rl-dir", str(tmp_path / "nope"), capsys=capsys)
    assert code == 0 and any(c["id"] == "prime_rl_dir" and c["status"] == "warn" for c in obj["checks"])


def test_prime_rl_launch_checks_checkout_and_gpus(tmp_path, capsys):
    args = ["--engine", "prime-rl", "--env", "reverse-text", "--model", "Qwen/Qwen3-0.6B"]
    code, obj = call(*args, "--output-dir", str(tmp_path / "a"), capsys=capsys)
    assert code == 2 and "--prime-rl-dir" in obj["summary"]
    code, obj = call(*args, "--output-dir", str(tmp_path / "b"), "--prime-rl-dir", str(tmp_path), capsys=capsys)
    assert code == 2 and "does not look like a prime-rl checkout" in obj["summary"]
    checkout = tmp_path / "prime-rl"
    (checkout / "src" / "prime_rl").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text('[project.scripts]\nrl = "prime_rl.entrypoints.rl:main"\n')
    code, obj = call(
        *args, "--output-dir", str(tmp_path / "c"), "--prime-rl-dir", str(checkout), "--gpus", "1", capsys=capsys
    )
    assert code == 3 and any(c["id"] == "gpus" and c["status"] == "fail" for c in obj["checks"])
