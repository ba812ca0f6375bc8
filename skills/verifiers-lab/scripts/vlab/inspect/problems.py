"""A folder of problem folders (competitive programming kept as files) read as rows, by the program templates'
own rule (``kinds.program.rows.problem_row``: the environment loads the same folder the same way): each folder a
row with its statement (``question``), its tests (``input_output``: {"inputs": [...], "outputs": [...]}), its
reference program (``solutions``) and the limits a metadata file gives. A folder that looks like one (statement
files in its subfolders) but whose tests are not found is bad input with the layouts that are read."""

from __future__ import annotations

from pathlib import Path

from vlab.core.result import UsageError
from vlab.inspect.sample import Sample
from vlab.inspect.text_readers import union_columns

LAYOUTS = (
    "each problem a folder holding a statement file (PROBLEM.md, problem.md, statement.md, README.md, problem.txt, "
    "statement.txt or question.txt), its tests (tests/input_1.txt with tests/output_1.txt, tests/1.in with "
    "tests/1.out or tests/1.ans, or input/ and output/ folders of files with the same names) and, optionally, its "
    "reference program (main.py, solution.py); or write a JSON Lines file with one problem a line: "
    '{"question": STATEMENT, "input_output": {"inputs": [...], "outputs": [...]}, "solutions": [PROGRAM]}'
)


def _statement_files() -> tuple[str, ...]:
    from vlab.kinds.program.rows import statement_files

    return statement_files()


def read_problem_folders(folder: Path, n: int) -> Sample | None:
    """The first ``n`` problems of a folder of problem folders (sorted by name); None when the folder is not one
    (fewer than half its subfolders hold a statement file)."""
    from vlab.kinds.program.rows import problem_row

    names = _statement_files()
    subs = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    problems = [p for p in subs if any((p / name).is_file() for name in names)]
    if not problems or len(problems) * 2 < len(subs):
        return None
    rows, unread = [], []
    for problem in problems:
        if len(rows) >= n:
            break
        row = problem_row(problem)
        if row is None:
            unread.append(problem.name)
        else:
            rows.append(row)
    if not rows:
        raise UsageError(
            f"{folder}: {len(problems)} problem folders with a statement file, but no tests found in them "
            f"(e.g. {problems[0].name}/)",
            hint="lay them out as: " + LAYOUTS,
        )
    sample = Sample(str(folder), "problem_folders", rows, union_columns(rows), total_rows=len(problems))
    sample.loader = {"problem_folders": str(folder)}
    sample.units_read = len(rows) + len(unread)
    sample.notes.append(
        f"{len(problems)} problem folders; each read as a row: question (its statement file), input_output (its "
        "tests), solutions (its reference program, when it has one); the program templates load the folder itself "
        "(dataset_path)"
    )
    for name in unread[:10]:
        sample.add_problem(name, "no tests found (" + LAYOUTS.split("; or")[0] + ")")
    return sample
