"""Which column plays which role: prompt, answer, choices, info, and for code datasets tests, entry point
and setup code (what the tests need run first: MBPP's test_setup_code).

Names are matched case-insensitively, ignoring '_', '-' and spaces; each role
has a ranked list of names. When no name matches, the content decides (a chat
messages column, the longest text column), with a lower confidence and the
reason said. A prompt can span columns, in order: a body or passage before the
question (``columns``); choices can be one column per option (A, B, C, D).
"""

from __future__ import annotations

import re
from typing import Any

from vlab.inspect.columns import Column

# A role below this confidence does not count as identified (exit 1).
CONFIDENT = 0.6

PROMPT_NAMES = [
    "prompt",
    "question",
    "problem",
    "query",
    "instruction",
    "input",
    "inputs",
    "text",
    "sentence",
    "context",
    "content",
    "task",
    # a competitive-programming statement (CodeContests' description, LiveCodeBench's question_content)
    "statement",
    "problemstatement",
    "questioncontent",
    "description",
    "questiontext",
    "user",
    "source",
    "premise",
    "ctx",
    "goal",
    "stem",
]
ANSWER_NAMES = [
    "answer",
    "bestanswer",
    "finalanswer",
    "groundtruth",
    "goldanswer",
    "gold",
    "answerkey",
    "answeridx",
    "answerindex",
    "correctanswer",
    "correct",
    "cop",
    "correctoption",
    "label",
    "labels",
    "target",
    "targets",
    "expectedanswer",
    "expectedoutput",
    "solution",
    "canonicalsolution",
    "output",
    "outputs",
    "response",
    "completion",
    "reference",
    "result",
    "y",
]
CHOICES_NAMES = ["choices", "options", "candidates", "answerchoices", "endings", "alternatives"]
INFO_NAMES = ["info", "metadata", "meta", "extra", "extrainfo"]
# Code datasets: the tests, the function they call, the reference solution.
TESTS_NAMES = ["test", "tests", "testlist", "testcases", "unittests", "inputoutput", "publictests", "testcode"]
TESTS_NAMES += ["publictestcases", "privatetests", "privatetestcases", "generatedtests", "hiddentests"]
# One problem's stdin/stdout tests spread over columns (CodeContests, LiveCodeBench): all of them are run, in this
# order, so the tests role names them all (``columns``).
TEST_GROUP = ["publictests", "publictestcases", "privatetests", "privatetestcases", "generatedtests", "hiddentests"]
ENTRY_POINT_NAMES = ["entrypoint", "functionname", "funcname", "fnname", "entrypointname"]
SOLUTION_NAMES = ["canonicalsolution", "solution", "solutions", "referencesolution", "code", "goldsolution"]
# Code the tests need run before them (imports, helper definitions): text, often empty on most rows.
SETUP_NAMES = [
    "testsetupcode",
    "setupcode",
    "testsetup",
    "setup",
    "testimports",
    "imports",
    "testprelude",
    "prelude",
    "testheader",
]
# Per-row rubric criteria for an LLM judge (catalog role "criteria"; the judge templates' rubric-criteria variant).
CRITERIA_NAMES = [
    "criteria",
    "rubric",
    "rubrics",
    "rubricitems",
    "gradingnotes",
    "gradingcriteria",
    "gradingrubric",
    "evaluationcriteria",
    "scoringrubric",
]
# Reference lists for a judge (catalog roles "answers_correct" / "answers_incorrect"): a list per row, or text
# with the items separated by ';' or '|' (TruthfulQA's "Correct Answers" / "Incorrect Answers").
CORRECT_LIST_NAMES = [
    "correctanswers",
    "acceptableanswers",
    "acceptedanswers",
    "validanswers",
    "goldanswers",
    "referenceanswers",
    "references",
    "answeraliases",
    "aliases",
    "answers",
]
INCORRECT_LIST_NAMES = ["incorrectanswers", "wronganswers", "falseanswers", "badanswers", "negativeanswers"]
# A flag saying a row has several answers that must all be given, and the answer's unit (OlympiadBench's
# is_multiple_answer and unit; catalog roles "multiple" and "unit", the numeric templates' optional columns).
MULTIPLE_NAMES = [
    "ismultipleanswer",
    "multipleanswer",
    "multipleanswers",
    "ismultiple",
    "multianswer",
    "hasmultipleanswers",
]
UNIT_NAMES = ["unit", "units", "answerunit", "unitofanswer"]
# Text that comes before the question in the prompt (SVAMP's Body, a reading passage).
CONTEXT_NAMES = ["body", "passage", "context", "article", "document", "story", "paragraph", "background", "support"]
QUESTION_LIKE = ["question", "query", "problem", "stem", "instruction", "goal", "ask"]
PROMPT_PAIRS = [("premise", "hypothesis"), ("sentence1", "sentence2"), ("question1", "question2"), ("text1", "text2")]
# Choices spread over columns: a shared prefix and an index (a/b/c/d, 0/1/2, 1/2/3).
_CHOICE_PREFIXES = ("", "op", "opt", "option", "choice", "answer", "ending", "sol", "alternative")
ROLE_NAMES = {
    "prompt": PROMPT_NAMES,
    "answer": ANSWER_NAMES,
    "choices": CHOICES_NAMES,
    "info": INFO_NAMES,
    "tests": TESTS_NAMES,
    "entry_point": ENTRY_POINT_NAMES,
    "criteria": CRITERIA_NAMES,
    "setup": SETUP_NAMES,
    "answers_correct": CORRECT_LIST_NAMES,
    "answers_incorrect": INCORRECT_LIST_NAMES,
    "multiple": MULTIPLE_NAMES,
    "unit": UNIT_NAMES,
}


