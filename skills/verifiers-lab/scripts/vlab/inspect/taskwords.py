"""The data's own words for its task: what a dataset's name and its label column say the labels are about.

A classification prompt that says only "Classify the text. The allowed labels are: none, against, favor" leaves the
model to guess what is classified (TweetEval's stance towards climate change). new_env writes these words into the
classification templates' ``TASK``, and test_reward's ``prompt_task`` names them when a prompt states no task.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from vlab.inspect.splits import canonical

# Words of a data file's or folder's name that say nothing of the task.
NOISE = frozenset(
    "data dataset datasets hub hf huggingface files file split splits default main all full final clean cleaned "
    "processed raw v0 v1 v2 v3 of parquet jsonl json csv tsv arrow txt gz zip text texts labels label tmp local "
    "copy new old my public".split()
)
GENERIC_COLUMNS = frozenset({"label", "labels", "class", "classes", "target", "y", "category", "answer", "output"})
_WORD = re.compile(r"[A-Za-z][A-Za-z]+")


def _words(part: str) -> list[str]:
    words = [w.lower() for w in _WORD.findall(re.sub(r"([a-z])([A-Z])", r"\1 \2", part))]
    return [w for w in words if w not in NOISE and not canonical(w)]


def task_words(source: str | None, config: str | None = None, column: str | None = None) -> list[str]:
    """The words of the data's name (a Hub id's name, else the nearest of a file's name and its folders' that says
    something: split names, numbers and file words dropped), its config's and its label column's, each once:
    ['tweeteval', 'stance', 'climate']."""
    found: list[str] = []
    text = str(source or "").strip().replace("\\", "/")
    if text:
        path = PurePosixPath(text)
        hub = text.count("/") == 1 and not text.startswith((".", "/", "~")) and "." not in path.name
        names = [path.name] if hub else [path.name, *(p.name for p in list(path.parents)[:2])]
        for name in names:
            words = _words(re.sub(r"\.[A-Za-z0-9]+$", "", name) if "." in name else name)
            if words:
                found += words
                break
    for part in (config, column if column and column.lower() not in GENERIC_COLUMNS else None):
        found += _words(part or "")
    return list(dict.fromkeys(found))[:6]


def task_sentence(source: str | None, config: str | None = None, column: str | None = None) -> str:
    """The classification templates' TASK from the data's words: 'Classify the text by its label (tweeteval
    stance climate).'; 'Classify the text.' when the data's name says nothing."""
    what = column if column and column.lower() not in GENERIC_COLUMNS else "label"
    words = [w for w in task_words(source, config) if w not in what.lower().split()]
    return f"Classify the text by its {what.replace('_', ' ')}" + (f" ({' '.join(words)})." if words else ".")
