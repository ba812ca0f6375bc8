"""Issue 52, exit codes that said the wrong thing, each with the code it says now:

- a mistyped relative data path (``data/tweet_eval_stance_climat``: its folder data/ exists) was taken for a Hub id
  (exit 4, "Hub unreachable ... retry"): now exit 2 naming the missing path and the closest names, and never a Hub
  lookup; a real ``owner/name`` still goes to the Hub. inspect_dataset, an environment's --env-args (test_reward,
  local_train) and submit_training's rehearsal (--env-arg) alike; one helper, ``core.files.looks_local``.
- a folder given as dataset_path was exit 1 ("fix the environment's loading code"): now exit 2 naming the data
  files in it; a loader that reads folders is never refused.
- submit_training's online lookups: a network failure (DNS on Linux, macOS, Windows) is exit 4 with "retry, or
  pass --offline", a missing login exit 3 with `prime login`; the rehearsal's build and install against an index
  that cannot be reached exit 4, not 1 ("fix pyproject.toml").
- a judge that hangs under ``test_reward --judge-base-url``: exit 1 and BrokenPipeError tracebacks from the
  loopback proxy; now, like an HTTP 500, an external failure (exit 4) and nothing on stderr, both generations;
  the classic JudgeRubric's wrapped HTTP 500 (RuntimeError) too. Each hint names what a raising reward does in
  training for the generation at hand (classic: 0.0 with the judge template's judge_error metric; v1: the rollout
  errors), never "silently becomes a 0.0 reward" for v1.

The user's commands are run as SKILL.md gives them, from a project folder outside the pack.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import SKILL_ROOT, assert_result, call_script, run_script

from vlab.core import files
from vlab.core.result import EXIT_EXTERNAL, EXIT_FAIL, EXIT_PREREQ, EXIT_USAGE, Result, ToolError, UsageError
from vlab.inspect import hub

# the pack's own logic runs once; the tests that load environments are marked with their generation
pytestmark = pytest.mark.once

TEMPLATES = SKILL_ROOT / "templates" / "environments"
ROWS = [
    {"question": f"Is tweet {i} for or against climate action?", "answer": ["favor", "against"][i % 2]}
    for i in range(8)
]
JUDGE_ROWS = [
    {
        "question": f"Explain in two sentences why the sky is blue at noon (case {i}).",
        "answer": "Air molecules scatter sunlight, and blue light scatters far more than red. So blue reaches the eye "
        f"from every direction (case {i}).",
    }
    for i in range(6)
]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _project(tmp_path: Path, template: str | None = None, rows: list[dict] = ROWS) -> Path:
    """A user's project: data/train.jsonl, a folder data/tweet_eval_stance_climate/ of split files, and the
    template's package under environments/<module>/."""
    _write_jsonl(tmp_path / "data" / "train.jsonl", rows)
    _write_jsonl(tmp_path / "data" / "tweet_eval_stance_climate" / "train.jsonl", rows)
    _write_jsonl(tmp_path / "data" / "tweet_eval_stance_climate" / "test.jsonl", rows[:2])
    if template:
        shutil.copytree(TEMPLATES / template, tmp_path / "environments" / template.replace("-", "_"))
    return tmp_path


