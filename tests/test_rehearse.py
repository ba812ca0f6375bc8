"""The hosted rehearsal (vlab.hosted.rehearse) through submit_training: every v1 template's generated
environment, with its data shipped, is built, installed with verifiers 0.4.0 in a throwaway venv,
loaded from an empty folder and its gold scored; each way a run would not start fails naming its fix.

One project and one venv cache per module: the first rehearsal of a package fills the cache (and,
on a fresh machine, uv's own cache from the package index), later ones reuse it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import VERIFIERS, assert_result, run_script
from test_templates import ROWS, V1, kind

from vlab.hosted import rehearse

pytestmark = [
    pytest.mark.v1,
    pytest.mark.skipif(rehearse.uv_command() is None, reason="the rehearsal needs uv"),
    # The rehearsal's child runs verifiers 0.4.0 in its own venv whatever Python runs the parent: one
    # generation's run covers it (this module also passed under the 0.3.1 venv when it was written).
    pytest.mark.skipif(VERIFIERS.classic, reason="runs in the 0.4 venv (the rehearsal's child is 0.4.0 anyway)"),
]
TOOL = "submit_training"
MODEL = "Qwen/Qwen3-4B-Instruct-2507"
TIMEOUT = 900  # a first rehearsal of five packages on a loaded machine


def env_name(template: str) -> str:
    return "rh-" + template.removeprefix("v1-")


def make_env(root: Path, template: str, name: str | None = None) -> Path:
    """new_env from ``template`` under root/environments, with the template's rows in data/train.jsonl."""
    name = name or env_name(template)
    r = run_script("new_env", name, "--template", template, "--path", "environments", "--json", cwd=root)
    assert_result(r.json, "new_env")
    folder = root / "environments" / name.replace("-", "_")
    (folder / "data").mkdir(exist_ok=True)
    (folder / "data" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS[kind(template)]))
    return folder


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    root = tmp_path_factory.mktemp("rehearse-project")
    for template in V1:
        make_env(root, template)
    return root


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return {"VLAB_REHEARSE_CACHE": str(tmp_path_factory.mktemp("rehearse-cache"))}


def submit(project: Path, cache: dict, *args: str, output: str) -> dict:
    r = run_script(
        TOOL,
        "--model",
        MODEL,
        *args,
        "--offline",
        "--output",
        output,
        "--json",
        cwd=project,
        env=cache,
        timeout=TIMEOUT,
    )
    assert "Traceback" not in r.stderr
    return r.json


def checks(obj: dict, prefix: str = "rehearse") -> list[dict]:
    return [c for c in obj["checks"] if c["id"].startswith(prefix)]


@pytest.mark.parametrize("template", V1)
def test_each_v1_template_with_data_shipped_passes_the_rehearsal_and_the_dry_run(project, cache, template):
    # One template a test (a test under a minute on a loaded machine); the last config names two environments,
    # the first template's again, so a config with several is rehearsed source by source too.
    named = [V1[0], template] if template == V1[-1] else [template]
    args = [a for t in named for a in ("--env", f"me/{env_name(t)}", "--env-arg", 'dataset_path="train.jsonl"')]
    args += ["--seq-len", "4096"]  # the tool template's 6 turns of 512 tokens (test_a_seq_len_too_short_...)
    output = f"configs/{env_name(template)}.toml"
    obj = assert_result(submit(project, cache, *args, output=output), TOOL, 0)
    assert obj["data"]["written"] is True and (project / output).is_file()
    found = checks(obj)
    assert [c for c in found if c["status"] != "pass"] == []
    for name in named:
        module = env_name(name).replace("-", "_")
        mine = [c for c in found if f"me/{env_name(name)}" in c["message"]]
        assert {c["id"] for c in mine} == {
            "rehearse-build",
            "rehearse-install",
            "rehearse-data",
            "rehearse-load",
            "rehearse-gold",
        }, name
        data = next(c for c in mine if c["id"] == "rehearse-data")
        assert f"shipped in the wheel as {module}_data/train.jsonl" in data["message"]
        assert "top reward (1)" in next(c for c in mine if c["id"] == "rehearse-gold")["message"]
    sources = obj["data"]["rehearsal"]["sources"]
    assert [s["loaded"] for s in sources] == [True] * len(named)
    assert sources[-1]["cached"] is False  # this template's wheel: installed, not found in the cache


def test_a_second_run_reuses_the_cached_venv(project, cache):
    args = ["--env", "me/rh-numeric", "--env-arg", 'dataset_path="train.jsonl"']
    first = assert_result(submit(project, cache, *args, output="configs/one.toml"), TOOL, 0)
    again = assert_result(submit(project, cache, *args, output="configs/two.toml"), TOOL, 0)
    for obj in (first, again):  # the first one may itself reuse the venv a test above made
        assert next(c for c in checks(obj) if c["id"] == "rehearse-gold")["status"] == "pass"
    source = again["data"]["rehearsal"]["sources"][0]
    assert source["cached"] is True and source["venv"] == first["data"]["rehearsal"]["sources"][0]["venv"]
    assert "reused the cached venv" in next(c for c in checks(again) if c["id"] == "rehearse-install")["message"]


