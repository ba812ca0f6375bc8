"""What kind of answer a row asks for, read from the row as the environment built it.

The kinds are the catalog's, grouped by how test_reward probes them: ``code`` (the row
carries tests and a reference program; the function they call is the entry point column's,
else ``catalog.entry_point``'s reading of the tests, the templates' own rule; the code the
row runs before its tests, for failures to name), ``choice`` (the prompt lists options, or the row
carries choices, and the gold names one), ``number`` (a number or a math expression),
``text`` (anything else). The row's own fields are read too: a classic row's columns and
its ``info``, a v1 task's data (``row_fields``).

The options a prompt shows are parsed from its text (``prompt_options``): one option per
line ("A) 21", "(B) 22", "3. 23") or inline ("(A) 21 (B) 22"), labelled with letters or
numbers counted from 0 or 1.
"""

from __future__ import annotations

import json
import keyword
import re
from dataclasses import dataclass
from typing import Any

from vlab import catalog
from vlab.env import Row
from vlab.inspect.formats import as_letter, looks_like_code, looks_like_math, parse_number

LETTERS = catalog.CHOICE_LETTERS
TESTS_FIELDS = ("tests", "test", "test_list", "test_cases", "input_output", "unit_tests")
CHOICES_FIELDS = ("choices", "options", "candidates", "endings")
ENTRY_FIELDS = ("entry_point", "function_name", "fn_name")
SETUP_FIELDS = ("test_setup_code", "setup_code", "test_setup", "test_imports", "imports", "setup")
CONTEXT_FIELDS = ("body", "passage", "context", "article", "document", "story", "paragraph")
QUESTION_FIELDS = ("question", "problem", "query", "instruction")  # the question column (inspect's prompt names)
_LINE_OPTION = re.compile(r"^[ \t]*(?:\(([A-Ja-j]|\d{1,2})\)|([A-Ja-j]|\d{1,2})[).:])[ \t]*(\S.*?)[ \t]*$", re.M)
_INLINE_OPTION = re.compile(r"\(([A-J])\)\s*(.+?)(?=\s*\([A-J]\)|$)", re.S)


def row_fields(row: Row) -> dict[str, Any]:
    """The row's data by name: a classic row's columns and info keys, a v1 task's data fields."""
    out: dict[str, Any] = dict(row.fields)
    info = out.get("info")
    if isinstance(info, str):
        try:
            info = json.loads(info)
        except ValueError:
            info = None
    if isinstance(info, dict):
        for key, value in info.items():
            out.setdefault(key, value)
    return out


def field(fields: dict[str, Any], names: tuple[str, ...]) -> tuple[str, Any] | None:
    for name in names:
        value = fields.get(name)
        if value not in (None, "", [], {}):
            return name, value
    return None


@dataclass(frozen=True)
class PromptOptions:
    """The options a prompt lists: their labels as shown, their texts, and how the labels count."""

    labels: tuple[str, ...]
    texts: tuple[str, ...]
    style: str  # letter | index0 | index1

    def label_of(self, index: int) -> str | None:
        return self.labels[index] if 0 <= index < len(self.labels) else None


def _run(labels: list[str]) -> str | None:
    """How a sequence of labels counts: A, B, C... / 0, 1, 2... / 1, 2, 3..., or None when it does not."""
    if all(len(x) == 1 and x.upper() in LETTERS for x in labels):
        return "letter" if [x.upper() for x in labels] == list(LETTERS[: len(labels)]) else None
    if all(x.isdigit() for x in labels):
        start = int(labels[0])
        if start in (0, 1) and [int(x) for x in labels] == list(range(start, start + len(labels))):
            return "index0" if start == 0 else "index1"
    return None


def prompt_options(text: str) -> PromptOptions | None:
    """The last run of two or more options the prompt lists in order, or None."""
    best: PromptOptions | None = None
    found = [(m.group(1) or m.group(2), m.group(3)) for m in _LINE_OPTION.finditer(text)]
    i = 0
    while i < len(found):
        j = i + 1
        while j <= len(found) and _run([f[0] for f in found[i:j]]) is not None:
            j += 1
        labels = [f[0] for f in found[i : j - 1]]
        if len(labels) >= 2:
            best = PromptOptions(tuple(labels), tuple(f[1] for f in found[i : j - 1]), _run(labels) or "letter")
            i = j - 1
        else:
            i += 1
    if best is not None:
        return best
    inline = [(m.group(1), m.group(2).strip()) for m in _INLINE_OPTION.finditer(text)]
    if len(inline) >= 2 and _run([x[0] for x in inline]) == "letter":
        return PromptOptions(tuple(x[0] for x in inline), tuple(x[1] for x in inline), "letter")
    return None


def row_choices(fields: dict[str, Any]) -> list[str] | None:
    found = field(fields, CHOICES_FIELDS)
    if found is None:
        return None
    value = found[1]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if isinstance(value, dict) and isinstance(value.get("text"), list):
        value = value["text"]
    if isinstance(value, (list, tuple)) and len(value) >= 2:
        return [str(v) for v in value]
    return None


