"""Small environments with one planted defect each, for the answer kinds test_reward probes.

Every environment is a classic module (verifiers 0.3.x) unless its name says v1; each reads
a JSON Lines file the test writes, and its reward reads the last \\boxed{} of the reply.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

HEAD = """
import json
import os
import re
import subprocess
import sys
import tempfile

import verifiers as vf
from datasets import load_dataset

LETTERS = "ABCDEFGHIJ"


def boxed(text):
    return vf.extract_boxed_answer(text or "", strict=True)


def build(dataset_path, reward, to_row=None, system="Answer inside \\\\boxed{}."):
    dataset = load_dataset("json", data_files=dataset_path, split="train")
    if to_row is not None:
        dataset = dataset.map(to_row, remove_columns=dataset.column_names)
    parser = vf.Parser(extract_fn=boxed)
    rubric = vf.Rubric(funcs=[reward], weights=[1.0], parser=parser)
    return vf.SingleTurnEnv(dataset=dataset, system_prompt=system, parser=parser, rubric=rubric)
"""

# name -> (reward function source, to_row source or None); load_environment is added below.
NUMERIC = {
    # the float gold "31.0" compared as a string: "31" never earns it
    "string_compare": (
        "def correct(completion, answer, parser):\n    return 1.0 if (parser.parse_answer(completion) or '').strip() == answer.strip() else 0.0\n",
        None,
    ),
    # int(float(x)) pays 31.4 for 31
    "truncating": (
        "def correct(completion, answer, parser):\n"
        "    try:\n        return 1.0 if int(float(parser.parse_answer(completion))) == int(float(answer)) else 0.0\n"
        "    except (TypeError, ValueError):\n        return 0.0\n",
        None,
    ),
    # float() rejects \\frac{1}{2}
    "float_compare": (
        "def correct(completion, answer, parser):\n"
        "    try:\n        return 1.0 if abs(float(parser.parse_answer(completion)) - float(answer)) < 1e-9 else 0.0\n"
        "    except (TypeError, ValueError):\n        return 0.0\n",
        None,
    ),
    # the first number in the box: \\boxed{2\\pi} pays gold 2
    "first_number": (
        "def correct(completion, answer, parser):\n"
        "    found = re.findall(r'-?\\d+(?:\\.\\d+)?', parser.parse_answer(completion) or '')\n"
        "    return 1.0 if found and float(found[0]) == float(answer) else 0.0\n",
        None,
    ),
}

CHOICE = {
    # a 0-based index key compared as it is, behind a prompt that letters its options
    "index_as_is": (
        "def correct(completion, answer, parser):\n    return 1.0 if (parser.parse_answer(completion) or '').strip() == answer else 0.0\n",
        "def to_row(row):\n"
        "    listed = '\\n'.join(f'{LETTERS[i]}) {c}' for i, c in enumerate(row['choices']))\n"
        "    return {'question': row['question'] + '\\n\\n' + listed, 'answer': str(row['key'])}\n",
    ),
    # a letter key behind numbered options
    "letter_numbered": (
        "def correct(completion, answer, parser):\n    return 1.0 if (parser.parse_answer(completion) or '').strip() == answer else 0.0\n",
        "def to_row(row):\n"
        "    listed = '\\n'.join(f'{i + 1}. {c}' for i, c in enumerate(row['choices']))\n"
        "    return {'question': row['question'] + '\\n\\n' + listed, 'answer': LETTERS[row['key']]}\n",
    ),
    # a 1-based key read as 0-based: the last option's key names no letter
    "one_based_read_as_zero": (
        "def correct(completion, answer, parser):\n"
        "    given = (parser.parse_answer(completion) or '').strip().upper()\n"
        "    return 1.0 if given in LETTERS and LETTERS.index(given) == int(answer) else 0.0\n",
        "def to_row(row):\n"
        "    listed = '\\n'.join(f'{LETTERS[i]}) {c}' for i, c in enumerate(row['choices']))\n"
        "    return {'question': row['question'] + '\\n\\n' + listed, 'answer': str(row['key'] + 1)}\n",
    ),
    # the prompt leaves the options out
    "no_options": (
        "def correct(completion, answer, parser):\n    return 1.0 if (parser.parse_answer(completion) or '').strip() == answer else 0.0\n",
        "def to_row(row):\n"
        "    return {'question': row['question'], 'answer': LETTERS[row['key']], 'info': {'choices': row['choices']}}\n",
    ),
    # the prompt lists the options in another order than the answer key counts them
    "relettered": (
        "def correct(completion, answer, parser):\n    return 1.0 if (parser.parse_answer(completion) or '').strip() == answer else 0.0\n",
        "def to_row(row):\n"
        "    listed = '\\n'.join(f'{LETTERS[i]}) {c}' for i, c in enumerate(reversed(row['choices'])))\n"
        "    return {'question': row['question'] + '\\n\\n' + listed, 'answer': LETTERS[row['key']],\n"
        "            'info': {'choices': row['choices']}}\n",
    ),
    # options that carry their own labels, labelled again: 'A) A) 21'
    "labelled_twice": (
        "def correct(completion, answer, parser):\n    return 1.0 if (parser.parse_answer(completion) or '').strip() == answer else 0.0\n",
        "def to_row(row):\n"
        "    own = [f'{LETTERS[i]}) {c}' for i, c in enumerate(row['choices'])]\n"
        "    listed = '\\n'.join(f'{LETTERS[i]}) {c}' for i, c in enumerate(own))\n"
        "    return {'question': row['question'] + '\\n\\n' + listed, 'answer': LETTERS[row['key']]}\n",
    ),
    # options that carry labels of their own, other than the ones they are shown with: 'A) B) 21'
    "relettered_own_labels": (
        "def correct(completion, answer, parser):\n    return 1.0 if (parser.parse_answer(completion) or '').strip() == answer else 0.0\n",
        "def to_row(row):\n"
        "    k = len(row['choices'])\n"
        "    own = [f'{LETTERS[(i + 1) % k]}) {c}' for i, c in enumerate(row['choices'])]\n"
        "    listed = '\\n'.join(f'{LETTERS[i]}) {c}' for i, c in enumerate(own))\n"
        "    return {'question': row['question'] + '\\n\\n' + listed, 'answer': LETTERS[row['key']]}\n",
    ),
    # the letter compared as written: \\text{B} and \\textbf{B} score 0
    "strict_letter": (
        "def correct(completion, answer, parser):\n    return 1.0 if (parser.parse_answer(completion) or '').strip().strip('()').upper() == answer else 0.0\n",
        "def to_row(row):\n"
        "    listed = '\\n'.join(f'{LETTERS[i]}) {c}' for i, c in enumerate(row['choices']))\n"
        "    return {'question': row['question'] + '\\n\\n' + listed, 'answer': LETTERS[row['key']]}\n",
    ),
}

# A code reward that runs the program and its tests in one file and pays exit status 0.
EXIT_CODE_REWARD = """
def correct(completion, answer, info, parser):
    program = parser.parse_answer(completion) or ""
    with tempfile.NamedTemporaryFile("w", suffix="_test.py", delete=False, dir=tempfile.gettempdir()) as f:
        f.write(program + "\\n\\n" + info["tests"] + "\\n")
    try:
        done = subprocess.run([sys.executable, f.name], capture_output=True, timeout=3)
    except subprocess.TimeoutExpired:
        return 0.0
    finally:
        os.unlink(f.name)
    return 1.0 if done.returncode == 0 else 0.0
