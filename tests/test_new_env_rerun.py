"""new_env run again on the user's own environment (issue 38): after `pip install -e environments/<name>` the name
imports as that package, which is "already exists" (--force to write it again), never "shadows a Python or library
module"; --force rewrites the template's files, keeps data/ and the user's files, and loses nothing on a failure."""

from __future__ import annotations

import os

import pytest
from conftest import assert_result, run_script

from vlab.core.result import UsageError
from vlab.scaffold import names as scaffold_names
from vlab.scaffold import place

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once


def _new_env(tmp_path, *args: str, env: dict | None = None):
    return run_script(
        "new_env",
        "my-env",
        "--template",
        "v1-numeric",
        "--path",
        "environments",
        *args,
        "--json",
        cwd=tmp_path,
        env=env,
    )


def test_rerun_after_an_editable_install_says_already_exists(tmp_path):
    """An editable install (hatchling's .pth) puts environments/my_env on sys.path: the second run said the name
    'shadows a Python or library module'."""
    assert _new_env(tmp_path).returncode == 0
    folder = tmp_path / "environments" / "my_env"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    obj = assert_result(_new_env(tmp_path, env={"PYTHONPATH": str(folder)}).json, "new_env", 2)
    assert obj["summary"] == "environments/my_env already exists; refusing to overwrite it"
    assert "shadows" not in obj["summary"]
    assert obj["next_steps"][0].startswith("pass --force to write the template's files again")
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_own_install_is_no_shadow_but_another_folders_is(tmp_path, monkeypatch):
    folder = tmp_path / "environments" / "my_env"
    folder.mkdir(parents=True)
    (folder / "my_env.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(folder))  # what pip install -e environments/my_env does
    assert scaffold_names.validate_name("my-env", tmp_path / "environments").module == "my_env"
    with pytest.raises(UsageError) as err:  # the same module name for a package somewhere else: it would shadow
        scaffold_names.validate_name("my-env", tmp_path / "elsewhere")
    assert "shadows a Python or library module (installed here: " in err.value.message
    assert str(folder / "my_env.py") in err.value.message


def test_force_writes_the_template_again_and_keeps_the_users_files(tmp_path):
    assert _new_env(tmp_path).returncode == 0
    folder = tmp_path / "environments" / "my_env"
    (folder / "my_env.py").write_text("# edited by hand\n")
    (folder / "data").mkdir()
    (folder / "data" / "train.jsonl").write_text('{"question": "q", "answer": "1"}\n')
    (folder / "NOTES.txt").write_text("mine\n")
    obj = assert_result(_new_env(tmp_path, "--force").json, "new_env", 0)
    created = next(c for c in obj["checks"] if c["id"] == "created")
    assert created["message"].endswith("written again (--force), kept: NOTES.txt, data")
    assert "class MyEnvTaskset" in (folder / "my_env.py").read_text()
    assert (folder / "data" / "train.jsonl").read_text() == '{"question": "q", "answer": "1"}\n'
    assert (folder / "NOTES.txt").read_text() == "mine\n"
    assert sorted(p.name for p in (tmp_path / "environments").iterdir()) == ["my_env"]  # nothing left beside it


def test_force_refuses_a_folder_that_is_no_package(tmp_path):
    folder = tmp_path / "environments" / "my_env"
    folder.mkdir(parents=True)
    (folder / "precious.txt").write_text("keep\n")
    obj = assert_result(_new_env(tmp_path, "--force").json, "new_env", 2)
    assert obj["summary"] == (
        "environments/my_env exists and is not an environment package (no my_env.py in it); "
        "--force rewrites only a package new_env wrote"
    )
    assert [p.name for p in folder.iterdir()] == ["precious.txt"]


def test_a_failed_replace_moves_everything_back(tmp_path, monkeypatch):
    target = tmp_path / "my_env"
    target.mkdir()
    (target / "my_env.py").write_text("# old\n")
    (target / "data").mkdir()
    (target / "data" / "rows.jsonl").write_text("{}\n")
    staging = tmp_path / ".my_env.staging"
    staging.mkdir()
    (staging / "my_env.py").write_text("# new\n")
    real = os.rename

    def failing(src, dst):
        if str(src) == str(staging):  # the last step: the new package into place
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(place.os, "rename", failing)
    with pytest.raises(OSError):
        place.put_in_place(staging, target, ["my_env.py"], replace=True)
    assert (target / "my_env.py").read_text() == "# old\n" and (target / "data" / "rows.jsonl").read_text() == "{}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my_env"]  # the staging folder is gone, the old one back
