"""submit_training's library: builder, flat conversion, validation rules, key schema (in-process, offline)."""

from __future__ import annotations

import tomllib

import pytest
import tomlkit
from trainconfig_fixtures import FLAT_CONFIGS, NATIVE_CONFIG

from vlab.core.result import UsageError
from vlab.hosted import (
    Lookup,
    SourceSpec,
    TrainParams,
    build_document,
    convert_flat,
    schema_info,
    unknown_keys,
    validate_document,
)
from vlab.hosted.builder import TEMPLATES, TEMPLATES_DIR, parse_env_arg
from vlab.hosted.prime import PrimeCall
from vlab.hosted.schema import has_path

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once


def plain(doc) -> dict:
    return tomllib.loads(tomlkit.dumps(doc))


def by_id(checks, cid):
    return [c for c in checks if c.id == cid]


def status_of(checks, cid) -> set[str]:
    return {c.status for c in by_id(checks, cid)}


# -- templates and builder ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_templates_use_only_current_keys(name):
    doc = tomllib.loads((TEMPLATES_DIR / TEMPLATES[name]).read_text())
    assert unknown_keys(doc) == []
    assert isinstance(doc["model"], dict) and "env" not in doc


def test_build_from_plain_parameters_sets_every_key():
    params = TrainParams(
        model="Qwen/Qwen3-4B-Instruct-2507",
        max_steps=30,
        seq_len=4096,
        batch_size=256,
        group_size=16,
        max_completion_tokens=1024,
        temperature=0.7,
        sources=[
            SourceSpec("primeintellect/alphabet-sort", args={"min_turns": 3}, ratio=0.6),
            SourceSpec("primeintellect/wiki-search", ratio=0.4),
        ],
        eval_sources=[SourceSpec("primeintellect/wiki-search", num_examples=16)],
        eval_interval=10,
        lr=2e-5,
        lora=True,
        lora_rank=8,
        lora_alpha=16,
        num_train_gpus=2,
        num_infer_gpus=2,
        wandb_project="proj",
        wandb_name="run-1",
        ckpt_interval=10,
        ckpt_keep_last=2,
    )
    d = plain(build_document(params))
    assert d["model"]["name"] == "Qwen/Qwen3-4B-Instruct-2507"
    assert (d["max_steps"], d["seq_len"]) == (30, 4096)
    o = d["orchestrator"]
    assert (o["batch_size"], o["group_size"]) == (256, 16)
    assert o["train"]["sampling"] == {"max_completion_tokens": 1024, "temperature": 0.7}
    src = o["train"]["source"]
    assert [s["name"] for s in src] == ["alphabet-sort", "wiki-search"]
    assert [s["ratio"] for s in src] == [0.6, 0.4]
    assert src[0]["env"] == {
        "taskset": {"id": "primeintellect/alphabet-sort", "min_turns": 3},
        "agent": {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}},
    }
    assert o["eval"]["interval"] == 10 and o["eval"]["source"][0]["num_examples"] == 16
    assert d["trainer"]["optim"]["lr"] == 2e-5
    assert d["trainer"]["model"]["lora"] == {"rank": 8, "alpha": 16}
    assert d["deployment"] == {"type": "single_node", "num_train_gpus": 2, "num_infer_gpus": 2}
    assert d["monitors"]["wandb"] == {"project": "proj", "name": "run-1"}
    assert d["ckpt"] == {"interval": 10, "keep_last": 2}
    assert unknown_keys(d) == []


def test_prime_rl_template_has_inference_block():
    d = plain(build_document(TrainParams(model="m/x", sources=[SourceSpec("reverse-text")]), template="prime-rl"))
    assert "inference" in d and d["orchestrator"]["train"]["source"][0]["env"]["taskset"]["id"] == "reverse-text"


def test_starting_toml_keeps_comments_and_order():
    base = tomlkit.parse(NATIVE_CONFIG)
    text = tomlkit.dumps(build_document(TrainParams(max_steps=80, lr=2e-6), base=base))
    assert "# my reverse-text run" in text
    assert "max_steps = 80  # short first run" in text  # value changed, comment and spacing kept
    assert "lr = 2e-06  # full fine-tuning" in text
    # Nothing else moved: the untouched lines are byte-identical and in the same order.
    untouched = [line for line in NATIVE_CONFIG.splitlines() if not line.startswith(("max_steps", "lr ="))]
    assert [line for line in text.splitlines() if not line.startswith(("max_steps", "lr ="))] == untouched


