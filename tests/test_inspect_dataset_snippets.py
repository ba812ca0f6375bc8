"""The recommended snippets are real code: executed in the venv that has their API generation,
a gold completion scores 1 and a wrong one 0."""

from __future__ import annotations

import dataset_fixtures as fx
import pytest

from vlab.env import compat
from vlab.inspect import analyse, read_sample

SCORED = [
    fx.make_gsm8k_jsonl,
    fx.make_numbers_json,
    fx.make_numbers_wrapped_json,
    fx.make_boxed_parquet,
    fx.make_mmlu_parquet,
    fx.make_arc_jsonl,
    fx.make_letters_csv,
    fx.make_boolean_tsv,
    fx.make_classlabel_disk,
    fx.make_datasetdict_disk,
    fx.make_labels_csv,
    fx.make_short_text_jsonl,
    fx.make_messages_jsonl,
    fx.make_arrow_file,
    fx.make_info_jsonl,
    fx.make_math500_jsonl,
    fx.make_mmlu_classlabel_disk,
    fx.make_hellaswag_jsonl,
]
JUDGED = [fx.make_long_text_jsonl, fx.make_code_jsonl]


def snippets(tmp_path, make):
    rec = analyse(read_sample(str(make(tmp_path)), 300))["recommendation"]
    assert rec is not None
    return rec["snippets"]


def gold_and_wrong(answer: str) -> list[str]:
    return [f"Let me think. The answer is \\boxed{{{answer}}}.", "The answer is \\boxed{Q}."]


@pytest.mark.classic
@pytest.mark.parametrize("make", SCORED, ids=lambda m: m.__name__)
def test_classic_snippet_scores_gold_1_and_wrong_0(tmp_path, make):
    code = snippets(tmp_path, make)["classic"]
    example, _ = fx.score_classic(code, tmp_path, [])
    assert isinstance(example["answer"], str) and example["answer"]
    assert any("\\boxed{}" in m["content"] for m in example["prompt"])  # the model is told the format
    _, scores = fx.score_classic(code, tmp_path, gold_and_wrong(example["answer"]))
    assert scores == [1.0, 0.0]


@pytest.mark.v1
@pytest.mark.parametrize("make", SCORED, ids=lambda m: m.__name__)
def test_v1_snippet_scores_gold_1_and_wrong_0(tmp_path, make):
    code = snippets(tmp_path, make)["v1"]
    task, _ = fx.score_v1(code, tmp_path, [])
    assert task.data.answer
    assert "\\boxed{}" in (task.data.system_prompt or "") + str(task.data.prompt)  # the model is told the format
    _, scores = fx.score_v1(code, tmp_path, gold_and_wrong(task.data.answer))
    assert scores == [1.0, 0.0]


@pytest.mark.classic
def test_mmlu_gold_is_the_letter_of_the_index(tmp_path):
    row = fx.mmlu_rows()[0]
    code = snippets(tmp_path, fx.make_mmlu_parquet)["classic"]
    example, _ = fx.score_classic(code, tmp_path, [])
    assert example["answer"] == "ABCD"[row["answer"]]
    assert "A. option 0 of 0" in example["prompt"][-1]["content"]


@pytest.mark.classic
@pytest.mark.parametrize("make", JUDGED, ids=lambda m: m.__name__)
def test_classic_judge_snippet_scores_the_verdict(tmp_path, make, monkeypatch):
    import asyncio

    import verifiers as vf

    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-for-construction-only")  # JudgeRubric builds a client
    env = fx.load_snippet(snippets(tmp_path, make)["classic"], tmp_path, "judge_classic").load_environment()
    assert "judged_correct" in [f.__name__ for f, _, _ in compat.reward_functions(env.rubric)]
    (judge_rubric,) = [r for r in getattr(env.rubric, "rubrics", [env.rubric]) if isinstance(r, vf.JudgeRubric)]
    scores = []
    for verdict in ("Yes, it is correct.", "no"):

        async def fake_judge(*args, verdict=verdict, **kwargs):  # stands in for the API call
            return verdict

        judge_rubric.add_class_object("judge", fake_judge)
        state = compat.scoring_state(dict(env.dataset[0]), [{"role": "assistant", "content": "an answer"}])
        asyncio.run(env.rubric.score_rollout(state))
        scores.append(compat.state_scores(state)[0])
    assert scores == [1.0, 0.0]


@pytest.mark.v1
@pytest.mark.parametrize("make", JUDGED, ids=lambda m: m.__name__)
def test_v1_judge_snippet_scores_the_verdict(tmp_path, make, monkeypatch):
    code = snippets(tmp_path, make)["v1"]
    module = fx.load_snippet(code, tmp_path, "judge_v1")
    taskset_cls = getattr(module, module.__all__[0])
    tasks = list(taskset_cls(module.RowConfig()))
    assert len(tasks) == 20 and tasks[0].data.answer
    assert [name for name, _ in compat.task_rewards(tasks[0])] == ["judged_correct"]
    scores = []
    for parsed in (True, False):

        async def fake_evaluate(self, *, trace=None, parsed=parsed, **fields):  # stands in for the API call
            assert fields["answer"] == tasks[0].data.answer and fields["response"] == "an answer"
            return type("R", (), {"parsed": parsed})()

        monkeypatch.setattr(module.CorrectnessJudge, "evaluate", fake_evaluate)
        _, got = fx.score_v1(module, tmp_path, ["an answer"])
        scores += got
    assert scores == [1.0, 0.0]


