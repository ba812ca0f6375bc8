"""Answers held as lists, in both shapes the pack reads: short answers with aliases (Natural Questions' layout:
{"question", "answer": ["14 December 1972 UTC", "December 1972"]}) and several answers with units (OlympiadBench's:
"final_answer" a one-element list, "is_multiple_answer", "unit"). Rows written in code, never copied data."""

from __future__ import annotations

import json
from pathlib import Path

# question, aliases (any one is right). Some rows list several; "2017" and "one" look like numbers, "A+" normalises
# to nothing (compared as written), "the Beatles" carries an article.
QA = [
    ("when was the last time anyone was on the moon", ["14 December 1972 UTC", "December 1972"]),
    ("who wrote he ain't heavy he's my brother lyrics", ["Bobby Scott", "Bob Russell"]),
    ("how many seasons of the bastard executioner are there", ["one", "one season"]),
    ("when did the eagles win last super bowl", ["2017"]),
    ("which band recorded abbey road", ["the Beatles", "Beatles"]),
    ("what is the capital city of australia", ["Canberra"]),
    ("who painted the sistine chapel ceiling", ["Michelangelo", "Michelangelo Buonarroti"]),
    ("what grade is top marks in the old system", ["A+"]),
    ("which element has the symbol fe", ["iron", "Fe"]),
    ("who wrote middlemarch", ["George Eliot", "Mary Ann Evans"]),
    ("what is the largest moon of saturn", ["Titan"]),
    ("which river flows through cairo", ["the Nile", "Nile River"]),
]

# question, final_answer (a one-element list, as OlympiadBench holds it), is_multiple_answer, unit
OLYMPIAD = [
    ("Find all positive integers n with the property.", ["$1,3$"], True, None),
    ("How many moves does Sergey need?", ["2"], False, None),
    ("Find all values of k.", ["16,3,1,1"], True, None),
    ("How long does the trip take?", ["45"], False, "minute"),
    ("Find all pairs (x, y) of integers.", ["$(1,2),(3,4)$"], True, None),
    ("Compute the ratio of the areas.", ["$\\frac{1}{2}$"], False, None),
    ("Find every real root.", ["$-2,0,2$"], True, None),
    ("What is the average speed?", ["$\\frac{600}{7}$"], False, "km/h"),
    ("Determine the largest value.", ["$69$,$84$"], True, None),
    ("Compute the sum.", ["$2 \\sqrt{3}$"], False, None),
]


