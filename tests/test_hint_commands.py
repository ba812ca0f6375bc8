"""The walker that checks every command a hint names (tests/hint_commands.py, run by `make test` over every hint
the suite's scenarios emitted) finds commands in prose and refuses those that would not run (issue 38)."""

from __future__ import annotations

import json

import hint_commands as walker


def test_commands_are_found_in_prose_and_cut_where_the_sentence_goes_on():
    text = (
        "review configs/x.toml, then: python /p/skills/verifiers-lab/scripts/submit_training.py --config "
        "configs/x.toml --submit --yes; or `vlab-test-reward ENV --seq-len SEQ_LEN` (it counts tokens)"
    )
    found = walker.commands(text)
    assert ("submit_training", ["--config", "configs/x.toml", "--submit", "--yes"]) in found, found
    assert ("test_reward", ["ENV", "--seq-len", "SEQ_LEN"]) in found, found


def test_a_flag_the_script_does_not_have_is_refused_and_placeholders_are_filled_in():
    assert walker.problem("test_reward", ["environments/my_env", "--seq-len", "SEQ_LEN"]) is None
    why = walker.problem("test_reward", ["environments/my_env", "--seqlen", "4096"])
    assert why and "does not parse" in why and "--seqlen" in why, why
    assert walker.problem("new_env", ["my-env", "--from-inspect", "inspect.json"]) is None


def test_the_walk_fails_naming_the_hint_a_bad_command_came_from(tmp_path, capsys):
    hints = tmp_path / "hints.jsonl"
    lines = [
        {"tool": "inspect_dataset", "text": "python scripts/new_env.py my-env --from-inspect inspect.json"},
        {"tool": "test_reward", "text": "re-run: python scripts/test_reward.py ENV --no-such-flag"},
    ]
    hints.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert walker.main([str(hints)]) == 1
    out = capsys.readouterr().out
    assert "2 commands checked" in out and "--no-such-flag" in out and "from test_reward" in out, out