def normalise(name: str) -> str:
    return re.sub(r"[\s_\-.]+", "", name.lower())


def _role(column: str, confidence: float, reason: str, **extra: Any) -> dict[str, Any]:
    return {"column": column, "confidence": round(confidence, 2), "reason": reason, **extra}


def _by_name(columns: list[Column], names: list[str], taken: set[str]) -> tuple[Column, int] | None:
    ranked = []
    for col in columns:
        if col.name in taken:
            continue
        key = normalise(col.name)
        if key in names:
            ranked.append((names.index(key), col))
    if not ranked:
        return None
    rank, col = min(ranked, key=lambda rc: rc[0])
    return col, rank


def looks_like_tests(col: Column) -> bool:
    """Test code (asserts, a check() function), a list of asserts, or stdin/stdout cases."""
    for v in col.values[:20]:
        if isinstance(v, dict) and ({"inputs", "outputs"} <= set(v) or {"input", "output"} <= set(v)):
            return True  # APPS/TACO's stdin/stdout cases, CodeContests' {"input": [...], "output": [...]}
        if isinstance(v, (list, tuple)) and v and all(isinstance(t, dict) and {"input", "output"} <= set(t) for t in v):
            return True  # LiveCodeBench's list of cases
        if isinstance(v, str) and '"input"' in v and '"output"' in v:
            return True
        if isinstance(v, (list, tuple)) and v and all(isinstance(t, str) and "assert" in t for t in v):
            return True
        if isinstance(v, str) and ("assert" in v or "def check(" in v or ('"inputs"' in v and '"outputs"' in v)):
            return True
    return False


def answer_list_column(col: Column) -> str:
    """How a column holds a list of answers ('a list of strings', "text separated by ';'"), or '' when it does
    not: lists of strings (or scalars), or text whose values mostly split on one separator."""
    if col.type.startswith("list"):
        return "a list per row"
    if col.type == "dict":  # SQuAD's {"text": [...], "answer_start": [...]}, TriviaQA's {"value", "aliases"}
        from vlab.kinds.lists import held_as

        records = [v for v in col.values[:50] if isinstance(v, dict)]
        return "a record of answers per row" if records and all(held_as(v) for v in records) else ""
    if col.type not in ("string", "mixed"):
        return ""
    texts = [v for v in col.values[:50] if isinstance(v, str) and v.strip()]
    if not texts:
        return ""
    if sum(1 for v in texts if v.strip().startswith("[")) * 2 > len(texts):
        return "a JSON list per row"
    for sep in (";", "|"):
        if sum(1 for v in texts if sep in v) * 2 > len(texts):
            return f"text separated by {sep!r}"
    return "one answer per row"


