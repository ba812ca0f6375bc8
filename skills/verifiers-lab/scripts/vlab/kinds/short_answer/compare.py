"""How the short-answer templates compare: QA's normalisation and any alias, read from the v1-short-answer template
(its one home; classic-short-answer carries the same code, tests/test_templates.py checks it), so test_reward's
probes are confirmed by the rule the environment will pay by."""

from __future__ import annotations

import ast
import json
import re
import string
import unicodedata
from collections import Counter
from functools import cache
from types import SimpleNamespace

from vlab.core.templatecode import run_template_definitions

TEMPLATE = ("v1-short-answer", "v1_short_answer.py")
# The comparison: the functions and the module names they read.
RULES = (
    "_ANSWER_KEYS",
    "answer_list",
    "_LATEX_TEXT",
    "_ARTICLES",
    "_DECIMAL_POINT",
    "_PUNCTUATION",
    "normalise",
    "aliases_of",
    "matches",
    "_as_written",
    "best_token_f1",
)


@cache
def rules() -> SimpleNamespace:
    """The template's ``normalise``, ``aliases_of``, ``matches`` and ``best_token_f1``."""
    modules = {"ast": ast, "json": json, "re": re, "string": string, "unicodedata": unicodedata, "Counter": Counter}
    found = run_template_definitions(*TEMPLATE, RULES, modules)
    return SimpleNamespace(**{name: found[name] for name in RULES if not name.startswith("_")})


def normalise(text: str) -> str:
    return rules().normalise(text)


def aliases_of(raw) -> list[str]:
    return rules().aliases_of(raw)


def matches(given: str, aliases: list[str]) -> bool:
    return rules().matches(given, aliases)
