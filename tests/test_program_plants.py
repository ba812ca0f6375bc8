"""test_reward on the program kind, each defect planted in a copy of the v1-program template fails with the check
that names it: the whitespace between tokens removed, the output compared as a prefix, the exit status ignored after
a crash, every test pasted into the prompt, only the first test run, no isolation (the test files read from disk),
the previous judge's missing exit() (the accepted references refused), and no time limit."""

from __future__ import annotations

import shutil

import program_fixtures as fx
import pytest
from conftest import SKILL_ROOT
from test_program_kind import chosen, failed, message, run, status

TEMPLATES = SKILL_ROOT / "templates" / "environments"


# Each defect planted in a copy of v1-program: (file, the text replaced, what replaces it, the check that fails)
PLANTS = {
    "whitespace_removed": (
        "v1_program_harness.py",
        "mine, theirs = got.split(), expected.split()",
        'mine, theirs = ["".join(got.split())], ["".join(expected.split())]',
        "program_whitespace",
    ),
    "prefix_compared": (
        "v1_program_harness.py",
        "    mine, theirs = got.split(), expected.split()",
        '    if expected.strip().startswith(got.strip()):\n        return ""\n    mine, theirs = got.split(), expected.split()',
        "program_prefix",
    ),
    "exit_status_ignored": (
        "v1_program_harness.py",
        "    if code != 0:\n",
        "    if False:\n",
        "program_exit_status",
    ),
    "every_test_in_the_prompt": (
        "v1_program.py",
        '    return (\n        prompt_text(row).rstrip() + "\\n\\nYour program',
        '    return (\n        prompt_text(row).rstrip() + "\\n\\nTests:\\n" + "\\n".join(c["input"] + c["output"] '
        'for c in spec["cases"]) + "\\n\\nYour program',
        "program_tests_in_prompt",
    ),
    "first_test_only": (
        "v1_program_harness.py",
        "for n, case in enumerate(cases, 1):",
        "for n, case in enumerate(cases[:1], 1):",
        "program_hidden_tests",
    ),
    "no_isolation": (
        "v1_program_harness.py",
        "    isolation = _fence(fence, network, driver)\n",
        "    isolation = {}\n",
        "program_isolation",
    ),
    "no_exit_builtin": (  # the previous judge: no site module, so no exit() or quit()
        "v1_program_harness.py",
        '    builtins.exit, builtins.quit = _Quitter("exit"), _Quitter("quit")\n',
        "",
        "program_reference",
    ),
}


def plant(tmp_path, name: str):
    file, old, new, _ = PLANTS[name]
    env = shutil.copytree(TEMPLATES / "v1-program", tmp_path / "env")
    text = (env / file).read_text()
    assert text.count(old) == 1, (name, "the plant no longer matches the template")
    (env / file).write_text(text.replace(old, new))
    return env / "v1_program.py"


@pytest.mark.v1
@pytest.mark.parametrize("name", PLANTS)
def test_a_planted_defect_fails_its_check(tmp_path, name):
    env = plant(tmp_path, name)
    data = fx.write_jsonl(tmp_path / "data.jsonl", fx.apps_rows(chosen(("sort", "sum"))))
    result = run(env, data, reach_seconds=0.0)
    check = PLANTS[name][3]
    assert status(result).get(check) == "fail", (check, failed(result))
    assert result.exit_code() == 1
    blamed = {cid for cid, s in status(result).items() if s == "fail" and cid.startswith("program_")}
    assert blamed == {check}, failed(result)  # the defect is named, and no other program check is blamed
    if name == "no_exit_builtin":
        assert "the program templates' judge passes it on every test" in message(result, check)


@pytest.mark.v1
def test_a_judge_without_a_time_limit_fails_on_a_top_level_loop(tmp_path):
    env = shutil.copytree(TEMPLATES / "v1-program", tmp_path / "env")
    harness = env / "v1_program_harness.py"
    old = '    limit = float(spec.get("time_limit") or timeout)\n'
    assert harness.read_text().count(old) == 1
    harness.write_text(harness.read_text().replace(old, "    limit = 1e6\n"))
    data = fx.write_jsonl(tmp_path / "data.jsonl", fx.apps_rows(chosen(("sum",))))
    result = run(env / "v1_program.py", data, timeout=4.0, num_examples=1)
    assert status(result).get("program_time_limit") == "fail", failed(result)
    assert result.exit_code() == 1
    assert {cid for cid, s in status(result).items() if s == "fail" and cid.startswith("program_")} == {
        "program_time_limit"
    }
