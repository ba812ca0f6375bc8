"""local_train --engine prime-rl: every setting mapped or refused, the GPU/node split by model size,
multi-node in prime-rl's own shape (one rl.toml, [slurm], one submit command), the environment
installed into the checkout's .venv, and environment arguments checked by name."""

from __future__ import annotations

import json
import sys
import tomllib
from dataclasses import fields, is_dataclass

import pytest

from vlab.core.result import UsageError
from vlab.hosted.schema import has_path
from vlab.train.config import TrainConfig, load_config
from vlab.train.gpusplit import SPLIT_RULE, layout, params_from_name, split
from vlab.train.primerl_map import RULES, config_fields, map_config

MODEL = "Qwen/Qwen2.5-0.5B-Instruct"


def call(*argv: str, capsys) -> tuple[int, dict]:
    import local_train
    from conftest import assert_result

    capsys.readouterr()
    code = local_train.main(["--json", "--no-progress", *argv])
    return code, assert_result(json.loads(capsys.readouterr().out), "local_train", code)


def prl(tmp_path, *extra: str, env: str = "primeintellect/reverse-text", model: str = MODEL) -> list[str]:
    return ["--engine", "prime-rl", "--env", env, "--model", model, "--output-dir", str(tmp_path / "o"), *extra]


# -- the mapping table --------------------------------------------------------------------


def _walk(cls, prefix=""):
    for f in fields(cls):
        v = getattr(cls(), f.name)
        yield from (_walk(type(v), f"{prefix}{f.name}.") if is_dataclass(v) else [prefix + f.name])


def test_every_setting_is_mapped_or_refused_and_every_key_is_prime_rls():
    names = list(_walk(TrainConfig))
    assert sorted(names) == sorted(config_fields()) == sorted(RULES)  # no setting without a rule, no stale rule
    for name in names:
        rule = RULES[name]
        assert rule.keys or rule.why, f"{name}: neither a prime-rl key nor a reason"
        for key in rule.keys:
            assert has_path(key), f"{name} -> {key}: not in prime-rl's schema (prime_rl_keys.py)"


def test_mapping_writes_only_schema_keys_for_many_configs():
    for overrides in (
        [],
        [(["optim", "warmup_steps"], 5), (["eval", "interval"], 5), (["lora", "enabled"], True)],
        [(["model", "gradient_checkpointing"], True), (["seed"], 3), (["ckpt", "interval"], 10)],
        [(["model", "trust_remote_code"], True), (["wandb", "enabled"], True), (["wandb", "name"], "r")],
    ):
        values = map_config(load_config(None, overrides)).values
        for key in values:
            assert has_path(key), key


@pytest.mark.parametrize(
    "key, value, written",
    [
        (["optim", "warmup_steps"], 5, {"trainer.scheduler.type": "linear", "trainer.scheduler.warmup_steps": 5}),
        (["loss", "kl_tau"], 0.01, {"trainer.loss.kl_tau": 0.01, "trainer.loss.type": "default"}),
        (["loss", "dppo_mask_high"], 0.3, {"trainer.loss.dppo_mask_high": 0.3}),
        (["eval", "interval"], 5, {"orchestrator.eval.interval": 5, "orchestrator.eval.group_size": 4}),
        (["model", "gradient_checkpointing"], True, {"trainer.model.ac.mode": "full"}),
        (["optim", "weight_decay"], 0.0, {"trainer.optim.weight_decay": 0.0}),  # prime-rl's default is 0.01
        (["model", "seq_len"], 4096, {"seq_len": 4096}),
        (["model", "renderer"], "default", {"orchestrator.renderer.name": "default"}),
    ],
)
def test_settings_the_first_user_lost_are_carried(key, value, written):
    values = map_config(load_config(None, [(key, value)])).values
    for k, v in written.items():
        assert values[k] == v, k


def test_default_config_evaluates_at_the_end_and_skips_warmup():
    values = map_config(TrainConfig()).values
    assert values["orchestrator.eval.interval"] == TrainConfig().max_steps  # the final eval
    assert not any(k.startswith("trainer.scheduler") for k in values)  # prime-rl's constant schedule = no warmup


@pytest.mark.parametrize(
    "key, value, needle",
    [
        (["loss", "type"], "ppo_clip", "no PPO-style ratio clip"),
        (["micro_batch_size"], 4, "seq_len tokens"),
        (["micro_batch_tokens"], 4096, "seq_len tokens"),
        (["model", "gradient_checkpointing"], False, "checkpoints activations by default"),
        (["sampling", "top_p"], 0.9, "only temperature"),
        (["loss", "std_normalize"], True, "group mean"),
        (["model", "device"], "cuda:1", "[deployment]"),
        (["optim", "max_norm"], 0.0, "None"),
    ],
)
def test_settings_prime_rl_cannot_take_are_refused(key, value, needle):
    with pytest.raises(UsageError) as err:
        map_config(load_config(None, [(key, value)]))
    assert ".".join(key) in err.value.message and needle in err.value.message


