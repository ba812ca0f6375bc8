"""Every numeric option of every script rejects non-finite and out-of-range values with exit 2.

Run in-process (argparse rejects the value before anything is loaded), so each case costs
milliseconds: one JSON object on stdout, status ``error``, the option and its allowed range
in the summary, and no traceback on stderr.
"""

from __future__ import annotations

import importlib
import json
import time

import pytest

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

NONFINITE = ["nan", "inf", "-inf", "NaN", "1e999"]

# script -> (option, values outside its range)
OPTIONS = {
    "check_reward_distribution": [
        ("--min-rollouts", ["0", "-3", "1.5"]),
        ("--min-examples", ["0"]),
        ("--pass-threshold", []),
        ("--failed-share", ["1.5", "-0.1"]),
        ("--too-easy", ["2"]),
        ("--min-signal", ["-1"]),
        ("--near-empty-chars", ["-1"]),
        ("--max-truncated", ["1.01"]),
        ("--max-malformed", ["3"]),
    ],
    "inspect_dataset": [("--sample", ["0", "-5"]), ("--timeout", ["0", "-1", "1e9"])],
    "probe_reward": [
        ("--num-examples", ["0", "-2"]),
        ("--timeout", ["0", "-10"]),
        ("--slow", ["0"]),
        ("--margin", ["-0.5"]),
        ("--min-agreement", ["1.5"]),
        ("--concurrency", ["0", "100000"]),
    ],
    "diagnose_run": [
        ("--max-steps", ["0"]),
        ("--interval", ["0", "-1"]),
        ("--max-polls", ["0"]),
        ("--idle-timeout", ["-5"]),
        ("--timeout", ["0"]),
    ],
    "local_train": [("--max-steps", ["0", "-1"]), ("--gpus", ["0"]), ("--nodes", ["0"])],
    "preflight": [("--timeout", ["0", "-1"])],
    "submit_training": [
        ("--max-steps", ["0"]),
        ("--batch-size", ["0"]),
        ("--group-size", ["0"]),
        ("--max-tokens", ["0"]),
        ("--temperature", ["-1", "11"]),
        ("--seq-len", ["0"]),
        ("--lr", ["0", "-1e-5", "2"]),
        ("--lora-rank", ["0"]),
        ("--lora-alpha", ["0"]),
        ("--train-gpus", ["0"]),
        ("--infer-gpus", ["0"]),
        ("--ckpt-interval", ["0"]),
        ("--eval-interval", ["0"]),
        ("--eval-num-examples", ["0"]),
        ("--timeout", ["0"]),
        ("--submit-timeout", ["-1"]),
        ("--schema-timeout", ["0"]),
    ],
}

CASES = [
    (script, option, value)
    for script, options in OPTIONS.items()
    for option, bad in options
    for value in NONFINITE + bad
]


@pytest.mark.parametrize("script,option,value", CASES, ids=[f"{s}{o}={v}" for s, o, v in CASES])
def test_numeric_option_rejected(script, option, value, capsys):
    module = importlib.import_module(script)
    capsys.readouterr()
    t0 = time.monotonic()
    argv = ["--json", f"{option}={value}"]
    code = module.main(argv)
    out, err = capsys.readouterr()
    obj = json.loads(out)  # exactly one JSON object
    assert code == 2 == obj["exit_code"], obj
    assert obj["status"] == "error"
    assert option in obj["summary"] and "allowed" in obj["summary"], obj["summary"]
    assert "Traceback" not in err
    assert time.monotonic() - t0 < 60  # a bound on a hang, not a measurement


def test_diagnose_reward_range_is_finite(capsys):
    import diagnose_run

    capsys.readouterr()
    code = diagnose_run.main(["--json", "--reward-range", "0", "inf"])
    obj = json.loads(capsys.readouterr().out)
    assert code == 2 and "--reward-range" in obj["summary"]


SET_CASES = [
    ("optim.lr", "nan"),
    ("optim.lr", "inf"),
    ("optim.lr", "-inf"),
    ("sampling.temperature", "nan"),
    ("loss.kl_tau", "nan"),
    ("optim.betas", "[0.9, nan]"),
]


@pytest.mark.parametrize("key,value", SET_CASES, ids=[f"{k}={v}" for k, v in SET_CASES])
def test_local_train_set_value_validated_like_a_flag(key, value, capsys, tmp_path):
    """`--set optim.lr=nan` was exit 1 "internal error: ValueError" from the optimizer; a value given
    through --set (or the TOML file) is refused like a flag's: exit 2, one line naming the key."""
    import local_train

    capsys.readouterr()
    argv = ["--json", "--model", "tiny-random", "--env", "none", "--output-dir", str(tmp_path / "out")]
    code = local_train.main([*argv, "--set", f"{key}={value}"])
    out, err = capsys.readouterr()
    obj = json.loads(out)
    assert code == 2 == obj["exit_code"], obj
    assert key in obj["summary"] and "finite" in obj["summary"], obj["summary"]
    assert "Traceback" not in err and len(err.strip().splitlines()) <= 2, err
    assert not (tmp_path / "out").exists()  # refused before anything is written
