"""Numeric questions solved with a calculator tool: a classic multi-turn ToolEnv.

The model may call `calculate(expression)` as often as it needs (up to
`max_turns` model turns), then gives the final number in \\boxed{...}. The reward
is 1.0 when that number equals the reference answer exactly (51 = 51.0, 1/2 =
\\frac{1}{2} = .5), else 0.0; an answer that is more than one number (2\\pi) scores 0. ToolEnv's
own zero-weight metrics count the tool calls, so an eval shows whether the tool is used.

The tool runs in-process (a safe arithmetic evaluator, no shell, no network), so
the environment is self-contained after install.

Written for verifiers 0.3.x (`import verifiers as vf`, `load_environment`).
"""

from __future__ import annotations

import ast
import operator
import re
from fractions import Fraction
from pathlib import Path

import verifiers as vf
from datasets import Dataset, load_dataset

# Column mapping: which dataset columns hold the question and the reference answer.
# scripts/new_env.py fills these in from `inspect_dataset --json`.
# QUESTION_COLUMN may be a list of columns, joined in order with a blank line.
QUESTION_COLUMN = "question"
ANSWER_COLUMN = "answer"

SYSTEM_PROMPT = (
    "Solve the problem. Use the calculate tool for arithmetic. When you are done, "
    "give the final answer as a single number inside \\boxed{}, for example \\boxed{42}."
)

_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}
MAX_EXPRESSION = 500  # characters of one calculator expression
MAX_BITS = 4096  # size of any number the calculator builds (about 1,200 digits): bounds its time
# "18 dollars", "18\\text{ dollars}", "\\$18", "50\\%": the units the numeric template also accepts
_TEXT = re.compile(r"\\(?:text|mathrm)\{\s*([^{}]*)\}")
_UNIT = re.compile(r"(?<=\d)\s*(?!pi\b)[A-Za-z]{2,}(?:\s+[A-Za-z]{2,})?\s*$")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:/\d+)?")
_LATEX_FRACTION = re.compile(r"\\d?frac\{(-?\d+)\}\{(\d+)\}")


def _bits(value: Fraction) -> int:
    """Size of a number in bits (numerator and denominator), what its arithmetic costs."""
    return abs(value.numerator).bit_length() + value.denominator.bit_length()


def _evaluate(node: ast.AST) -> Fraction:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return Fraction(str(node.value))
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and (right.denominator != 1 or abs(right) > 64):
            raise ValueError("exponent must be a whole number up to 64")
        if isinstance(node.op, ast.Pow) and _bits(left) * abs(right) > MAX_BITS:
            raise ValueError("result too large")
        value = Fraction(_OPERATORS[type(node.op)](left, right))
        if _bits(value) > MAX_BITS:
            raise ValueError("result too large")
        return value
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand))
    raise ValueError("only numbers, + - * / // % ** and parentheses are allowed")


def calculate(expression: str) -> str:
    """Evaluate an arithmetic expression such as "(12 + 3) * 4 / 5" and return the result.

    Args:
        expression: numbers combined with + - * / // % ** and parentheses.
    """
    if not isinstance(expression, str) or len(expression) > MAX_EXPRESSION:
        return f"error: the expression must be text of at most {MAX_EXPRESSION} characters"
    try:
        value = _evaluate(ast.parse(expression.replace(",", ""), mode="eval"))
    except ZeroDivisionError:
        return "error: division by zero"
    except (SyntaxError, ValueError, TypeError, OverflowError, RecursionError, MemoryError) as err:
        return f"error: {err}"
    return str(value.numerator) if value.denominator == 1 else f"{float(value):.10g}"


def parse_number(text: str | None) -> Fraction | None:
    """The number a short answer is, exactly (51, 51.0, .5, 1/2, \\frac{1}{2}, 1{,}000); None when the
    answer is anything more than one number (2\\pi, 51 or 52, x = 3)."""
    if text is None:
        return None
    cleaned = _UNIT.sub("", _TEXT.sub(r" \1", text)).replace("{,}", "").replace(",", "")
    cleaned = cleaned.replace("\\$", "").replace("$", "").replace("\\%", "").replace("%", "").strip()
    cleaned = _LATEX_FRACTION.sub(r"\1/\2", cleaned)
    if not _NUMBER.fullmatch(cleaned):
        return None
    try:
        return Fraction(cleaned)
    except (ValueError, ZeroDivisionError):
        return None


def reference_answer(raw) -> str:
    """The final number of a reference answer: GSM8K answers end with '#### N'."""
    text = str(raw)
    if "####" in text:
        text = text.rsplit("####", 1)[1]
    return text.strip().replace(",", "")


def prompt_text(row: dict) -> str:
    """The prompt: QUESTION_COLUMN, or its columns joined in order with a blank line."""
    columns = [QUESTION_COLUMN] if isinstance(QUESTION_COLUMN, str) else list(QUESTION_COLUMN)
    return "\n\n".join(str(row[c]) for c in columns if row[c] is not None and str(row[c]).strip())


# Data shipped inside the package travels with it: data/ beside this module (a checkout, pip install -e),
# classic_multiturn_tool_data/ once installed from a wheel (pyproject.toml maps data/ there, so two packages never share one).
DATA_DIRS = (Path(__file__).resolve().parent / "data", Path(__file__).resolve().parent / "classic_multiturn_tool_data")
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


def load_environment(
    dataset_name: str | None = None,
    dataset_config: str | None = None,
    dataset_split: str = "train",
    eval_split: str | None = None,
    dataset_path: str | None = None,
    eval_path: str | None = None,
    num_examples: int = -1,
    num_eval_examples: int = -1,
    max_turns: int = 6,
    system_prompt: str = SYSTEM_PROMPT,
) -> vf.Environment:
    """Build the environment. Name the data: dataset_path (and eval_path) for files, or dataset_name for a Hub dataset."""
    dataset = to_rows(read_dataset(dataset_name, dataset_config, dataset_split, dataset_path), num_examples)
    eval_dataset = None
    if eval_path or (eval_split and not dataset_path):
        eval_dataset = to_rows(
            read_dataset(dataset_name, dataset_config, eval_split or dataset_split, eval_path), num_eval_examples
        )

    parser = vf.Parser(extract_fn=lambda text: vf.extract_boxed_answer(text, strict=True))

    def correct_answer(completion, answer, parser) -> float:
        """1.0 when the final boxed number equals the reference number exactly."""
        given = parse_number(parser.parse_answer(completion))
        gold = parse_number(answer)
        return 1.0 if given is not None and gold is not None and given == gold else 0.0

    # ToolEnv adds its own zero-weight metrics (total_tool_calls, calculate_calls).
    rubric = vf.Rubric(funcs=[correct_answer], weights=[1.0], parser=parser)
    return vf.ToolEnv(
        tools=[calculate],
        max_turns=max_turns,
        dataset=dataset,
        eval_dataset=eval_dataset,
        system_prompt=system_prompt,
        parser=parser,
        rubric=rubric,
    )