@contextmanager
def _cwd(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


# -- 1. the one "a local path, not a Hub id" test ------------------------------------------------------------


def test_looks_local_tells_a_mistyped_path_from_a_hub_id(tmp_path):
    _project(tmp_path)
    with _cwd(tmp_path):
        for local in (
            "data/tweet_eval_stance_climat",  # first segment an existing folder
            "data/trian.jsonl",
            "train.parquet",  # a data file suffix
            "a/b/c",  # more than one /
            "./gsm8k",
            "~/x",
        ):
            assert files.looks_local(local), local
        for hub_id in ("openai/gsm8k", "gsm8k", "tweet_eval/stance", "https://huggingface.co/x/y", ""):
            assert not files.looks_local(hub_id), hub_id
        assert files.nearest_names("data/tweet_eval_stance_climat") == ["data/tweet_eval_stance_climate"]
        assert files.nearest_names("dta/train.jsonl") == ["data/train.jsonl"]  # carried on past the fixed segment
        assert files.nearest_names("data/completely_else") == []
        assert files.data_files_in("data/tweet_eval_stance_climate")[0] == "data/tweet_eval_stance_climate/train.jsonl"


# -- 2. inspect_dataset: no Hub lookup for a mistyped path, the Hub for a real id -----------------------------


class _HubCalls:
    """Stands in for the Hub calls; records each one (a mistyped path must make none)."""

    def __init__(self, monkeypatch, fail: BaseException | None = None):
        self.calls: list[str] = []

        def call(name, value):
            def fn(*args, **kwargs):
                self.calls.append(name)
                if fail is not None:
                    raise fail
                return value() if callable(value) else value

            return fn

        monkeypatch.setattr(hub, "_dataset_info", call("info", None))
        monkeypatch.setattr(hub, "_config_names", call("configs", ["default"]))
        monkeypatch.setattr(hub, "_split_names", call("splits", ["train"]))
        monkeypatch.setattr(hub, "_first_rows", call("rows", lambda: (ROWS, None, None)))


@pytest.mark.parametrize(
    "typed, near",
    [
        ("data/tweet_eval_stance_climat", "data/tweet_eval_stance_climate"),  # the case
        ("data/trian.jsonl", "data/train.jsonl"),
        ("data/tweet_eval_stance_climate/tarin.jsonl", "data/tweet_eval_stance_climate/train.jsonl"),
        ("corpora/tweets/train.jsonl", None),  # more than one /, nothing close
    ],
)
def test_inspect_dataset_names_a_mistyped_path_exit_2_and_never_asks_the_hub(
    tmp_path, monkeypatch, capsys, typed, near
):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    # the network as the issue met it: no name resolution (the old code went there and said exit 4, "retry")
    seen = _HubCalls(monkeypatch, ConnectionError("[Errno -2] Name or service not known"))
    code, obj, _ = call_script(capsys, "inspect_dataset", typed)
    assert code == 2, obj["summary"]
    assert obj["summary"].startswith(f"no such file or folder: {typed}"), obj["summary"]
    if near:
        assert f"did you mean {near}?" in obj["summary"], obj["summary"]
    assert "Hub" not in obj["summary"] and seen.calls == []


def test_inspect_dataset_still_reads_a_real_hub_id_from_the_hub(tmp_path, monkeypatch, capsys):
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    seen = _HubCalls(monkeypatch)
    code, obj, _ = call_script(capsys, "inspect_dataset", "cardiffnlp/tweet_eval")
    assert code == 0 and obj["data"]["source"]["kind"] == "hub", obj["summary"]
    assert seen.calls[:2] == ["info", "configs"]
    # and a Hub that cannot be reached is still an external failure for a Hub id
    _HubCalls(monkeypatch, ConnectionError("[Errno -2] Name or service not known"))
    code, obj, _ = call_script(capsys, "inspect_dataset", "cardiffnlp/tweet_eval")
    assert code == 4 and "unreachable" in obj["summary"], obj["summary"]


def test_an_environment_path_mistyped_is_named_not_taken_for_an_installed_or_hub_id(tmp_path, monkeypatch):
    from vlab.env import generation
    from vlab.env.spec import locate

    _project(tmp_path, "v1-numeric")
    monkeypatch.chdir(tmp_path)
    assert not generation.is_hub_id("environments/v1_numerc") and generation.is_hub_id("owner/my-env")
    for call in (lambda: locate("environments/v1_numerc"), lambda: generation.detect("environments/v1_numerc")):
        with pytest.raises(UsageError) as err:
            call()
        assert "did you mean environments/v1_numeric?" in err.value.message, err.value.message
    assert locate("owner/my-env").search_path is None  # an installed / Hub id stays one


# -- 3. an environment's dataset_path: the load error's cause named (in-process, both kinds of loader) ---------


def test_the_load_classifier_names_a_missing_path_and_a_folder_and_leaves_a_hub_id_alone(tmp_path, monkeypatch):
    from vlab.env.locate import _classifier

    _project(tmp_path)
    monkeypatch.chdir(tmp_path)

    def classify(value: str, err: BaseException) -> ToolError:
        return _classifier({"dataset_path": value, "judge_base_url": "https://api.openai.com/v1"})(err, "X.load")

    # the templates' own words, a loader handing the path to datasets.load_dataset (a Hub lookup), a plain open()
    typo = "data/tweet_eval_stance_climat"
    for err in (
        ValueError(f"dataset_path must end in .jsonl, .json, .csv or .parquet (got {typo!r})"),
        ConnectionError(f"Couldn't reach '{typo}' on the Hub (LocalEntryNotFoundError)"),
        FileNotFoundError(2, "No such file or directory", typo),
    ):
        found = classify(typo, err)
        assert found.exit_code == EXIT_USAGE, (err, found.message)
        assert "did you mean data/tweet_eval_stance_climate?" in found.message, found.message
    folder = "data/tweet_eval_stance_climate"
    for err in (
        ValueError(f"dataset_path must end in .jsonl, .json, .csv or .parquet (got {folder!r})"),
        FileNotFoundError(f"Unable to find '{tmp_path / folder}'"),  # load_dataset("json", data_files=folder)
        IsADirectoryError(21, "Is a directory", folder),
    ):
        found = classify(folder, err)
        assert found.exit_code == EXIT_USAGE and "is a folder" in found.message, (err, found.message)
        assert "data/tweet_eval_stance_climate/train.jsonl" in found.message + found.hint, found.message
        assert "fix the environment's loading code" not in found.hint
    # a real Hub id that cannot be reached stays an external failure, and an unrelated error the loader's own
    hub_id = classify("cardiffnlp/tweet_eval", ConnectionError("Couldn't reach 'cardiffnlp/tweet_eval' on the Hub"))
    assert hub_id.exit_code == EXIT_EXTERNAL, hub_id.message
    other = classify(folder, RuntimeError("the reward's tokenizer failed to load"))
    assert other.exit_code == EXIT_FAIL and "fix the environment's loading code" in other.hint
    # a path to be made (an output folder) is no cause of a Hub dataset the network cannot reach
    args = {"output_dir": "runs/first/try", "dataset_name": "cardiffnlp/tweet_eval"}
    unreachable = _classifier(args)(ConnectionError("Couldn't reach 'cardiffnlp/tweet_eval' on the Hub"), "X.load")
    assert unreachable.exit_code == EXIT_EXTERNAL, unreachable.message


def _test_reward(project: Path, env: str, dataset_path: str, *extra: str, python: str | None = None):
    r = run_script(
        "test_reward",
        env,
        "--env-args",
        json.dumps({"dataset_path": dataset_path}),
        "--json",
        *extra,
        cwd=project,
        python=python,
        timeout=300,
    )
    return r, assert_result(r.json, "test_reward", r.returncode)


TEMPLATE_CASES = [
    pytest.param("v1-classification", marks=pytest.mark.v1),
    pytest.param("classic-classification", marks=pytest.mark.classic),
]


@pytest.mark.parametrize("template", TEMPLATE_CASES)
def test_test_reward_names_a_mistyped_dataset_path_and_a_folder_exit_2(tmp_path, template):
    project = _project(tmp_path, template)
    env = f"environments/{template.replace('-', '_')}/"
    r, obj = _test_reward(project, env, "data/tweet_eval_stance_climat")
    assert r.returncode == 2, obj["summary"]
    assert "--env-args dataset_path: no such file or folder: data/tweet_eval_stance_climat" in obj["summary"]
    assert "did you mean data/tweet_eval_stance_climate?" in obj["summary"]
    r, obj = _test_reward(project, env, "data/tweet_eval_stance_climate")
    assert r.returncode == 2, obj["summary"]
    assert "is a folder" in obj["summary"] and "data/tweet_eval_stance_climate/train.jsonl" in obj["summary"]
    assert any('"dataset_path": "data/tweet_eval_stance_climate/train.jsonl"' in s for s in obj["next_steps"])
    assert "Traceback" not in r.stderr


HUB_LOADER = '''"""A user's classic environment that hands dataset_path to datasets.load_dataset as it is."""
import verifiers as vf
from datasets import load_dataset


def load_environment(dataset_path: str = "data/train.jsonl", **kwargs):
    ds = load_dataset(dataset_path, split="train")

    def exact(completion, answer, **kw) -> float:
        return 1.0 if answer in str(completion) else 0.0

    return vf.SingleTurnEnv(dataset=ds, rubric=vf.Rubric(funcs=[exact]))
'''


@pytest.mark.classic
def test_a_loader_that_sends_a_mistyped_path_to_the_hub_is_exit_2_and_a_real_hub_id_exit_4(tmp_path):
    project = _project(tmp_path)
    (project / "envs").mkdir()
    (project / "envs" / "hub_loader.py").write_text(HUB_LOADER)
    offline = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}  # no network: the Hub lookup fails at once
    r = run_script(
        "test_reward", "envs/hub_loader.py", "--env-args", '{"dataset_path": "data/tweet_eval_stance_climat"}',
        "--json", cwd=project, env=offline,
    )  # fmt: skip
    obj = assert_result(r.json, "test_reward", 2)
    assert "did you mean data/tweet_eval_stance_climate?" in obj["summary"], obj["summary"]
    r = run_script(
        "test_reward", "envs/hub_loader.py", "--env-args", '{"dataset_path": "cardiffnlp/tweet_eval"}',
        "--json", cwd=project, env=offline,
    )  # fmt: skip
    obj = assert_result(r.json, "test_reward", 4)
    assert "needs the network" in obj["summary"] and "retry" in obj["next_steps"][0], obj


