"""Short answers with aliases (Natural Questions, TriviaQA, WebQuestions, SQuAD style) as a classic verifiers
environment.

Each row has a question and its answer: one text, or a list of aliases any one of which is right (a JSON or
Arrow list, a list written as text, TriviaQA's {"value", "aliases"}, SQuAD's {"text": [...]}: ``answer_list``).
The model puts its final answer in \\boxed{...}. The reward is 1.0 when that answer equals one of the aliases
after the usual QA normalisation (``normalise``: lower case, punctuation and the articles a/an/the dropped,
spaces collapsed, \\text{} unwrapped; a decimal point between digits kept, so 3.5 is never 35), else 0.0. Each
row keeps its first alias as ``answer`` and every alias in ``info["aliases"]``. The token F1 against the best
alias is a zero-weight metric, never the reward; a second one records whether a \\boxed{} answer was given.

Written for verifiers 0.3.x (`import verifiers as vf`, `load_environment`).
"""

from __future__ import annotations

import ast
import json
import re
import string
import unicodedata
from collections import Counter
from pathlib import Path

import verifiers as vf
from datasets import Dataset, load_dataset

# Column mapping: which dataset columns hold the question and the answer (one text, or a list of aliases).
# QUESTION_COLUMN may be a list of columns (e.g. ["context", "question"]): joined in order.
# scripts/new_env.py fills these in from `inspect_dataset --json`.
QUESTION_COLUMN = "question"
ANSWER_COLUMN = "answer"

SYSTEM_PROMPT = (
    "Answer the question. Think briefly if you need to, then give only the final answer, a few words, inside \\boxed{}."
)

# Keys of an answer held as a record, in the order read: TriviaQA's {"value", "aliases"}, SQuAD's {"text": [...]}.
_ANSWER_KEYS = ("value", "text", "answer", "aliases", "answers")


def answer_list(raw) -> list[str]:
    """Every answer a cell holds, as text, in order: a list (JSON or Arrow, or written as text: '["a", "b"]' or
    "['a', 'b']"; a list of texts only, so '[0, 3)' and '[1, 3]' stay one answer), a record of answers
    (TriviaQA's {"value", "aliases"}, SQuAD's {"text": [...]}), or one value; [] for none. Repeats are kept."""
    if raw is None:
        return []
    if isinstance(raw, str):
        text = raw.strip()
        if text[:1] == "[" and text[-1:] == "]":
            for read in (json.loads, ast.literal_eval):
                try:
                    listed = read(text)
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    continue
                if isinstance(listed, list) and all(isinstance(item, str) for item in listed):
                    return answer_list(listed)
        return [text] if text else []
    if isinstance(raw, dict):
        return answer_list([raw[key] for key in _ANSWER_KEYS if raw.get(key) not in (None, "", [])])
    if hasattr(raw, "tolist") and not isinstance(raw, (int, float)):  # a NumPy array (pandas, Parquet)
        raw = raw.tolist()
    if isinstance(raw, (list, tuple)):
        return [text for item in raw for text in answer_list(item)]
    return answer_list(str(raw))


_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textit|textrm|texttt|mathrm|mathbf|mbox)\s*\{([^{}]*)\}")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_DECIMAL_POINT = re.compile(r"(?<=\d)\.(?=\d)")
_PUNCTUATION = set(string.punctuation)


def normalise(text) -> str:
    """An answer as QA exact match compares it (SQuAD's rule): lower case, punctuation dropped, the articles a,
    an and the dropped, spaces collapsed. \\text{...} is unwrapped first, and a decimal point between two digits
    is kept (3.5 is not 35)."""
    text = _LATEX_TEXT.sub(r"\1", str(text or "")).casefold()
    text = _DECIMAL_POINT.sub("\0", text)
    text = "".join(ch for ch in text if ch not in _PUNCTUATION and not unicodedata.category(ch).startswith("P"))
    text = _ARTICLES.sub(" ", text.replace("\0", "."))
    return " ".join(text.split())


def aliases_of(raw) -> list[str]:
    """The row's aliases: every answer the cell holds, each once (by its normalised form), in the data's order."""
    seen: dict[str, str] = {}
    for alias in answer_list(raw):
        seen.setdefault(normalise(alias) or alias, alias)
    return list(seen.values())


def matches(given: str, aliases: list[str]) -> bool:
    """The answer equals one of the aliases, both normalised (an empty answer never does). An alias normalising
    leaves nothing of ('A+', ')', 'The') is compared as written instead, case and spacing aside."""
    said = normalise(given)
    if said:
        return said in {normalise(alias) for alias in aliases}
    written = _as_written(given)
    return bool(written) and written in {_as_written(alias) for alias in aliases if not normalise(alias)}


def _as_written(text) -> str:
    """An answer with only its case, its spacing and \\text{} set aside."""
    return " ".join(_LATEX_TEXT.sub(r"\1", str(text or "")).casefold().split())


def best_token_f1(given: str, aliases: list[str]) -> float:
    """The best token F1 of the answer against any alias (SQuAD's metric), 0.0 for an empty answer."""
    got = normalise(given).split()
    best = 0.0
    for alias in aliases:
        want = normalise(alias).split()
        same = sum((Counter(got) & Counter(want)).values())
        if same:
            precision, recall = same / len(got), same / len(want)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def prompt_text(row: dict) -> str:
    """The prompt: QUESTION_COLUMN, or its columns joined in order with a blank line."""
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    return "\n\n".join(str(row[c]) for c in columns if row[c] is not None and str(row[c]).strip())


