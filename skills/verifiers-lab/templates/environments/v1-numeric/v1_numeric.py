"""Numeric and math answers (GSM8K, MATH style) as a verifiers v1 taskset.

The model reasons, then puts its final answer in \\boxed{...}. The reward is 1.0 when that
answer equals the reference by math-verify, through verifiers' own
``vf.verify_boxed_math_answer``: "51", "51.0" and "1{,}000" match 51 and 1000,
"\\frac{1}{2}" and ".5" match 0.5, while "51.4" or "2\\pi" never match 51 or 2. Two plain
rationals (51, 0.0000672, 14/3) are compared exactly, never by math-verify's 6-place rounding; the spellings
math-verify misreads (90°, 2\\,220, 3 sqrt(5), 9.) are rewritten to ones it reads first (``readable``).
A metric records whether a \\boxed{} answer was given at all. `validate` checks every
reference answer parses, so `vf-validate` catches broken rows before any model runs.

Written for verifiers >= 0.4 (`import verifiers.v1 as vf`): the module exports
exactly one Taskset subclass through `__all__`; there is no `load_environment`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import verifiers.v1 as vf

# Column mapping: which dataset columns hold the question and the reference answer.
# QUESTION_COLUMN may be a list of columns (e.g. ["Body", "Question"]): joined in order.
# scripts/new_env.py fills these in from `inspect_dataset --json`.
QUESTION_COLUMN = "question"
ANSWER_COLUMN = "answer"

SYSTEM_PROMPT = "Solve the problem step by step. Then give the final answer inside \\boxed{}, for example \\boxed{42}."
MATH_TIMEOUT_SECONDS = 5

_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
# Numbers side by side ("2 40 19", "0.0112 0.006"): math-verify reads them as one sum or product; never one answer.
_SEVERAL = re.compile(r"(?<![\w.\\])(?:\d+\.?\d*|\.\d+)\s+(?:\d+\.?\d*|\.\d+)(?![\w./])")
# A plain rational: 51, -0.0000672, .5, 14/3, \frac{14}{3}, \frac12. Two of them are compared exactly: math-verify rounds
# to 6 places, and would pay 0.0000673 for .0000672.
_PLAIN = re.compile(r"(-?)(?:(\d+\.?\d*|\.\d+)|(\d+)\s*/\s*(\d+)|\\[dt]?frac(?:\{(-?\d+)\}\{(\d+)\}|(\d)(\d)))")
# Spellings a model writes every day that math-verify does not read, rewritten to ones it reads (the value is
# never changed): degrees (90°, 90\degree -> 90^\circ), a LaTeX space inside a number (2\,220 -> 2220),
# sqrt() anywhere (3 sqrt(5), (1, sqrt(3))), a final period (9. -> 9).
_REWRITES = (
    (re.compile(r"\s*(?:°|\\degree\b|\\textdegree\b)"), r"^\\circ"),
    (re.compile(r"(?<=\d)(?:\\[,;:! ]|~|\\thinspace\s?)(?=\d{3}(?!\d))"), ""),
    (re.compile(r"(?<![\\\w])sqrt\s*\(([^()]*)\)"), r"\\sqrt{\1}"),
    (re.compile(r"(?<=\d)\.$"), ""),
)


def readable(answer: str) -> str:
    """The answer with the spellings math-verify misreads rewritten (see _REWRITES); the same value."""
    text = answer.strip()
    for pattern, replacement in _REWRITES:
        text = pattern.sub(replacement, text)
    return text


def plain_value(text: str) -> Fraction | None:
    """The exact value of a plain rational answer (51, 51.0, .5, 14/3, \\frac{14}{3}, \\frac12, 1{,}000), else None."""
    t = text.strip().replace("{,}", "").replace("$", "")
    if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?", t):
        t = t.replace(",", "")
    m = _PLAIN.fullmatch(t)
    if not m:
        return None
    sign, decimal, *fraction = m.groups()
    if decimal is not None:
        value = Fraction(decimal)
    else:
        top, bottom = next((a, b) for a, b in zip(fraction[::2], fraction[1::2]) if a is not None)
        if int(bottom) == 0:
            return None
        value = Fraction(int(top), int(bottom))
    return -value if sign else value


def plain_verdict(given: str, gold: str) -> float | None:
    """1.0/0.0 when both sides are plain rationals, compared exactly (math-verify's verdict on two integers;
    on decimals its rounding is never used), 0.0 for several numbers side by side, else None (math-verify decides)."""
    given, gold = given.strip(), gold.strip()
    if _INTEGER.fullmatch(given) and _INTEGER.fullmatch(gold):
        return 1.0 if int(given) == int(gold) else 0.0
    if _SEVERAL.search(given):
        return 0.0
    a, b = plain_value(given), plain_value(gold)
    if a is not None and b is not None:
        return 1.0 if a == b else 0.0
    return None


def final_boxed(reply: str | None) -> str:
    """The last \\boxed{} answer after any reasoning block ('' for none, or an unclosed <think>)."""
    if not reply or ("<think>" in reply and "</think>" not in reply):
        return ""
    return vf.extract_boxed_answer(reply.rsplit("</think>", 1)[-1], strict=True).strip()


def same_answer(reply: str | None, gold: str) -> float:
    """math-verify's verdict on the reply's boxed answer (its everyday spellings made readable), two plain
    rationals compared exactly first."""
    given = readable(final_boxed(reply))
    fast = plain_verdict(given, gold)
    if fast is not None:
        return fast
    # math-verify times out with SIGALRM, which only the main thread may set: elsewhere it would
    # fail and score every answer 0, so off the main thread it runs without its timeout.
    timeout = MATH_TIMEOUT_SECONDS if threading.current_thread() is threading.main_thread() else 0
    return vf.verify_boxed_math_answer(f"\\boxed{{{given}}}", gold, timeout_seconds=timeout)


def reference_answer(raw) -> str:
    """The final answer of a reference: GSM8K answers end with '#### N' (commas dropped)."""
    text = str(raw).strip()
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip().replace(",", "")
    return readable(text)


# The dataset's own id column, when it has one, is the task id (else the row's position).
ID_COLUMNS = ("id", "ID", "task_id", "Id", "uid")


def own_id(row: dict) -> str | None:
    """The row's own id: the first of ID_COLUMNS it has with a value; None when it has none."""
    return next((str(row[c]) for c in ID_COLUMNS if row.get(c) not in (None, "")), None)


