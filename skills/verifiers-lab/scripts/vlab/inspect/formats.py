"""Which format the answer column has, with the share of sampled rows that match.

Each detector answers "does this value match, and what would a reward compare?"
for one row. The format reported is the most specific one that matches enough
rows; every candidate's share is kept as evidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from vlab import catalog
from vlab.inspect.columns import truncate

# The shares a format needs to be chosen. Structured formats (#### N, \boxed{})
# are unmistakable, so a lower bar still means "this is the format".
STRONG = 0.8
PLAIN = 0.9
WARN_BELOW = 0.98
CLASS_MAX_DISTINCT = 10
# Non-matching numeric/math rows carried by index (``non_matching_rows``), for inspect to ask math-verify about.
READ_BACK_AT_MOST = 50
LETTERS = catalog.CHOICE_LETTERS

_NUMBER = re.compile(r"^[-+−]?\$?\s*(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?\s*%?$")
_FRACTION = re.compile(r"^[-+−]?\d+\s*/\s*\d+$")
_HASH = re.compile(r"####\s*([^\n]*?)\s*$")
_LETTER = re.compile(r"^\(?([A-Ja-j])\)?[.:)]?$")
_BOOL = {"yes": True, "no": False, "true": True, "false": False}
_CODE = re.compile(
    r"```|^\s*(def |class |import |from \S+ import |#include|public |function |fn |SELECT )|\breturn\b.*[;)]?$", re.M
)

# answer_format.type -> its human label (the types are the catalog's answer kinds).
FORMAT_LABELS = {k.name: k.label for k in catalog.ANSWER_KINDS}


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
    if _FRACTION.match(t):
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


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    return _BOOL.get(value.strip().lower()) if isinstance(value, str) else None


def as_letter(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    m = _LETTER.match(value.strip())
    return m.group(1).upper() if m else None


def as_index(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


_MATH = re.compile(
    r"\\(frac|dfrac|sqrt|pi|infty|cdot|times|le|ge|circ|text|left|right)|\^|_\{|[{}]|^[-+]?\d*[a-z]$"
    r"|(?<![A-Za-z])[A-Za-z\d]\s*[-+*/=]\s*[A-Za-z\d(](?![A-Za-z])"
)


def looks_like_math(value: Any) -> bool:
    """A short LaTeX / symbolic answer: \\frac{1}{2}, 2\\sqrt{3}, x^2+1, (3, -1), 5\\pi."""
    if not isinstance(value, str):
        return False
    t = value.strip().strip("$")
    return 0 < len(t) <= 60 and "\n" not in t and bool(_MATH.search(t) or re.fullmatch(r"[\d\s.,()\[\]+\-]+", t))


# A value made of empty groups only: "\\text{}", "{ }", "$$".
_EMPTY_GROUPS = re.compile(r"(?:\s|\$|\\[A-Za-z]+\s*\{\s*\}|\{\s*\})*")


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


def looks_like_code(value: Any) -> bool:
    return isinstance(value, str) and "\n" in value.strip() and bool(_CODE.search(value))


def is_short_text(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value.strip()) <= 80 and len(value.split()) <= 10


def detect_answer_format(
    rows: list[dict],
    answer: str,
    choices: str | list[str] | None = None,
    class_names: list[str] | None = None,
    tests_column: str | None = None,
) -> dict[str, Any]:
    """The answer column's format, the share of rows matching it, and how to extract the answer.

    ``choices`` is the column of option lists, or the columns that hold one option each, in order.
    ``tests_column``: the column of tests of a code dataset (the answer is then its reference solution).
    """
    values = [row.get(answer) for row in rows]
    n = len(values)
    choice_lists = [_row_options(row, choices) for row in rows]

    def share(test: Callable[[int, Any], Any]) -> tuple[float, list[int]]:
        misses = [i for i, v in enumerate(values) if v is None or v == "" or test(i, v) in (None, False)]
        return (1 - len(misses) / n if n else 0.0), misses

    def in_range(i: int, v: Any) -> bool:
        idx = as_index(v)
        opts = choice_lists[i]
        return idx is not None and opts is not None and 0 <= idx < len(opts)

    def in_range_one_based(i: int, v: Any) -> bool:
        idx = as_index(v)
        opts = choice_lists[i]
        return idx is not None and opts is not None and 1 <= idx <= len(opts)

    def is_option(i: int, v: Any) -> bool:
        opts = choice_lists[i]
        return isinstance(v, str) and opts is not None and v.strip() in catalog.option_texts(opts) + opts

    def letter_ok(i: int, v: Any) -> bool:
        letter = as_letter(v)
        opts = choice_lists[i]
        return letter is not None and (opts is None or LETTERS.index(letter) < len(opts))

    tests: dict[str, Callable[[int, Any], Any]] = {
        "gsm8k": lambda i, v: isinstance(v, str) and parse_number(extract_hash(v) or "") is not None,
        "boxed": lambda i, v: isinstance(v, str) and bool(extract_boxed(v)),
        "multiple_choice_index": in_range,
        "multiple_choice_one_based": in_range_one_based,
        "multiple_choice_letter": letter_ok,
        "multiple_choice_text": is_option,
        "boolean": lambda i, v: as_bool(v) is not None,
        "number": lambda i, v: parse_number(v) is not None,
        "math": lambda i, v: parse_number(v) is not None or (looks_like_math(v) and well_formed_math(v)),
        "code": lambda i, v: looks_like_code(v),
        "short_text": lambda i, v: is_short_text(v),
    }
    results = {name: share(test) for name, test in tests.items()}
    shares = {name: round(s, 4) for name, (s, _) in results.items()}
    present = [v for v in values if v is not None and v != ""]
    distinct = {str(v).strip() for v in present}
    has_choices = choices is not None and any(choice_lists)

    fmt: str
    if tests_column is not None:
        fmt = "code_tests"
    elif has_choices and share(lambda i, v: as_index(v) is not None)[0] >= PLAIN:
        # Integers next to a choices column are indexes into it (MMLU's ClassLabel A-D too),
        # even when some are out of range. They count from 1 when no row says 0 and some row
        # names one past the last 0-based option.
        no_zero = not any(as_index(v) == 0 for v in values)
        if no_zero and shares["multiple_choice_one_based"] > shares["multiple_choice_index"]:
            fmt = "multiple_choice_one_based"
        else:
            fmt = "multiple_choice_index"
    elif has_choices and shares["multiple_choice_text"] >= PLAIN and shares["multiple_choice_letter"] < PLAIN:
        fmt = "multiple_choice_text"
    elif class_names:
        fmt = "class_label"
    elif shares["multiple_choice_letter"] >= PLAIN and (has_choices or len(distinct) <= len(LETTERS)):
        fmt = "multiple_choice_letter"
    elif shares["gsm8k"] >= STRONG:
        fmt = "gsm8k"
    elif shares["boxed"] >= STRONG:
        fmt = "boxed"
    elif shares["boolean"] >= PLAIN:
        fmt = "boolean"
    elif _few_distinct(present, distinct) and shares["short_text"] + shares["number"] >= PLAIN:
        fmt = "class_label"
    elif shares["number"] >= PLAIN:
        fmt = "number"
    elif shares["math"] >= PLAIN and shares["math"] > shares["number"]:
        fmt = "math"
    elif shares["code"] >= 0.5:
        fmt = "code"
    elif shares["short_text"] >= 0.75:
        fmt = "short_text"
    else:
        fmt = "long_text"

    code_names: dict[str, Any] = {}
    if fmt == "code_tests":
        test_values = [row.get(tests_column) for row in rows]
        code_names = entry_points(rows, tests_column, answer)
        unnamed = set(code_names.get("not_found", ()))
        match, misses = share(lambda i, v: test_values[i] not in (None, "", []) and i not in unnamed)
    elif fmt == "class_label":
        labels = list(class_names) if class_names else sorted(distinct, key=lambda s: (len(s), s))
        ok = (
            (lambda i, v: as_index(v) is not None and 0 <= as_index(v) < len(labels))
            if class_names
            else (lambda i, v: str(v).strip() in distinct)
        )
        match, misses = share(ok)
    elif fmt == "long_text":
        match, misses = share(lambda i, v: isinstance(v, str) and bool(v.strip()))
    else:
        match, misses = results[fmt]
    out: dict[str, Any] = {
        "type": fmt,
        "label": FORMAT_LABELS[fmt],
        "match_share": round(match, 4),
        "matched": n - len(misses),
        "rows": n,
        "candidates": {k: v for k, v in sorted(shares.items(), key=lambda kv: -kv[1]) if v > 0},
        "examples": [truncate(v, 80) for v in present[:3]],
        "non_matching": [{"row": i, "value": truncate(values[i], 80)} for i in misses[:5]],
    }
    if code_names:
        out["entry_points"] = code_names
    if fmt in ("number", "math") and misses:  # inspect asks math-verify whether the numeric templates read them
        out["non_matching_rows"] = misses[:READ_BACK_AT_MOST]
    out.update(_extraction(fmt, values, choice_lists, class_names, distinct))
    if fmt in catalog.CHOICE_KEY_FORMS and choices:
        out["choices_column"] = choices
        out["answer_key"] = catalog.CHOICE_KEY_FORMS[fmt]
        lists = [o for o in choice_lists if o]
        labelled = sum(1 for o in lists if catalog.carries_own_labels(o))
        out["options_labelled"] = bool(lists) and labelled / len(lists) >= 0.5
        first = next(iter(lists), None)
        if first:
            out["options_example"] = [
                f"{LETTERS[i] if i < len(LETTERS) else i}. {truncate(o, 60)}"
                for i, o in enumerate(catalog.option_texts(first))
            ]
    return out


# A calculator annotation in a worked solution, as GSM8K writes them: "48/2 = <<48/2=24>>24".
_CALCULATOR = re.compile(r"<<[^<>=\n]*\d[^<>=\n]*=[^<>\n]*\d[^<>\n]*>>")


def calculator_annotations(rows: list[dict], columns: list[str]) -> dict[str, Any] | None:
    """The text column (of ``columns``, in order: the answer first) whose worked solutions carry calculator
    annotations (``<<48/2=24>>``) on at least STRONG of the rows that have a value: {"column", "rows",
    "annotated", "share", "example"}; None when no column does."""
    best: dict[str, Any] | None = None
    for column in columns:
        values = [r.get(column) for r in rows if isinstance(r.get(column), str) and r.get(column).strip()]
        if not values:
            continue
        hits = [m.group(0) for m in (_CALCULATOR.search(v) for v in values) if m]
        share = len(hits) / len(values)
        if share >= STRONG and (best is None or share > best["share"]):
            best = {"column": column, "rows": len(values), "annotated": len(hits), "share": round(share, 4)}
            best["example"] = truncate(hits[0], 60)
    return best


def entry_points(rows: list[dict], tests_column: str, answer: str) -> dict[str, Any]:
    """The function each code row's tests call, as the code templates read it (``catalog.entry_point``: from
    the asserts, never a keyword, builtin or module attribute, one the reference defines first; the setup
    column's own definitions aside). {"from": the entry point column or "tests", "examples": [names],
    "not_found": [rows whose asserts call no such function]}; an entry point column is taken as it is."""
    from vlab.inspect.roles import ENTRY_POINT_NAMES, SETUP_NAMES, normalise

    keys = list(dict.fromkeys(k for row in rows for k in row))
    entry = next((k for k in keys if normalise(k) in ENTRY_POINT_NAMES and any(r.get(k) for r in rows)), None)
    if entry is not None:
        names = [str(r.get(entry) or "").strip() for r in rows]
        return {"from": entry, "examples": list(dict.fromkeys(n for n in names if n))[:3]}
    setup = next((k for k in keys if normalise(k) in SETUP_NAMES and k != tests_column), None)
    found, missing = [], []
    for i, row in enumerate(rows):
        tests = row.get(tests_column)
        if tests in (None, "", []) or catalog.call_tests(tests) is None:
            continue  # no tests (counted apart), or stdin/stdout cases: no function is called
        reference = row.get(answer) if answer != tests_column else None
        if isinstance(reference, (list, tuple)):
            reference = reference[0] if reference else None
        name = catalog.entry_point(tests, str(reference) if reference else None, row.get(setup) if setup else None)
        (found if name else missing).append(name or i)
    return {"from": "tests", "examples": list(dict.fromkeys(found))[:3], "not_found": missing}


def _few_distinct(present: list, distinct: set) -> bool:
    return len(present) >= 20 and len(distinct) <= CLASS_MAX_DISTINCT and len(distinct) <= 0.2 * len(present)


def _row_options(row: dict, choices: str | list[str] | None) -> list[str] | None:
    if not choices:
        return None
    if isinstance(choices, str):
        return _options(row.get(choices))
    return _options([row.get(c) for c in choices if row.get(c) not in (None, "")])


def _options(value: Any) -> list[str] | None:
    """The options of a choices cell: a list, or ARC's {"text": [...], "label": [...]}."""
    if isinstance(value, dict) and isinstance(value.get("text"), list):
        value = value["text"]
    if isinstance(value, (list, tuple)) and value:
        return [str(v) for v in value]
    return None


