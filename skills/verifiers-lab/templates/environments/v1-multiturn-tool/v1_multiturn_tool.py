"""Numeric questions solved with a calculator tool, as a verifiers v1 taskset.

The model may call `calculate(expression)` as often as it needs (up to the task's
`max_turns` model turns), then gives the final number in \\boxed{...}. The reward is 1.0
when that number equals the reference answer exactly (51 = 51.0, 1/2 = \\frac{1}{2} = .5),
else 0.0; an answer that is more than one number (2\\pi) scores 0. Two metrics count the
tool calls (`total_tool_calls`, `calculate_calls`), so an eval shows whether the tool is used.

The tool is a `vf.Toolset`: verifiers launches it per rollout as a small MCP server
(`python -m v1_multiturn_tool`, the block at the end of this module) and advertises
`calculate` to the model. It is a safe arithmetic evaluator (no shell, no network), so the
taskset is self-contained after install. `validate` checks every reference answer is one number.

Written for verifiers >= 0.4 (`import verifiers.v1 as vf`): the module exports
exactly one Taskset subclass through `__all__`; there is no `load_environment`.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import verifiers.v1 as vf

# Column mapping: which dataset columns hold the question and the reference answer.
# scripts/new_env.py fills these in from `inspect_dataset --json`.
# QUESTION_COLUMN may be a list of columns, joined in order with a blank line.
QUESTION_COLUMN = "question"
ANSWER_COLUMN = "answer"

SYSTEM_PROMPT = (
    "Solve the problem. Use the calculate tool for arithmetic. When you are done, "
    "give the final answer as a single number inside \\boxed{}, for example \\boxed{42}."
)
TOOL_NAME = "calculate"

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
# v1_multiturn_tool_data/ once installed from a wheel (pyproject.toml maps data/ there, so two packages never share one).
DATA_DIRS = (Path(__file__).resolve().parent / "data", Path(__file__).resolve().parent / "v1_multiturn_tool_data")
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


def read_rows(config: V1MultiturnToolConfig) -> Iterator[dict]:
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


def final_boxed(reply: str | None) -> str | None:
    """The last \\boxed{} answer of the reply, or None."""
    return vf.extract_boxed_answer(reply or "", strict=True) or None


class CalculatorToolset(vf.Toolset[vf.ToolsetConfig]):
    TOOL_PREFIX = None  # advertise the tool as plain `calculate`

    @vf.tool
    def calculate(self, expression: str) -> str:
        """Evaluate an arithmetic expression such as "(12 + 3) * 4 / 5" and return the result.

        Args:
            expression: numbers combined with + - * / // % ** and parentheses.
        """
        return calculate(expression)


class V1MultiturnToolData(vf.TaskData):
    answer: str
    """The reference number."""


class V1MultiturnToolTaskConfig(vf.TaskConfig):
    tools: vf.ToolsetConfig = vf.ToolsetConfig()
    max_turns: int = 6
    """Model turns per rollout, tool calls included."""


class V1MultiturnToolTask(vf.Task[V1MultiturnToolData, vf.State, V1MultiturnToolTaskConfig]):
    @classmethod
    def toolsets(cls, config: V1MultiturnToolTaskConfig) -> list[vf.Toolset]:
        return [CalculatorToolset(config.tools)]

    @vf.stop
    def turn_limit(self, trace: vf.Trace) -> bool:
        """Stop after max_turns model turns."""
        return trace.num_turns >= self.config.max_turns

    @vf.reward(weight=1.0)
    async def correct_answer(self, trace: vf.Trace) -> float:
        """1.0 when the final boxed number equals the reference number exactly."""
        given = parse_number(final_boxed(trace.last_reply))
        gold = parse_number(self.data.answer)
        return 1.0 if given is not None and gold is not None and given == gold else 0.0

    @vf.metric
    async def total_tool_calls(self, trace: vf.Trace) -> float:
        """Tool calls the model made, all tools together."""
        return float(sum(len(m.tool_calls or []) for m in trace.assistant_messages))

    @vf.metric
    async def calculate_calls(self, trace: vf.Trace) -> float:
        """Calls of the calculate tool."""
        calls = (c for m in trace.assistant_messages for c in m.tool_calls or [])
        return float(sum(1 for c in calls if c.name.rsplit(".", 1)[-1] == TOOL_NAME))

    async def validate(self, runtime) -> bool:
        """The reference answer must be one number, or no reply can ever match it."""
        return parse_number(self.data.answer) is not None


class V1MultiturnToolConfig(vf.TasksetConfig):
    task: V1MultiturnToolTaskConfig = V1MultiturnToolTaskConfig()
    dataset_name: str | None = None
    dataset_config: str | None = None
    dataset_split: str = "train"
    dataset_path: str | None = None
    """A .jsonl/.json/.csv/.parquet file (text ones also .gz): a path, or a file in the package's data/ folder;
    wins over dataset_name. Name one of the two: there is no default dataset."""
    num_examples: int = -1


class V1MultiturnToolTaskset(vf.Taskset[V1MultiturnToolTask, V1MultiturnToolConfig]):
    def load(self) -> Iterator[V1MultiturnToolTask]:
        for i, row in enumerate(read_rows(self.config)):
            yield V1MultiturnToolTask(
                V1MultiturnToolData(
                    id=own_id(row) or str(i),
                    prompt=prompt_text(row),
                    system_prompt=SYSTEM_PROMPT,
                    answer=reference_answer(row[ANSWER_COLUMN]),
                ),
                self.config.task,
            )


__all__ = ["V1MultiturnToolTaskset"]


if __name__ == "__main__":  # verifiers launches the tool server as `python -m v1_multiturn_tool`
    CalculatorToolset.run()
