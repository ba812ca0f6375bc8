"""Every command a hint or next step names must exist and parse (issue 38).

Usage: python tests/hint_commands.py HINTS.jsonl [...]
The files hold {"tool", "text"} lines: every hint and next step the tests' scenarios emitted (tests/conftest.py
writes them when VLAB_HINTS_OUT is set; ``make test`` does). For each command found in a text:
- the pack's own scripts (`python .../scripts/NAME.py ARGS`, `vlab-name ARGS`): NAME must be a script and ARGS
  must parse with that script's own argument parser (nothing runs);
- `prime WORDS ...`: `prime WORDS --help` must succeed (the subcommand exists);
- `vf-eval ...`, `vf-validate ...`: every `--flag` it names must be in the installed command's `--help`;
- `uv`, `pip`: the program exists.
Exit 1 naming each command that does not, with the text it came from.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import re
import shlex
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1] / "skills" / "verifiers-lab" / "scripts"
TOOLS = sorted(p.stem for p in SCRIPTS.glob("*.py"))
# Where a command ends inside prose: a backtick, a comment, "; ", " (", ", then", ", or", " or ", " and ", " to ".
_END = re.compile(r"`|\s+#|;\s|\s\(|,\s+(?:then|or|and)\b|\s+(?:or|and|to|if|for|with)\s+(?=[a-z])|\n|\.\s|\.$")
_OURS = re.compile(r"(?:\S*python3?\s+)?(?:\S*/)?scripts/(\w+)\.py\b|\bvlab-([a-z_-]+)\b")
_PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]+$|<[^<>]+>")
_EXTERNAL = re.compile(r"(?<![\w/.-])(prime|vf-eval|vf-validate|uv|pip)\s+([^`\n]*)")


def commands(text: str) -> list[tuple[str, list[str]]]:
    """(program, arguments) for every command the text names."""
    found = []
    for m in _OURS.finditer(text):
        tool = m.group(1) or (m.group(2) or "").replace("-", "_")
        rest = text[m.end() :]
        end = _END.search(rest)
        found.append((tool, _split(rest[: end.start() if end else len(rest)])))
    for m in _EXTERNAL.finditer(text):
        if _OURS.search(text[max(0, m.start() - 80) : m.start() + 1] + "x") and m.group(1) == "pip":
            continue
        rest = m.group(2)
        end = _END.search(rest)
        found.append((m.group(1), _split(rest[: end.start() if end else len(rest)])))
    return found


def _split(args: str) -> list[str]:
    args = args.strip().rstrip(".,:)")
    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()
    for i, word in enumerate(words):  # the shell's part of a line: a redirection, a pipe, the next command
        if word in (">", ">>", "|", "&&", "||", "2>", "2>&1", "&") or word.startswith((">", "|")):
            return words[:i]
    return words


@cache
def _parser(tool: str):
    sys.path.insert(0, str(SCRIPTS))
    module = importlib.import_module("probe_reward" if tool == "test_reward" else tool)
    return module.build_parser()


def problem(program: str, args: list[str]) -> str | None:
    """Why this command would not run as named; None when it would."""
    if program in TOOLS:
        if program in ("docs",) and not args:
            return None
        from vlab.core.result import ToolError

        parser = _parser(program)
        why = None
        # as written; then with ENV, SEQ_LEN, <run> filled in (placeholders the user replaces)
        for attempt in (args, [_PLACEHOLDER.sub("1", a) for a in args]):
            err = io.StringIO()
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                    parser.parse_args(attempt)
                return None
            except ToolError as refused:  # the pack's parsers raise UsageError where argparse would exit 2
                why = why or f"{program}.py does not parse {shlex.join(args)!r}: {refused.message}"
            except SystemExit as stop:
                if stop.code in (0, None):
                    return None
                why = why or f"{program}.py does not parse {shlex.join(args)!r}: {err.getvalue().strip()[-300:]}"
        return why
    if program.replace("-", "_") in TOOLS or program.startswith("vlab"):
        return None
    if program in ("uv", "pip"):
        return None if shutil.which(program) or program == "pip" else f"{program} is not installed"
    if program == "prime":
        words = []
        for word in args:
            if not re.fullmatch(r"[a-z][a-z-]*", word):
                break
            words.append(word)
        return _prime_help(tuple(words))
    if program in ("vf-eval", "vf-validate"):
        # a v1 command (0.4's nested --env.* keys, --no-push, a TASKSET) against 0.4's command, the rest against 0.3's
        v1 = program == "vf-validate" or any(a.startswith(("--env.", "--no-push")) or a == "TASKSET" for a in args)
        helptext = _help(program, "vf040" if v1 else "vf031")
        if helptext is None:
            return f"{program} is not installed"
        # 0.4's nested config keys (--env.agent.runtime.type) are checked when the run starts, not in --help
        flags = {a.split("=", 1)[0] for a in args if a.startswith("-") and not (v1 and a.startswith("--env."))}
        unknown = sorted(f for f in flags if not re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", helptext))
        return f"{program} ({'0.4' if v1 else '0.3'}) has no {', '.join(unknown)}" if unknown else None
    return None


@cache
def _help(program: str, venv: str) -> str | None:
    own = SCRIPTS.parents[2] / ".venv" / venv / "bin" / program
    path = str(own) if own.is_file() else shutil.which(program)
    if path is None:
        return None
    done = subprocess.run(
        [path, "--help"], capture_output=True, text=True, timeout=120, env={"COLUMNS": "200", **_env()}
    )
    return done.stdout + done.stderr


@cache
def _prime_help(words: tuple[str, ...]) -> str | None:
    path = shutil.which("prime")
    if path is None:
        return None  # not installed here: nothing to check it against
    done = subprocess.run([path, *words, "--help"], capture_output=True, text=True, timeout=120, env=_env())
    return None if done.returncode == 0 else f"`prime {' '.join(words)}` is no prime command"


def _env() -> dict:
    import os

    return {**os.environ, "NO_COLOR": "1"}


def main(paths: list[str]) -> int:
    texts: dict[str, str] = {}
    for path in paths:
        if not Path(path).is_file():  # a run that emitted no hint wrote no file (the shell keeps the glob)
            continue
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            texts.setdefault(item["text"], item["tool"])
    bad, checked = [], set()
    for text, tool in sorted(texts.items()):
        for program, args in commands(text):
            key = (program, tuple(args))
            if key in checked:
                continue
            checked.add(key)
            why = problem(program, args)
            if why:
                bad.append(f"{why}\n    from {tool}: {text[:300]!r}")
    print(f"hint commands: {len(checked)} commands checked in {len(texts)} hints and next steps")
    for line in bad:
        print("  " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
