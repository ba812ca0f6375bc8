"""Numeric and math answers (GSM8K, MATH style) as a classic verifiers environment.

The model reasons, then puts its final answer in \\boxed{...}. The reward is 1.0 when
that answer equals the reference by math-verify, the parser verifiers ships for math
(``vf.MathRubric``, run in its worker process): "51", "51.0" and "1{,}000" match 51 and
1000, "\\frac{1}{2}" and ".5" match 0.5, while "51.4" or "2\\pi" never match 51 or 2.
Two plain rationals (51, 0.0000672, 14/3) are compared exactly, never by math-verify's
6-place rounding; the spellings math-verify misreads (90°, 2\\,220, 3 sqrt(5), 9.) are
rewritten to ones it reads first (``readable``). A second, zero-weight metric records whether
a \\boxed{} answer was given. A math-verify timeout errors the rollout (TimeoutError), it is never scored 0.

An answer held as a list is read as one (``answer_list``: a one-element list unwrapped). A row with several
answers (a cell listing several, or MULTIPLE_COLUMN saying one text holds several: OlympiadBench's '1,3') is
paid when the reply's last run of boxes gives every one of them in any order, each as often as the gold does
(``pair_up``: one dropped, one added or a repeated value dropped earns 0; a tuple is never read as an interval);
its prompt says to give them in one box, separated by commas. A row's unit (UNIT_COLUMN) is said in the prompt,
and accepted after the value, never required (``without_unit``).

Written for verifiers 0.3.x (`import verifiers as vf`, `load_environment`).
"""

from __future__ import annotations

import ast
import asyncio
import json
import re
import time
from collections.abc import Callable
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
# Optional columns, read only where the dataset has them (None: never): a flag saying the row has several answers
# that must all be given (OlympiadBench's is_multiple_answer; a cell listing several answers says so itself), and
# the answer's unit (OlympiadBench's unit). The prompt then says how to write several answers and the unit.
MULTIPLE_COLUMN = "is_multiple_answer"
UNIT_COLUMN = "unit"

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
    """The final answer of a reference: GSM8K answers end with '#### N' (commas dropped); math mode's $ dropped."""
    text = str(raw).strip()
    if "####" in text:
        text = text.rsplit("####", 1)[1].strip().replace(",", "")
    return readable(_MATH_DOLLARS.sub("", text))


# -- answers held as lists, several answers, units (the same code in classic-numeric) -------------------------

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


def split_answers(text: str) -> list[str]:
    """The answers of a text that lists several, split at the commas outside brackets and braces: '1, 3' ->
    ['1', '3'], '(1,2), (3,4)' -> ['(1,2)', '(3,4)']; a tuple, an interval or a set stays one answer."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def several_flag(value) -> bool | None:
    """A MULTIPLE_COLUMN value as a flag (True, "true", "yes", 1); None where the row gives none."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        return value.strip().casefold() in ("true", "yes", "y", "1")
    return bool(value)


# Math mode's $ around an answer ('$69$,$84$'); an escaped \$ is a dollar sign and stays.
_MATH_DOLLARS = re.compile(r"(?<!\\)\$")


def reference_of(raw, several: bool | None = None) -> tuple[str, list[str]]:
    """(the reference answer as compared, its several answers: [] for one) of an answer cell: a one-element list
    unwrapped; a cell listing several answers, or one text the row says holds several (``several``, from
    MULTIPLE_COLUMN), split into its answers and joined again with ', '."""
    items = [answer for answer in (reference_answer(item) for item in answer_list(raw)) if answer]
    if len(items) > 1 or (several and items):
        parts = [part for item in items for part in split_answers(item)]
        if len(parts) > 1:
            return ", ".join(parts), parts
    return (items[0] if items else ""), []


def answer_instructions(answers: list[str], unit: str | None) -> str:
    """What the prompt adds for a row with several answers or a unit: how to write them ('' for neither)."""
    said = []
    if len(answers) > 1:
        said.append("This problem has several answers: give all of them in one \\boxed{}, separated by commas.")
    if unit:
        said.append(f"The answer is in {unit}: put its value in \\boxed{{}}; writing the unit is optional.")
    return " ".join(said)


