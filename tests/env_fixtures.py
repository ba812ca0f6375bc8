"""Write small test environments and datasets into a tmp folder (classic and v1)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

ROWS = [
    {"question": "Ada has 3 bags with 12 apples each and eats 5. How many are left?", "answer": "31"},
    {"question": "Ben reads 14 pages a day for 6 days. How many pages?", "answer": "84"},
    {"question": "A box holds 9 rows of 7 coins, 4 are lost. How many remain?", "answer": "59"},
    {"question": "Caro has 250 stickers and gives 1 away. How many now?", "answer": "249"},
]


def write_dataset(folder: Path, rows: list[dict] | None = None, gsm8k: bool = False) -> Path:
    path = folder / "data.jsonl"
    with path.open("w") as f:
        for row in rows or ROWS:
            row = dict(row)
            if gsm8k:
                row["answer"] = f"Some reasoning.\n#### {row['answer']}"
            f.write(json.dumps(row) + "\n")
    return path


_CLASSIC_HEAD = """
import verifiers as vf
from datasets import load_dataset

SYSTEM = "Think, then give only the number inside <answer>...</answer>."

def _dataset(dataset_path):
    return load_dataset("json", data_files=dataset_path, split="train")
"""


def write_module(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(body).lstrip())
    return path


def classic_env(folder: Path, name: str, funcs: str, rubric: str, env: str = "vf.SingleTurnEnv") -> Path:
    """A classic env: XMLParser(['answer']) + the given reward functions and Rubric(...) call."""
    body = (
        _CLASSIC_HEAD
        + textwrap.dedent(funcs)
        + f"""

def load_environment(dataset_path="data.jsonl", **kwargs):
    parser = vf.XMLParser(["answer"], answer_field="answer")
    rubric = {rubric}
    return {env}(dataset=_dataset(dataset_path), system_prompt=SYSTEM, parser=parser, rubric=rubric, **kwargs)
"""
    )
    return write_module(folder, name, body)


EXACT = """
def exact_match(completion, answer, parser) -> float:
    got = parser.parse_answer(completion)
    return 1.0 if got is not None and got.strip() == str(answer).strip() else 0.0
"""

# A correct single-turn env that exercises every injection path verifiers offers.
RICH = (
    EXACT
    + """
async def async_format(completion, parser) -> float:
    return 1.0 if parser.parse_answer(completion) is not None else 0.0

def uses_question(question, completion, **kwargs) -> float:
    # an extra dataset column injected by name
    return 1.0 if question else 0.0

def diversity(completions, **kwargs) -> list[float]:
    # a group reward function: scored with score_group
    texts = [str(c[-1].content if hasattr(c[-1], "content") else c[-1]["content"]) for c in completions]
    return [1.0 / texts.count(t) for t in texts]
"""
)
RICH_RUBRIC = "vf.Rubric(funcs=[exact_match, async_format, uses_question, diversity], weights=[1.0, 0.2, 0.0, 0.1], parser=parser)"

BROKEN = (
    EXACT
    + """
import math, time

def raises(completion, answer) -> float:
    text = completion[-1].content or ""
    return 1.0 / len(text.split("<answer>")[2])   # IndexError on most completions

def hangs(completion) -> float:
    time.sleep(60)
    return 0.0

def nan_reward(completion) -> float:
    return math.nan

async def hangs_async(completion) -> float:
    import asyncio
    await asyncio.sleep(60)
    return 0.0
"""
)
BROKEN_RUBRIC = (
    "vf.Rubric(funcs=[exact_match, raises, hangs, nan_reward, hangs_async], "
    "weights=[1.0, 0.1, 0.1, 0.1, 0.1], parser=parser)"
)

# GSM8K-style rows: the gold number follows '####' in the answer text.
EXACT_HASH = """
def exact_match(completion, answer, parser) -> float:
    got = parser.parse_answer(completion)
    return 1.0 if got is not None and got.strip() == answer.split("####")[-1].strip() else 0.0
"""

LENIENT = """
def substring_match(completion, answer) -> float:
    text = completion[-1].content or ""
    return 1.0 if str(answer) in text else 0.0
