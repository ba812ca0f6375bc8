"""inspect_dataset: every format, every answer type, roles, bad input, the CLI contract."""

from __future__ import annotations

import json

import dataset_fixtures as fx
import pytest
from conftest import VERIFIERS, assert_result, run_script

from vlab.core.result import UsageError
from vlab.inspect import analyse, read_sample
from vlab.inspect.formats import detect_answer_format
from vlab.inspect.sample import MAX_LINE_BYTES
from vlab.kinds.number.values import parse_number

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once


def inspect(path, **kw):
    return analyse(read_sample(str(path), kw.pop("n", 300), split=kw.pop("split", None)), **kw)


def role(data, name):
    return data["roles"][name]["column"] if data["roles"][name] else None


# -- formats x answer types -------------------------------------------------------------


@pytest.mark.parametrize(
    "make, kind, prompt, answer, fmt, template",
    [
        (fx.make_gsm8k_jsonl, "jsonl", "question", "answer", "gsm8k", "classic-numeric"),
        (fx.make_numbers_json, "json", "Problem", "Answer", "number", "classic-numeric"),
        (fx.make_numbers_wrapped_json, "json", "question", "answer", "number", "classic-numeric"),
        (fx.make_boxed_parquet, "parquet", "problem", "solution", "boxed", "classic-numeric"),
        (fx.make_mmlu_parquet, "parquet", "question", "answer", "multiple_choice_index", "classic-multiple-choice"),
        (fx.make_arc_jsonl, "jsonl", "question", "answerKey", "multiple_choice_letter", "classic-multiple-choice"),
        (fx.make_letters_csv, "csv", "Question", "Answer", "multiple_choice_letter", "classic-multiple-choice"),
        (fx.make_boolean_tsv, "tsv", "question", "answer", "boolean", "classic-classification"),
        (fx.make_classlabel_disk, "save_to_disk", "text", "label", "class_label", "classic-classification"),
        (fx.make_labels_csv, "csv", "text", "label", "class_label", "classic-classification"),
        (fx.make_short_text_jsonl, "jsonl", "query", "target", "short_text", "classic-short-answer"),
        (fx.make_code_jsonl, "jsonl", "prompt", "solution", "code", None),
        (fx.make_long_text_jsonl, "jsonl", "instruction", "output", "long_text", "classic-judge"),
        (fx.make_messages_jsonl, "jsonl", "prompt", "answer", "number", "classic-numeric"),
        (fx.make_arrow_file, "arrow", "input", "output", "number", "classic-numeric"),
        (fx.make_math500_jsonl, "jsonl", "problem", "answer", "math", "classic-numeric"),
        (
            fx.make_mmlu_classlabel_disk,
            "save_to_disk",
            "question",
            "answer",
            "multiple_choice_index",
            "classic-multiple-choice",
        ),
        (fx.make_hellaswag_jsonl, "jsonl", "ctx", "label", "multiple_choice_index", "classic-multiple-choice"),
    ],
)
def test_format_roles_and_template(tmp_path, make, kind, prompt, answer, fmt, template):
    data = inspect(make(tmp_path))
    assert data["source"]["kind"] == kind
    assert role(data, "prompt") == prompt and role(data, "answer") == answer
    assert data["roles"]["prompt"]["confidence"] >= 0.6 and data["roles"]["answer"]["confidence"] >= 0.6
    assert data["roles"]["prompt"]["reason"] and data["roles"]["answer"]["reason"]
    assert data["answer_format"]["type"] == fmt
    assert data["answer_format"]["match_share"] == 1.0
    rec = data["recommendation"]
    # v1 unless the installed verifiers is 0.3.x; every classic template has its v1 counterpart
    wanted = template if VERIFIERS.classic or template is None else template.replace("classic-", "v1-")
    assert rec["template"] == wanted
    assert set(rec["snippets"]) == {"classic", "v1"}
    for code in rec["snippets"].values():
        compile(code, "<snippet>", "exec")
        assert repr(prompt) in code and repr(answer) in code  # the mapping is filled in