def test_odd_characters_cannot_break_the_toml():
    nasty = 'he said "hi"\n[model]\nname = "evil" # \\ \u00e9'
    params = TrainParams(model=nasty, sources=[SourceSpec("o/x", name=nasty, args={"prompt": nasty})], wandb_name=nasty)
    d = plain(build_document(params))
    assert d["model"]["name"] == nasty
    assert d["orchestrator"]["train"]["source"][0]["name"] == nasty
    assert d["orchestrator"]["train"]["source"][0]["env"]["taskset"]["prompt"] == nasty
    assert d["monitors"]["wandb"]["name"] == nasty


def test_env_arg_values_are_read_as_toml():
    assert parse_env_arg("max_turns=5") == ("max_turns", 5)
    assert parse_env_arg("flag=true") == ("flag", True)
    assert parse_env_arg('name="a b"') == ("name", "a b")
    assert parse_env_arg("split=train") == ("split", "train")  # not TOML: kept as text
    with pytest.raises(UsageError):
        parse_env_arg("no-equals")


# -- flat conversion: every key of each real-world shape ------------------------------------------------


def convert(name):
    doc, mappings = convert_flat(tomllib.loads(FLAT_CONFIGS[name]))
    return plain(doc), {m.source: m for m in mappings}


def test_flat_alphabet_sort():
    d, m = convert("alphabet-sort")
    assert d["model"]["name"] == "Qwen/Qwen3-30B-A3B-Instruct-2507" and m["model"].target == "model.name"
    assert d["max_steps"] == 500 and m["max_steps"].action == "mapped"
    assert d["orchestrator"]["batch_size"] == 256 and m["batch_size"].target == "orchestrator.batch_size"
    assert d["orchestrator"]["group_size"] == 8 and m["rollouts_per_example"].target == "orchestrator.group_size"
    assert d["orchestrator"]["train"]["sampling"]["max_completion_tokens"] == 512
    assert m["sampling.max_tokens"].target == "orchestrator.train.sampling.max_completion_tokens"
    src = d["orchestrator"]["train"]["source"]
    assert len(src) == 1 and src[0]["name"] == "alphabet-sort"
    assert src[0]["env"]["taskset"] == {
        "id": "primeintellect/alphabet-sort",
        "min_turns": 3,
        "max_turns": 5,
        "power_per_turn": False,
    }
    assert src[0]["env"]["agent"] == {"harness": {"id": "null"}, "runtime": {"type": "subprocess"}}
    assert m["env[0].args"].action == "renamed"
    assert d["monitors"]["wandb"] == {"project": "alphabet-sort", "name": "qwen3-30b-alphabet-sort"}
    assert {m["wandb.project"].target, m["wandb.name"].target} == {"monitors.wandb.project", "monitors.wandb.name"}
    assert "lora" not in d.get("trainer", {}).get("model", {})
    assert set(m) == {
        "model",
        "max_steps",
        "batch_size",
        "rollouts_per_example",
        "sampling.max_tokens",
        "env[0].id",
        "env[0].args",
        "wandb.project",
        "wandb.name",
    }
    assert unknown_keys(d) == [] and "env" not in d and "sampling" not in d and "wandb" not in d