@pytest.mark.v1
def test_local_train_names_a_mistyped_dataset_path_exit_2(tmp_path):
    project = _project(tmp_path, "v1-classification")
    r = run_script(
        "local_train", "--env", "environments/v1_classification/", "--env-args",
        '{"dataset_path": "data/tweet_eval_stance_climat"}', "--model", "tiny-random", "--max-steps", "1",
        "--output-dir", str(tmp_path / "out"), "--json", cwd=project, timeout=300,
    )  # fmt: skip
    obj = assert_result(r.json, "local_train", 2)
    assert "did you mean data/tweet_eval_stance_climate?" in obj["summary"], obj["summary"]


# -- 4. submit_training's rehearsal: the data step, the index that cannot be reached ---------------------------


def _wheel(names: list[str]):
    from vlab.hosted.rehearse_common import Wheel

    return Wheel(Path("my_env-0.1.0-py3-none-any.whl"), "", names, [])


def test_the_rehearsal_names_a_mistyped_path_and_a_folder_exit_2(tmp_path):
    from vlab.hosted.rehearse_common import Source
    from vlab.hosted.rehearse_data import data_checks

    project = _project(tmp_path)
    folder = project / "environments" / "my_env"
    _write_jsonl(folder / "data" / "train.jsonl", ROWS)
    wheel = _wheel(["my_env.py", "my_env_data/train.jsonl"])

    def check(value: str):
        (found,) = data_checks(
            Source("source[0]", "me/my-env", {"dataset_path": value}), wheel, folder, "hosted", str(project)
        )
        return found

    typo = check("data/tweet_eval_stance_climat")
    assert (typo.status, typo.exit_code) == ("fail", EXIT_USAGE), typo
    assert "is not here either" in typo.message and "did you mean data/tweet_eval_stance_climate?" in typo.message
    there = check("data/tweet_eval_stance_climate")
    assert (there.status, there.exit_code) == ("fail", EXIT_USAGE) and "is a folder" in there.message, there
    assert '"data/tweet_eval_stance_climate/train.jsonl"' in there.hint, there.hint
    shipped = _wheel(["my_env.py", "my_env_data/tweet_eval_stance_climate/train.jsonl"])
    (ok,) = data_checks(
        Source("source[0]", "me/my-env", {"dataset_path": "data/tweet_eval_stance_climate"}), shipped, folder, "hosted",
        str(project),
    )  # fmt: skip
    assert ok.status == "pass"  # shipped: the load shows whether the loader reads a folder
    local = check("data/train.jsonl")  # here, shipped: passes
    assert local.status == "pass", local
    _write_jsonl(project / "data" / "extra.jsonl", ROWS)
    unshipped = check("data/extra.jsonl")  # here but not shipped: the shipping fix, a failed check (exit 1)
    assert (unshipped.status, unshipped.exit_code) == ("fail", EXIT_FAIL) and "put the file at" in unshipped.hint