def write_qa(folder: Path, name: str = "nq.jsonl", as_text: bool = False) -> Path:
    """NQ's layout: a list per row (JSON Lines), or the list written as text (CSV), any one alias right."""
    path = folder / name
    if as_text:
        import csv

        with path.open("w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["question", "answer"])
            for q, a in QA:
                w.writerow([q, json.dumps(a)])
        return path
    path.write_text("".join(json.dumps({"question": q, "answer": a}) + "\n" for q, a in QA))
    return path


def write_olympiad(folder: Path, name: str = "olympiad.jsonl") -> Path:
    path = folder / name
    rows = [
        {
            "id": 1600 + i,
            "question": q,
            "final_answer": a,
            "is_multiple_answer": m,
            "unit": u,
            "answer_type": "Numerical",
        }
        for i, (q, a, m, u) in enumerate(OLYMPIAD)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# -- environments with one planted defect each (v1 tasksets reading the rows above) ---------------------------------

_QA_ENV = """
import json
import re
import string

import verifiers.v1 as vf

SYSTEM = "Answer the question. Think briefly, then give only the final answer inside \\\\boxed{}."


def normalize(text):
    text = "".join(ch for ch in str(text).lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\\b(a|an|the)\\b", " ", text).split())


def box(reply):
    return vf.extract_boxed_answer(reply or "", strict=True) or ""


class QAData(vf.TaskData):
    answer: ANSWER_TYPE
    aliases: list[str] = []


class QATask(vf.Task[QAData]):
    @vf.reward(weight=1.0)
    async def exact_match(self, trace: vf.Trace) -> float:
        given, aliases = box(trace.last_reply), ALIASES
        return 1.0 if (COMPARE) else 0.0


class QAConfig(vf.TasksetConfig):
    dataset_path: str = "nq.jsonl"


class QATaskset(vf.Taskset[QATask, QAConfig]):
    def load(self):
        with open(self.config.dataset_path) as f:
            for i, line in enumerate(f):
                row = json.loads(line)
                data = QAData(id=str(i), prompt=row["question"], system_prompt=SYSTEM, answer=ANSWER, ALIAS_FIELD)
                yield QATask(data, self.config.task)


__all__ = ["QATaskset"]
"""

QA_COMPARES = {
    "exact": "normalize(given) != '' and any(normalize(given) == normalize(a) for a in aliases)",
    "first_alias_only": "normalize(given) != '' and normalize(given) == normalize(aliases[0])",
    "case_sensitive": "given.strip() in aliases",
    "substring": "normalize(given) != '' and any(normalize(a) in normalize(given) for a in aliases)",
    "any_listed": "any(normalize(p) and normalize(p) == normalize(a) for p in re.split(r',|\\bor\\b', given) for a in aliases)",
}


def write_qa_env(folder: Path, compare: str, answer_list: bool = False) -> Path:
    """A v1 taskset over write_qa's rows: the aliases in an ``aliases`` field (or, ``answer_list``, the answer itself
    a list, as a user's own environment may hold it), compared by ``QA_COMPARES[compare]``."""
    source = _QA_ENV.replace("COMPARE", QA_COMPARES[compare])
    if answer_list:
        source = source.replace("ANSWER_TYPE", "list[str]").replace(
            "answer=ANSWER, ALIAS_FIELD", 'answer=row["answer"]'
        )
        source = source.replace("ALIASES", "self.data.answer")
    else:
        source = source.replace("ANSWER_TYPE", "str").replace("ALIASES", "self.data.aliases")
        source = source.replace("answer=ANSWER, ALIAS_FIELD", 'answer=row["answer"][0], aliases=row["answer"]')
    env = folder / f"qa_{compare}{'_list' if answer_list else ''}"
    env.mkdir()
    (env / f"{env.name}.py").write_text(source)
    return env


_SEVERAL_ENV = """
import json

import verifiers.v1 as vf

SYSTEM = "Solve the problem. Give the final answer inside \\\\boxed{}."


def boxes(reply):
    out, at = [], 0
    while (start := (reply or "").find("\\\\boxed{", at)) >= 0:
        depth, i = 1, start + 7
        for j in range(i, len(reply)):
            depth += {"{": 1, "}": -1}.get(reply[j], 0)
            if depth == 0:
                out.append(reply[i:j])
                break
        else:
            break
        at = j + 1
    return out


def parts(text):
    found, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += 1 if ch in "([{" else -1 if ch in ")]}" else 0
        if ch == "," and depth == 0:
            found.append(text[start:i].strip())
            start = i + 1
    return found + [text[start:].strip()]


class NData(vf.TaskData):
    answer: str
    answers: list[str] = []
    unit: str | None = None


class NTask(vf.Task[NData]):
    @vf.reward(weight=1.0)
    async def correct_answer(self, trace: vf.Trace) -> float:
        found = boxes(trace.last_reply)
        given, answers = (found[-1] if found else "").strip(), self.data.answers
        if not answers:
            return 1.0 if given == self.data.answer else 0.0
        return 1.0 if (COMPARE) else 0.0


class NConfig(vf.TasksetConfig):
    dataset_path: str = "several.jsonl"


class NTaskset(vf.Taskset[NTask, NConfig]):
    def load(self):
        with open(self.config.dataset_path) as f:
            for i, line in enumerate(f):
                row = json.loads(line)
                data = NData(id=str(i), prompt=row["question"], system_prompt=SYSTEM, answer=row["answer"],
                             answers=row["answers"], unit=row["unit"])
                yield NTask(data, self.config.task)


__all__ = ["NTaskset"]
"""

SEVERAL_COMPARES = {
    "as_set": "set(parts(given)) == set(answers)",  # a repeated value dropped is paid
    "ordered": "parts(given) == answers",  # the answers in another order are refused
    "brackets_ignored": "sorted(parts(given.strip('[]() '))) == sorted(answers)",  # [1, 3] is paid for 1, 3
    "last_box_only": "sorted(parts(given)) == sorted(answers)",  # \\boxed{1}, \\boxed{3} refused; the prompt is silent
}


def write_several_rows(folder: Path, reference_of) -> Path:
    """OLYMPIAD's rows as the numeric templates hold them (``reference_of``: the template's own reading)."""
    path = folder / "several.jsonl"
    rows = []
    for q, a, m, u in OLYMPIAD:
        answer, answers = reference_of(a, m)
        rows.append({"question": q, "answer": answer, "answers": answers, "unit": u})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def write_several_env(folder: Path, compare: str) -> Path:
    env = folder / f"several_{compare}"
    env.mkdir()
    (env / f"{env.name}.py").write_text(_SEVERAL_ENV.replace("COMPARE", SEVERAL_COMPARES[compare]))
    return env
