"""Numeric and math answers (GSM8K, MATH style) as a verifiers v1 taskset.

The model reasons, then puts its final answer in \\boxed{...}. The reward is 1.0 when that
answer equals the reference by math-verify, called as verifiers' own
``vf.verify_boxed_math_answer`` calls it (``math_verify_boxed``): "51", "51.0" and "1{,}000" match 51 and 1000,
"\\frac{1}{2}" and ".5" match 0.5, while "51.4" or "2\\pi" never match 51 or 2. Two plain
rationals (51, 0.0000672, 14/3) are compared exactly, never by math-verify's 6-place rounding; the spellings
math-verify misreads (90°, 2\\,220, 3 sqrt(5), 9.) are rewritten to ones it reads first (``readable``).
A metric records whether a \\boxed{} answer was given at all. `validate` checks every
reference answer parses, so `vf-validate` catches broken rows before any model runs.
math-verify gets MATH_TIMEOUT_SECONDS of CPU time per answer: a timeout errors the rollout, it is never scored 0.

An answer held as a list is read as one (``answer_list``: a one-element list unwrapped). A row with several
answers (a cell listing several, or MULTIPLE_COLUMN saying one text holds several: OlympiadBench's '1,3') is
paid when the reply's last run of boxes gives every one of them in any order, each as often as the gold does
(``pair_up``: one dropped, one added or a repeated value dropped earns 0; a tuple is never read as an interval);
its prompt says to give them in one box, separated by commas. A row's unit (UNIT_COLUMN) is said in the prompt,
and accepted after the value, never required (``without_unit``).

Written for verifiers >= 0.4 (`import verifiers.v1 as vf`): the module exports
exactly one Taskset subclass through `__all__`; there is no `load_environment`.
"""

from __future__ import annotations

import ast
import json
import logging
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path

import verifiers.v1 as vf
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
MATH_TIMEOUT_SECONDS = 5
"""CPU seconds math-verify may spend on one answer (parse and verify together). Past it the answer is not judged:
the reward raises TimeoutError (the rollout errors), it is never scored 0."""

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


class _OutOfCpuTime(BaseException):
    """Raised by the SIGVTALRM handler: a BaseException, so math-verify's and sympy's `except Exception` let it by."""


def _no_disabled_timeout_notice(record: logging.LogRecord) -> bool:
    """Drop math-verify's notice that its own (wall-clock) timeout is off: math_verify_boxed bounds it instead."""
    return not str(record.msg).startswith("Timeout is disabled")


for _name in ("math_verify.parser", "math_verify.grader"):
    _logger = logging.getLogger(_name)
    if not any(getattr(f, "__name__", None) == _no_disabled_timeout_notice.__name__ for f in _logger.filters):
        _logger.addFilter(_no_disabled_timeout_notice)


def cpu_limited(work: Callable[[], float], seconds: float) -> float:
    """work() given at most `seconds` of this process's CPU time (ITIMER_VIRTUAL: user time of all its threads), so a
    busy machine never eats the limit the way a wall-clock one (math-verify's own SIGALRM) does. Past it:
    TimeoutError. Signal handlers can be set on the main thread only: on any other thread work() runs without a
    time limit, as math-verify did there before."""
    if not seconds or seconds <= 0 or threading.current_thread() is not threading.main_thread():
        return work()  # off the main thread no signal handler can be set: no time limit there, as before
    state = {"armed": True, "fired": False}

    def on_limit(signum, frame):
        if state["armed"]:
            state["fired"] = True
            raise _OutOfCpuTime

    previous_handler = signal.signal(signal.SIGVTALRM, on_limit)
    previous_timer = signal.setitimer(signal.ITIMER_VIRTUAL, seconds)  # one shot: it fires at most once
    started = time.process_time()
    result = 0.0
    try:
        try:
            result = work()
        finally:
            state["armed"] = False
    except _OutOfCpuTime:
        pass
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, signal.SIG_DFL if previous_handler is None else previous_handler)
        if previous_timer[0] > 0:  # someone else's timer was running: it goes on with what is left of it
            left = max(previous_timer[0] - (time.process_time() - started), 1e-6)
            signal.setitimer(signal.ITIMER_VIRTUAL, left, previous_timer[1])
    if state["fired"]:  # also when code inside swallowed _OutOfCpuTime (a bare except) and went on
        raise TimeoutError(
            f"math-verify did not finish within {seconds:g} s of CPU time: the answer was not judged (not scored 0)"
        )
    return result