_TEXT_MACRO = re.compile(r"\\(?:text|textrm|mathrm|mbox|operatorname)\s*\{([^{}]*)\}")


def without_unit(answer: str, unit: str | None) -> str:
    """The answer with the row's unit after it dropped ('30 km/h', '30\\text{ km/h}' -> '30' for km/h, also a
    plural 'minutes' for minute): the unit is optional. A unit without letters (%, ^{\\circ}) is math-verify's."""
    flat = _MATH_DOLLARS.sub("", _TEXT_MACRO.sub(r"\1", str(unit or ""))).strip()
    if not re.search(r"[A-Za-z]", flat):
        return answer
    letters = r"\s*".join(re.escape(ch) for ch in flat.replace(" ", "").removesuffix("s"))
    tail = re.compile(r"(?:\\[,;:! ]|~|\s)*(?:" + letters + r")s?\s*\.?$", re.I)
    text = _TEXT_MACRO.sub(r"\1", answer).strip()
    cut = tail.sub("", text).strip()
    return cut if cut and cut != text else answer


def boxed_contents(text: str) -> list[tuple[int, int, str]]:
    """Every \\boxed{...} of a text: (start, end, its content), braces balanced."""
    found, at = [], 0
    while (start := text.find("\\boxed{", at)) >= 0:
        depth, i = 1, start + len("\\boxed{")
        for j in range(i, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                found.append((start, j + 1, text[i:j].strip()))
                break
        else:
            break
        at = j + 1
    return found


# Between two boxes of one answer: only commas, 'and', spacing or math mode ('\boxed{1}, \boxed{3}').
_BETWEEN_BOXES = re.compile(r"(?:[\s,;$~]|\\quad|\\[,; ]|\band\b|\\text\{\s*and\s*\})*")


def boxed_run(reply: str | None) -> list[str]:
    """The answers of the reply's last run of boxes after any reasoning block: one box ('\\boxed{1, 3}') or several
    in a row ('\\boxed{1}, \\boxed{3}', 'and' or spacing between them); [] for none or an unclosed <think>."""
    if not reply or ("<think>" in reply and "</think>" not in reply):
        return []
    text = reply.rsplit("</think>", 1)[-1]
    boxes = boxed_contents(text)
    if not boxes:
        return []
    run = [boxes[-1]]
    for box in reversed(boxes[:-1]):
        if not _BETWEEN_BOXES.fullmatch(text[box[1] : run[0][0]]):
            break
        run.insert(0, box)
    return [content for _, _, content in run if content]


def _plain_text(text: str) -> str:
    """An answer's text as written, without what never changes its value: \\left, \\right, math mode's $ and spacing."""
    return " ".join(_MATH_DOLLARS.sub("", re.sub(r"\\left\s*|\\right\s*", "", text)).split())


def _brackets(text: str) -> tuple[str, str] | None:
    """The pair of brackets around the whole answer ('(' and ']' for (0, 3]), else None."""
    if len(text) < 2 or text[0] not in "([" or text[-1] not in ")]":
        return None
    depth = 0
    for i, ch in enumerate(text):
        depth += 1 if ch in "([{" else -1 if ch in ")]}" else 0
        if depth == 0 and i < len(text) - 1:
            return None
    return text[0], text[-1]


def quick_verdict(given: str, gold: str) -> float | None:
    """The verdict before math-verify, else None: 0.0 for an empty answer; 1.0 for the gold's own text (spacing,
    \\left/\\right and $ aside); 0.0 where brackets around the whole answer differ from the gold's (a tuple or
    list (1, 3) is no interval [1, 3]), or where the gold is one bracketed answer and the reply goes on past its
    closing bracket ('(4,5,7)+1', which math-verify reads as the tuple); two plain rationals exactly (plain_verdict)."""
    a, b = _plain_text(given), _plain_text(gold)
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    ours, theirs = _brackets(a), _brackets(b)
    if theirs and ((ours and ours != theirs) or (not ours and a[0] == b[0])):
        return 0.0
    return plain_verdict(a, b)


def pair_up(given: list[str], gold: list[str], same: Callable[[str, str], float]) -> float:
    """1.0 when the answers given are the gold answers in any order, each gold answer met by its own answer (a
    value the gold repeats must be given as often; one more or one fewer is wrong), else 0.0. ``same(given,
    gold)`` compares one pair; pairs of the same text are matched first, so math-verify reads only the rest."""
    if not given or len(given) != len(gold):
        return 0.0
    left, unread = list(gold), []
    for answer in given:
        k = next((k for k, g in enumerate(left) if _plain_text(g) == _plain_text(answer)), None)
        if k is None:
            unread.append(answer)
        else:
            del left[k]
    for answer in unread:
        k = next((k for k, g in enumerate(left) if same(answer, g) == 1.0), None)
        if k is None:
            return 0.0
        del left[k]
    return 1.0


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
    return dataset.map(to_row, remove_columns=dataset.column_names)


def to_row(row: dict) -> dict:
    """A row as the environment holds it: the prompt (how to write several answers and the unit said), the
    reference answer, and in info its several answers ([] for one) and its unit."""
    answer, answers = reference_of(row[ANSWER_COLUMN], several_flag(row.get(MULTIPLE_COLUMN or "")))
    unit = str(row.get(UNIT_COLUMN or "") or "").strip() or None
    said = answer_instructions(answers, unit)
    question = prompt_text(row) + (f"\n\n{said}" if said else "")
    return {"question": question, "answer": answer, "info": {"answers": answers, "unit": unit}}


def verify_answers_timed(given: list[str], gold: list[str], timeout_seconds: int) -> tuple[float, bool]:
    """Several answers against several golds in any order (pair_up), in the rubric's worker process: each pair by
    quick_verdict, else math-verify. (the verdict, whether a math-verify call ran out of time)."""
    ran_out = False

    def same(a: str, b: str) -> float:
        nonlocal ran_out
        fast = quick_verdict(a, b)
        if fast is not None:
            return fast
        reward, elapsed = verify_timed(a, b, timeout_seconds)
        ran_out = ran_out or (reward == 0.0 and elapsed >= timeout_seconds)
        return reward

    return pair_up(given, gold, same), ran_out


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
        info = kwargs.get("info") or {}
        info = json.loads(info) if isinstance(info, str) else info
        answers, unit = list(info.get("answers") or []), info.get("unit")
        if len(answers) > 1:
            return await self.several_answers(completion, answers, unit)
        response = readable(without_unit(parser.parse_answer(completion) or "", unit))
        fast = quick_verdict(response, str(answer))
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

    async def several_answers(self, completion, answers: list[str], unit: str | None) -> float:
        """Several answers: the reply's last run of boxes, split at its commas, paired with the gold answers in any
        order (pair_up) in the rubric's worker process; TimeoutError when a math-verify call ran out of time."""
        text = completion if isinstance(completion, str) else str((completion or [{}])[-1].get("content") or "")
        given = [readable(without_unit(part, unit)) for part in split_answers(", ".join(boxed_run(text)))]
        loop = asyncio.get_running_loop()
        work = loop.run_in_executor(self.executor, verify_answers_timed, given, answers, int(self.timeout_seconds))
        try:
            reward, ran_out = await asyncio.wait_for(work, timeout=self.HARD_TIMEOUT_SECONDS)
        except TimeoutError:
            raise TimeoutError(
                f"math-verify did not finish within the rubric's hard limit of {self.HARD_TIMEOUT_SECONDS:g} s: "
                "the answers were not judged (not scored 0)"
            ) from None
        if reward == 0.0 and ran_out:
            raise TimeoutError(
                f"math-verify did not finish within {self.timeout_seconds:g} s on one of the answers: "
                "the answers were not judged (not scored 0)"
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