def choice_columns(columns: list[Column], taken: set[str]) -> list[Column]:
    """Columns that hold one option each, in order: A/B/C/D, opa/opb/opc/opd, option_1/option_2, ending0/ending1."""
    groups: dict[str, dict[int, Column]] = {}
    for col in columns:
        if col.name in taken or col.type not in ("string", "integer", "float", "mixed"):
            continue
        m = re.fullmatch(r"([a-z]*?)(?:([a-j])|(\d))", normalise(col.name))
        if not m or m.group(1) not in _CHOICE_PREFIXES or (m.group(1) == "" and m.group(3)):
            continue
        index = "abcdefghij".index(m.group(2)) if m.group(2) else int(m.group(3))
        groups.setdefault(m.group(1) + ("#" if m.group(3) else ""), {})[index] = col
    best: list[Column] = []
    for found in groups.values():
        start = 0 if 0 in found else 1
        run = []
        while start + len(run) in found:
            run.append(found[start + len(run)])
        if len(run) >= 2 and len(run) > len(best):
            best = run
    return best


def _prompt_parts(col: Column, usable: list[Column], taken: set[str]) -> list[str]:
    """The prompt's columns in order: a context column before a question column, or a known pair."""
    key = normalise(col.name)
    texts = [c for c in usable if c.name not in taken and c.name != col.name and c.type == "string"]
    for first, second in PROMPT_PAIRS:
        if key in (first, second):
            other = next((c for c in texts if normalise(c.name) == (second if key == first else first)), None)
            if other is not None:
                return [col.name, other.name] if key == first else [other.name, col.name]
    if key in QUESTION_LIKE:
        context = _by_name(texts, CONTEXT_NAMES, set())
        if context is not None:
            return [context[0].name, col.name]
    return [col.name]


