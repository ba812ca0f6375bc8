"""What a code row's prompt must show, read from every row without scoring (``code_prompt``): the function the tests
call (the entry point column's, else the call in the asserts: ``catalog.entry_point``, the templates' rule), never
a keyword or builtin asked for as the function ("The function must be named `assert`"); a row whose tests call no
function found is listed."""

from __future__ import annotations

import keyword
import re
from typing import TYPE_CHECKING

from vlab import catalog
from vlab.kinds.base import RowKind

if TYPE_CHECKING:
    from vlab.env import Row

CHECK = "code_prompt"
OK = "the prompt names the function the tests call"
HINT = (
    "say the function's name (and signature) in the prompt; the code templates add the name the "
    "tests call (never a keyword or builtin); for rows whose tests call no function found, add an entry point column"
)
_GROUPS = (
    ("never names", "the tested function never named"),
    ("asks for a function named", "a keyword or builtin asked for as the function"),
    ("no function name found", "no function name found in the tests"),
)


def group_of(why: str) -> str:
    return next((name for key, name in _GROUPS if key in why), why)


_NAMED = re.compile(r"\bnamed\s+`([^`\s]+)`")


def code_problems(row: Row, kind: RowKind) -> list[tuple[str, str]] | None:
    """What is wrong with a code row's prompt: (status, what) pairs; None where nothing is checked (stdin/stdout
    tests, no tests and no function). Fails a prompt that asks for a keyword or builtin as the function
    ("must be named `assert`") or never names the function the tests call; warns where the tests call no
    function that could be found (the asserts call only builtins, or names they define)."""
    calls = catalog.call_tests(kind.tests) if kind.tests is not None else None
    if calls is None and not (kind.tests is None and kind.entry_point):
        return None
    out: list[tuple[str, str]] = []
    for name in dict.fromkeys(_NAMED.findall(row.question)):
        if name != kind.entry_point and catalog.bad_entry_name(name):
            what = (
                "a Python keyword"
                if keyword.iskeyword(name)
                else "not a name"
                if not name.isidentifier()
                else "a builtin"
            )
            out.append(("fail", f"the prompt asks for a function named {name!r}, {what}, not what the tests call"))
    if kind.entry_point and (kind.entry_from != "reference" or kind.tests is None):
        if not re.search(rf"\b{re.escape(kind.entry_point)}\b", row.question):
            out.append(("fail", f"the prompt never names {kind.entry_point!r}, the function the tests call"))
    else:
        guess = f" (the reference defines {kind.entry_point!r})" if kind.entry_point else ""
        out.append(
            ("warn", f"no function name found in the tests: their asserts call only builtins or their own names{guess}")
        )
    return out
