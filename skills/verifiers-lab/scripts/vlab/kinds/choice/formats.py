"""How inspect recognises a multiple-choice answer key beside a choices column: a 0- or 1-based index into the
choices, a letter, or the text of the right option; and what the result says about the options."""

from __future__ import annotations

from typing import Any

from vlab import catalog
from vlab.inspect.columns import truncate
from vlab.kinds.base import PLAIN, Column, Format
from vlab.kinds.choice.options import LETTERS, as_index, as_letter


def _in_range(col: Column, i: int, v: Any, base: int) -> bool:
    idx, opts = as_index(v), col.choice_lists[i]
    return idx is not None and opts is not None and base <= idx < len(opts) + base


def _is_option(col: Column, i: int, v: Any) -> bool:
    opts = col.choice_lists[i]
    return isinstance(v, str) and opts is not None and v.strip() in catalog.option_texts(opts) + opts


def _letter_ok(col: Column, i: int, v: Any) -> bool:
    letter, opts = as_letter(v), col.choice_lists[i]
    return letter is not None and (opts is None or LETTERS.index(letter) < len(opts))


def _indexes(col: Column) -> bool:
    """Integers next to a choices column are indexes into it (MMLU's ClassLabel A-D too), even when some are out
    of range."""
    return col.has_choices and col.share(lambda i, v: as_index(v) is not None)[0] >= PLAIN


def _one_based(col: Column) -> bool:
    """They count from 1 when no row says 0 and some row names one past the last 0-based option."""
    no_zero = not any(as_index(v) == 0 for v in col.values)
    shares = col.shares()
    return no_zero and shares["multiple_choice_one_based"] > shares["multiple_choice_index"]


def _options(col: Column, name: str, extraction: str, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"extraction": extraction, **extra}
    if col.choices:
        out["choices_column"] = col.choices
        out["answer_key"] = catalog.CHOICE_KEY_FORMS[name]
        lists = [o for o in col.choice_lists if o]
        labelled = sum(1 for o in lists if catalog.carries_own_labels(o))
        out["options_labelled"] = bool(lists) and labelled / len(lists) >= 0.5
        first = next(iter(lists), None)
        if first:
            out["options_example"] = [
                f"{LETTERS[i] if i < len(LETTERS) else i}. {truncate(o, 60)}"
                for i, o in enumerate(catalog.option_texts(first))
            ]
    return out


FORMATS = (
    Format(
        "multiple_choice_one_based",
        20,
        lambda col: _indexes(col) and _one_based(col),
        test=lambda col, i, v: _in_range(col, i, v, 1),
        extraction=lambda col: _options(
            col,
            "multiple_choice_one_based",
            "the integer is a 1-based index into the choices: letter = 'ABCD...'[answer - 1] "
            "(new_env sets INDEX_BASE = 1); never a number",
        ),
    ),
    Format(
        "multiple_choice_index",
        21,
        _indexes,
        test=lambda col, i, v: _in_range(col, i, v, 0),
        extraction=lambda col: _options(
            col,
            "multiple_choice_index",
            "the integer is a 0-based index into the choices: letter = 'ABCD...'[answer]; never a number",
        ),
    ),
    Format(
        "multiple_choice_text",
        30,
        lambda col: (
            col.has_choices
            and col.results["multiple_choice_text"][0] >= PLAIN
            and col.results["multiple_choice_letter"][0] < PLAIN
        ),
        test=_is_option,
        extraction=lambda col: _options(
            col,
            "multiple_choice_text",
            "the answer is the text of the correct option: letter = 'ABCD...'[choices.index(answer)]",
        ),
    ),
    Format(
        "multiple_choice_letter",
        50,
        lambda col: (
            col.results["multiple_choice_letter"][0] >= PLAIN and (col.has_choices or len(col.distinct) <= len(LETTERS))
        ),
        test=_letter_ok,
        extraction=lambda col: _options(
            col,
            "multiple_choice_letter",
            "the letter, upper-cased, without brackets or a trailing '.'",
            labels=sorted({as_letter(v) for v in col.values if as_letter(v)}),
        ),
    ),
)