@pytest.mark.slow
def test_a_package_index_that_cannot_be_reached_is_exit_4_not_fix_pyproject(tmp_path, monkeypatch):
    from vlab.hosted import rehearse
    from vlab.hosted.rehearse_common import RehearseOptions, Source

    uv = rehearse.uv_command()
    if uv is None:
        pytest.skip("uv is not installed")
    project = _project(tmp_path, "v1-classification")
    module = project / "environments" / "v1_classification"
    with socket.socket() as s:  # a port nothing listens on: the index refuses every connection
        s.bind(("127.0.0.1", 0))
        index = f"http://127.0.0.1:{s.getsockname()[1]}/simple"
    for var, value in (("UV_DEFAULT_INDEX", index), ("UV_INDEX_URL", index), ("UV_NO_CACHE", "1")):
        monkeypatch.setenv(var, value)
    monkeypatch.setenv("UV_HTTP_RETRIES", "0")
    monkeypatch.delenv("UV_OFFLINE", raising=False)
    result = Result("submit_training")
    options = RehearseOptions(online=True, cwd=str(project), specs=(("me/v1-classification", str(module)),))
    src = Source("source[0]", "me/v1-classification", {"dataset_path": "train.jsonl"})
    rehearse._build_and_install(result, src, options, uv, tmp_path / "work")
    (failed,) = [c for c in result.checks if c.status == "fail"]
    assert failed.exit_code == EXIT_EXTERNAL, failed
    assert "could not be reached" in failed.message and "--offline" in failed.hint and "retry" in failed.hint
    assert "pyproject" not in failed.hint