def test_flat_wiki_search_eval_buffer_and_dropped_keys():
    d, m = convert("wiki-search")
    o = d["orchestrator"]
    assert o["group_size"] == 16 and o["batch_size"] == 128
    assert d["trainer"]["optim"]["lr"] == 1e-4 and m["learning_rate"].target == "trainer.optim.lr"
    assert o["max_off_policy_steps"] == 2 and m["max_async_level"].target == "orchestrator.max_off_policy_steps"
    assert m["oversampling_factor"].action == "dropped" and m["oversampling_factor"].target is None
    assert m["trajectory_strategy"].action == "dropped"
    assert o["train"]["sampling"] == {"max_completion_tokens": 1024, "temperature": 1.0}
    assert o["train"]["source"][0]["env"]["taskset"] == {"id": "primeintellect/wiki-search", "max_turns": 10}
    ev = o["eval"]
    assert (ev["interval"], ev["num_examples"], ev["group_size"]) == (50, 64, 1)
    assert ev["skip_first_step"] is False and m["eval.eval_base_model"].target == "orchestrator.eval.skip_first_step"
    assert ev["source"][0]["env"]["taskset"]["id"] == "primeintellect/wiki-search"
    assert ev["source"][0]["num_examples"] == 32
    assert o["train"]["filter_zero_advantages"] is True
    assert m["buffer.online_difficulty_filtering"].target == "orchestrator.train.filter_zero_advantages"
    for k in ("buffer.easy_threshold", "buffer.hard_threshold"):
        assert m[k].action == "dropped" and "curriculum" in m[k].reason
    assert "buffer" not in d and "eval" not in d and unknown_keys(d) == []
    # A LoRA-sized learning rate on a now full fine-tuning run is called out.
    checks = validate_document(d)
    assert status_of(checks, "learning-rate") == {"warn"}


def test_flat_multi_env_weights_become_ratios():
    d, m = convert("multi-env")
    src = d["orchestrator"]["train"]["source"]
    assert [s["env"]["taskset"]["id"] for s in src] == [
        "primeintellect/gsm8k",
        "primeintellect/math-python",
        "primeintellect/reverse-text",
    ]
    assert [s["ratio"] for s in src] == [0.5, 0.3, 0.2]
    assert [s["name"] for s in src] == ["gsm8k", "math-python", "reverse-text"]
    assert src[1]["env"]["taskset"]["max_turns"] == 5
    assert all(m[f"env[{i}].weight"].target == f"orchestrator.train.source[{i}].ratio" for i in range(3))
    assert d["env_file"] == ["secrets.env"] and m["env_file"].action == "kept"
    assert m["sampling.enable_thinking"].action == "dropped"
    assert d["orchestrator"]["batch_size"] == 512 and d["orchestrator"]["group_size"] == 16
    assert unknown_keys(d) == []
    # max_tokens 2048 does not fit the template's seq_len 2048: caught before submission.
    assert status_of(validate_document(d), "completion-tokens") == {"fail"}


def test_flat_lora():
    d, m = convert("lora")
    lora = d["trainer"]["model"]["lora"]
    assert lora == {
        "rank": 16,
        "alpha": 32,
        "dropout": 0.05,
        "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"],
    }
    assert m["lora_alpha"].target == "trainer.model.lora.alpha"
    for k in ("rank", "dropout", "target_modules"):
        assert m[f"lora.{k}"].target == f"trainer.model.lora.{k}"
    assert d["trainer"]["optim"]["lr"] == 5e-5
    assert d["orchestrator"]["train"]["sampling"]["max_completion_tokens"] == 768
    checks = validate_document(d)
    assert status_of(checks, "learning-rate") == {"pass"}  # 5e-5 is a LoRA rate
    assert not [c for c in checks if c.status == "fail"]


def test_flat_without_env_or_model_is_bad_input():
    from vlab.core.result import UsageError

    with pytest.raises(UsageError):
        convert_flat({"model": "m", "batch_size": 8})
    with pytest.raises(UsageError):
        convert_flat({"batch_size": 8, "env": [{"id": "o/x"}]})


# -- validation rules -----------------------------------------------------------------------------------


def native(**changes) -> dict:
    d = tomllib.loads(NATIVE_CONFIG)
    for dotted, value in changes.items():
        node = d
        *parents, key = dotted.split("__")
        for p in parents:
            node = node.setdefault(p, {})
        if value is None:
            node.pop(key, None)
        else:
            node[key] = value
    return d


def test_native_config_passes_offline():
    checks = validate_document(native(), text=NATIVE_CONFIG)
    assert not [c for c in checks if c.status == "fail"], checks
    assert status_of(checks, "env-hub") == {"skip"} and status_of(checks, "model-available") == {"warn"}


def test_strict_toml_parse_fails_with_usage_code():
    checks = validate_document({}, text="max_steps = [\n")
    assert checks[0].id == "toml-parse" and checks[0].status == "fail" and checks[0].exit_code == 2