def math_verify_boxed(response: str | None, answer: str, *, timeout_seconds: float = MATH_TIMEOUT_SECONDS) -> float:
    """verifiers' ``vf.verify_boxed_math_answer`` (the same extraction and the same verdicts), its time limit CPU time
    (cpu_limited) instead of math-verify's wall-clock one, and a timeout raised as TimeoutError instead of scored 0."""
    if not response or ("<think>" in response and "</think>" not in response):
        return 0.0
    prediction = vf.extract_boxed_answer(response.rsplit("</think>", 1)[-1], strict=True).strip()
    gold = (vf.extract_boxed_answer(answer, strict=True) or answer).strip()
    if not prediction or not gold:
        return 0.0

    def judge() -> float:
        # math-verify expects both sides as boxed math expressions; None turns its own signal timeouts off.
        try:
            parsed_gold = parse(f"\\boxed{{{gold}}}", parsing_timeout=None)
            parsed_prediction = parse(f"\\boxed{{{prediction}}}", parsing_timeout=None)
            return float(verify(parsed_gold, parsed_prediction, timeout_seconds=None))
        except MathVerifyTimeout as err:  # never raised with its timeouts off; a timeout all the same
            raise TimeoutError(f"math-verify timed out: the answer was not judged (not scored 0): {err}") from err
        except Exception:  # noqa: BLE001 - malformed answers score zero
            return 0.0

    return cpu_limited(judge, timeout_seconds)


def same_value(given: str, gold: str) -> float:
    """One answer against one gold answer: quick_verdict (the gold's own text, brackets, plain rationals), else
    math-verify. Raises TimeoutError when math-verify runs past MATH_TIMEOUT_SECONDS of CPU."""
    fast = quick_verdict(given, gold)
    if fast is not None:
        return fast
    return math_verify_boxed(f"\\boxed{{{given}}}", gold, timeout_seconds=MATH_TIMEOUT_SECONDS)


def same_answer(reply: str | None, gold: str, answers: list[str] | None = None, unit: str | None = None) -> float:
    """The reply's boxed answer (its everyday spellings made readable, the row's unit after it dropped) against the
    reference. Several answers (``answers``): the last run of boxes, split at its commas, paired with them in any
    order (pair_up). Raises TimeoutError when math-verify runs past MATH_TIMEOUT_SECONDS of CPU."""
    if answers and len(answers) > 1:
        given = [readable(without_unit(part, unit)) for part in split_answers(", ".join(boxed_run(reply)))]
        return pair_up(given, list(answers), same_value)
    return same_value(readable(without_unit(final_boxed(reply), unit)), gold)


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
    """The reference answer: a number or a math expression (several answers: joined with ', ')."""
    answers: list[str] = []
    """Several answers that must all be given, in any order ([] for one answer)."""
    unit: str | None = None
    """The answer's unit, optional in the reply."""


class V1NumericTask(vf.Task[V1NumericData]):
    @vf.reward(weight=1.0)
    async def correct_answer(self, trace: vf.Trace) -> float:
        """1.0 when the boxed answer equals the reference (math-verify), else 0.0."""
        if final_boxed(trace.last_reply) == "":
            return 0.0
        return same_answer(trace.last_reply, self.data.answer, self.data.answers, self.data.unit)

    @vf.metric
    async def boxed_answer(self, trace: vf.Trace) -> float:
        """Did the reply contain a \\boxed{} answer at all?"""
        return 1.0 if final_boxed(trace.last_reply) else 0.0

    async def validate(self, runtime) -> bool:
        """The reference answer must be reachable: the reference itself, boxed, scores 1."""
        return same_answer(f"\\boxed{{{self.data.answer}}}", self.data.answer, self.data.answers, self.data.unit) == 1.0


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
            answer, answers = reference_of(row[ANSWER_COLUMN], several_flag(row.get(MULTIPLE_COLUMN or "")))
            unit = str(row.get(UNIT_COLUMN or "") or "").strip() or None
            said = answer_instructions(answers, unit)
            yield V1NumericTask(
                V1NumericData(
                    id=own_id(row) or str(i),
                    prompt=prompt_text(row) + (f"\n\n{said}" if said else ""),
                    system_prompt=SYSTEM_PROMPT,
                    answer=answer,
                    answers=answers,
                    unit=unit,
                ),
                self.config.task,
            )


__all__ = ["V1NumericTaskset"]