"""
# A code reward that runs only the FIRST assert of the row (in a subprocess, passing when a marker printed after
# it shows up), and pays half for a program that fails it but compiles: partial credit for code that runs.
FIRST_ASSERT_REWARD = """
def correct(completion, answer, info, parser):
    program = parser.parse_answer(completion) or ""
    first = next(t for t in info["tests"].splitlines() if t.strip().startswith("assert"))
    try:
        compile(program, "<program>", "exec")
    except SyntaxError:
        return 0.0
    if not program.strip():
        return 0.0
    try:
        done = subprocess.run([sys.executable, "-c", program + "\\n" + first + "\\nprint('FIRST-ASSERT-OK')"],
                              capture_output=True, text=True, timeout=3)
    except subprocess.TimeoutExpired:
        return 0.0
    return 1.0 if "FIRST-ASSERT-OK" in done.stdout else 0.5
"""

# A code reward on yesterday's in-process harness (tests/inprocess_harness.py): the verdict is in the program's
# reach (frames, gc), and the program's own helpers and standard library are the ones the tests use.
INPROCESS_HARNESS_REWARD = """
sys.path.insert(0, {tests!r})
import inprocess_harness


async def correct(completion, answer, info, parser):
    program = parser.parse_answer(completion) or ""
    spec = {{"mode": "call", "tests": info["tests"], "entry_point": info["entry_point"]}}
    verdict = await inprocess_harness.run_tests(program, spec, timeout=3.0)
    return 1.0 if verdict["passed"] else 0.0