# -- 5. submit_training's online lookups: network 4, login 3 ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Failed to get environment details: Request failed: ConnectError at GET https://api.primeintellect.ai/x: "
        "[Errno -2] Name or service not known",
        "Error: [Errno 8] nodename nor servname provided, or not known",  # macOS
        "Error: [Errno 11001] getaddrinfo failed",  # Windows
        "Error: [Errno -5] No address associated with hostname",
        "Error: Server disconnected without sending a response.",
    ],
)
def test_a_network_failure_of_prime_is_exit_4_in_every_words(text):
    from vlab.core.installed import CommandOutput
    from vlab.hosted import prime

    out = CommandOutput(returncode=1, stdout="", stderr=text)
    assert (prime.classify_prime_call(out).exit_code, prime.classify_prime_call(out).state) == (4, "unreachable")
    assert prime.classify_whoami(out).exit_code == EXIT_EXTERNAL  # was "unknown", exit 3, for all but the first


def test_the_online_rules_give_a_network_failure_exit_4_and_a_missing_login_exit_3():
    from vlab.hosted import prime
    from vlab.hosted.rules_envs import Lookup, check_online

    doc = {
        "model": {"name": "Qwen/Qwen3-4B-Instruct-2507"},
        "orchestrator": {"train": {"source": [{"env": {"taskset": {"id": "me/my-env"}}}]}},
    }
    dns = prime.PrimeCall(
        EXIT_EXTERNAL, "unreachable", "could not reach the Prime Intellect API: Name or service not known"
    )
    no_key = prime.PrimeCall(EXIT_PREREQ, "no_api_key", "prime has no API key configured")
    checks = {c.id: c for c in check_online(doc, Lookup(env_info=lambda env_id: dns, train_models=lambda: no_key))}
    hub_check, model_check = checks["env-hub"], checks["model-available"]
    assert (hub_check.status, hub_check.exit_code) == ("fail", EXIT_EXTERNAL)
    assert "retry" in hub_check.hint and "--offline" in hub_check.hint and "whoami" not in hub_check.hint
    assert (model_check.status, model_check.exit_code) == ("fail", EXIT_PREREQ)
    assert "prime login" in model_check.hint and "network" not in model_check.hint