def test_without_the_dataset_argument_fails_naming_it(project, cache):
    obj = assert_result(submit(project, cache, "--env", "me/rh-numeric", output="configs/none.toml"), TOOL, 1)
    failed = [c for c in obj["checks"] if c["status"] == "fail"]
    assert [c["id"] for c in failed] == ["rehearse-dataset"]
    assert "no dataset argument" in failed[0]["message"] and "dataset_path" in failed[0]["hint"]
    assert obj["data"]["written"] is False and not (project / "configs" / "none.toml").exists()


def test_a_relative_path_the_wheel_does_not_ship_fails_naming_the_file_and_the_pyproject_line(project, cache):
    args = ["--env", "me/rh-numeric", "--env-arg", 'dataset_path="other.jsonl"']
    # nowhere here either: bad input (issue 52), still with the shipping fix for a file not yet put in place
    obj = assert_result(submit(project, cache, *args, output="configs/other.toml"), TOOL, 2)
    failed = [c for c in obj["checks"] if c["status"] == "fail"]
    assert [c["id"] for c in failed] == ["rehearse-data"]
    assert "'other.jsonl' is not in the built wheel" in failed[0]["message"]
    # the file's place as the user sees it from the project folder (issue 38: not "rh_numeric/data/...")
    assert "put the file at environments/rh_numeric/data/other.jsonl " in failed[0]["hint"]
    assert '"data/**"' in failed[0]["hint"]
    assert obj["data"]["rehearsal"]["sources"][0]["loaded"] is False


def test_an_absolute_path_fails(project, cache):
    path = project / "environments" / "rh_numeric" / "data" / "train.jsonl"
    args = ["--env", "me/rh-numeric", "--env-arg", f'dataset_path="{path}"']
    obj = assert_result(submit(project, cache, *args, output="configs/abs.toml"), TOOL, 1)
    failed = [c for c in obj["checks"] if c["status"] == "fail"]
    assert [c["id"] for c in failed] == ["rehearse-data"]
    assert "absolute path" in failed[0]["message"] and 'dataset_path="train.jsonl"' in failed[0]["hint"]


def test_an_undeclared_import_fails_naming_the_module_and_the_dependency(project, cache, tmp_path):
    folder = make_env(project, "v1-numeric", "rh-undeclared")
    module = folder / "rh_undeclared.py"
    # pytest is installed where the user works, but the package does not declare it: the run would not have it
    module.write_text(
        module.read_text().replace(
            "import verifiers.v1 as vf\n", "import pytest  # noqa\nimport verifiers.v1 as vf\n", 1
        )
    )
    args = ["--env", "me/rh-undeclared", "--env-arg", 'dataset_path="train.jsonl"']
    obj = assert_result(submit(project, cache, *args, output="configs/undeclared.toml"), TOOL, 1)
    failed = [c for c in obj["checks"] if c["status"] == "fail"]
    assert [c["id"] for c in failed] == ["rehearse-import"]
    assert "'pytest'" in failed[0]["message"] and '"pytest"' in failed[0]["hint"]


def test_a_seq_len_too_short_for_the_tool_environment_s_turns_is_refused_naming_the_sum(project, cache):
    """Issue 38: the tool template's 6 turns of 512 tokens do not fit the template's seq_len 2048 (nor 1024):
    exit 1, nothing written, the check naming turns x tokens + the rehearsed prompt against seq_len and the
    seq_len that holds it; that seq_len is then accepted and the config written."""
    args = ["--env", "me/rh-multiturn-tool", "--env-arg", 'dataset_path="train.jsonl"', "--max-tokens", "512"]
    for seq_len in ("1024", "2048"):
        out = f"configs/tool-{seq_len}.toml"
        obj = assert_result(submit(project, cache, *args, "--seq-len", seq_len, output=out), TOOL, 1)
        failed = [c for c in obj["checks"] if c["status"] == "fail"]
        assert [c["id"] for c in failed] == ["token-budget"], failed
        rollout = obj["data"]["rehearsal"]["sources"][0]["rollout"]
        prompt, need = rollout["prompt_tokens"], rollout["prompt_tokens"] + 6 * 512 + 5 * 64
        assert rollout["max_turns"] == 6 and rollout["tools_counted"] is True and prompt > 50, rollout
        message, hint = failed[0]["message"], failed[0]["hint"]
        assert f"seq_len {seq_len} cannot hold max_turns=6 turns" in message, message
        assert f"6 turns x 512 tokens + prompt {prompt} + 5 tool replies x 64 = {need} tokens" in message, message
        assert f"raise seq_len to {need} (--seq-len {need})" in hint and "--max-tokens" in hint, hint
        assert "task.max_turns" in hint, hint
        assert obj["data"]["written"] is False and not (project / out).exists()
    obj = assert_result(submit(project, cache, *args, "--seq-len", str(need), output="configs/tool.toml"), TOOL, 0)
    budget = next(c for c in obj["checks"] if c["id"] == "token-budget")
    assert budget["status"] == "pass" and f"= {need} tokens" in budget["message"], budget
    assert (project / "configs" / "tool.toml").is_file()