def test_every_refusal_is_listed_at_once(tmp_path, capsys):
    code, obj = call(
        *prl(tmp_path, "--dry-run", "--gpus", "2", "--set", "loss.type=ppo_clip", "--set", "micro_batch_size=2"),
        capsys=capsys,
    )
    assert code == 2
    assert "2 setting(s)" in obj["summary"] and "loss.type" in obj["summary"] and "micro_batch_size" in obj["summary"]
    assert not (tmp_path / "o" / "rl.toml").exists()


def test_builtin_only_settings_at_defaults_are_named_not_dropped(tmp_path, capsys):
    code, obj = call(*prl(tmp_path, "--dry-run", "--gpus", "2"), capsys=capsys)
    assert code == 0, obj
    left = {n["key"] for n in obj["data"]["not_carried"]}
    assert {"sampler.static_cache", "model.cpu_threads", "loss.clip_high"} <= left
    doc = tomllib.loads((tmp_path / "o" / "rl.toml").read_text())
    assert doc["trainer"]["loss"] == {
        "type": "default",
        "dppo_mask_low": 0.2,
        "dppo_mask_high": 0.2,
        "adv_tau": 1.0,
        "kl_tau": 1e-3,
    }
    assert doc["orchestrator"]["eval"]["source"][0]["env"]["taskset"]["id"] == "primeintellect/reverse-text"


# -- the GPU / node split ----------------------------------------------------------------


@pytest.mark.parametrize(
    "name, params",
    [
        ("Qwen/Qwen2.5-0.5B-Instruct", 5e8),
        ("meta-llama/Llama-3.1-70B", 7e10),
        ("Qwen/Qwen3-30B-A3B", 3e10),
        ("x/SmolLM-135M", 1.35e8),
        ("gpt2", None),
    ],
)
def test_params_from_name(name, params):
    assert params_from_name(name) == params


@pytest.mark.parametrize(
    "params, gpus, lora, train",
    [
        (5e8, 8, False, 1),  # small: rollouts dominate, one trainer GPU
        (5e8, 2, False, 1),
        (7e9, 8, False, 2),  # 1/4
        (7e9, 8, True, 1),  # LoRA: the row below
        (3e10, 8, False, 4),  # 1/2
        (7e10, 8, False, 6),  # 3/4
        (7e10, 2, False, 1),  # each side keeps one
        (None, 8, False, 4),  # unknown: even
    ],
)
def test_split_follows_model_size(params, gpus, lora, train):
    s = split(gpus, params, lora)
    assert (s.train, s.infer) == (train, gpus - train)


def test_split_rule_is_monotonic():
    shares = [share for _, share in SPLIT_RULE]
    assert shares == sorted(shares) and SPLIT_RULE[-1][0] == float("inf")


def test_half_billion_model_on_eight_gpus_gives_inference_seven(tmp_path, capsys):
    code, obj = call(*prl(tmp_path, "--dry-run", "--gpus", "8"), capsys=capsys)
    assert code == 0, obj
    doc = tomllib.loads((tmp_path / "o" / "rl.toml").read_text())
    assert doc["deployment"] == {"type": "single_node", "num_train_gpus": 1, "num_infer_gpus": 7, "gpus_per_node": 8}
    assert obj["data"]["deployment"] == doc["deployment"]
    # the config's own split wins
    code, obj = call(
        *prl(tmp_path, "--dry-run", "--gpus", "8", "--force", "--set", "deployment.num_train_gpus=4"), capsys=capsys
    )
    assert obj["data"]["deployment"]["num_train_gpus"] == 4 and obj["data"]["deployment"]["num_infer_gpus"] == 4


# -- several nodes -----------------------------------------------------------------------


def test_multi_node_json_toml_and_commands_agree(tmp_path, capsys):
    checkout = tmp_path / "prime-rl"
    code, obj = call(
        *prl(
            tmp_path, "--nodes", "4", "--gpus", "8", "--prime-rl-dir", str(checkout), model="meta-llama/Llama-3.1-70B"
        ),
        capsys=capsys,
    )
    assert code == 0, obj
    doc = tomllib.loads((tmp_path / "o" / "rl.toml").read_text())
    d = obj["data"]
    assert (
        doc["deployment"]
        == d["deployment"]
        == {
            "type": "multi_node",
            "num_train_nodes": 3,  # 70B: the trainer gets 3/4 of the nodes
            "num_infer_nodes": 1,
            "num_infer_replicas": 1,
            "gpus_per_node": 8,
        }
    )
    assert d["num_train_gpus"] == 24 and d["num_infer_gpus"] == 8 and d["nodes"] == 4
    assert doc["slurm"]["project_dir"] == str(checkout.resolve()) and doc["inference"]["router"]["type"]
    assert [r["role"].split(" ")[0] for r in d["node_roles"]] == ["inference", "trainer", "trainer", "trainer"]
    launch = f"cd {checkout.resolve()} && uv run rl @ {(tmp_path / 'o' / 'rl.toml').resolve()}"
    assert d["commands"][0] == launch and "login node" in d["command_where"]
    assert any(launch in s for s in obj["next_steps"])
    assert has_path("deployment.num_infer_replicas") and has_path("slurm.project_dir")


