"""local_train's memory budget (`--memory-budget GIB`, `model.memory_budget_gib`): the plan made for less
than the device has, what it gives up against the plan without it, the refusal when even the smallest
settings do not fit, the CUDA cap, and the prime-rl hand-off refusing it (CPU, offline)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from vlab.core.result import EXIT_PREREQ, PrerequisiteError, Result, UsageError  # noqa: E402
from vlab.train import memory  # noqa: E402
from vlab.train.config import load_config  # noqa: E402
from vlab.train.plan import enforce_budget, make_plan, refusal  # noqa: E402

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

GIB = memory.GIB
QWEN_05B = memory.ModelShape(
    params=494_032_768, hidden=896, layers=24, intermediate=4864, vocab=151936, kv_heads=2, head_dim=64
)
MIXED = memory.Precision(compute="bfloat16", weights="float32", optimization="float32")
CUDA = torch.device("cuda")  # only named: nothing here touches a GPU


def _plan(budget_gib: float = 0, free_gib: float = 80, already_loaded: int = 0, **keys):
    overrides = [(["model", "memory_budget_gib"], budget_gib), *((k.split("."), v) for k, v in keys.items())]
    cfg = load_config(None, overrides)
    return make_plan(
        cfg, CUDA, MIXED, QWEN_05B, QWEN_05B.params, already_loaded=already_loaded, free=int(free_gib * GIB)
    )


def _call(*argv, capsys):
    import local_train

    capsys.readouterr()
    code = local_train.main(["--json", *argv])
    return code, json.loads(capsys.readouterr().out)  # one JSON object, nothing else on stdout


# -- the plan under a budget -------------------------------------------------------------------


def test_a_budget_shrinks_the_plan_and_names_what_it_gave_up():
    free, budgeted = _plan(), _plan(24)
    # 80 GiB free: the whole 32 x 768-token batch in one micro-batch, every rollout generated at once
    assert (free.micro_batch_tokens, free.generation_batch, free.checkpointing) == (32 * 768, 32, False)
    assert free.memory_budget == 0 and "memory budget" not in free.describe()
    assert budgeted.fits and budgeted.estimate.peak <= budgeted.budget <= 24 * GIB
    assert budgeted.micro_batch_tokens < free.micro_batch_tokens  # smaller micro-batches: slower steps
    assert budgeted.unbudgeted is not None and budgeted.unbudgeted.micro_batch_tokens == free.micro_batch_tokens
    text = budgeted.describe()
    assert "memory budget 24 GiB (asked)" in text
    assert f"micro-batches of {budgeted.micro_batch_tokens} tokens, generation batch 32" in text
    assert "gradient checkpointing off" in text and "trades speed for memory" in text
    assert f"smaller micro-batches ({budgeted.micro_batch_tokens} tokens, not {free.micro_batch_tokens})" in text
    d = budgeted.to_dict()
    assert d["memory_budget_gib"] == 24 and d["free_gib"] == 80
    assert d["without_budget"]["micro_batch_tokens"] == free.micro_batch_tokens
    assert d["given_up"] == budgeted.given_up() and len(d["given_up"]) == 1

    tight = _plan(12)  # activations decide now: checkpointing buys the micro-batch back
    assert tight.fits and tight.checkpointing and not free.checkpointing
    assert tight.estimate.peak <= 12 * GIB
    assert "gradient checkpointing turned on" in tight.describe()


def test_a_budget_above_the_free_memory_changes_nothing_and_says_so():
    plan, without = _plan(24, free_gib=20), _plan(0, free_gib=20)
    assert plan.estimate == without.estimate and plan.given_up() == []
    assert plan.budget == without.budget
    assert "changes nothing" in plan.describe()


def test_weights_already_loaded_count_against_the_budget():
    loaded = 16 * QWEN_05B.params // 2  # any share of the process already on the device
    plan = _plan(24, already_loaded=loaded)
    assert plan.budget <= 24 * GIB and plan.estimate.peak <= 24 * GIB


def test_a_budget_too_small_for_the_smallest_settings_is_refused_naming_the_knobs():
    plan = _plan(4)
    assert not plan.fits
    # it tried the smallest settings first: one sequence a micro-batch, one at a time, checkpointing on
    assert (plan.micro_batch_tokens, plan.generation_batch, plan.checkpointing) == (768, 1, True)
    err = refusal(plan)
    assert isinstance(err, PrerequisiteError) and err.exit_code == EXIT_PREREQ
    assert "the 4 GiB memory budget (asked; 80.0 GiB free)" in err.message
    assert "lora.enabled" in err.hint and "a larger model.memory_budget_gib (--memory-budget, now 4)" in err.hint


# -- the command line ----------------------------------------------------------------------------


def test_dry_run_with_a_budget_prints_that_plan_and_loads_nothing(tmp_path, capsys):
    code, obj = _call(
        "--model", "tiny-random", "--dry-run", "--memory-budget", "24", "--output-dir", str(tmp_path / "o"),
        capsys=capsys,
    )  # fmt: skip
    assert code == 0, obj
    m = obj["data"]["memory"]
    assert m["memory_budget_gib"] == 24 and m["fits"]
    assert m["budget_gib"] <= 24 * memory.MEMORY_UTILIZATION  # usable: a share of at most the budget
    assert "given_up" in m and "without_budget" in m
    check = next(c for c in obj["checks"] if c["id"] == "memory")
    assert "memory budget 24 GiB (asked)" in check["message"]
    assert not (tmp_path / "o").exists()  # nothing written


def test_dry_run_with_a_budget_too_small_is_exit_3(tmp_path, capsys):
    code, obj = _call(
        "--model", "tiny-random", "--dry-run", "--device", "cpu", "--memory-budget", "0.001",
        "--output-dir", str(tmp_path / "o"), capsys=capsys,
    )  # fmt: skip
    assert code == 3 and obj["data"]["memory"]["fits"] is False
    check = next(c for c in obj["checks"] if c["id"] == "memory")
    assert "0.001 GiB memory budget" in check["message"] and "--memory-budget" in check["hint"]


def test_the_run_refuses_a_budget_too_small_before_loading_weights(tmp_path):
    from vlab.core.result import ToolError
    from vlab.train.runner import run_builtin

    cfg = load_config(
        None,
        [
            (["model", "name"], "tiny-random"),
            (["model", "device"], "cpu"),
            (["model", "memory_budget_gib"], 0.001),
            (["output_dir"], str(tmp_path / "o")),
        ],
    )

    class Source:
        env_id, num_examples = "fake", 4

    result = Result("local_train")
    with pytest.raises(ToolError) as err:
        run_builtin(cfg, result, source=Source(), progress=False)
    assert err.value.exit_code == EXIT_PREREQ and "memory budget" in err.value.message


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "lots"])
def test_a_bad_budget_flag_is_exit_2(value, capsys):
    code, obj = _call("--model", "tiny-random", "--dry-run", "--memory-budget", value, capsys=capsys)
    assert code == 2 and "--memory-budget" in json.dumps(obj)


def test_the_flag_is_the_config_key_and_both_are_validated():
    from vlab.train.request import LocalTrainRequest

    assert (("model", "memory_budget_gib"), 24.0) in LocalTrainRequest(memory_budget=24).overrides
    assert not any(p == ("model", "memory_budget_gib") for p, _ in LocalTrainRequest().overrides)
    for bad in (-1, float("nan"), float("inf"), True, "24"):
        with pytest.raises(UsageError, match="memory_budget"):
            LocalTrainRequest(memory_budget=bad)
    assert load_config(None, []).model.memory_budget_gib == 0
    assert load_config(None, [(["model", "memory_budget_gib"], 24)]).model.memory_budget_gib == 24.0
    with pytest.raises(UsageError, match="memory_budget_gib"):
        load_config(None, [(["model", "memory_budget_gib"], -2)])
    with pytest.raises(UsageError, match="vLLM") as err:  # the in-process vLLM sampler would share the cap
        load_config(None, [(["model", "memory_budget_gib"], 24), (["sampler", "type"], "vllm")])
    assert "gpu_memory_utilization" in err.value.hint


# -- enforcing it ---------------------------------------------------------------------------------


def test_on_cuda_the_allocator_is_capped_at_the_budgets_share(monkeypatch):
    calls = []
    props = SimpleNamespace(total_memory=80 * GIB)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device=None: props)
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", lambda f, device=None: calls.append((f, device)))
    dev = torch.device("cuda", 0)
    result = Result("local_train")
    enforce_budget(_plan(24), dev, result)
    assert calls == [(pytest.approx(24 / 80), dev)]
    check = result.checks[-1]
    assert check.id == "memory_budget" and check.status == "pass" and "0.300" in check.message

    calls.clear()
    props.total_memory = 16 * GIB  # a budget above the card: nothing to cap, said
    enforce_budget(_plan(24), dev, result)
    assert calls == [] and result.checks[-1].status == "warn" and "nothing capped" in result.checks[-1].message

    enforce_budget(_plan(0), dev, result)  # no budget: nothing done, nothing said
    assert calls == [] and len(result.checks) == 2


def test_on_cpu_the_budget_is_planned_for_only(monkeypatch):
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", lambda *a, **k: pytest.fail("capped on CPU"))
    result = Result("local_train")
    enforce_budget(_plan(24), torch.device("cpu"), result)
    assert result.checks[-1].status == "pass" and "only a CUDA device enforces it" in result.checks[-1].message


# -- the prime-rl hand-off --------------------------------------------------------------------------


def test_prime_rl_refuses_a_budget_and_names_it_at_the_default():
    from vlab.train.primerl_map import map_config

    with pytest.raises(UsageError) as err:
        map_config(load_config(None, [(["model", "memory_budget_gib"], 24)]))
    assert "model.memory_budget_gib" in err.value.message and "builtin engine" in err.value.message
    left = {n["key"] for n in map_config(load_config(None, [])).not_carried}
    assert "model.memory_budget_gib" in left
