"""A --model that cannot be had is said at once, before the environment loads (issue 14, point 9).

Offline (HF_HUB_OFFLINE) or with the Hub unreachable, a hub name that is not in the local cache
took 53 s of transformers' retries and came out as a missing prerequisite. Now one bounded
lookup answers: hub access off or unreachable exit 4, no such model exit 2, gated exit 3
(the answers inspect_dataset gives for datasets). The Hub is a loopback stub (HF_ENDPOINT).
"""

from __future__ import annotations

import json
import socket
import time

import pytest
from conftest import assert_result, run_script
from loopback import JsonLoopbackServer

pytestmark = pytest.mark.slow  # each case starts local_train (torch import: seconds)

NAME = "nobody/does-not-exist"


class HubStub(JsonLoopbackServer):
    def __init__(self, status: int, payload) -> None:
        self.answer = (status, payload)
        self.paths: list[str] = []
        super().__init__()

    def handle(self, method, path, body, headers):
        self.paths.append(path)
        return self.answer


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


ONLINE = {"HF_HUB_OFFLINE": "", "HF_DATASETS_OFFLINE": ""}  # the suite is offline (conftest): these are not


def _local_train(tmp_path, env: dict, model: str = NAME):
    # an environment that would fail to load: the model is judged before it is loaded
    module = tmp_path / "env_never_loaded.py"
    module.write_text("raise RuntimeError('loaded')\n")
    t0 = time.monotonic()
    r = run_script(
        "local_train",
        *("--env", str(module), "--model", model),
        *("--output-dir", str(tmp_path / "out"), "--json"),
        env={"HF_HOME": str(tmp_path / "hf"), "HF_HUB_DISABLE_TELEMETRY": "1", **ONLINE, **env},
        cwd=tmp_path,
        timeout=120,
    )
    return r, time.monotonic() - t0


def _no_retries(r) -> None:
    assert "Retrying" not in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]


@pytest.mark.parametrize("switch", ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"])
def test_offline_and_not_cached_is_exit_4_at_once(tmp_path, switch):
    r, seconds = _local_train(tmp_path, {switch: "1"})
    obj = assert_result(r.json, "local_train", 4)
    assert "not in the local cache and hub access is off" in obj["summary"] and NAME in obj["summary"]
    assert "environment" not in {c["id"] for c in obj["checks"]}  # said before the environment loads
    _no_retries(r)
    # no retries (above) is the proof; this only bounds a hang, generous for a loaded machine
    assert seconds < 110, seconds


def test_unreachable_hub_is_exit_4_without_retries(tmp_path):
    r, seconds = _local_train(tmp_path, {"HF_ENDPOINT": f"http://127.0.0.1:{_free_port()}"})
    obj = assert_result(r.json, "local_train", 4)
    assert "unreachable" in obj["summary"] and NAME in obj["summary"]
    _no_retries(r)
    assert seconds < 110, seconds


@pytest.mark.parametrize(
    "status,code,words",
    [
        (404, 2, "no model 'nobody/does-not-exist' on the Hugging Face Hub"),
        (403, 3, "gated or private"),
        (503, 4, "unreachable"),
    ],
    ids=["404", "403", "503"],
)
def test_hub_answers_become_exit_codes(tmp_path, status, code, words):
    with HubStub(status, {"error": "Repository not found"}) as hub:
        r, _ = _local_train(tmp_path, {"HF_ENDPOINT": hub.url})
        paths = list(hub.paths)
    obj = assert_result(r.json, "local_train", code)
    assert words in obj["summary"], obj["summary"]
    assert any(NAME in p for p in paths), paths  # one metadata lookup, no file download
    assert len(paths) <= 6, paths
    _no_retries(r)


def test_local_folder_that_does_not_exist_is_usage(tmp_path):
    r, _ = _local_train(tmp_path, {"HF_HUB_OFFLINE": "1"}, model=str(tmp_path / "no-such-folder"))
    obj = assert_result(r.json, "local_train", 2)
    assert "model folder" in obj["summary"] and "does not exist" in obj["summary"]


def test_missing_environment_file_comes_before_the_model(tmp_path):
    """Bad input (exit 2) is said before an external failure (exit 4), as the precedence says."""
    r = run_script(
        "local_train",
        *("--env", str(tmp_path / "nope.py"), "--model", NAME, "--output-dir", str(tmp_path / "out"), "--json"),
        env={"HF_HUB_OFFLINE": "1"},
        cwd=tmp_path,
    )
    obj = assert_result(r.json, "local_train", 2)
    assert "environment file not found" in obj["summary"]


# -- in-process: the cache, a lookup that never answers -----------------------------------------


def test_cached_model_needs_no_lookup(tmp_path, monkeypatch):
    import huggingface_hub.constants as hc

    from vlab.train import hubmodel

    snap = tmp_path / "models--owner--cached" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps({"model_type": "qwen2"}))
    (tmp_path / "models--owner--cached" / "refs").mkdir()
    (tmp_path / "models--owner--cached" / "refs" / "main").write_text("abc123")
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hubmodel, "_model_info", lambda *a: pytest.fail("looked up a cached model"))
    hubmodel.require_model("owner/cached")  # no error: it is in the cache
    with pytest.raises(hubmodel.ExternalError):
        hubmodel.require_model("owner/not-cached")  # its neighbour is not


def test_lookup_that_never_answers_is_bounded(monkeypatch):
    from vlab.train import hubmodel

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(hubmodel, "cached", lambda name: False)
    monkeypatch.setattr(hubmodel, "_model_info", lambda name, timeout: time.sleep(30))
    t0 = time.monotonic()
    with pytest.raises(hubmodel.ExternalError) as err:
        hubmodel.require_model(NAME, timeout=0.5)
    assert time.monotonic() - t0 < 20  # the lookup hangs 30 s: stopped at its 0.5 s limit, on a loaded machine too
    assert "not in the local cache" in err.value.message and err.value.exit_code == 4