def _prime_on_path() -> bool:
    return (Path(sys.executable).parent / "prime").exists()


@pytest.mark.skipif(not _prime_on_path(), reason="the prime CLI is not installed in this venv")
def test_submit_training_on_a_hub_that_does_not_resolve_is_exit_4(tmp_path):
    from trainconfig_fixtures import NATIVE_CONFIG, cli_env

    config = tmp_path / "configs" / "run.toml"
    config.parent.mkdir()
    config.write_text(NATIVE_CONFIG)
    env = cli_env("http://no-such-host.invalid", tmp_path / "home")  # .invalid never resolves: a DNS failure
    r = run_script("submit_training", "--config", str(config), "--no-rehearse", "--json", env=env, cwd=tmp_path)
    obj = assert_result(r.json, "submit_training", 4)
    failed = {c["id"]: c for c in obj["checks"] if c["status"] == "fail"}
    assert set(failed) == {"env-hub", "model-available"}, failed
    assert all("retry" in c["hint"] and "--offline" in c["hint"] for c in failed.values())
    env["PRIME_API_KEY"] = ""  # and without a login: exit 3 says which one to fix first
    r = run_script("submit_training", "--config", str(config), "--no-rehearse", "--json", env=env, cwd=tmp_path)
    obj = assert_result(r.json, "submit_training", 3)
    hints = {c["id"]: c["hint"] for c in obj["checks"] if c["status"] == "fail"}
    assert "prime login" in hints["model-available"] and "retry" in hints["env-hub"], hints


# -- 6. a judge that hangs: the proxy answers 504 before the reward's bound, and stays quiet ---------------------


class _SilentJudge:
    """A loopback server that accepts connections and never answers (a judge that hangs)."""

    def __enter__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()
        return self

    def _accept(self):
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                continue

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=5)
        for conn in self.held:
            conn.close()
        self.sock.close()


def _post(url: str, timeout: float = 60.0):
    request = urllib.request.Request(
        f"{url}/chat/completions",
        data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "grade this"}]}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, dict(answer.headers), json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), json.loads(err.read())


def test_the_proxy_answers_504_for_a_hung_judge_and_then_at_once(monkeypatch):
    from vlab.reward.judge_server import JudgeServer

    with _SilentJudge() as upstream, JudgeServer(upstream=upstream.url, api_key="k") as proxy:
        proxy.bound_calls(1.0)  # --timeout 1: a proxied call gets half of it
        status, headers, body = _post(proxy.url)
        assert status == 504 and "did not answer within 0.5 s" in body["error"]["message"], body
        assert headers.get("x-should-retry") == "false"  # the OpenAI client's retries would outlast the bound
        held = len(upstream.held)
        status, _, body = _post(proxy.url)
        assert status == 504 and "on an earlier call" in body["error"]["message"], body
        assert len(upstream.held) == held  # the hung judge is not asked again
        assert proxy.usage()["failures"] == 2 and proxy.usage()["calls"] == 0