def test_multi_node_refuses_a_per_node_gpu_split(tmp_path, capsys):
    code, obj = call(
        *prl(tmp_path, "--nodes", "2", "--gpus", "8", "--set", "deployment.num_train_gpus=2"), capsys=capsys
    )
    assert code == 2 and "whole nodes" in obj["summary"]


def test_layout_roles_cover_every_node():
    lay = layout(5, 8, 7e9, False)
    assert lay.train + lay.infer == 5 and len(lay.roles()) == 5


# -- the environment in prime-rl's own .venv ----------------------------------------------


def _checkout(tmp_path, with_module: str | None = None):
    root = tmp_path / "prime-rl"
    (root / "src" / "prime_rl").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project.scripts]\nrl = "prime_rl.entrypoints.rl:main"\n')
    bin_ = root / ".venv" / "bin"
    bin_.mkdir(parents=True)
    site = root / "site"
    site.mkdir()
    if with_module:
        (site / f"{with_module}.py").write_text("")
    py = bin_ / "python"  # a stand-in for the checkout's interpreter, seeing only its own site folder
    py.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} -S "$@"\n')
    py.chmod(0o755)
    return root


def test_install_check_uses_the_checkouts_python(tmp_path, capsys):
    env_dir = tmp_path / "envs" / "my-env"
    env_dir.mkdir(parents=True)
    (env_dir / "my_env.py").write_text(V1)  # prime-rl runs v1 tasksets only (the generation gate)
    (env_dir / "pyproject.toml").write_text('[project]\nname = "my-env"\n')
    # about the checkout's import check alone: this bare package has no data to rehearse a load with
    root = _checkout(tmp_path)
    args = prl(tmp_path, "--dry-run", "--gpus", "2", "--prime-rl-dir", str(root), "--no-rehearse", env=str(env_dir))
    code, obj = call(*args, capsys=capsys)
    check = next(c for c in obj["checks"] if c["id"] == "env_installed")
    assert check["status"] == "warn" and "'my_env' does not import" in check["message"]
    install = f"cd {root.resolve()} && uv pip install -e {env_dir.resolve()}"
    assert install in obj["next_steps"] and install in check["hint"]
    # a real run refuses to start prime-rl without it (exit 3), before looking at GPUs
    code, obj = call(
        *prl(tmp_path / "r", "--gpus", "2", "--prime-rl-dir", str(root), "--no-rehearse", env=str(env_dir)),
        capsys=capsys,
    )
    assert code == 3 and any(c["id"] == "env_installed" and c["status"] == "fail" for c in obj["checks"])
    # installed: passes
    root2 = _checkout(tmp_path / "b", with_module="my_env")
    code, obj = call(
        *prl(
            tmp_path / "b", "--dry-run", "--gpus", "2", "--prime-rl-dir", str(root2), "--no-rehearse", env=str(env_dir)
        ),
        capsys=capsys,
    )
    assert any(c["id"] == "env_installed" and c["status"] == "pass" for c in obj["checks"]), obj["checks"]


def test_install_env_needs_a_checkout(tmp_path, capsys):
    code, obj = call(*prl(tmp_path, "--dry-run", "--gpus", "2", "--install-env"), capsys=capsys)
    assert code == 2 and "--prime-rl-dir" in obj["summary"]


# -- environment arguments ---------------------------------------------------------------


CLASSIC = (
    "import verifiers as vf\n\ndef load_environment(num_examples: int = 10, difficulty: str = 'easy'):\n    pass\n"
)
V1 = """
import verifiers.v1 as vf


class Config(vf.TasksetConfig):
    num_examples: int = 10
    difficulty: str = "easy"


class Tasks(vf.Taskset[vf.Task, Config]):
    def load(self):
        return []


__all__ = ["Tasks"]
"""


def _v1() -> bool:
    from vlab.core.installed import verifiers_info

    return bool(verifiers_info().v1 and not verifiers_info().classic)