"""
LENIENT_RUBRIC = "vf.Rubric(funcs=[substring_match], parser=parser)"

NEVER_MATCHES = """
def never(completion, answer, parser) -> float:
    got = parser.parse_answer(completion)
    return 1.0 if got == "ANSWER: " + str(answer) else 0.0
"""
NEVER_RUBRIC = "vf.Rubric(funcs=[never], parser=parser)"


def multiturn_env(folder: Path, name: str = "mt_env") -> Path:
    """A classic MultiTurnEnv: the env asks to confirm once, the reward reads the last answer."""
    body = (
        _CLASSIC_HEAD
        + EXACT
        + """

class ConfirmEnv(vf.MultiTurnEnv):
    async def env_response(self, messages, state, **kwargs):
        return [{"role": "user", "content": "Are you sure? Repeat the answer."}]


def load_environment(dataset_path="data.jsonl", **kwargs):
    parser = vf.XMLParser(["answer"], answer_field="answer")
    rubric = vf.Rubric(funcs=[exact_match], parser=parser)
    return ConfirmEnv(dataset=_dataset(dataset_path), system_prompt=SYSTEM, parser=parser, rubric=rubric, max_turns=2)
"""
    )
    return write_module(folder, name, body)


def tool_env(folder: Path, name: str = "tool_env") -> Path:
    """A classic ToolEnv with a calculator tool."""
    body = (
        _CLASSIC_HEAD
        + EXACT
        + '''

def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    if len(expression) > 100 or "**" in expression or not set(expression) <= set("0123456789+-*/(). "):
        return "error: only numbers, + - * / and parentheses (at most 100 characters)"
    try:
        return str(eval(expression, {"__builtins__": {}}))
    except Exception as err:
        return f"error: {err}"


def load_environment(dataset_path="data.jsonl", **kwargs):
    parser = vf.XMLParser(["answer"], answer_field="answer")
    rubric = vf.Rubric(funcs=[exact_match], parser=parser)
    return vf.ToolEnv(dataset=_dataset(dataset_path), system_prompt=SYSTEM, parser=parser, rubric=rubric,
                      tools=[calculator], max_turns=4)
'''
    )
    return write_module(folder, name, body)


_V1_HEAD = """
import json, re
from pathlib import Path
import verifiers.v1 as vf

TAG = re.compile(r"<answer>\\s*(.*?)\\s*</answer>", re.S)


class Data(vf.TaskData):
    answer: str


class Config(vf.TasksetConfig):
    dataset_path: str = "data.jsonl"
"""

_V1_TAIL = """

class Tasks(vf.Taskset[T, Config]):
    def load(self):
        rows = [json.loads(l) for l in Path(self.config.dataset_path).read_text().splitlines() if l.strip()]
        return [T(Data(prompt=r["question"], system_prompt="Answer inside <answer>...</answer>.", answer=r["answer"]),
                  self.config.task) for r in rows]


__all__ = ["Tasks"]
"""

V1_CORRECT = """
class T(vf.Task[Data]):
    @vf.reward(weight=1.0)
    async def exact(self, trace: vf.Trace) -> float:
        found = TAG.findall(trace.last_reply)
        return 1.0 if len(found) == 1 and found[0] == self.data.answer else 0.0
"""

V1_BROKEN = """
class T(vf.Task[Data]):
    @vf.reward(weight=1.0)
    async def exact(self, trace: vf.Trace) -> float:
        found = TAG.findall(trace.last_reply)
        return 1.0 if found and found[0] == self.data.answer else 0.0

    @vf.reward(weight=0.5)
    async def crashes(self, trace: vf.Trace) -> float:
        return {"a": 1}["missing"]
"""

V1_LENIENT = """
class T(vf.Task[Data]):
    @vf.reward(weight=1.0)
    async def contains(self, trace: vf.Trace) -> float:
        return 1.0 if self.data.answer in trace.last_reply else 0.0
"""


def v1_env(folder: Path, name: str, task: str) -> Path:
    return write_module(folder, name, _V1_HEAD + task + _V1_TAIL)
