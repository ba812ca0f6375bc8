"""Answer kinds as units, and the verdict core that holds without one.

- A toy kind added from a test fixture (tests/kind_fixtures: its unit and its template; its catalog entry here) is
  recognised by inspect and probed by test_reward, its own check failing a sloppy reward, with no change to any
  module of the pack.
- A correct hand-written exact-match reward over short text answers, some of which look like numbers
  (``79,540 (2015)``, ``2017``, ``1/2``), passes on the core (the number checks only warn where the data is not
  numbers); the same reward with a substring defect fails. Both generations: v1 on 0.4, classic on 0.3.1.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from conftest import SCRIPTS

from vlab import catalog, kinds
from vlab.core.result import Result
from vlab.reward.checks import TestRewardRequest, run_test_reward

FIXTURES = Path(__file__).resolve().parent / "kind_fixtures"


def run(env: Path, data: Path, **opts) -> Result:
    result = Result("test_reward")
    run_test_reward(TestRewardRequest(env=str(env), env_args={"dataset_path": str(data)}, **opts), result)
    return result


def failed(result: Result) -> list[tuple[str, str]]:
    return [(c.id, c.message) for c in result.checks if c.status == "fail"]


def check(result: Result, cid: str):
    return next(c for c in result.checks if c.id == cid)


# -- a toy kind, added as a unit, a catalog entry and a template ----------------------------------------------------

COLOURS = [
    ("tomato", "#ff6347"),
    ("teal", "#008080"),
    ("gold", "#ffd700"),
    ("orchid", "#da70d6"),
    ("navy", "#000080"),
    ("salmon", "#fa8072"),
    ("khaki", "#f0e68c"),
    ("plum", "#dda0dd"),
    ("sienna", "#a0522d"),
    ("indigo", "#4b0082"),
]


@pytest.fixture
def toy_kind(monkeypatch):
    """The catalog's entry for the toy kind, naming its unit (a module of the fixture folder) and its template."""
    monkeypatch.syspath_prepend(str(FIXTURES))
    entry = catalog.AnswerKind(
        "hex_colour",
        "colour code (#rrggbb)",
        None,
        "v1-hex-toy",
        "boxed colour code",
        "the code, compared case-insensitively",
        "normalised",
        unit="toy_hex_unit",
    )
    template = dataclasses.replace(catalog.template("v1-classification"), name="v1-hex-toy", summary="toy colours")
    monkeypatch.setattr(catalog, "ANSWER_KINDS", (*catalog.ANSWER_KINDS, entry))
    monkeypatch.setattr(catalog, "TEMPLATES", (*catalog.TEMPLATES, template))
    return entry


def write_colours(folder: Path) -> Path:
    path = folder / "colours.jsonl"
    rows = [{"question": f"What is the hex code of the colour {name}?", "answer": code} for name, code in COLOURS]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_no_module_of_the_pack_knows_the_toy_kind():
    """What the toy kind needs lives in its unit, its catalog entry and its template only."""
    assert not [
        p for p in (SCRIPTS / "vlab").rglob("*.py") if "hex_colour" in p.read_text() or "toy_hex" in p.read_text()
    ]


def test_inspect_recognises_a_kind_added_as_a_unit(toy_kind, tmp_path):
    from vlab.inspect import analyse, read_sample

    data = analyse(read_sample(str(write_colours(tmp_path))))
    fmt = data["answer_format"]
    assert fmt["type"] == "hex_colour" and fmt["label"] == "colour code (#rrggbb)" and fmt["match_share"] == 1.0
    assert fmt["extraction"] == "the #rrggbb code, compared case-insensitively"
    assert data["recommendation"]["templates"]["v1"] == "v1-hex-toy"
    assert "toy_hex_unit" in {type(u).__module__ for u in kinds.units()}


def test_without_its_catalog_entry_the_toy_kind_is_unknown(tmp_path, monkeypatch):
    """The catalog is the one table that names the kinds: the unit on the path alone changes nothing."""
    from vlab.inspect import analyse, read_sample

    monkeypatch.syspath_prepend(str(FIXTURES))
    assert analyse(read_sample(str(write_colours(tmp_path))))["answer_format"]["type"] != "hex_colour"


def _toy_env(folder: Path, sloppy: bool) -> Path:
    env = folder / "hex_toy"
    env.mkdir()
    text = (FIXTURES / "hex_toy_template.py").read_text()
    (env / "hex_toy.py").write_text(text.replace("SLOPPY = False", f"SLOPPY = {sloppy}"))
    return env


@pytest.mark.v1
@pytest.mark.parametrize("sloppy", [False, True], ids=["right", "compares-5-characters"])
def test_test_reward_probes_a_kind_added_as_a_unit(toy_kind, tmp_path, sloppy):
    data = write_colours(tmp_path)
    result = run(_toy_env(tmp_path, sloppy), data, num_examples=4, reach_seconds=0)
    assert result.data["kinds"]["environment"] == "hex"
    by_probe = {p["probe"] for p in result.data["probes"]["by_probe"]}
    assert {"hex_form:upper", "hex_near:last_digit"} <= by_probe  # the unit's own probes were scored
    if sloppy:
        assert result.exit_code() == 1 and check(result, "hex_forms").status == "fail", failed(result)
    else:
        assert result.exit_code() == 0 and check(result, "hex_forms").status == "pass", failed(result)
        # its evidence is counted like every kind's (a check none of whose probes scored is a skip)
        assert result.data["probes"]["evidence"]["hex_forms"]["scored"] == 8


# -- the verdict core: short text answers, no unit of their own -------------------------------------------------------