def test_a_caller_that_went_away_leaves_no_traceback_on_stderr(monkeypatch):
    from vlab.reward.judge_server import JudgeServer

    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)  # socketserver prints a handler's traceback here
    with _SilentJudge() as upstream, JudgeServer(upstream=upstream.url, api_key="k", timeout=1.0) as proxy:
        for _ in range(3):  # callers whose own time limit ends before the proxy's: they hang up first
            with pytest.raises((TimeoutError, urllib.error.URLError)):
                _post(proxy.url, timeout=0.2)
        deadline = time.monotonic() + 30
        while proxy.usage()["failures"] < 3 and time.monotonic() < deadline:  # the proxy's answers, to nobody
            time.sleep(0.1)
        time.sleep(0.3)
    assert proxy.usage()["failures"] == 3
    assert "Traceback" not in stderr.getvalue() and "BrokenPipe" not in stderr.getvalue(), stderr.getvalue()


class _FailingJudge:
    """A judge answering HTTP 500 to every call."""

    def __enter__(self):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(500)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


JUDGE_CASES = [
    pytest.param("v1-judge", _SilentJudge, "the v1 rollout errors", marks=pytest.mark.v1),
    pytest.param("classic-judge", _SilentJudge, "the classic Rubric scores the rollout 0.0", marks=pytest.mark.classic),
    pytest.param("classic-judge", _FailingJudge, "judge_error metric is 1.0", marks=pytest.mark.classic),
]


@pytest.mark.slow
@pytest.mark.parametrize("template, judge, effect", JUDGE_CASES)
def test_a_judge_that_hangs_or_fails_is_exit_4_with_nothing_on_stderr(tmp_path, monkeypatch, template, judge, effect):
    project = _project(tmp_path, template, JUDGE_ROWS)
    monkeypatch.setenv("VLAB_TEST_JUDGE_KEY", "sk-test-not-a-key")
    with judge() as upstream:
        r, obj = _test_reward(
            project,
            f"environments/{template.replace('-', '_')}/",
            "data/train.jsonl",
            "--judge-base-url",
            upstream.url,
            "--judge-api-key-var",
            "VLAB_TEST_JUDGE_KEY",
            "--num-examples",
            "2",
        )
    assert r.returncode == 4, [(c["id"], c["message"][:200]) for c in obj["checks"] if c["status"] == "fail"]
    assert r.stderr.count("\n") <= 2 and "Traceback" not in r.stderr, r.stderr  # one line, no traceback
    checks = {c["id"]: c for c in obj["checks"]}
    assert (
        checks["exceptions"]["status"] == "fail" and "could not reach their service" in checks["exceptions"]["message"]
    )
    for cid in ("exceptions", "judge_gold"):
        assert effect in checks[cid]["hint"], (cid, checks[cid]["hint"])
        assert "silently becomes a 0.0 reward" not in checks[cid]["hint"]
    assert checks["judge_reworded"]["status"] == "skip"  # no gold scored: no evidence, never a pass
    assert "failed" in checks["judge_cost"]["message"] and "judge_base_url" not in checks["judge_cost"]["hint"]


# -- 7. the hints name what a raising reward does, for the generation at hand ----------------------------------


def _env(silent: bool, names: tuple[str, ...]):
    return SimpleNamespace(
        capabilities=SimpleNamespace(silent_reward_errors=silent),
        reward_functions=[SimpleNamespace(name=n) for n in names],
    )


def test_the_training_effect_of_a_raising_reward_by_generation_and_template():
    from vlab.reward.health import service_failure, training_effect

    assert "judge_error metric is 1.0" in training_effect(_env(True, ("judge_score", "judge_error")))
    assert "without a word" in training_effect(_env(True, ("exact",)))
    assert "v1 rollout errors" in training_effect(_env(False, ("judge_score",)))
    assert "0.0" not in training_effect(_env(False, ("judge_score",))).replace("never a silent 0.0", "")
    # the classic JudgeRubric re-raises an HTTP 5xx or a timeout as a RuntimeError: still the service's failure
    wrapped = "Judge model API error. Check model availability and API key. Model: m, Error: Error code: 500 - {}"
    assert service_failure("RuntimeError", wrapped) and service_failure("InternalServerError", "")
    assert not service_failure("RuntimeError", "Judge model API error. Error: Error code: 401 - bad key")
    assert not service_failure("KeyError", "'answer'")