@dataclass(frozen=True)
class RowKind:
    """How a row is probed. kind: code | choice | number | text."""

    kind: str
    options: PromptOptions | None = None  # choice: what the prompt shows
    choices: list[str] | None = None  # choice: the row's own choices, when it carries them
    tests: Any = None  # code: the row's tests
    entry_point: str | None = None  # code: the function the tests call
    entry_from: str | None = None  # code: where entry_point was read: "column", "tests", "reference" (a guess)
    setup: str | None = None  # code: the code run before the tests (a setup column, the templates' spec "setup")
    setup_field: str | None = None  # code: the field it was read from, when the row names it

    def setup_note(self) -> str:
        """For a failure on a code row with setup code: that code runs before the tests, so it is a suspect."""
        if not self.setup:
            return ""
        code = " ".join(self.setup.split())
        code = code if len(code) <= 60 else code[:59] + "…"
        return f"; its {self.setup_field or 'setup code'} ({code!r}) runs before the tests: check it"


def row_kind(row: Row, gold: str | None, expect: str | None = None) -> RowKind:
    """The row's kind; ``expect="choice"`` (most rows are multiple choice) takes any row with options as one,
    so a gold that names no option is checked as such rather than read as a number."""
    fields = row_fields(row)
    tests = field(fields, TESTS_FIELDS)
    entry = field(fields, ENTRY_FIELDS)
    if tests is not None or (gold is not None and looks_like_code(gold)):
        raw = tests[1] if tests else None
        setup_field, setup = _setup(fields, raw)
        name, source = code_entry(str(entry[1]).strip() if entry else None, raw, gold, setup)
        return RowKind(
            "code", tests=raw, entry_point=name, entry_from=source, setup=setup or None, setup_field=setup_field
        )
    options = prompt_options(row.question)
    choices = row_choices(fields)
    if gold is not None and (options is not None or choices is not None):
        if expect == "choice" or _names_an_option(gold, options, choices):
            return RowKind("choice", options=options, choices=choices)
    if gold is not None and as_letter(gold) and choices is None and options is None and len(gold.strip("() .")) == 1:
        return RowKind("choice")  # a letter key with no options anywhere: the prompt checks say so
    if gold is not None and (parse_number(gold) is not None or looks_like_math(gold)):
        return RowKind("number")
    return RowKind("text")


def _names_an_option(gold: str, options: PromptOptions | None, choices: list[str] | None) -> bool:
    n = len(options.labels) if options else len(choices or [])
    key = gold.strip()
    if as_letter(key) and LETTERS.index(as_letter(key)) < max(n, 1):
        return True
    if key.isdigit() and int(key) <= n and (choices is not None or (options is not None and options.style == "letter")):
        return True  # a number is a key only next to real choices or lettered options (not a numbered list)
    texts = [t.strip() for t in (options.texts if options else ())] + [c.strip() for c in choices or []]
    return key in texts


def code_entry(
    given: str | None, tests: Any, gold: str | None, setup: str | None = None
) -> tuple[str | None, str | None]:
    """(the function a code row's tests call, where it was read): the entry point column's name unless it is
    a keyword or a builtin the reference does not define; else the call in the tests (``catalog.entry_point``,
    the templates' rule); else the reference's first function, a guess ("reference")."""
    if given and given.isidentifier() and not keyword.iskeyword(given):
        if not catalog.bad_entry_name(given) or re.search(rf"^\s*def\s+{re.escape(given)}\s*\(", gold or "", re.M):
            return given, "column"
    derived = catalog.entry_point(tests, gold, setup) if tests is not None else None
    if derived:
        return derived, "tests"
    guess = _defined_name(gold)
    return (guess, "reference") if guess else (None, None)


def _setup(fields: dict[str, Any], tests: Any) -> tuple[str | None, str]:
    """(the field, the code) a code row runs before its tests: the code templates' spec "setup", else a setup
    column (test_setup_code, setup_code, test_imports...)."""
    spec = tests
    if isinstance(spec, str) and spec.strip()[:1] == "{":
        try:
            spec = json.loads(spec)
        except ValueError:
            spec = None
    if isinstance(spec, dict) and str(spec.get("setup") or "").strip():
        return None, str(spec["setup"]).strip()
    found = field(fields, SETUP_FIELDS)
    if found is None:
        return None, ""
    value = found[1]
    if isinstance(value, (list, tuple)):
        value = "\n".join(str(v) for v in value)
    return found[0], str(value).strip()


def _defined_name(code: str | None) -> str | None:
    m = re.search(r"^\s*def\s+([A-Za-z_]\w*)\s*\(", code or "", re.M)
    return m.group(1) if m else None


def environment_kind(kinds: list[RowKind]) -> str:
    """The kind most probed rows share (the environment's answer kind, as test_reward reports it)."""
    counts: dict[str, int] = {}
    for k in kinds:
        counts[k.kind] = counts.get(k.kind, 0) + 1
    return max(counts, key=lambda k: (counts[k], k != "text")) if counts else "text"