# Data shipped inside the package travels with it: data/ beside this module (a checkout, pip install -e),
# classic_short_answer_data/ once installed from a wheel (pyproject.toml maps data/ there, so two packages never share one).
DATA_DIRS = (Path(__file__).resolve().parent / "data", Path(__file__).resolve().parent / "classic_short_answer_data")
NO_DATASET = (
    "no dataset named: set dataset_path (a .jsonl/.json/.csv/.parquet file; a relative path is also looked up "
    "in the package's data/ folder) or dataset_name (a Hub dataset). This environment never picks one for you."
)
_BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


def data_file(path: str) -> str:
    """A dataset file: the path as given (absolute, or relative to the current folder), else the
    same relative path in the package's data folder (data/train.jsonl and train.jsonl both name data/train.jsonl)."""
    given = Path(path).expanduser()
    if given.is_absolute() or given.exists():
        return str(given)
    inside = Path(*given.parts[1:]) if given.parts[:1] == ("data",) and len(given.parts) > 1 else given
    for folder in DATA_DIRS:
        if (folder / inside).is_file():
            return str(folder / inside)
    looked = ", ".join(str(p) for p in (Path.cwd() / given, *(folder / inside for folder in DATA_DIRS)))
    raise FileNotFoundError(f"dataset_path {path!r} not found (looked at {looked})")


def read_dataset(dataset_name: str | None, dataset_config: str | None, split: str, dataset_path: str | None) -> Dataset:
    """A local file if dataset_path is given (.jsonl/.json/.csv/.parquet, the text ones also .gz; see data_file),
    else the Hub dataset dataset_name. Neither is an error: no dataset is ever picked for the user."""
    if dataset_path:
        builder = _BUILDERS.get(Path(Path(dataset_path).name.lower().removesuffix(".gz")).suffix)
        if builder is None:
            raise ValueError(f"dataset_path must end in .jsonl, .json, .csv or .parquet (got {dataset_path!r})")
        return load_dataset(builder, data_files=data_file(dataset_path), split="train")
    if not dataset_name:
        raise ValueError(NO_DATASET)
    return load_dataset(dataset_name, dataset_config, split=split)


def to_row(row: dict) -> dict:
    """A row as the environment holds it: the prompt, the first alias as the answer, every alias in info."""
    aliases = aliases_of(row[ANSWER_COLUMN])
    return {"question": prompt_text(row), "answer": aliases[0] if aliases else "", "info": {"aliases": aliases}}


def to_rows(dataset: Dataset, num_examples: int) -> Dataset:
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    missing = [c for c in (*columns, ANSWER_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if num_examples > 0:
        dataset = dataset.select(range(min(num_examples, len(dataset))))
    return dataset.map(to_row, remove_columns=dataset.column_names)


def given_answer(text: str) -> str:
    """The reply's final answer: its last \\boxed{} ('' for none)."""
    return (vf.extract_boxed_answer(text, strict=True) or "").strip()


def row_aliases(answer: str, info) -> list[str]:
    """The row's aliases (info["aliases"]; its answer alone where a row has none)."""
    if isinstance(info, str):
        info = json.loads(info or "{}")
    listed = (info or {}).get("aliases") if isinstance(info, dict) else None
    return list(listed) if listed else answer_list(answer)


def load_environment(
    dataset_name: str | None = None,
    dataset_config: str | None = None,
    dataset_split: str = "train",
    eval_split: str | None = None,
    dataset_path: str | None = None,
    eval_path: str | None = None,
    num_examples: int = -1,
    num_eval_examples: int = -1,
    system_prompt: str = SYSTEM_PROMPT,
) -> vf.Environment:
    """Build the environment. Name the data: dataset_path (and eval_path) for files, or dataset_name for a Hub dataset."""
    dataset = to_rows(read_dataset(dataset_name, dataset_config, dataset_split, dataset_path), num_examples)
    eval_dataset = None
    if eval_path or (eval_split and not dataset_path):
        eval_dataset = to_rows(
            read_dataset(dataset_name, dataset_config, eval_split or dataset_split, eval_path), num_eval_examples
        )

    parser = vf.Parser(extract_fn=given_answer)

    def correct_answer(completion, answer, info, parser) -> float:
        """1.0 when the boxed answer equals one of the aliases (both normalised), else 0.0."""
        return 1.0 if matches(parser.parse_answer(completion) or "", row_aliases(answer, info)) else 0.0

    def token_f1(completion, answer, info, parser) -> float:
        """Metric (weight 0): the boxed answer's best token F1 against the aliases (never the reward)."""
        return best_token_f1(parser.parse_answer(completion) or "", row_aliases(answer, info))

    def boxed_answer(completion, parser) -> float:
        """Format signal (weight 0): did the reply contain a \\boxed{} answer?"""
        return 1.0 if parser.parse_answer(completion) else 0.0

    rubric = vf.Rubric(funcs=[correct_answer, token_f1, boxed_answer], weights=[1.0, 0.0, 0.0], parser=parser)
    return vf.SingleTurnEnv(
        dataset=dataset, eval_dataset=eval_dataset, system_prompt=system_prompt, parser=parser, rubric=rubric
    )