def test_flat_shape_is_rejected():
    checks = validate_document(tomllib.loads(FLAT_CONFIGS["alphabet-sort"]))
    c = by_id(checks, "flat-shape")[0]
    assert c.status == "fail" and "--from-flat" in c.hint and "model" in c.message


def test_unknown_keys_with_suggestion():
    d = native(orchestrator__batchsize=64, trainer__optim__lrr=1e-6)
    c = by_id(validate_document(d), "unknown-keys")[0]
    assert c.status == "fail"
    assert "orchestrator.batchsize (did you mean orchestrator.batch_size?)" in c.message
    assert "trainer.optim.lrr" in c.message and schema_info().prime_rl_version in c.message


def test_hosted_cli_keys_are_not_unknown():
    assert unknown_keys(native(name="run-1", image_tag="main", gpu_type="H200_141GB")) == []


def test_batch_divisible_and_group_size_rules():
    assert status_of(validate_document(native(orchestrator__batch_size=100)), "batch-divisible") == {"fail"}
    assert status_of(validate_document(native()), "batch-divisible") == {"pass"}
    assert status_of(
        validate_document(native(orchestrator__group_size=1, orchestrator__batch_size=128)), "group-size"
    ) == {"fail"}
    assert status_of(validate_document(native(orchestrator__group_size=4)), "group-size") == {"warn"}
    assert status_of(
        validate_document(native(orchestrator__group_size=32, orchestrator__batch_size=1024)), "group-size"
    ) == {"warn"}
    assert status_of(validate_document(native(orchestrator__batch_size=1024)), "batch-size") == {"warn"}


def test_learning_rate_ranges_lora_vs_full():
    assert status_of(validate_document(native(trainer__optim__lr=1e-6)), "learning-rate") == {"pass"}
    assert status_of(validate_document(native(trainer__optim__lr=1e-4)), "learning-rate") == {"warn"}
    assert status_of(validate_document(native(trainer__optim__lr=5e-3)), "learning-rate") == {"fail"}
    lora = native(trainer__optim__lr=1e-4)
    lora["trainer"]["model"] = {"lora": {"rank": 16}}
    assert status_of(validate_document(lora), "learning-rate") == {"pass"}
    lora["trainer"]["optim"]["lr"] = 1e-7
    assert status_of(validate_document(lora), "learning-rate") == {"warn"}
    assert status_of(validate_document(native(trainer__optim__lr=-1.0)), "learning-rate") == {"fail"}


def test_completion_tokens_within_seq_len():
    d = native()
    d["orchestrator"]["train"]["sampling"]["max_completion_tokens"] = 4096
    assert status_of(validate_document(d), "completion-tokens") == {"fail"}
    d["orchestrator"]["train"]["sampling"]["max_completion_tokens"] = 1800
    assert status_of(validate_document(d), "completion-tokens") == {"warn"}


def test_env_ids_well_formed():
    d = native()
    d["orchestrator"]["train"]["source"][0]["env"]["taskset"]["id"] = "bad id; rm -rf"
    assert status_of(validate_document(d), "env-id") == {"fail"}
    d["orchestrator"]["train"]["source"][0]["env"]["taskset"]["id"] = "reverse-text"
    assert status_of(validate_document(d), "env-id") == {"warn"}  # no owner: the Hub cannot resolve it
    assert status_of(validate_document(d, target="prime-rl"), "env-id") == {"pass"}
    d["orchestrator"]["train"]["source"][0]["env"]["taskset"]["id"] = "primeintellect/reverse-text@0.1.2"
    assert status_of(validate_document(d), "env-id") == {"pass"}


def test_max_steps_required_for_hosted():
    assert status_of(validate_document(native(max_steps=None)), "max-steps") == {"fail"}
    assert status_of(validate_document(native(max_steps=None), target="prime-rl"), "max-steps") == {"warn"}


def test_filter_zero_advantages_off_warns():
    d = native()
    d["orchestrator"]["train"]["filter_zero_advantages"] = False
    assert status_of(validate_document(d), "difficulty-filtering") == {"warn"}


