"""check_reward_distribution beyond its row budget (issue 27: a fixed memory bound on any number of rows).

Past ``--max-rollouts-in-memory`` only a hash sample of whole examples is held (vlab/evals/sampling.py); every
row is first tallied (vlab/evals/tally.py). The counts, shares and the verdicts one row proves must be the
unsampled run's exactly; the group figures are the sample's, from whole groups.
"""

from __future__ import annotations

import json
import subprocess
import sys

import evalfile_fixtures as efx
import numpy as np
import pytest
from conftest import SCRIPTS

from vlab.core.result import Result
from vlab.evals.analysis import analyse
from vlab.evals.check import CheckRequest, check_reward_distribution
from vlab.evals.columns import collect
from vlab.evals.read import ReadStats
from vlab.evals.sampling import int_hashes, kept, key_hashes, settle_shift
from vlab.evals.source import locate
from vlab.evals.tally import TallySpec

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

SPEC = TallySpec(pass_threshold=0.5, near_empty_chars=3)


def _rolls(examples: int = 1500) -> list[efx.Roll]:
    """A healthy run with a few rare rows: errors, truncations, one empty completion that is paid."""
    rolls = efx.mixed_run(examples, 4)
    n = len(rolls)
    for i in (n // 353, n * 2 // 5, n * 5 // 6):
        rolls[i] = efx.Roll(rolls[i].example, correct=0.0, error="model timed out")
    for i in (n // 136, n // 2 + 7):
        rolls[i] = efx.Roll(rolls[i].example, correct=0.0, truncated=True)
    rolls[n * 3 // 4 - 179] = efx.Roll(rolls[n * 3 // 4 - 179].example, correct=1.0, text="")
    return rolls


def _analysis(source, row_budget: int, workers: int = 1):
    stats = ReadStats()
    cols = collect(source, stats, workers=workers, spec=SPEC, row_budget=row_budget)
    return cols, analyse(source, cols, stats)


# Every figure the tally keeps over every row: these must not move when the groups come from a sample.
EXACT = ("solve_rate", "generation_failed_share", "reward_without_failed", "empty_completion_reward")
EXACT_DISTRIBUTION = ("count", "mean", "std", "min", "max", "binary", "share_nonzero")


def _assert_exact_figures_agree(full: dict, sampled: dict) -> None:
    for key in EXACT:
        assert sampled[key] == full[key], key
    for key, value in full["counts"].items():
        if key not in ("examples", "duplicate_rows"):
            assert sampled["counts"][key] == value, key
    for name, stats in [("reward", full["reward"]), *full["functions"].items()]:
        got = sampled["reward"] if name == "reward" else sampled["functions"][name]
        for key in EXACT_DISTRIBUTION:
            assert got[key] == pytest.approx(stats[key], abs=1e-4), (name, key)  # one summation order or another


@pytest.fixture(scope="module")
def classic_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sampling") / "run"
    efx.write_classic_run(folder, _rolls())
    return locate(str(folder))


@pytest.fixture(scope="module")
def unsampled(classic_run):
    cols, a = _analysis(classic_run, row_budget=1_000_000)
    assert not cols.sampled and a.sample is None
    return a.to_data()


def test_counts_shares_and_rare_rows_are_exact_when_groups_are_sampled(classic_run, unsampled):
    cols, a = _analysis(classic_run, row_budget=400)
    data = a.to_data()
    assert cols.sampled and cols.n <= 400 and data["sample"]["rollouts_kept"] == cols.n
    assert data["sample"]["rollouts_read"] == 6000 and data["counts"]["rollouts"] == 6000
    _assert_exact_figures_agree(unsampled, data)
    assert data["empty_completion_reward"]["empty_with_positive_reward"] == 1
    assert data["counts"]["errored"] == 3 and data["counts"]["truncated"] == 2
    # whole groups: every kept example has its four rollouts
    rpe = data["groups"]["rollouts_per_example"]
    assert rpe == {"min": 4, "max": 4, "most_common": 4}
    assert data["groups"]["examples"] == data["sample"]["examples_kept"] == cols.n // 4
    assert data["counts"]["examples"] == 1500  # estimated: rollouts read x examples per rollout held (all of 4)
    # the sample's group figures stay close to the whole file's (pass rates spread evenly over 0.1 .. 0.9)
    full_g, got_g = unsampled["groups"], data["groups"]
    assert abs(got_g["nonzero_advantage_share"] - full_g["nonzero_advantage_share"]) < 0.15
    assert abs(got_g["pass_at_k"]["1"] - full_g["pass_at_k"]["1"]) < 0.1
    # no metadata disagreement from the estimate of the examples
    assert not any("examples:" in d for d in data["metadata_disagreements"])


def test_the_verdicts_of_a_sampled_file_match_the_whole_files(classic_run, tmp_path):
    outcomes = {}
    for budget in (1_000_000, 400):
        result = Result("check_reward_distribution")
        check_reward_distribution(CheckRequest(results=str(classic_run.path), row_budget=budget), result)
        outcomes[budget] = {c.id: c.status for c in result.checks}, result.data["blocking_verdicts"]
    assert outcomes[400][1] == outcomes[1_000_000][1]
    assert "empty-reward" in outcomes[400][1]  # one paid empty completion among 6,000 rows blocks, sampled or not
    differing = {k for k, v in outcomes[400][0].items() if outcomes[1_000_000][0].get(k) != v}
    assert differing <= {"metadata"}, differing


def _plain_rows(path, examples: int, rare_example: int) -> None:
    """A plain file without prompts (sampled by the ids' stable hashes); one paid empty completion."""
    with path.open("w") as f:
        for e in range(examples):
            for k in range(4):
                empty = e == rare_example and k == 0
                row = {"example_id": e, "reward": 1.0 if empty or (e + k) % 3 else 0.0}
                row["completion"] = [{"role": "assistant", "content": "" if empty else f"<answer>{e}</answer>"}]
                f.write(json.dumps(row) + "\n")


def test_a_paid_empty_completion_outside_the_sample_still_blocks(tmp_path):
    """The rare row is in an example the sample drops at every rate (its hash is odd): only the tally sees it."""
    rare = next(e for e in range(100, 200) if int(int_hashes(np.array([e]))[0]) & 1)
    path = tmp_path / "results.jsonl"
    _plain_rows(path, 2000, rare)
    source = locate(str(path))
    cols, a = _analysis(source, row_budget=500)
    held = np.frombuffer(cols.example, dtype=np.dtype(cols.example.typecode))
    assert cols.sampled and rare not in set(held.tolist())
    chars = np.frombuffer(cols.chars, dtype=np.int32)
    assert not (chars == 0).any()  # the sample holds no empty completion ...
    assert (
        a.counts.empty_completions == 1 and a.empty_completion_reward.empty_with_positive_reward == 1
    )  # ... the tally
    result = Result("check_reward_distribution")
    check_reward_distribution(CheckRequest(results=str(path), row_budget=500), result)
    assert "empty-reward" in result.data["blocking_verdicts"]
    # identical lines (this shape has no rollout identity) are estimated from the sample: a copy is held with its
    # original, as both share their example
    _, full = _analysis(source, row_budget=1_000_000)
    assert full.sample is None and full.counts.duplicate_rows > 1000
    assert abs(a.counts.duplicate_rows - full.counts.duplicate_rows) < 0.2 * full.counts.duplicate_rows
    assert any(c.id == "duplicates" and c.message.startswith("about ") for c in result.checks)


@pytest.mark.slow
def test_parallel_parts_are_sampled_at_one_rate(classic_run, unsampled):
    """Parts read in other processes are sampled by the same hashes and brought to one rate before merging."""
    cols, a = _analysis(classic_run, row_budget=600, workers=2)
    data = a.to_data()
    assert cols.sampled and cols.n <= 600
    _assert_exact_figures_agree(unsampled, data)
    assert data["groups"]["rollouts_per_example"] == {"min": 4, "max": 4, "most_common": 4}


def test_v1_traces_are_sampled_row_by_row(tmp_path):
    run = efx.write_v1_run(tmp_path / "v1", _rolls(400))
    source = locate(str(run))
    full_cols, full = _analysis(source, row_budget=1_000_000)
    cols, sampled = _analysis(source, row_budget=200)
    assert cols.sampled and cols.n <= 200 and not full_cols.sampled
    _assert_exact_figures_agree(full.to_data(), sampled.to_data())


def test_a_few_examples_holding_most_rows_are_cut_not_dropped():
    """When a higher rate would keep nothing (one example holds the rows), the first rows are kept."""
    hashes = int_hashes(np.zeros(1000, dtype=np.int64))  # one example
    shift, mask, cut = settle_shift(hashes, 0, 100)
    assert cut and int(mask.sum()) == 100 and mask[:100].all()
    hashes = int_hashes(np.repeat(np.arange(500), 4))
    shift, mask, cut = settle_shift(hashes, 0, 300)
    assert not cut and 0 < mask.sum() <= 300 and shift >= 3
    # a higher rate keeps a subset of a lower one: parts sampled apart agree once brought to one rate
    assert not (kept(hashes, shift + 1) & ~kept(hashes, shift)).any()
    groups = np.repeat(np.arange(500), 4)[mask]
    assert (np.bincount(groups)[np.unique(groups)] == 4).all()  # whole examples


def test_id_hashes_are_the_same_in_every_process():
    keys = ["task-7", 7, ("row", 3), -2, 1 << 70]
    here = key_hashes(keys).tolist()
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from vlab.evals.sampling import key_hashes; "
        "print(key_hashes(['task-7', 7, ('row', 3), -2, 1 << 70]).tolist())"
    )
    there = subprocess.run([sys.executable, "-c", code, str(SCRIPTS)], capture_output=True, text=True, check=True)
    assert json.loads(there.stdout) == here
    assert here[1] == int(int_hashes(np.array([7]))[0]) and here[3] == int(int_hashes(np.array([-2]))[0])