@pytest.mark.parametrize(
    "installed, template, says",
    [
        (("0.4.0", False, True), "v1-numeric", "Tinker, SkyRL and prime-rl <= v0.8.0"),
        ((None, False, False), "v1-numeric", "Tinker, SkyRL and prime-rl <= v0.8.0"),  # nothing installed yet
        (("0.3.1", True, True), "classic-numeric", "0.3.x"),  # 0.3.1 also has an early verifiers.v1
    ],
)
def test_recommendation_follows_the_installed_generation(tmp_path, monkeypatch, installed, template, says):
    import importlib

    from vlab.core.installed import VerifiersInfo
    from vlab.core.result import Result
    from vlab.inspect import analysis

    recommend = importlib.import_module("vlab.inspect.recommend")  # the module (the package exports the function)
    monkeypatch.setattr(recommend, "verifiers_info", lambda: VerifiersInfo(*installed))
    path = fx.make_gsm8k_jsonl(tmp_path)
    data = inspect(path)
    rec = data["recommendation"]
    assert rec["template"] == template and rec["generation"] == template.split("-")[0]
    assert rec["templates"] == {"classic": "classic-numeric", "v1": "v1-numeric"} and says in rec["why"]
    result = Result("inspect_dataset")
    analysis.inspect_dataset(analysis.InspectRequest(source=str(path)), result)
    assert any(f"templates/environments/{template}/" in step and says in step for step in result.next_steps)


def test_gsm8k_extraction_removes_thousands_separators(tmp_path):
    fmt = inspect(fx.make_gsm8k_jsonl(tmp_path))["answer_format"]
    assert fmt["extraction_share"] == 1.0
    rows = fx.gsm8k_rows(40)
    want = [r["answer"].split("####")[-1].strip().replace(",", "") for r in rows[:5]]
    assert fmt["extracted_examples"] == want and any(int(w) >= 1000 for w in want)


def test_mmlu_integer_answer_is_an_index_never_a_number(tmp_path):
    data = inspect(fx.make_mmlu_parquet(tmp_path))
    fmt = data["answer_format"]
    assert fmt["type"] == "multiple_choice_index" and fmt["choices_column"] == "choices"
    assert fmt["options_example"][0].startswith("A. option 0")
    assert role(data, "choices") == "choices"
    cols = {c["name"]: c for c in data["columns"]}
    assert cols["choices"]["type"] == "list[string]" and cols["choices"]["list_length"]["max"] == 4
    assert data["recommendation"]["reward_strategy"] == "choice letter"


def test_upper_case_column_names(tmp_path):
    data = inspect(fx.make_mmlu_parquet(tmp_path, upper=True))
    assert (role(data, "prompt"), role(data, "answer"), role(data, "choices")) == ("QUESTION", "ANSWER", "CHOICES")
    assert data["answer_format"]["type"] == "multiple_choice_index"


def test_classlabel_names_are_reported(tmp_path):
    data = inspect(fx.make_classlabel_disk(tmp_path))
    label = next(c for c in data["columns"] if c["name"] == "label")
    assert label["class_names"] == ["negative", "neutral", "positive"]
    assert label["feature"].startswith("ClassLabel")
    assert data["answer_format"]["labels"] == ["negative", "neutral", "positive"]


def test_arc_choices_dict_nested_keys(tmp_path):
    data = inspect(fx.make_arc_jsonl(tmp_path))
    choices = next(c for c in data["columns"] if c["name"] == "choices")
    assert choices["type"] == "dict" and choices["nested_keys"] == ["text", "label"]
    assert data["answer_format"]["options_example"][1] == "B. t0b"


def test_chat_messages_prompt_is_recognised(tmp_path):
    data = inspect(fx.make_messages_jsonl(tmp_path))
    assert data["roles"]["prompt"]["kind"] == "messages"
    assert next(c for c in data["columns"] if c["name"] == "prompt")["type"] == "messages"
    for code in data["recommendation"]["snippets"].values():
        assert "with_system(row['prompt'])" in code  # the boxed instruction goes into the messages


def test_number_forms(tmp_path):
    fmt = inspect(fx.make_numbers_json(tmp_path))["answer_format"]
    assert {"thousands separators", "fractions", "negatives", "decimals"} <= set(fmt["number_forms"])
    assert parse_number("1,234,567") == 1234567 and parse_number("3/4") == 0.75 and parse_number("-0.5") == -0.5
    assert parse_number("12%") == 12 and parse_number("abc") is None and parse_number("1,23") is None


def test_partial_match_share_and_non_matching_rows_are_reported():
    rows = [{"q": "x", "a": f"so #### {i}"} for i in range(18)] + [{"q": "x", "a": "no marker"}, {"q": "x", "a": None}]
    fmt = detect_answer_format(rows, "a")
    assert fmt["type"] == "gsm8k" and fmt["match_share"] == 0.9
    assert [m["row"] for m in fmt["non_matching"]] == [18, 19]


def test_long_text_needs_a_judge(tmp_path):
    data = inspect(fx.make_long_text_jsonl(tmp_path))
    assert data["recommendation"]["reward_strategy"] == "judge"
    assert "JudgeRubric" in data["recommendation"]["snippets"]["classic"]
    assert "vf.Judge[bool]" in data["recommendation"]["snippets"]["v1"]