def _extraction(
    fmt: str, values: list, choice_lists: list, class_names: list[str] | None, distinct: set
) -> dict[str, Any]:
    """How a reward gets the comparable answer out of the column, with examples of what it yields."""
    strings = [v for v in values if isinstance(v, str)]
    if fmt == "gsm8k":
        got = [extract_hash(v) for v in strings]
        ok = [g for g in got if g is not None and parse_number(g) is not None]
        return {
            "extraction": "the text after the last '####', commas removed (vf.extract_hash_answer)",
            "extraction_share": round(len(ok) / len(values), 4) if values else 0.0,
            "extracted_examples": [g.replace(",", "") for g in ok[:5]],
        }
    if fmt == "boxed":
        got = [g for g in (extract_boxed(v) for v in strings) if g]
        return {
            "extraction": "the content of the last \\boxed{...} (vf.extract_boxed_answer)",
            "extraction_share": round(len(got) / len(values), 4) if values else 0.0,
            "extracted_examples": got[:5],
        }
    if fmt == "math":
        return {"extraction": "the expression as it is; compare with math-verify (equivalent forms match)"}
    if fmt == "number":
        kinds = set()
        for v in values:
            if isinstance(v, str):
                t = v.strip()
                if "," in t:
                    kinds.add("thousands separators")
                if _FRACTION.match(t):
                    kinds.add("fractions")
                if t.startswith(("-", "−")):
                    kinds.add("negatives")
                if "." in t:
                    kinds.add("decimals")
                if "$" in t or "%" in t:
                    kinds.add("units ($ or %)")
            elif isinstance(v, float) and not float(v).is_integer():
                kinds.add("decimals")
            elif isinstance(v, (int, float)) and v < 0:
                kinds.add("negatives")
        return {
            "extraction": "parse as a number (drop ',', '$', '%'; a/b as a fraction) and compare with a tolerance",
            "number_forms": sorted(kinds) or ["integers"],
        }
    if fmt == "multiple_choice_index":
        return {
            "extraction": "the integer is a 0-based index into the choices: letter = 'ABCD...'[answer]; never a number"
        }
    if fmt == "multiple_choice_one_based":
        return {
            "extraction": "the integer is a 1-based index into the choices: letter = 'ABCD...'[answer - 1] "
            "(new_env sets INDEX_BASE = 1); never a number"
        }
    if fmt == "multiple_choice_text":
        return {"extraction": "the answer is the text of the correct option: letter = 'ABCD...'[choices.index(answer)]"}
    if fmt == "multiple_choice_letter":
        return {
            "extraction": "the letter, upper-cased, without brackets or a trailing '.'",
            "labels": sorted({as_letter(v) for v in values if as_letter(v)}),
        }
    if fmt == "boolean":
        return {"extraction": "yes/true -> yes, no/false -> no (case-insensitive)"}
    if fmt == "class_label":
        if class_names:
            return {"extraction": "the integer is a ClassLabel id: name = names[answer]", "labels": list(class_names)}
        return {
            "extraction": "the label text, stripped and lower-cased",
            "labels": sorted(distinct)[:CLASS_MAX_DISTINCT],
        }
    if fmt == "short_text":
        return {"extraction": "normalise (lower-case, strip punctuation and articles) and compare exactly"}
    if fmt == "code_tests":
        return {
            "extraction": "run the reply's program against the row's tests in a child process "
            "(templates/environments/classic-code, v1-code); the answer column is the reference solution; the "
            "function's name is the entry point column's, else the call in the tests (entry_points); a setup "
            "column (test_setup_code) runs before the tests"
        }
    if fmt == "code":
        return {"extraction": "code must be executed against tests; a string comparison is not a reward"}
    return {"extraction": "free text: compare with an LLM judge (vf.JudgeRubric / a v1 judge)"}