def test_secrets_in_file_fail():
    key = "wandb_" + "0123456789abcdef0123"
    d = native()
    d["monitors"] = {"wandb": {"project": "p"}}
    d["env_vars"] = {"WANDB_API_KEY": key}
    c = by_id(validate_document(d), "no-secrets")[0]
    assert c.status == "fail" and "env_vars.WANDB_API_KEY" in c.message and key not in c.message
    text = NATIVE_CONFIG + "# token: hf_" + "a" * 30 + "\n"
    assert status_of(validate_document({}, text=text), "no-secrets") == {"fail"}


def test_forwarding_rules():
    d = native()
    d["monitors"] = {"wandb": {"project": "p"}}
    assert status_of(validate_document(d), "forward-env") == {"warn"}
    assert status_of(
        validate_document(d, forward_env=["WANDB_API_KEY"], environ={"WANDB_API_KEY": "x" * 40}), "forward-env"
    ) == {"pass"}
    c = by_id(validate_document(d, forward_env=["WANDB_API_KEY"], environ={}), "forward-env")
    assert c[0].status == "fail" and c[0].exit_code == 3
    bad = by_id(validate_document(native(), forward_env=["OPENAI_API_KEY"]), "forward-env")[0]
    assert bad.status == "fail" and bad.exit_code == 2


def test_hosted_rejects_k8s_and_clean():
    assert status_of(validate_document(native(clean=True)), "hosted-compat") == {"fail"}


def _lookup(env_state="ok", models=None, models_code=0):
    def env_info(env_id):
        codes = {"ok": 0, "not_found": 1, "unreachable": 4}
        return PrimeCall(codes[env_state], env_state, f"{env_state} {env_id}")

    def train_models():
        return PrimeCall(
            models_code,
            "ok" if models_code == 0 else "unreachable",
            "models",
            models if models is not None else {"available_fft_models": [{"name": "Qwen/Qwen3-4B-Instruct-2507"}]},
        )

    return Lookup(env_info=env_info, train_models=train_models)


def test_online_rules_distinguish_not_found_from_network():
    ok = validate_document(native(), lookup=_lookup(), online=True)
    assert status_of(ok, "env-hub") == {"pass"} and status_of(ok, "model-available") == {"pass"}
    nf = by_id(validate_document(native(), lookup=_lookup("not_found"), online=True), "env-hub")[0]
    assert nf.status == "fail" and nf.exit_code == 1 and "not on the Environments Hub" in nf.message
    down = by_id(validate_document(native(), lookup=_lookup("unreachable"), online=True), "env-hub")[0]
    assert down.status == "fail" and down.exit_code == 4 and "not on" not in down.message


def test_online_model_rules():
    other = {"available_fft_models": [{"name": "other/model"}]}
    assert status_of(validate_document(native(), lookup=_lookup(models=other), online=True), "model-available") == {
        "fail"
    }
    on_demand = dict(other, on_demand=[{"gpu_type": "H200_141GB", "price_per_gpu_hour": 3.0}])
    assert status_of(validate_document(native(), lookup=_lookup(models=on_demand), online=True), "model-available") == {
        "warn"
    }
    down = by_id(validate_document(native(), lookup=_lookup(models_code=4), online=True), "model-available")[0]
    assert down.status == "fail" and down.exit_code == 4


def test_schema_records_prime_rl_version_and_knows_current_keys():
    info = schema_info()
    assert len(info.prime_rl_commit) == 40 and info.prime_rl_version
    for path in (
        "model.name",
        "max_steps",
        "orchestrator.batch_size",
        "orchestrator.group_size",
        "orchestrator.train.sampling.max_completion_tokens",
        "orchestrator.train.source.ratio",
        "orchestrator.train.filter_zero_advantages",
        "orchestrator.eval.source.num_examples",
        "trainer.optim.lr",
        "trainer.model.lora.rank",
        "monitors.wandb.project",
        "ckpt.keep_last",
        "deployment.num_train_gpus",
        "orchestrator.max_off_policy_steps",
        "trainer.loss.kl_tau",
    ):
        assert has_path(path), path
    for old in ("rollouts_per_example", "learning_rate", "orchestrator.buffer", "sampling.max_tokens"):
        assert not has_path(old), old