def test_two_generated_environments_install_side_by_side(project, tmp_path):
    uv = rehearse.uv_command()
    wheels = []
    for name in ("rh_numeric", "rh_code"):
        wheels.append(rehearse.build_wheel(project / "environments" / name, tmp_path / name, uv, online=False))
    for wheel in wheels:  # the module(s), its data folder and its dist-info: nothing else at the top
        tops = {n.split("/")[0] for n in wheel.names}
        assert not tops & {"README.md", "pyproject.toml"}, wheel.names
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    subprocess.run(
        [
            uv,
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--python",
            str(venv / "bin" / "python"),
            *(str(w.path) for w in wheels),
        ],
        check=True,
    )
    site = next((venv / "lib").glob("python3*/site-packages"))
    assert not (site / "README.md").exists() and not (site / "pyproject.toml").exists()
    for name in ("rh_numeric", "rh_code"):
        assert (site / f"{name}.py").is_file() and (site / f"{name}_data" / "train.jsonl").is_file()
        with zipfile.ZipFile(next(w.path for w in wheels if w.path.name.startswith(name))) as zf:
            assert f"{name}_data/train.jsonl" in zf.namelist()


def test_no_rehearse_says_so_and_builds_nothing(project, cache):
    args = ["--env", "me/rh-numeric", "--env-arg", 'dataset_path="train.jsonl"', "--no-rehearse"]
    obj = assert_result(submit(project, cache, *args, output="configs/skip.toml"), TOOL, 0)
    assert [(c["id"], c["status"]) for c in checks(obj)] == [("rehearse", "skip")]
    assert obj["data"]["rehearsal"] is None
    data = next(c for c in obj["checks"] if c["id"] == "env-data")  # the relative path: not passed, not refused
    assert data["status"] == "warn" and "not checked" in data["message"]


def test_the_generated_readme_quickstart_scores_the_shipped_data(project):
    """The README's test_reward line runs as written from the project folder, on data/train.jsonl."""
    readme = (project / "environments" / "rh_numeric" / "README.md").read_text()
    line = next(ln for ln in readme.splitlines() if "test_reward" in ln and not ln.startswith("#"))
    assert "$SKILL_DIR" not in line and "train.jsonl" in line
    proc = subprocess.run(
        ["bash", "-c", line + " --json"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert_result(json.loads(proc.stdout), "test_reward", 0)


def test_local_train_prime_rl_rehearses_and_writes_rl_toml_only_when_it_passes(project, cache, tmp_path):
    pytest.importorskip("torch")
    args = ["--engine", "prime-rl", "--env", "environments/rh_numeric/", "--model", "Qwen/Qwen3-0.6B"]
    args += ["--env-args", '{"dataset_path": "other.jsonl"}', "--dry-run", "--gpus", "2", "--json"]
    r = run_script("local_train", *args, "--output-dir", str(tmp_path / "a"), cwd=project, env=cache, timeout=TIMEOUT)
    obj = assert_result(r.json, "local_train", 2)  # other.jsonl is nowhere here either: bad input (issue 52)
    failed = [c for c in obj["checks"] if c["status"] == "fail"]  # the train source and its eval source
    assert failed and {c["id"] for c in failed} == {"rehearse-data"}
    assert all("'other.jsonl' is not in the built wheel" in c["message"] for c in failed)
    assert not (tmp_path / "a" / "rl.toml").exists()
    r = run_script("local_train", *args, "--no-rehearse", "--output-dir", str(tmp_path / "b"), cwd=project, env=cache)
    obj = assert_result(r.json, "local_train", 0)
    assert [c["status"] for c in obj["checks"] if c["id"] == "rehearse"] == ["skip"]
    assert (tmp_path / "b" / "rl.toml").is_file()


def test_an_eval_source_like_its_train_source_is_loaded_once_and_reported_under_both(project, cache, tmp_path):
    """prime-rl's config evaluates on the environment it trains on: one worker load and scoring, not two (a
    Hub dataset the network cannot reach cost 24 s a load); each source still gets its load and gold verdict."""
    pytest.importorskip("torch")
    args = ["--engine", "prime-rl", "--env", "environments/rh_numeric/", "--model", "Qwen/Qwen3-0.6B"]
    args += ["--env-args", '{"dataset_path": "train.jsonl"}', "--dry-run", "--gpus", "2", "--json"]
    r = run_script("local_train", *args, "--output-dir", str(tmp_path / "a"), cwd=project, env=cache, timeout=TIMEOUT)
    obj = assert_result(r.json, "local_train", 0)
    train, evaluation = obj["data"]["rehearsal"]["sources"]
    assert evaluation["same_as"] == train["where"] and "same_as" not in train
    assert evaluation["loaded"] is train["loaded"] is True and evaluation["gold"] == train["gold"]
    for check in ("rehearse-load", "rehearse-gold"):
        first, second = [c for c in obj["checks"] if c["id"] == check]
        assert first["status"] == second["status"] == "pass"
        assert second["message"].startswith(f"{evaluation['where']} (") and "loaded once" in second["message"]