TRIVIA = [
    ("Which band recorded the album Abbey Road?", "The Beatles"),
    ("What is the capital city of Australia?", "Canberra"),
    ("Who painted the ceiling of the Sistine Chapel?", "Michelangelo"),
    ("What was the population of the town at the last census, with its year?", "79,540 (2015)"),
    ("In which year did the series first air?", "2017"),
    ("What fraction of the vote did the winner need?", "1/2"),
    ("Which element has the chemical symbol Fe?", "iron"),
    ("Who wrote the novel Middlemarch?", "George Eliot"),
    ("What is the largest moon of Saturn?", "Titan"),
    ("Which river flows through Cairo?", "the Nile"),
    ("What instrument did Jacqueline du Pre play?", "the cello"),
    ("Which city hosted the 1992 Summer Olympics?", "Barcelona"),
    ("Who discovered penicillin?", "Alexander Fleming"),
    ("What is the hardest natural mineral?", "diamond"),
    ("Which language has the most native speakers?", "Mandarin Chinese"),
    ("What is the name of the longest bone in the human body?", "femur"),
]

_NORMALISE = """
import re, string

def normalize(text):
    text = str(text).lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\\b(a|an|the)\\b", " ", text)
    return " ".join(text.split())


def final_answer(reply):
    found = re.findall(r"^\\s*Answer:\\s*(.+?)\\s*$", reply or "", re.M)
    return found[-1] if found else ""

SYSTEM = "Answer the trivia question. End your reply with a line of the form 'Answer: <your answer>'."
EXACT = "normalize(final_answer(reply)) == normalize(gold)"
"""

_V1 = (
    _NORMALISE
    + """
import json
import verifiers.v1 as vf


class TriviaData(vf.TaskData):
    answer: str


class TriviaTask(vf.Task[TriviaData]):
    @vf.reward(weight=1.0)
    async def exact_match(self, trace: vf.Trace) -> float:
        reply, gold = trace.last_reply, self.data.answer
        return 1.0 if COMPARE else 0.0


class TriviaConfig(vf.TasksetConfig):
    dataset_path: str = "trivia.jsonl"


class TriviaTaskset(vf.Taskset[TriviaTask, TriviaConfig]):
    def load(self):
        with open(self.config.dataset_path) as f:
            for i, line in enumerate(f):
                row = json.loads(line)
                data = TriviaData(id=str(i), prompt=row["question"], system_prompt=SYSTEM, answer=row["answer"])
                yield TriviaTask(data, self.config.task)


__all__ = ["TriviaTaskset"]
"""
)

_CLASSIC = (
    _NORMALISE
    + """
import verifiers as vf
from datasets import load_dataset


def exact_match(completion, answer) -> float:
    reply, gold = completion[-1]["content"], answer
    return 1.0 if COMPARE else 0.0


def load_environment(dataset_path="trivia.jsonl", **kwargs):
    dataset = load_dataset("json", data_files=dataset_path, split="train")
    return vf.SingleTurnEnv(dataset=dataset, system_prompt=SYSTEM, rubric=vf.Rubric(funcs=[exact_match]))
"""
)

COMPARES = {
    "exact": "normalize(final_answer(reply)) == normalize(gold)",
    "substring": "normalize(gold) in normalize(final_answer(reply))",
}


def _trivia(tmp_path: Path, generation: str, compare: str) -> tuple[Path, Path]:
    data = tmp_path / "trivia.jsonl"
    data.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in TRIVIA))
    source = (_V1 if generation == "v1" else _CLASSIC).replace("COMPARE", COMPARES[compare])
    env = tmp_path / f"trivia_{compare}"
    env.mkdir()
    (env / f"trivia_{compare}.py").write_text(source)
    return env, data


def _trivia_verdicts(tmp_path, generation):
    right = run(*_trivia(tmp_path, generation, "exact"), num_examples=8, reach_seconds=10)
    assert right.exit_code() == 0, failed(right)
    kinds_seen = right.data["kinds"]
    assert kinds_seen["environment"] == "text"
    # the golds that look like numbers were probed as numbers, their checks only warnings, and the result says why
    unsure = kinds_seen["unsure"]["number"]
    assert set(unsure["rows"]) == {3, 4, 5} and "3 of the 8 golds read as numbers" in unsure["why"]
    assert "unsure" in check(right, "answer_kind").message
    for cid in ("near_misses", "number_forms"):
        found = [c for c in right.checks if c.id == cid]
        assert all(c.status in ("pass", "warn") for c in found), found
    # the core probed every row with another row's gold and the text hacks
    by_probe = {p["probe"]: p for p in right.data["probes"]["by_probe"]}
    assert {"wrong:other_row", "hack:negated", "hack:gold_in_longer"} <= set(by_probe)
    assert by_probe["gold:system_prompt"]["total"] == 1.0 and by_probe["wrong:other_row"]["total"] == 0.0

    wrong = run(*_trivia(tmp_path, generation, "substring"), num_examples=8, reach_seconds=10)
    assert wrong.exit_code() == 1
    hacked = check(wrong, "reward_hacking")
    assert hacked.status == "fail" and "hack:negated" in hacked.message and "hack:gold_in_longer" in hacked.message


@pytest.mark.v1
def test_a_correct_exact_match_reward_over_short_text_passes_and_a_substring_one_fails_v1(tmp_path):
    _trivia_verdicts(tmp_path, "v1")


@pytest.mark.classic
def test_a_correct_exact_match_reward_over_short_text_passes_and_a_substring_one_fails_classic(tmp_path):
    _trivia_verdicts(tmp_path, "classic")


def test_the_toy_template_fixture_is_not_a_pack_template():
    """The fixture's template stays a fixture: the pack ships no such folder."""
    assert not (SCRIPTS.parent / "templates" / "environments" / "v1-hex-toy").exists()
