"""Which column plays which role: prompt, answer, choices, info.

Names are matched case-insensitively, ignoring '_', '-' and spaces; each role
has a ranked list of names. When no name matches, the content decides (a chat
messages column, the longest text column), with a lower confidence and the
reason said.
"""

from __future__ import annotations

import re
from typing import Any

from .columns import Column

# A role below this confidence does not count as identified (exit 1).
CONFIDENT = 0.6

PROMPT_NAMES = ["prompt", "question", "problem", "query", "instruction", "input", "inputs", "text", "sentence",
                "context", "content", "task", "questiontext", "user", "source", "premise", "ctx", "goal", "stem"]
ANSWER_NAMES = ["answer", "finalanswer", "groundtruth", "goldanswer", "gold", "answerkey", "answeridx", "answerindex",
                "correctanswer", "correct", "label", "labels", "target", "targets", "expectedanswer", "expectedoutput",
                "solution", "canonicalsolution", "output", "outputs", "response", "completion", "reference", "result",
                "y"]
CHOICES_NAMES = ["choices", "options", "candidates", "answerchoices", "endings", "alternatives"]
INFO_NAMES = ["info", "metadata", "meta", "extra", "extrainfo"]
ROLE_NAMES = {"prompt": PROMPT_NAMES, "answer": ANSWER_NAMES, "choices": CHOICES_NAMES, "info": INFO_NAMES}


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


def detect_roles(columns: list[Column]) -> dict[str, Any]:
    """{"prompt": {...} | None, "answer": ..., "choices": ..., "info": ..., "tried": {...}}."""
    roles: dict[str, Any] = {"prompt": None, "answer": None, "choices": None, "info": None}
    taken: set[str] = set()
    usable = [c for c in columns if c.type != "null"]

    # A prompt column of chat messages is the classic API's own `prompt` shape.
    messages = [c for c in usable if c.type == "messages"]
    hit = _by_name(usable, PROMPT_NAMES, taken)
    if hit and hit[0].type == "messages" or (not hit and messages):
        col = hit[0] if hit else messages[0]
        roles["prompt"] = _role(col.name, 0.95 if hit else 0.75,
                                f"{col.name!r} holds chat messages (role/content): used as the prompt as it is",
                                kind="messages")
    elif hit:
        col, rank = hit
        text_like = col.type in ("string", "mixed")
        conf = (0.95 if rank <= 2 else 0.85) if text_like else 0.5
        why = f"column name {col.name!r} is a usual prompt name"
        if not text_like:
            why += f", but it holds {col.type} values, not text"
        roles["prompt"] = _role(col.name, conf, why, kind="text")
    else:
        text_cols = sorted((c for c in usable if c.type == "string"), key=lambda c: -c.mean_chars)
        if text_cols:
            col = text_cols[0]
            roles["prompt"] = _role(col.name, 0.4, f"no usual prompt name; {col.name!r} is the longest text column "
                                    f"(mean {col.mean_chars:.0f} chars)", kind="text")
    if roles["prompt"]:
        taken.add(roles["prompt"]["column"])

    hit = _by_name(usable, ANSWER_NAMES, taken)
    if hit:
        col, rank = hit
        conf = 0.95 if rank <= 8 else 0.85
        roles["answer"] = _role(col.name, conf, f"column name {col.name!r} is a usual answer name")
    else:
        rest = [c for c in usable if c.name not in taken and c.type in ("string", "integer", "float", "boolean")]
        short = sorted(rest, key=lambda c: (c.mean_chars if c.type == "string" else 0))
        if short:
            col = short[0]
            roles["answer"] = _role(col.name, 0.4, f"no usual answer name; {col.name!r} is the shortest remaining "
                                    f"scalar column")
    if roles["answer"]:
        taken.add(roles["answer"]["column"])

    hit = _by_name(usable, CHOICES_NAMES, taken)
    if hit and (hit[0].type.startswith("list") or hit[0].type == "dict"):
        roles["choices"] = _role(hit[0].name, 0.95, f"column name {hit[0].name!r} and it holds a list of options")
    else:
        lists = [c for c in usable if c.name not in taken and c.type == "list[string]"
                 and c.list_length and 2 <= c.list_length["min"] and c.list_length["max"] <= 10]
        if lists:
            roles["choices"] = _role(lists[0].name, 0.6, f"{lists[0].name!r} holds 2-10 strings per row")
    if roles["choices"]:
        taken.add(roles["choices"]["column"])

    hit = _by_name(usable, INFO_NAMES, taken)
    if hit:
        roles["info"] = _role(hit[0].name, 0.9, f"column name {hit[0].name!r} (a {hit[0].type})")

    roles["tried"] = {
        "prompt": "chat-messages columns, then names: " + ", ".join(PROMPT_NAMES) + "; then the longest text column",
        "answer": "names: " + ", ".join(ANSWER_NAMES) + "; then the shortest scalar column",
        "choices": "names: " + ", ".join(CHOICES_NAMES) + "; then a column of 2-10 strings per row",
        "info": "names: " + ", ".join(INFO_NAMES),
    }
    return roles


def confident(role: dict | None) -> bool:
    return bool(role) and role["confidence"] >= CONFIDENT