# -- class labels: the templates' normaliser, the templates' spellings (issue 23) -------------------


def make_emotion_ids(d):
    """Integer labels named by a mapping.txt beside the data (TweetEval emotion's shape)."""
    folder = d / "emotion"
    folder.mkdir()
    fx.write_jsonl(folder / "train.jsonl", [{"text": f"tweet {i}", "label": i % 4} for i in range(40)])
    (folder / "mapping.txt").write_text("0\tanger\n1\tjoy\n2\toptimism\n3\tsadness\n")
    return folder


LABEL_SETS = {
    fx.make_labels_csv: ["sports", "politics", "science"],
    fx.make_classlabel_disk: ["negative", "neutral", "positive"],
    make_emotion_ids: ["anger", "joy", "optimism", "sadness"],
}


def spellings(gold: str) -> list[str]:
    """The spellings the classification templates accept for one label."""
    return [
        f"\\boxed{{\\text{{{gold}}}}}",
        f"So: \\boxed{{{gold}.}}",
        f"\\boxed{{{gold.upper()}}}",
        f"\\boxed{{ \\textbf{{{gold.title()}}} }}",
        f"\\boxed{{'{gold}'}}",
    ]


def label_cases(gold: str, labels: list[str]) -> tuple[list[str], list[float]]:
    others = [label for label in labels if label != gold]
    completions = spellings(gold) + [f"\\boxed{{\\text{{{x}}}}}" for x in others] + [f"\\boxed{{{gold}s}}"]
    return completions, [1.0] * len(spellings(gold)) + [0.0] * (len(others) + 1)


def test_label_snippets_carry_the_templates_normaliser(tmp_path):
    from conftest import SKILL_ROOT

    from vlab.inspect.recommend import label_normaliser

    source = label_normaliser()
    for template in ("v1-classification/v1_classification.py", "classic-classification/classic_classification.py"):
        text = (SKILL_ROOT / "templates" / "environments" / template).read_text()
        for block in source.strip().split("\n\n\n"):
            assert block in text, (template, block)  # one definition, the same in both templates
    for make in LABEL_SETS:
        (tmp_path / make.__name__).mkdir()
        code = snippets(tmp_path / make.__name__, make)
        assert source in code["classic"] and source in code["v1"]
    namespace: dict = {}
    exec("import re\n" + source, namespace)
    assert {namespace["normalise"](s) for s in ("\\text{Joy}", "joy.", " JOY ", "\\textbf{joy}", "'joy'")} == {"joy"}


@pytest.mark.classic
@pytest.mark.parametrize("make", list(LABEL_SETS), ids=lambda m: m.__name__)
def test_classic_label_snippet_accepts_the_templates_spellings(tmp_path, make):
    code = snippets(tmp_path, make)["classic"]
    example, _ = fx.score_classic(code, tmp_path, [])
    assert example["answer"] in LABEL_SETS[make]  # the gold is a name, never a class id
    completions, expected = label_cases(example["answer"], LABEL_SETS[make])
    _, scores = fx.score_classic(code, tmp_path, completions)
    assert scores == expected, list(zip(completions, scores))


@pytest.mark.v1
@pytest.mark.parametrize("make", list(LABEL_SETS), ids=lambda m: m.__name__)
def test_v1_label_snippet_accepts_the_templates_spellings(tmp_path, make):
    code = snippets(tmp_path, make)["v1"]
    task, _ = fx.score_v1(code, tmp_path, [])
    assert task.data.answer in LABEL_SETS[make]
    completions, expected = label_cases(task.data.answer, LABEL_SETS[make])
    _, scores = fx.score_v1(code, tmp_path, completions)
    assert scores == expected, list(zip(completions, scores))


# The math snippets carry the numeric templates' comparison (issue 33): the spellings a model writes
# earn the gold, a rounded decimal of a repeating gold never does.
MATH_CASES = (["\\boxed{14/3}", "\\boxed{\\dfrac{14}{3}}", "\\boxed{4.67}", "\\boxed{4.6667}"], [1.0, 1.0, 0.0, 0.0])


def test_math_snippets_carry_the_numeric_templates_comparison(tmp_path):
    from vlab.kinds.number.equivalence import comparison_source

    code = snippets(tmp_path, fx.make_math500_jsonl)
    assert comparison_source() in code["classic"] and comparison_source() in code["v1"]


@pytest.mark.classic
def test_classic_math_snippet_pays_spellings_and_refuses_approximations(tmp_path):
    code = snippets(tmp_path, fx.make_math500_jsonl)["classic"]
    example, _ = fx.score_classic(code, tmp_path, [])
    assert example["answer"] == "\\frac{14}{3}"
    _, scores = fx.score_classic(code, tmp_path, MATH_CASES[0])
    assert scores == MATH_CASES[1], list(zip(MATH_CASES[0], scores))


@pytest.mark.v1
def test_v1_math_snippet_pays_spellings_and_refuses_approximations(tmp_path):
    code = snippets(tmp_path, fx.make_math500_jsonl)["v1"]
    task, _ = fx.score_v1(code, tmp_path, [])
    assert task.data.answer == "\\frac{14}{3}"
    _, scores = fx.score_v1(code, tmp_path, MATH_CASES[0])
    assert scores == MATH_CASES[1], list(zip(MATH_CASES[0], scores))
