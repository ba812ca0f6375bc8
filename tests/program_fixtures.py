"""Competitive-programming problems made in code for the program kind: each a statement that shows its first
test as the example, hidden tests beside it, and an accepted reference in one of the forms real accepted Python
takes (fast input through os.read(0)/os.fstat(0), sys.stdin.buffer, exit() and quit(), a thread for deep
recursion, a '####' comment, a trailing comment); one problem with several right outputs, one with a float answer
and a tolerance, one whose tests are each slow but under the limit. Written as rows of every layout the program
templates read (APPS/TACO, CodeContests, LiveCodeBench, a folder of problem folders)."""

from __future__ import annotations

import base64
import json
import pickle
import zlib
from pathlib import Path

SUM = """import os, io
input = io.BytesIO(os.read(0, os.fstat(0).st_size)).readline
a, b = map(int, input().split())
print(a + b)
exit()
#### the end of the solution
"""
SORT = """import sys
data = sys.stdin.buffer.read().split()
n = int(data[0])
print(*sorted(map(int, data[1 : 1 + n])))
quit()
"""
AREA = """import math
r = float(input())
print("%.10f" % (math.pi * r * r))  # the area
"""
PERMUTATION = """import sys, threading
sys.setrecursionlimit(10000)
threading.stack_size(1 << 25)
def main():
    n = int(sys.stdin.readline())
    print(*range(n, 0, -1))
threading.Thread(target=main).start()
"""
SLOW = """import sys
n = int(sys.stdin.readline())
total = 0
for i in range(n):
    total += i % 7
print(total)
# slow on purpose: each test counts a few million numbers
"""


def _statement(title: str, body: str, example_in: str, example_out: str) -> str:
    return f"{title}\n\n{body}\n\nExample\n\nInput\n\n{example_in}\nOutput\n\n{example_out}"


def problems(slow_n: int = 2_000_000) -> list[dict]:
    """The problems: {"name", "statement", "tests": [(input, output)], "reference", "time_limit"}."""
    sums = [("1 2\n", "3\n"), ("40 2\n", "42\n"), ("-5 5\n", "0\n"), ("1000000 1\n", "1000001\n")]
    sorts = [("3\n3 1 2\n", "1 2 3\n"), ("4\n10 -1 7 7\n", "-1 7 7 10\n"), ("1\n5\n", "5\n")]
    areas = [("1\n", "3.1415926536\n"), ("2\n", "12.5663706144\n"), ("0.5\n", "0.7853981634\n")]
    perms = [("3\n", "3 2 1\n"), ("5\n", "5 4 3 2 1\n"), ("1\n", "1\n")]
    slow = [(f"{slow_n + k}\n", f"{sum(i % 7 for i in range(slow_n + k))}\n") for k in range(3)]
    return [
        {
            "name": "sum",
            "statement": _statement("Sum", "Print the sum of two integers a and b.", *sums[0]),
            "tests": sums,
            "reference": SUM,
        },
        {
            "name": "sort",
            "statement": _statement(
                "Sort", "Print the n numbers in non-decreasing order, separated by spaces.", *sorts[0]
            ),
            "tests": sorts,
            "reference": SORT,
        },
        {
            "name": "area",
            "statement": _statement(
                "Area",
                "Print the area of a circle of radius r. Your answer is considered correct if its absolute or "
                "relative error does not exceed 10^{-6}.",
                *areas[0],
            ),
            "tests": areas,
            "reference": AREA,
        },
        {
            "name": "permutation",
            "statement": _statement(
                "Permutation",
                "Print a permutation of 1..n with no fixed point when n > 1. If there are multiple answers, print "
                "any of them.",
                *perms[0],
            ),
            "tests": perms,
            "reference": PERMUTATION,
        },
        {
            "name": "slow",
            "statement": _statement("Slow", "Print the sum of i mod 7 for i below n.", *slow[0]),
            "tests": slow,
            "reference": SLOW,
            "time_limit": 3,
        },
    ]


def apps_rows(chosen: list[dict] | None = None) -> list[dict]:
    """APPS/TACO's layout: question, input_output as JSON text, solutions as a JSON list."""
    return [
        {
            "question": p["statement"],
            "input_output": json.dumps({"inputs": [t[0] for t in p["tests"]], "outputs": [t[1] for t in p["tests"]]}),
            "solutions": json.dumps([p["reference"]]),
            **({"time_limit": f"{p['time_limit']} seconds"} if p.get("time_limit") else {}),
        }
        for p in chosen or problems()
    ]


def codecontests_rows(chosen: list[dict] | None = None) -> list[dict]:
    """CodeContests' layout: description, public/private/generated tests as {"input": [...], "output": [...]},
    solutions by language (3 is Python 3), time_limit as {"seconds", "nanos"}."""
    out = []
    for p in chosen or problems():
        tests = p["tests"]
        out.append(
            {
                "name": p["name"],
                "description": p["statement"],
                "public_tests": {"input": [tests[0][0]], "output": [tests[0][1]]},
                "private_tests": {"input": [t[0] for t in tests[1:2]], "output": [t[1] for t in tests[1:2]]},
                "generated_tests": {"input": [t[0] for t in tests[2:]], "output": [t[1] for t in tests[2:]]},
                "solutions": {"language": [2, 3], "solution": ["int main() { return 0; }", p["reference"]]},
                "time_limit": {"seconds": p.get("time_limit") or 2, "nanos": 0},
                "memory_limit_bytes": 256 << 20,
            }
        )
    return out


def livecodebench_rows(chosen: list[dict] | None = None) -> list[dict]:
    """LiveCodeBench's layout: question_content, public_test_cases as JSON text, private_test_cases as
    base64(zlib(pickle(JSON text)))."""
    out = []
    for p in chosen or problems():
        tests = [{"input": i, "output": o, "testtype": "stdin"} for i, o in p["tests"]]
        private = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests[1:])))).decode()
        out.append(
            {
                "question_title": p["name"],
                "question_content": p["statement"],
                "public_test_cases": json.dumps(tests[:1]),
                "private_test_cases": private,
            }
        )
    return out


def write_folder(root: Path, chosen: list[dict] | None = None) -> Path:
    """A folder of problem folders: PROBLEM.md, main.py, tests/input_N.txt and tests/output_N.txt, run.sh."""
    root.mkdir(parents=True, exist_ok=True)
    for p in chosen or problems():
        folder = root / p["name"]
        (folder / "tests").mkdir(parents=True, exist_ok=True)
        (folder / "PROBLEM.md").write_text(p["statement"])
        (folder / "main.py").write_text(p["reference"])
        (folder / "run.sh").write_text("for f in tests/input_*.txt; do python3 main.py < $f; done\n")
        for k, (i, o) in enumerate(p["tests"], 1):
            (folder / "tests" / f"input_{k}.txt").write_text(i)
            (folder / "tests" / f"output_{k}.txt").write_text(o)
        if p.get("time_limit"):
            (folder / "metadata.json").write_text(json.dumps({"time_limit": p["time_limit"]}))
    return root


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