def _env(tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(V1 if _v1() else CLASSIC)
    return path


def test_check_env_args_against_config_or_signature(tmp_path):
    from vlab.train.envargs import check_env_args

    env = str(_env(tmp_path, "argcheck_env_d"))
    kind = "taskset config Config" if _v1() else "load_environment"
    assert kind in check_env_args(env, {"num_examples": 3, "difficulty": "hard"})
    with pytest.raises(UsageError) as err:
        check_env_args(env, {"num_exampels": 3})
    assert "did you mean 'num_examples'" in err.value.message and kind in err.value.message
    with pytest.raises(UsageError) as err:
        check_env_args(env, {"zzz": 1})
    assert "did you mean" not in err.value.message and "difficulty" in err.value.hint
    # **kwargs takes anything
    loose = tmp_path / "argcheck_env_e.py"
    loose.write_text("def load_environment(**kwargs):\n    pass\n")
    assert "any argument" in check_env_args(str(loose), {"zzz": 1})


def test_misspelt_env_arg_is_refused_before_anything_runs(tmp_path, capsys):
    env = _env(tmp_path, "argcheck_env_a")
    args = prl(tmp_path, "--dry-run", "--gpus", "2", env=str(env))
    if not _v1():  # prime-rl runs v1 tasksets only: the builtin engine checks a classic signature the same way
        args = ["--env", str(env), "--model", MODEL, "--output-dir", str(tmp_path / "o"), "--dry-run"]
    code, obj = call(*args, "--env-arg", "num_exampels=5", capsys=capsys)
    assert code == 2 and "did you mean 'num_examples'" in obj["summary"]
    if not _v1():
        return
    code, obj = call(*args, "--env-arg", "difficulty=hard", capsys=capsys)
    assert code == 0, obj
    doc = tomllib.loads((tmp_path / "o" / "rl.toml").read_text())
    assert doc["orchestrator"]["train"]["source"][0]["env"]["taskset"]["difficulty"] == "hard"


def test_eval_env_args_are_checked_and_written(tmp_path, capsys):
    if not _v1():
        pytest.skip("prime-rl runs v1 tasksets only: tested in the verifiers 0.4 venv")
    env = _env(tmp_path, "argcheck_env_b")
    base = prl(tmp_path, "--dry-run", "--gpus", "2", "--eval-env", str(env), env=str(env))
    code, obj = call(*base, "--eval-env-arg", "difficulty_level=3", capsys=capsys)
    assert code == 2 and "--eval-env-arg" in obj["summary"] and "difficulty" in obj["summary"]
    code, obj = call(*base, "--eval-env-arg", "difficulty=hard", "--set", "eval.interval=5", capsys=capsys)
    assert code == 0, obj
    doc = tomllib.loads((tmp_path / "o" / "rl.toml").read_text())
    ev = doc["orchestrator"]["eval"]
    assert ev["interval"] == 5 and ev["source"][0]["env"]["taskset"]["difficulty"] == "hard"
    assert "difficulty" not in doc["orchestrator"]["train"]["source"][0]["env"]["taskset"]


def test_dotted_env_arg_nests():
    from local_train import build_parser, request

    req = request(
        build_parser().parse_args(
            ["--env", "x", "--env-arg", "task.k=2", "--env-arg", "task.name=a", "--env-arg", "n=3"]
        )
    )
    cfg = load_config(None, [(list(p), v) for p, v in req.overrides])
    assert cfg.env.args == {"task": {"k": 2, "name": "a"}, "n": 3}
    with pytest.raises(UsageError):
        request(build_parser().parse_args(["--env-arg", "a..b=1"]))


def test_unimportable_env_skips_the_check_with_a_warning(tmp_path, capsys):
    bad = tmp_path / "broken_env_c.py"
    bad.write_text("import not_a_module_anywhere\n")
    code, obj = call(*prl(tmp_path, "--dry-run", "--gpus", "2", "--env-arg", "x=1", env=str(bad)), capsys=capsys)
    assert code == 0, obj
    assert any(c["id"] == "env_args" and c["status"] == "warn" and "not checked" in c["message"] for c in obj["checks"])


def test_split_rule_matches_the_documented_table():
    import re
    from fractions import Fraction

    from conftest import SKILL_ROOT

    text = (SKILL_ROOT / "references" / "local-training.md").read_text()
    rows = re.findall(r"^\| (under \d+B|\d+B to under \d+B|\d+B and up) \| ([^|]+) \|", text, re.M)
    assert len(rows) == len(SPLIT_RULE)
    for (model, share), (below, rule_share) in zip(rows, SPLIT_RULE):
        bound = re.findall(r"under (\d+)B", model)
        assert (float(bound[-1]) * 1e9 if bound else float("inf")) == below
        assert (0.0 if share.startswith("1 GPU") else float(Fraction(share.strip()))) == rule_share
