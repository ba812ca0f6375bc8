"""Numbers and math answers as datasets write them: a number in any of its spellings (``parse_number``), the
value after '####' (``extract_hash``), inside the last \\boxed{} (``extract_boxed``), and a short LaTeX or
symbolic expression (``looks_like_math``, ``well_formed_math``)."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

_NUMBER = re.compile(r"^[-+−]?\$?\s*(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?\s*%?$")
FRACTION = re.compile(r"^[-+−]?\d+\s*/\s*\d+$")
_HASH = re.compile(r"####\s*([^\n]*?)\s*$")
_MATH = re.compile(
    r"\\(frac|dfrac|sqrt|pi|infty|cdot|times|le|ge|circ|text|left|right)|\^|_\{|[{}]|^[-+]?\d*[a-z]$"
    r"|(?<![A-Za-z])[A-Za-z\d]\s*[-+*/=]\s*[A-Za-z\d(](?![A-Za-z])"
)
# A value made of empty groups only: "\\text{}", "{ }", "$$".
_EMPTY_GROUPS = re.compile(r"(?:\s|\$|\\[A-Za-z]+\s*\{\s*\}|\{\s*\})*")


def parse_number(text: Any) -> float | None:
    """A number written the ways datasets write them: 1,234.5  -7  3/4  $12  50%."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text)
    if not isinstance(text, str):
        return None
    t = text.strip().replace("−", "-")
    if not t:
        return None
    if FRACTION.match(t):
        num, den = t.replace(" ", "").split("/")
        return float(Fraction(int(num), int(den))) if int(den) else None
    if not _NUMBER.match(t) or not any(c.isdigit() for c in t):
        return None
    try:
        return float(t.replace("$", "").replace(",", "").replace("%", "").replace(" ", ""))
    except ValueError:
        return None


def extract_hash(text: str) -> str | None:
    """N from a rationale ending in '#### N' (what vf.extract_hash_answer returns, stripped of commas)."""
    if "####" not in text:
        return None
    m = _HASH.search(text.rstrip())
    return m.group(1).strip() if m else None


def extract_boxed(text: str) -> str | None:
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth, i = 1, start + len("\\boxed{")
    for j in range(i, len(text)):
        depth += {"{": 1, "}": -1}.get(text[j], 0)
        if depth == 0:
            return text[i:j]
    return None


def looks_like_math(value: Any) -> bool:
    """A short LaTeX / symbolic answer: \\frac{1}{2}, 2\\sqrt{3}, x^2+1, (3, -1), 5\\pi."""
    if not isinstance(value, str):
        return False
    t = value.strip().strip("$")
    return 0 < len(t) <= 60 and "\n" not in t and bool(_MATH.search(t) or re.fullmatch(r"[\d\s.,()\[\]+\-]+", t))


def well_formed_math(value: Any) -> bool:
    """A math answer a reply can write back: its braces balance ("\\frac{1}{" does not) and it says something
    ("\\text{}" says nothing). Escaped braces (\\{1, 2\\}) are the set's, not groups."""
    if not isinstance(value, str):
        return True
    depth = 0
    for brace in re.findall(r"(?<!\\)[{}]", value):
        depth += 1 if brace == "{" else -1
        if depth < 0:
            return False
    return depth == 0 and not _EMPTY_GROUPS.fullmatch(value.strip())