"""
CODE_TO_ROW = (
    "def to_row(row):\n"
    "    return {'question': row['prompt'], 'answer': row['solution'],\n"
    "            'info': {'tests': row['test'], 'entry_point': row['entry_point']}}\n"
)
GOLDLESS_CODE_TO_ROW = (
    "def to_row(row):\n"
    "    return {'question': row['prompt'], 'answer': '',\n"
    "            'info': {'tests': row['test'], 'entry_point': row['entry_point']}}\n"
)
NO_ANSWER_TO_ROW = "def to_row(row):\n    return {'question': row['question'], 'answer': ''}\n"


def code_parser_fn() -> str:
    return (
        "def extract_code(text):\n"
        "    blocks = re.findall(r'```(?:python)?\\n(.*?)```', text or '', re.S)\n"
        "    return blocks[-1] if blocks else (text or '')\n"
    )


def write_env(folder: Path, name: str, reward: str, to_row: str | None, code: bool = False) -> Path:
    body = HEAD + "\n" + textwrap.dedent(reward) + "\n" + (textwrap.dedent(to_row) if to_row else "") + "\n"
    if code:
        body += code_parser_fn()
        body += (
            "\n\ndef load_environment(dataset_path='data.jsonl'):\n"
            "    dataset = load_dataset('json', data_files=dataset_path, split='train')\n"
            "    dataset = dataset.map(to_row, remove_columns=dataset.column_names)\n"
            "    parser = vf.Parser(extract_fn=extract_code)\n"
            "    rubric = vf.Rubric(funcs=[correct], weights=[1.0], parser=parser)\n"
            "    return vf.SingleTurnEnv(dataset=dataset, system_prompt='Reply with Python code.', parser=parser, rubric=rubric)\n"
        )
    else:
        to = "to_row" if to_row else "None"
        body += f"\n\ndef load_environment(dataset_path='data.jsonl'):\n    return build(dataset_path, correct, {to})\n"
    path = folder / f"{name}.py"
    path.write_text(body)
    return path


def write_rows(folder: Path, rows: list[dict], name: str = "data.jsonl") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def numeric_rows(kind: str, n: int = 12) -> list[dict]:
    if kind == "float":
        return [{"question": f"What is {i} + 40.0?", "answer": f"{i + 40}.0"} for i in range(n)]
    if kind == "half":
        return [{"question": f"What is {2 * i + 1} / 2?", "answer": str((2 * i + 1) / 2)} for i in range(n)]
    if kind == "latex":  # MATH-style golds: fractions, roots, pi, tuples, polynomials
        golds = [r"\frac{1}{2}", r"3\sqrt{2}", r"\frac{14}{3}", r"2\pi", "(1,2)", "x^2+1", r"\dfrac{3}{4}", "5/6"]
        return [{"question": f"Problem {i}: compute the value.", "answer": golds[i % len(golds)]} for i in range(n)]
    if kind == "pi":  # prompts that speak of pi: 30\pi for 30 is a near miss a policy could write
        return [
            {"question": f"What is {i} + 30? Write multiples of \\pi as k\\pi.", "answer": str(i + 30)}
            for i in range(n)
        ]
    return [{"question": f"What is {i} + 30?", "answer": str(i + 30)} for i in range(n)]


def choice_rows(n: int = 12, k: int = 4, column: str = "key") -> list[dict]:
    """Questions with k options; the 0-based key in ``column`` ("key": the fixture envs map it themselves,
    so datasets never casts their text answer back to the integer column's type)."""
    rows = []
    for i in range(n):
        options = [f"{i * 10 + j} apples" for j in range(k)]
        rows.append({"question": f"Which count is number {i}?", "choices": options, column: (i * 7) % k})
    return rows


def code_rows(n: int = 6, asserts: int = 1) -> list[dict]:
    tests = [(1, 2), (5, 5), (0, 0)][:asserts]
    return [
        {
            "prompt": f"Write add{i}(a, b) returning a + b + {i}.",
            "solution": f"def add{i}(a, b):\n    return a + b + {i}\n",
            "test": "\n".join(f"assert add{i}({a}, {b}) == {a + b + i}" for a, b in tests),
            "entry_point": f"add{i}",
        }
        for i in range(n)
    ]


def humaneval_rows(rows: list[dict]) -> list[dict]:
    """code_fixtures' HumanEval-shaped rows in these environments' columns (the answer: the whole program)."""
    return [
        {
            "prompt": r["prompt"],
            "solution": r["prompt"] + r["canonical_solution"],
            "test": r["test"],
            "entry_point": r["entry_point"],
        }
        for r in rows
    ]


def template_code_rows(n: int) -> list[dict]:
    """code_rows in the columns the code templates read by default (prompt, test list, canonical_solution,
    entry_point)."""
    return [
        {
            "prompt": r["prompt"],
            "test": [r["test"]],
            "canonical_solution": r["solution"],
            "entry_point": r["entry_point"],
        }
        for r in code_rows(n)
    ]
