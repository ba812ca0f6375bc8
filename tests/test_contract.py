"""The contract every script keeps, checked for every script in scripts/."""

from __future__ import annotations

import json

import pytest
from conftest import ROOT, SCRIPTS, assert_result, run_script

SCRIPT_NAMES = sorted(p.stem for p in SCRIPTS.glob("*.py"))


def test_there_are_scripts():
    assert "preflight" in SCRIPT_NAMES


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_help_documents_exit_codes(name):
    r = run_script(name, "--help")
    assert r.returncode == 0, r
    for needle in ("--json", "exit codes", "  0 ", "  1 ", "  2 ", "  3 ", "  4 ", "130"):
        assert needle in r.stdout, (name, needle)
    assert r.stderr == ""


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_bad_argument_is_one_json_object_with_exit_2(name):
    r = run_script(name, "--json", "--no-such-option-xyz")
    assert r.returncode == 2, r
    obj = assert_result(r.json, name, 2)
    assert obj["status"] == "error" and "no-such-option-xyz" in obj["summary"]
    assert "Traceback" not in r.stdout + r.stderr


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_bad_argument_human_output_has_no_traceback(name):
    r = run_script(name, "--no-such-option-xyz")
    assert r.returncode == 2
    assert "Traceback" not in r.stdout + r.stderr
    assert "--help" in r.stdout


@pytest.mark.parametrize("name", SCRIPT_NAMES)
def test_scripts_are_thin_and_executable(name):
    path = SCRIPTS / f"{name}.py"
    text = path.read_text()
    assert text.startswith("#!/usr/bin/env python3"), name
    assert path.stat().st_mode & 0o111, f"{name}.py is not executable"
    assert "from vlab" in text, f"{name}.py should call the vlab library"
    assert 'if __name__ == "__main__":' in text


def test_schema_file_is_valid_json_schema():
    import jsonschema

    schema = json.loads((ROOT / "references" / "result.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    bad = {"tool": "x", "version": "1", "status": "pass", "exit_code": 1, "summary": "", "checks": [], "data": {},
           "next_steps": []}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)  # pass with exit 1 is a contradiction the schema must catch
