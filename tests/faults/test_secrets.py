"""The one secret filter (vlab.core.secrets): names, shapes, depth, JSON escaping (issue 14, point 4)."""

from __future__ import annotations

import json

import pytest

from vlab.core import secrets
from vlab.core.cli import json_safe

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

SHAPES = {
    "openai": "sk-proj0123456789abcdefghij",
    "huggingface": "hf_abcdefghijklmnopqrstuvwx",
    "prime": "pit_abcdefghijklmnop1234",
    "github_classic": "ghp_" + "a1B2" * 9,
    "github_fine_grained": "github_pat_" + "11ABCDEFG0" * 4,
    "slack_bot": "xoxb-1234567890-abcdefghij",
    "slack_user": "xoxp-1234567890-abcdefghij",
    "aws": "AKIAABCDEFGHIJKLMNOP",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}

KEY_NAMES = [
    "WANDB_API_KEY",
    "HF_TOKEN",
    "OPENAI_API_KEY",
    "my_service_key",
    "judge_token",
    "db_password",
    "PASSWORD",
    "client_secret",
    "SECRET_SAUCE",
    "api_key",
    "apiKey",
]
NOT_SECRET_NAMES = [
    "max_tokens",
    "tokenizer",
    "num_examples",
    "dataset_path",
    "key_column",
    "model",
    "answer_key",  # inspect_dataset reports the answer key form under this name
    "sort_key",
    "eos_token",
    "pad_token",
]


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_shape_is_masked_in_text(name):
    value = SHAPES[name]
    assert value not in secrets.redact(f"error talking to the judge with {value} (retrying)")


@pytest.mark.parametrize("name", KEY_NAMES)
def test_key_name_masks_value_at_any_depth(name):
    planted = "plainvalue-42-not-a-known-shape"
    obj = {"env_args": {"judge": {"auth": [{name: planted}]}}, "other": "kept"}
    out = json.dumps(secrets.scrub(obj))
    assert planted not in out and "kept" in out


@pytest.mark.parametrize("name", NOT_SECRET_NAMES)
def test_ordinary_names_are_kept(name):
    assert secrets.scrub({name: "value-123456"}) == {name: "value-123456"}


def test_forty_hex_under_a_key_name_is_masked():
    hexkey = "0123456789abcdef0123456789abcdef01234567"
    assert hexkey not in secrets.redact(f"wandb_key={hexkey}")
    assert hexkey not in json.dumps(secrets.scrub({"wandb_api_key": hexkey}))
    assert secrets.redact(f"commit {hexkey}") == f"commit {hexkey}"  # a bare sha is not a secret


def test_registered_value_is_masked_even_after_json_escaping():
    planted = 'quote"and\\slash-planted-1234'
    secrets.register({"judge": {"service_token": planted}})
    text = json.dumps({"echo": f"env said {planted}"})
    assert planted not in secrets.redact(text)
    assert json.dumps(planted)[1:-1] not in secrets.redact(text)


def test_environment_variable_named_like_a_secret_is_masked(monkeypatch):
    monkeypatch.setenv("MY_JUDGE_API_KEY", "judge-planted-value-77")
    assert "judge-planted-value-77" not in secrets.redact("calling with judge-planted-value-77")


def test_reference_replaces_secret_with_environment_variable_name():
    out = secrets.reference({"judge": {"api_key": "sk-proj0123456789abcdefghij"}, "n": 3})
    assert out == {"judge": {"api_key": "${API_KEY}"}, "n": 3}


def test_result_json_is_scrubbed_before_serialisation():
    from vlab.core.cli import to_json
    from vlab.core.result import Result

    result = Result("test_reward")
    result.data["environment"] = {"env_args": {"nested": {"service_token": "opaque-planted-555"}}}
    assert "opaque-planted-555" not in to_json(result)
    json_safe(result.to_dict())
