"""Numeric and math answers (GSM8K, MATH style) as a classic verifiers environment.

The model reasons, then puts its final answer in \\boxed{...}. The reward is 1.0 when
that answer equals the reference by math-verify, the parser verifiers ships for math
(``vf.MathRubric``, run in its worker process): "51", "51.0" and "1{,}000" match 51 and
1000, "\\frac{1}{2}" and ".5" match 0.5, while "51.4" or "2\\pi" never match 51 or 2.
Two plain rationals (51, 0.0000672, 14/3) are compared exactly, never by math-verify's
6-place rounding; the spellings math-verify misreads (90°, 2\\,220, 3 sqrt(5), 9.) are
rewritten to ones it reads first (``readable``). A second, zero-weight metric records whether
a \\boxed{} answer was given. A math-verify timeout errors the rollout (TimeoutError), it is never scored 0.

Written for verifiers 0.3.x (`import verifiers as vf`, `load_environment`).
"""

from __future__ import annotations

import asyncio
import re
import time
from fractions import Fraction
from pathlib import Path

import verifiers as vf
from datasets import Dataset, load_dataset
from math_verify import parse, verify
from math_verify.errors import TimeoutException as MathVerifyTimeout

# Column mapping: which dataset columns hold the question and the reference answer.
# QUESTION_COLUMN may be a list of columns (e.g. ["Body", "Question"]): joined in order.
# scripts/new_env.py fills these in from `inspect_dataset --json`.
QUESTION_COLUMN = "question"
ANSWER_COLUMN = "answer"

SYSTEM_PROMPT = "Solve the problem step by step. Then give the final answer inside \\boxed{}, for example \\boxed{42}."

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


def reference_answer(raw) -> str:
    """The final answer of a reference: GSM8K answers end with '#### N' (commas dropped)."""
    text = str(raw).strip()
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip().replace(",", "")
    return readable(text)


def prompt_text(row: dict) -> str:
    """The prompt: QUESTION_COLUMN, or its columns joined in order with a blank line."""
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    return "\n\n".join(str(row[c]) for c in columns if row[c] is not None and str(row[c]).strip())


# Data shipped inside the package travels with it: data/ beside this module (a checkout, pip install -e),
# classic_numeric_data/ once installed from a wheel (pyproject.toml maps data/ there, so two packages never share one).
DATA_DIRS = (Path(__file__).resolve().parent / "data", Path(__file__).resolve().parent / "classic_numeric_data")
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


def to_rows(dataset: Dataset, num_examples: int) -> Dataset:
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    missing = [c for c in (*columns, ANSWER_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if num_examples > 0:
        dataset = dataset.select(range(min(num_examples, len(dataset))))
    return dataset.map(
        lambda row: {"question": prompt_text(row), "answer": reference_answer(row[ANSWER_COLUMN])},
        remove_columns=dataset.column_names,
    )


def verify_timed(response: str, answer: str, timeout_seconds: int) -> tuple[float, float]:
    """math-verify's verdict and the seconds it took, run in the rubric's worker process as verifiers' own
    MathRubric runs it (math-verify's timeout scores 0.0 there; the caller reads the time)."""
    start = time.perf_counter()
    try:
        gold = parse(f"\\boxed{{{answer}}}", parsing_timeout=timeout_seconds)
        given = parse(f"\\boxed{{{response}}}", parsing_timeout=timeout_seconds)
        reward = float(verify(gold, given, timeout_seconds=timeout_seconds))
    except (Exception, MathVerifyTimeout):  # noqa: BLE001 - malformed answers score zero
        reward = 0.0
    return reward, time.perf_counter() - start


class NumericRubric(vf.MathRubric):
    """verifiers' MathRubric (math-verify in a worker process), two plain rationals compared exactly first, and a
    math-verify timeout raised as TimeoutError (the rollout errors) where MathRubric scores it 0."""

    async def correct_answer(self, parser, completion, answer, **kwargs) -> float:
        """1.0 when the boxed answer equals the reference (math-verify), else 0.0; TimeoutError when math-verify
        runs past timeout_seconds (timed in the worker process, so waiting in its queue does not count)."""
        response = parser.parse_answer(completion) or ""
        fast = plain_verdict(response, str(answer))
        if fast is not None:
            return fast
        if len(response) > self.max_verify_chars:
            self.logger.warning(
                f"Skipping math verification: parsed response too long "
                f"({len(response)} chars > {self.max_verify_chars} limit)"
            )
            return 0.0
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(
            self.executor,
            verify_timed,
            response,
            answer,
            int(self.timeout_seconds),
        )
        try:
            reward, elapsed = await asyncio.wait_for(work, timeout=self.HARD_TIMEOUT_SECONDS)
        except TimeoutError:
            raise TimeoutError(
                f"math-verify did not finish within the rubric's hard limit of {self.HARD_TIMEOUT_SECONDS:g} s: "
                "the answer was not judged (not scored 0)"
            ) from None
        except Exception as e:  # as MathRubric: a failed verification (a broken worker pool) scores 0
            self.logger.warning(f"Math verification failed: {e}. response={response[:200]!r}")
            return 0.0
        if reward == 0.0 and elapsed >= self.timeout_seconds:
            # math-verify scores its own timeout 0: past the limit, a 0 is no verdict.
            raise TimeoutError(
                f"math-verify did not finish within {self.timeout_seconds:g} s (it took {elapsed:.1f} s in the "
                "rubric's worker process): the answer was not judged (not scored 0)"
            )
        return reward


def boxed_readable(text: str) -> str:
    """The last \\boxed{} answer, its everyday spellings made readable for math-verify ('' for none)."""
    return readable(vf.extract_boxed_answer(text, strict=True) or "")


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

    parser = vf.Parser(extract_fn=boxed_readable)

    def boxed_answer(completion, parser) -> float:
        """Format signal (weight 0): did the reply contain a \\boxed{} answer?"""
        return 1.0 if parser.parse_answer(completion) else 0.0

    rubric = NumericRubric(parser=parser)  # correct_answer, weight 1
    rubric.add_reward_func(boxed_answer, weight=0.0)
    return vf.SingleTurnEnv(
        dataset=dataset, eval_dataset=eval_dataset, system_prompt=system_prompt, parser=parser, rubric=rubric
    )