def test_no_confident_roles_exit_1_and_says_what_was_tried(tmp_path):
    r = run_script("inspect_dataset", str(fx.make_no_roles_csv(tmp_path)), "--json")
    obj = assert_result(r.json, "inspect_dataset", 1)
    fails = {c["id"]: c for c in obj["checks"] if c["status"] == "fail"}
    assert set(fails) == {"prompt-column", "answer-column"}
    assert "Tried" in fails["prompt-column"]["message"] and "question" in fails["prompt-column"]["message"]
    assert "--prompt-column" in fails["prompt-column"]["hint"]
    assert obj["data"]["recommendation"] is None


def test_column_overrides(tmp_path):
    path = fx.make_no_roles_csv(tmp_path)
    r = run_script("inspect_dataset", str(path), "--json", "--prompt-column", "col_a", "--answer-column", "col_b")
    obj = assert_result(r.json, "inspect_dataset", 0)
    assert obj["data"]["roles"]["prompt"]["reason"] == "given with --prompt-column"
    r = run_script("inspect_dataset", str(path), "--json", "--answer-column", "nope")
    assert assert_result(r.json, "inspect_dataset", 2)["summary"].startswith("--answer-column 'nope' is not a column")


# -- folders and splits --------------------------------------------------------------------


def test_datasetdict_split_choice(tmp_path):
    path = fx.make_datasetdict_disk(tmp_path)
    data = inspect(path)  # train by default
    assert data["source"]["rows_sampled"] == 20 and data["source"]["loader"]["split"] == "train"
    assert inspect(path, split="test")["source"]["rows_sampled"] == 10
    with pytest.raises(UsageError, match="no split 'dev'"):
        inspect(path, split="dev")


