"""The options of a multiple-choice row: parsed from its prompt's text (``prompt_options``: one option per line,
"A) 21", "(B) 22", "3. 23", or inline "(A) 21 (B) 22", labelled with letters or numbers counted from 0 or 1), or
carried by the row (``row_choices``); and how an answer key names one (``as_letter``, ``as_index``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from vlab import catalog
from vlab.kinds.rows import field

LETTERS = catalog.CHOICE_LETTERS
CHOICES_FIELDS = ("choices", "options", "candidates", "endings")
_LINE_OPTION = re.compile(r"^[ \t]*(?:\(([A-Ja-j]|\d{1,2})\)|([A-Ja-j]|\d{1,2})[).:])[ \t]*(\S.*?)[ \t]*$", re.M)
_INLINE_OPTION = re.compile(r"\(([A-J])\)\s*(.+?)(?=\s*\([A-J]\)|$)", re.S)
_LETTER = re.compile(r"^\(?([A-Ja-j])\)?[.:)]?$")


def as_letter(value: Any) -> str | None:
    """The option letter an answer key is (A, (b), C., d:), upper-cased; None for anything else."""
    if not isinstance(value, str):
        return None
    m = _LETTER.match(value.strip())
    return m.group(1).upper() if m else None


def as_index(value: Any) -> int | None:
    """The integer an answer key is (3, "3"); never a boolean."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
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


def names_an_option(gold: str, options: PromptOptions | None, choices: list[str] | None) -> bool:
    n = len(options.labels) if options else len(choices or [])
    key = gold.strip()
    if as_letter(key) and LETTERS.index(as_letter(key)) < max(n, 1):
        return True
    if key.isdigit() and int(key) <= n and (choices is not None or (options is not None and options.style == "letter")):
        return True  # a number is a key only next to real choices or lettered options (not a numbered list)
    texts = [t.strip() for t in (options.texts if options else ())] + [c.strip() for c in choices or []]
    return key in texts