def detect_roles(columns: list[Column]) -> dict[str, Any]:
    """{"prompt": {...} | None, "answer": ..., "choices": ..., "info": ..., "tests": ..., "entry_point": ...,
    "criteria": ..., "setup": ..., "tried": {...}}. A prompt over several columns carries them, in order, in
    ``columns``. A column of empty strings only counts for the setup role (most rows need no setup code)."""
    roles: dict[str, Any] = {
        "prompt": None,
        "answer": None,
        "choices": None,
        "info": None,
        "tests": None,
        "entry_point": None,
        "criteria": None,
        "setup": None,
        "answers_correct": None,
        "answers_incorrect": None,
        "multiple": None,
        "unit": None,
    }
    taken: set[str] = set()
    usable = [c for c in columns if c.type != "null" and c.values]

    # Code datasets: a tests column (by name and content), the entry point, the reference solution.
    hit = _by_name(usable, TESTS_NAMES, taken)
    if hit and looks_like_tests(hit[0]):
        roles["tests"] = _role(hit[0].name, 0.95, f"column name {hit[0].name!r} and it holds tests")
        taken.add(hit[0].name)
        group = sorted(
            (c for c in usable if normalise(c.name) in TEST_GROUP and c.name not in taken),
            key=lambda c: TEST_GROUP.index(normalise(c.name)),
        )
        if group and normalise(hit[0].name) in TEST_GROUP:
            names = sorted([hit[0].name] + [c.name for c in group], key=lambda n: TEST_GROUP.index(normalise(n)))
            roles["tests"] = _role(
                names[0], 0.95, f"columns {', '.join(map(repr, names))}: one problem's tests, all run", columns=names
            )
            taken.update(names)
        hit = _by_name(usable, ENTRY_POINT_NAMES, taken)
        if hit:
            roles["entry_point"] = _role(
                hit[0].name, 0.95, f"column name {hit[0].name!r} (the function the tests call)"
            )
            taken.add(hit[0].name)
        texts = [c for c in columns if c.type in ("string", "list[string]", "mixed")]
        hit = _by_name(texts, SETUP_NAMES, taken)
        if hit:
            empty = f", empty on {hit[0].nulls} of {hit[0].rows} rows read" if hit[0].nulls else ""
            roles["setup"] = _role(
                hit[0].name, 0.9, f"column name {hit[0].name!r}: code the tests need run first{empty}"
            )
            taken.add(hit[0].name)
    # Rubric criteria for a judge: taken first, so they are never read as the prompt or the answer.
    hit = _by_name(usable, CRITERIA_NAMES, taken)
    if hit and (hit[0].type.startswith("list") or hit[0].type in ("string", "mixed", "dict")):
        roles["criteria"] = _role(hit[0].name, 0.9, f"column name {hit[0].name!r}: per-row rubric criteria for a judge")
        taken.add(hit[0].name)
    # Answer lists for a judge: taken before the prompt, the answer and the choices (a list of answers is no
    # list of options to pick from).
    for role, names in (("answers_correct", CORRECT_LIST_NAMES), ("answers_incorrect", INCORRECT_LIST_NAMES)):
        hit = _by_name(usable, names, taken)
        if hit and answer_list_column(hit[0]):
            roles[role] = _role(
                hit[0].name,
                0.9,
                f"column name {hit[0].name!r}: answers a judge must count as "
                + ("right" if role == "answers_correct" else "wrong")
                + f" ({answer_list_column(hit[0])})",
            )
            taken.add(hit[0].name)
    # Options spread over columns (A, B, C, D) are never the prompt or the answer.
    spread = [] if _by_name(usable, CHOICES_NAMES, taken) else choice_columns(usable, taken)
    reserved = {c.name for c in spread}

    # A prompt column of chat messages is the classic API's own `prompt` shape.
    messages = [c for c in usable if c.type == "messages"]
    hit = _by_name(usable, PROMPT_NAMES, taken)
    if hit and hit[0].type == "messages" or (not hit and messages):
        col = hit[0] if hit else messages[0]
        roles["prompt"] = _role(
            col.name,
            0.95 if hit else 0.75,
            f"{col.name!r} holds chat messages (role/content): used as the prompt as it is",
            kind="messages",
        )
    elif hit:
        col, rank = hit
        text_like = col.type in ("string", "mixed")
        conf = (0.95 if rank <= 2 else 0.85) if text_like else 0.5
        why = f"column name {col.name!r} is a usual prompt name"
        if not text_like:
            why += f", but it holds {col.type} values, not text"
        roles["prompt"] = _role(col.name, conf, why, kind="text")
    else:
        text_cols = sorted(
            (c for c in usable if c.type == "string" and c.name not in taken | reserved), key=lambda c: -c.mean_chars
        )
        if text_cols:
            col = text_cols[0]
            roles["prompt"] = _role(
                col.name,
                0.4,
                f"no usual prompt name; {col.name!r} is the longest text column (mean {col.mean_chars:.0f} chars)",
                kind="text",
            )
    if roles["prompt"] and roles["prompt"].get("kind") == "text":
        parts = _prompt_parts(next(c for c in usable if c.name == roles["prompt"]["column"]), usable, taken)
        if len(parts) > 1:
            roles["prompt"]["columns"] = parts
            roles["prompt"]["reason"] += f"; the prompt is {' + '.join(map(repr, parts))}, joined in this order"
    for name in (roles["prompt"] or {}).get("columns") or ([roles["prompt"]["column"]] if roles["prompt"] else []):
        taken.add(name)

    hit = _by_name(usable, SOLUTION_NAMES, taken) if roles["tests"] else None
    if hit:
        roles["answer"] = _role(hit[0].name, 0.95, f"column name {hit[0].name!r}: the reference solution")
    elif roles["tests"]:
        roles["answer"] = _role(
            roles["tests"]["column"], 0.9, "no reference solution column: the tests are what the reward checks"
        )
    hit = None if roles["answer"] else _by_name(usable, ANSWER_NAMES, taken)
    if roles["answer"]:
        pass
    elif not hit and roles["answers_correct"]:  # only a list of right answers: it is the reference
        listed = roles.pop("answers_correct")
        roles["answers_correct"] = None
        roles["answer"] = _role(listed["column"], 0.85, listed["reason"] + "; no single answer column: the reference")
    elif hit:
        col, rank = hit
        conf = 0.95 if rank <= 8 else 0.85
        roles["answer"] = _role(col.name, conf, f"column name {col.name!r} is a usual answer name")
    else:
        rest = [
            c for c in usable if c.name not in taken | reserved and c.type in ("string", "integer", "float", "boolean")
        ]
        short = sorted(rest, key=lambda c: c.mean_chars if c.type == "string" else 0)
        if short:
            col = short[0]
            roles["answer"] = _role(
                col.name, 0.4, f"no usual answer name; {col.name!r} is the shortest remaining scalar column"
            )
    if roles["answer"]:
        taken.add(roles["answer"]["column"])

    hit = _by_name(usable, CHOICES_NAMES, taken)
    spread = [c for c in spread if c.name not in taken]
    if hit and (hit[0].type.startswith("list") or hit[0].type == "dict"):
        roles["choices"] = _role(hit[0].name, 0.95, f"column name {hit[0].name!r} and it holds a list of options")
    elif spread:
        names = [c.name for c in spread]
        roles["choices"] = _role(names[0], 0.9, f"one option per column: {', '.join(map(repr, names))}", columns=names)
    else:
        lists = [
            c
            for c in usable
            if c.name not in taken
            and c.type == "list[string]"
            and c.list_length
            and 2 <= c.list_length["min"]
            and c.list_length["max"] <= 10
        ]
        if lists:
            roles["choices"] = _role(lists[0].name, 0.6, f"{lists[0].name!r} holds 2-10 strings per row")
    if roles["choices"]:
        taken.update(roles["choices"].get("columns") or [roles["choices"]["column"]])

    hit = _by_name(usable, INFO_NAMES, taken)
    if hit:
        roles["info"] = _role(hit[0].name, 0.9, f"column name {hit[0].name!r} (a {hit[0].type})")
    # Beside the answer: a flag saying the row has several answers, and the answer's unit (both may be empty).
    columns_all = [c for c in columns if c.name not in taken]
    hit = _by_name(columns_all, MULTIPLE_NAMES, taken)
    if hit and hit[0].type in ("boolean", "integer", "string", "mixed", "null"):
        roles["multiple"] = _role(
            hit[0].name,
            0.9,
            f"column name {hit[0].name!r}: the rows it flags have several answers that must all be given",
        )
        taken.add(hit[0].name)
    hit = _by_name(columns_all, UNIT_NAMES, taken)
    if hit and hit[0].type in ("string", "mixed", "null"):
        empty = f", empty on {hit[0].nulls} of {hit[0].rows} rows read" if hit[0].nulls else ""
        roles["unit"] = _role(hit[0].name, 0.9, f"column name {hit[0].name!r}: the answer's unit{empty}")
        taken.add(hit[0].name)

    roles["tried"] = {
        "prompt": "chat-messages columns, then names: " + ", ".join(PROMPT_NAMES) + "; then the longest text column",
        "answer": "names: " + ", ".join(ANSWER_NAMES) + "; then the shortest scalar column",
        "choices": "names: " + ", ".join(CHOICES_NAMES) + "; then a column of 2-10 strings per row",
        "info": "names: " + ", ".join(INFO_NAMES),
        "tests": "names: " + ", ".join(TESTS_NAMES) + " (holding asserts, check() or stdin/stdout cases)",
        "entry_point": "names: " + ", ".join(ENTRY_POINT_NAMES),
        "criteria": "names: " + ", ".join(CRITERIA_NAMES) + " (a list or text per row)",
        "setup": "names: " + ", ".join(SETUP_NAMES) + " (text, beside a tests column)",
        "answers_correct": "names: " + ", ".join(CORRECT_LIST_NAMES) + " (a list, or ';'/'|'-separated text)",
        "answers_incorrect": "names: " + ", ".join(INCORRECT_LIST_NAMES) + " (a list, or ';'/'|'-separated text)",
        "multiple": "names: " + ", ".join(MULTIPLE_NAMES) + " (a flag per row)",
        "unit": "names: " + ", ".join(UNIT_NAMES) + " (text, may be empty)",
    }
    return roles


def confident(role: dict | None) -> bool:
    return bool(role) and role["confidence"] >= CONFIDENT