def prompt_text(row: dict) -> str:
    """The prompt: QUESTION_COLUMN, or its columns joined in order with a blank line."""
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    return "\n\n".join(str(row[c]) for c in columns if row[c] is not None and str(row[c]).strip())


# Data shipped inside the package travels with it: data/ beside this module (a checkout, pip install -e),
# v1_numeric_data/ once installed from a wheel (pyproject.toml maps data/ there, so two packages never share one).
DATA_DIRS = (Path(__file__).resolve().parent / "data", Path(__file__).resolve().parent / "v1_numeric_data")
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


def read_rows(config: V1NumericConfig) -> Iterator[dict]:
    """Rows of a local file if dataset_path is set (.jsonl/.json/.csv/.parquet, text ones also .gz; see
    data_file), else of the Hub dataset dataset_name. Neither is an error: no dataset is ever picked for the user."""
    from datasets import load_dataset  # only needed when tasks are loaded

    if config.dataset_path:
        builder = _BUILDERS.get(Path(Path(config.dataset_path).name.lower().removesuffix(".gz")).suffix)
        if builder is None:
            raise ValueError(f"dataset_path must end in .jsonl, .json, .csv or .parquet (got {config.dataset_path!r})")
        dataset = load_dataset(builder, data_files=data_file(config.dataset_path), split="train")
    elif config.dataset_name:
        dataset = load_dataset(config.dataset_name, config.dataset_config, split=config.dataset_split)
    else:
        raise ValueError(NO_DATASET)
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    missing = [c for c in (*columns, ANSWER_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if config.num_examples > 0:
        dataset = dataset.select(range(min(config.num_examples, len(dataset))))
    yield from dataset


class V1NumericData(vf.TaskData):
    answer: str
    """The reference answer: a number or a math expression."""


class V1NumericTask(vf.Task[V1NumericData]):
    @vf.reward(weight=1.0)
    async def correct_answer(self, trace: vf.Trace) -> float:
        """1.0 when the boxed answer equals the reference (math-verify), else 0.0."""
        if final_boxed(trace.last_reply) == "":
            return 0.0
        return same_answer(trace.last_reply, self.data.answer)

    @vf.metric
    async def boxed_answer(self, trace: vf.Trace) -> float:
        """Did the reply contain a \\boxed{} answer at all?"""
        return 1.0 if final_boxed(trace.last_reply) else 0.0

    async def validate(self, runtime) -> bool:
        """The reference answer must be reachable: the reference itself, boxed, scores 1."""
        return same_answer(f"\\boxed{{{self.data.answer}}}", self.data.answer) == 1.0


class V1NumericConfig(vf.TasksetConfig):
    dataset_name: str | None = None
    dataset_config: str | None = None
    dataset_split: str = "train"
    dataset_path: str | None = None
    """A .jsonl/.json/.csv/.parquet file (text ones also .gz): a path, or a file in the package's data/ folder;
    wins over dataset_name. Name one of the two: there is no default dataset."""
    num_examples: int = -1


class V1NumericTaskset(vf.Taskset[V1NumericTask, V1NumericConfig]):
    def load(self) -> Iterator[V1NumericTask]:
        for i, row in enumerate(read_rows(self.config)):
            yield V1NumericTask(
                V1NumericData(
                    id=own_id(row) or str(i),
                    prompt=prompt_text(row),
                    system_prompt=SYSTEM_PROMPT,
                    answer=reference_answer(row[ANSWER_COLUMN]),
                ),
                self.config.task,
            )


__all__ = ["V1NumericTaskset"]
