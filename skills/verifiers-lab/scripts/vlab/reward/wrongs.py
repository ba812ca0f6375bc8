"""Wrong answers of the data's own kind, built from the data alone: another row's gold (``other_golds``: not the
same text after QA's normalisation, nor the same value), and a made-up value of the gold's type (``wrong_value``).
The probes that use them are ``probes``'."""

from __future__ import annotations

import re

from vlab import catalog
from vlab.kinds.number.equivalence import exact, without_separators

NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def is_number(text: str) -> bool:
    return bool(NUMBER.fullmatch(without_separators(text)) and "," not in without_separators(text))


def wrong_value(gold: str, k: int = 1) -> str:
    """A plausible wrong answer of the same type."""
    parts = gold.split(",")
    if len(parts) > 1 and all(is_number(p.strip()) for p in parts):  # a list: every value moved
        return ",".join(wrong_value(p.strip(), k) for p in parts)
    if is_number(gold):
        value = float(without_separators(gold))
        wrong = value + 7 * k + 1 if value >= 0 else value - 7 * k - 1
        return str(int(wrong)) if "." not in gold else f"{wrong:g}"
    if re.fullmatch(r"[A-Ja-j]", gold):
        letters = catalog.CHOICE_LETTERS if gold.isupper() else catalog.CHOICE_LETTERS.lower()
        return letters[(letters.index(gold) + k) % 4]
    if gold.lower() in ("yes", "no", "true", "false"):
        return {"yes": "no", "no": "yes", "true": "false", "false": "true"}[gold.lower()]
    if any(c in gold for c in "\\{}^_()[]/"):
        # LaTeX or an expression: reversing it unbalances braces, and math-verify then reads
        # whatever parses last (the gold, listed further on) -- a false "hack" on a sound reward.
        return f"{gold}+{k}"
    return f"{gold[::-1]}x{k}" if len(gold) > 1 else f"{gold}{k}"


def _answer_key(text: str) -> str:
    """An answer as exact-match QA compares it: lower case, punctuation and articles dropped, spaces collapsed."""
    text = re.sub(r"\b(?:a|an|the)\b", " ", re.sub(r"[^\w\s]", " ", str(text).casefold()))
    return " ".join(text.split())


def other_golds(gold: str, golds, n: int = 1) -> list[str]:
    """Up to ``n`` golds of other rows that are other answers (not the same text after normalising, nor the same
    value), in the data's order: real wrong answers of the data's own kind."""
    key, out, seen = _answer_key(gold), [], set()
    for other in golds:
        if other is None or not str(other).strip():
            continue
        other = str(other)
        okey = _answer_key(other)
        if okey == key or okey in seen or not okey or _same_value(gold, other):
            continue
        seen.add(okey)
        out.append(other)
        if len(out) >= n:
            break
    return out


def _same_value(a: str, b: str) -> bool:
    """Both read as the same number (30 and 30.0): never offered as each other's wrong answer."""
    x, y = exact(a), exact(b)
    return x is not None and x == y
