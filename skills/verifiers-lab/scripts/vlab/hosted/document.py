"""A prime-rl / Hosted Training config document as the validation rules read it: keys by dotted
path, the train and eval sources and their environment ids, every leaf string, the sequence length;
``rule`` makes one rule's check. The rules themselves are ``rules_*`` (``validate.validate_document``
runs them in order).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from vlab.core.result import EXIT_FAIL, Check

# Environment id: name, or owner/name, optionally @version (the Hub's and verifiers' loader's forms).
ENV_ID_RE = re.compile(
    r"^(?:[A-Za-z0-9][A-Za-z0-9._-]{0,99}/)?[A-Za-z0-9][A-Za-z0-9._-]{0,99}(?:@[A-Za-z0-9][A-Za-z0-9.+_-]{0,63})?$"
)
PRIME_RL_DEFAULT_SEQ_LEN = 2048


def rule(id: str, status: str, message: str, hint: str = "", exit_code: int = EXIT_FAIL) -> Check:
    return Check(id, status, message, hint, exit_code)


def get(doc: dict, dotted: str, default: Any = None) -> Any:
    node: Any = doc
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def train_sources(doc: dict) -> list[dict]:
    sources = get(doc, "orchestrator.train.source", [])
    return [s for s in sources if isinstance(s, dict)] if isinstance(sources, list) else []


def eval_sources(doc: dict) -> list[dict]:
    sources = get(doc, "orchestrator.eval.source", [])
    return [s for s in sources if isinstance(s, dict)] if isinstance(sources, list) else []


def source_env_ids(doc: dict) -> list[tuple[str, Any]]:
    """(where, taskset id) for every train and eval source."""
    out = []
    for kind, sources in (("train", train_sources(doc)), ("eval", eval_sources(doc))):
        for i, s in enumerate(sources):
            out.append((f"orchestrator.{kind}.source[{i}]", get(s, "env.taskset.id")))
    return out


def is_lora(doc: dict) -> bool:
    return isinstance(get(doc, "trainer.model.lora"), dict)


def walk_strings(value: Any, path: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from walk_strings(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk_strings(v, f"{path}[{i}]")
    else:
        yield path, value


def config_seq_len(doc: dict) -> Any:
    """The config's sequence length (top-level ``seq_len``), prime-rl's default when unset; as written
    (the rules say when it is not a positive integer)."""
    return doc.get("seq_len", get(doc, "orchestrator.seq_len", PRIME_RL_DEFAULT_SEQ_LEN))