def test_folder_of_jsonl_files(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    fx.write_jsonl(folder / "train-0.jsonl", fx.gsm8k_rows(5))
    fx.write_jsonl(folder / "train-1.jsonl", fx.gsm8k_rows(5, seed=9))
    data = inspect(folder, n=8)
    assert data["source"]["rows_sampled"] == 8 and data["answer_format"]["type"] == "gsm8k"
    assert len(data["source"]["loader"]["data_files"]) == 2


def test_sample_is_bounded(tmp_path):
    data = inspect(fx.make_gsm8k_jsonl(tmp_path, n=500), n=50)
    assert data["source"]["rows_sampled"] == 50
    assert inspect(fx.make_mmlu_parquet(tmp_path), n=7)["source"]["rows_sampled"] == 7
    assert inspect(fx.make_numbers_json(tmp_path), n=4)["source"]["rows_sampled"] == 4


def test_parquet_reports_total_rows_from_metadata(tmp_path):
    src = inspect(fx.make_mmlu_parquet(tmp_path), n=5)["source"]
    assert src["rows_sampled"] == 5 and src["total_rows"] == 40


# -- real data ------------------------------------------------------------------------------


def test_real_gsm8k_is_question_answer_with_hash_format(real_data):
    path = real_data / "gsm8k" / "test-300.jsonl"
    if not path.exists():
        pytest.skip("gsm8k/test-300.jsonl absent")
    r = run_script("inspect_dataset", str(path), "--json")
    obj = assert_result(r.json, "inspect_dataset", 0)
    data = obj["data"]
    assert role(data, "prompt") == "question" and role(data, "answer") == "answer"
    fmt = data["answer_format"]
    assert fmt["type"] == "gsm8k" and fmt["match_share"] == 1.0 and fmt["extraction_share"] == 1.0
    assert data["source"]["rows_sampled"] == 300


# -- bad input --------------------------------------------------------------------------------


def run_json(*args):
    r = run_script("inspect_dataset", *args, "--json")
    assert "Traceback" not in r.stdout + r.stderr
    return r, r.json


def test_missing_file_exit_2(tmp_path):
    r, obj = run_json(str(tmp_path / "nope.jsonl"))
    assert_result(obj, "inspect_dataset", 2)
    assert "no such file" in obj["summary"]


def test_empty_file_exit_2(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    _, obj = run_json(str(path))
    assert_result(obj, "inspect_dataset", 2) and "empty" in obj["summary"]


def test_blank_lines_only_exit_2(tmp_path):
    path = tmp_path / "blank.jsonl"
    path.write_text("\n\n  \n")
    _, obj = run_json(str(path))
    assert_result(obj, "inspect_dataset", 2) and "no readable rows" in obj["summary"]


def test_utf16_is_named(tmp_path):
    _, obj = run_json(str(fx.make_utf16_jsonl(tmp_path)))
    assert_result(obj, "inspect_dataset", 2)
    assert "UTF-16" in obj["summary"] and "iconv" in obj["next_steps"][0]


def test_undecodable_bytes_exit_2(tmp_path):
    _, obj = run_json(str(fx.make_latin1_jsonl(tmp_path)))
    assert_result(obj, "inspect_dataset", 2)
    assert obj["summary"].endswith("latin1.jsonl:1: not UTF-8 (byte 0xe9 at offset 17)")  # FILE:LINE (core.jsonl)


@pytest.mark.parametrize("bad_every", [20, 3])
def test_a_malformed_line_is_exit_2_naming_the_file_and_line(tmp_path, bad_every):
    """One bad line stops datasets' loader (issue 38): exit 2 naming FILE:LINE, however few such lines there are
    (it was exit 0 with a warning up to 10% of the rows)."""
    _, obj = run_json(str(fx.make_malformed_jsonl(tmp_path, bad_every=bad_every)))
    assert_result(obj, "inspect_dataset", 2)
    line = 4 if bad_every == 20 else 1
    assert obj["summary"].endswith(
        f"malformed_{bad_every}.jsonl:{line}: not valid JSON (Expecting property name "
        "enclosed in double quotes at column 2)"
    ), obj["summary"]
    assert f"fix or remove line {line}" in obj["next_steps"][0]


def test_single_enormous_line(tmp_path):
    path = fx.make_enormous_line_jsonl(tmp_path, mib=(MAX_LINE_BYTES >> 20) + 1)
    _, obj = run_json(str(path))
    assert_result(obj, "inspect_dataset", 2)
    assert "line 1" in obj["summary"] and "MiB" in obj["summary"]


def test_enormous_line_among_good_ones_is_skipped(tmp_path):
    path = tmp_path / "mixed.jsonl"
    rows = fx.gsm8k_rows(30)
    with path.open("w") as f:
        for i, row in enumerate(rows):
            f.write(json.dumps(row if i != 2 else {**row, "question": "y" * (MAX_LINE_BYTES + 10)}) + "\n")
    data = inspect(path)
    assert data["source"]["rows_sampled"] == 29
    assert data["source"]["malformed"]["examples"][0]["where"] == "line 3"


def test_ragged_csv_rows_are_reported(tmp_path):
    _, obj = run_json(str(fx.make_ragged_csv(tmp_path)))
    assert_result(obj, "inspect_dataset", 0)
    probs = obj["data"]["source"]["malformed"]["examples"]
    assert [p["where"] for p in probs] == ["line 6", "line 10"]
    assert "3 fields where the header has 2" in probs[0]["reason"]
    assert obj["data"]["answer_format"]["type"] == "number"


def test_unknown_suffix_and_bad_parquet(tmp_path):
    (tmp_path / "x.xlsx").write_text("hello")
    _, obj = run_json(str(tmp_path / "x.xlsx"))
    assert_result(obj, "inspect_dataset", 2) and "unknown dataset format" in obj["summary"]
    (tmp_path / "bad.parquet").write_text("not parquet at all")
    _, obj = run_json(str(tmp_path / "bad.parquet"))
    assert_result(obj, "inspect_dataset", 2) and "Parquet" in obj["summary"]


def test_truncated_json_array_is_unreadable_input(tmp_path):
    """A JSON array cut short cannot be loaded past the cut (issue 27): exit 2 saying where it ends."""
    from vlab.core.result import UsageError

    path = tmp_path / "cut.json"
    text = json.dumps(fx.gsm8k_rows(10))
    path.write_text(text[: len(text) - 40])
    with pytest.raises(UsageError) as err:
        inspect(path)
    assert f"ends at byte {len(text) - 40}" in err.value.message and "cut short" in err.value.message


def test_bad_sample_value_exit_2(tmp_path):
    _, obj = run_json(str(fx.make_gsm8k_jsonl(tmp_path)), "--sample", "0")
    assert_result(obj, "inspect_dataset", 2)


# -- human output ---------------------------------------------------------------------------------


def test_human_output_and_snippet(tmp_path):
    r = run_script("inspect_dataset", str(fx.make_mmlu_parquet(tmp_path)), "--snippet", "v1")
    assert r.returncode == 0, r
    assert "multiple choice" in r.stdout and "class RowTaskset" in r.stdout and "choices" in r.stdout
    assert r.stdout.count("{") >= 1 and "Traceback" not in r.stderr


def test_integer_answers_next_to_choices_stay_indexes_even_when_some_are_out_of_range():
    rows = [{"question": "q", "choices": ["a", "b", "c"], "answer": i % 3} for i in range(18)]
    rows += [{"question": "q", "choices": ["a", "b", "c"], "answer": 7}] * 2
    fmt = detect_answer_format(rows, "answer", "choices")
    assert fmt["type"] == "multiple_choice_index" and fmt["match_share"] == 0.9
    assert [m["row"] for m in fmt["non_matching"]] == [18, 19]
