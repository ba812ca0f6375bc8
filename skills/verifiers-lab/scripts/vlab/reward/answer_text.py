"""Answers stated in text: every \\boxed{}, '#### X' and 'the answer is X' a text holds, a worked solution's final
answer, and whether a candidate states the gold (the same text, or the same value to math-verify).

``leaks`` reads prompts with them.
"""

from __future__ import annotations

import re
from typing import Any

from vlab.kinds.number.equivalence import same_value, without_separators

BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
HASH = re.compile(r"####[ \t]*([^\n]+)")
# "the answer is X", "Answer: X", "correct answer = X" (the value runs to the end of the sentence or line)
STATED = re.compile(
    r"\b(?:final\s+|correct\s+|right\s+|true\s+)?answer\s*(?:is|was|would be|:|=)\s*:?\s*(?P<v>[^\n]{1,200})", re.I
)
FINAL_WORD = re.compile(r"answer(?:\s+is)?\s*[:=]?\s*\(?\$?([^\s()$]+?)\$?\)?\s*\.?\s*$", re.I)
LAST_NUMBER = re.compile(r"(-?\d[\d,]*(?:\.\d+)?|\\d?frac\{[^{}]*\}\{[^{}]*\})\s*\$?\s*\.?\s*$")


def norm(text: Any) -> str:
    return " ".join(str(text).split()).lower()


def key(text: str) -> str:
    """An answer's text for comparing: no spaces, no $ signs, no trailing period."""
    return re.sub(r"[\s$]+", "", text).rstrip(".")


def content(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):  # content parts: their text
        return " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return str(content or "")


def short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def word_in(form: str, text: str) -> bool:
    """The (normalised) form occurs in the (normalised) text as a whole word or phrase."""
    if not form or form not in text:
        return False
    return re.search(r"(?<![a-z0-9])" + re.escape(form) + r"(?![a-z0-9])", text) is not None


def boxed_all(text: str) -> list[tuple[str, str]]:
    """(as written, content) for every \\boxed{...} (and \\fbox{...}) in the text, nested braces kept."""
    out = []
    for m in BOX.finditer(text):
        depth, i = 1, m.end()
        for j in range(i, min(len(text), i + 500)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                out.append((text[m.start() : j + 1], text[i:j]))
                break
    return out


def answers(text: str) -> list[tuple[str, str]]:
    """(as written, value) for the answer-shaped values a text states: every \\boxed{}, '#### value' and
    'the answer is value' / 'Answer: value'."""
    found = boxed_all(text) + [(m.group(0).strip(), m.group(1)) for m in HASH.finditer(text)]
    for m in STATED.finditer(text):
        value = m.group("v").strip()
        if value.startswith("\\boxed") or not value:
            continue  # read as a box above
        value = re.split(r"(?<=[^\d\s])[.;!?](?:\s|$)|[.;!?](?=\s|$)|\s[(\[]", value)[0].strip(" \"'`*)]")
        if value:
            start = max(0, text.rfind(" ", 0, max(0, m.start() - 1)) + 1)  # the word before: "The answer is"
            found.append((text[start : m.start("v")].strip() + " " + value, value))
    return [(short(form), value) for form, value in found if value.strip()]


def is_gold(candidate: str, gold: str) -> bool:
    """The candidate states the gold: the same text once spaces are stripped, or the same value."""
    a, b = key(candidate), key(gold)
    if not a or not b:
        return False
    if a == b or a.lower() == b.lower():
        return True
    if len(a) > 100 or len(b) > 100 or not any(c.isdigit() for c in a + b):
        return False
    try:
        return same_value(without_separators(a), without_separators(b))
    except Exception:  # noqa: BLE001 -- math-verify on odd text: no verdict, no evidence
        return False


def final_answer(text: str) -> str | None:
    """A worked solution's final answer: its last \\boxed{}, its '####', 'Answer: X' or the number it ends on."""
    boxed = boxed_all(text)
    if boxed:
        return boxed[-1][1]
    hashes = HASH.findall(text)
    if hashes:
        return hashes[-1]
    tail = text.rstrip()[-120:]
    for pattern in (FINAL_WORD, LAST_NUMBER):
        m = pattern.search(tail)
        if m:
            return m.group(1)
    return None


def in_prompt(text: str, prompt: str) -> bool:
    """The field's text is shown in the prompt (its start and its end, for a long one)."""
    t = norm(text)
    if len(t) <= 400:
        return t in prompt
    return t[:200] in prompt and t[-200:] in prompt


def numeric(text: str) -> bool:
    return bool(re.fullmatch(r"[-+]?[\d.,/\s]+", text.strip()))
