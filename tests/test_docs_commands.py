"""Every shell command shown in SKILL.md and references/ works as written.

Each ```bash block's commands run in order, per document (a section of it a test), in a sandbox folder that
plays the user's project (the docs say: work there, call the scripts by the skill's
path), with `SKILL_DIR` set to this checkout, as SKILL.md asks, and the demo data in
place: `data/train.jsonl` is `demo/make_data.py`'s GSM8K-shaped arithmetic dataset.
Model calls go to a loopback OpenAI-compatible stub (chat completions, streamed or
not), `prime` calls to a loopback Prime API stub. Every python example in environment-guide.md that names a `# file:` is loaded
and scored by test_reward in its own verifiers generation.

What is NOT run as written is listed in exactly one place, below: SUBSTITUTIONS
(what the sandbox changes in a command and why) and NOT_RUN (commands that need the
network, a login, a GPU or money, each with its reason).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, SKILL_ROOT, VERIFIERS, assert_result, run_script
from diagnose_fixtures import hosted_records, hosted_run, simulate
from docs_fixtures import ModelStub
from prime_stub import WHOAMI_OK, PrimeStub, prime_env

from vlab.evals.verdicts import Thresholds

DOCS = [SKILL_ROOT / "SKILL.md", *sorted((SKILL_ROOT / "references").glob("*.md"))]
LOCAL_URL = "http://localhost:8000/v1"
SCRIPT = 'python "$SKILL_DIR/scripts/'  # how the docs call a pack script
SCRIPT_RE = r'python "\$SKILL_DIR/scripts/(\w+)\.py"'

# -- the one list of what is not run as written -------------------------------------------------

# a v1 vf-eval (verifiers >= 0.4, its null harness) at the test's size, (as documented, as run): the fewest examples
# of 4 rollouts check_reward_distribution judges (its thresholds), which the docs run after it
_JUDGED = Thresholds()
_FEWEST = max(_JUDGED.min_examples, -(-_JUDGED.min_rollouts // 4))
V1_EVAL_SIZE = (" -n 20 -r 4", f" -n {_FEWEST} -r 4")
# (pattern, replacement-or-action, why)
SUBSTITUTIONS = [
    (LOCAL_URL, "the model stub's URL", "no model server runs in tests: a loopback stub answers instead"),
    ("pip install -e DIR", "DIR is added to PYTHONPATH", "tests never change the virtual environment"),
    ("configs/endpoints.toml", f"{LOCAL_URL} in the copied file becomes the stub's URL", "same as the first row"),
    (
        V1_EVAL_SIZE[0],
        V1_EVAL_SIZE[1],
        "the null harness starts its chat program through uv once per rollout, about 0.9 s of CPU each (71 of the "
        f"80-rollout eval's 72 s): {_FEWEST} examples of 4 rollouts, the fewest check_reward_distribution judges, "
        "run the same command and write the same traces",
    ),
    (
        SCRIPT + 'submit_training.py" ... --env owner/NAME',
        "--env acme/NAME",
        "owner/ is the docs' placeholder for the user's Hub owner, which the gate refuses; the user types their own",
    ),
    (
        SCRIPT + 'submit_training.py" ...',
        "--offline is appended when absent",
        "its online checks ask the platform whether owner/my-env (published by the push step, not run) and the model "
        "exist; every other check runs",
    ),
]

NOT_RUN: dict[str, str] = {
    r"^prime env push\b": "publishes to the Environments Hub (network, login, and the user's choice of visibility)",
    r"^prime env (info|install)\b": "reads or installs from the Environments Hub (network)",
    r"^prime eval run\b": "a hosted evaluation on the Prime Intellect platform (network, login, cost)",
    r"^prime train (progress|metrics|logs)\b": "reads a training run that exists only on the platform",
    r"--submit\b": "submits a paid training run",
    r"--status RUN_ID": "reads a training run that exists only on the platform",
    rf"^{SCRIPT_RE}".replace(r"(\w+)", "test_reward") + r" name\b": "needs the Hub environment the (not run) "
    "`prime env install` installs",
    rf"^{SCRIPT_RE}".replace(r"(\w+)", "local_train") + r" .*--model Qwen/": "downloads a model from the Hugging "
    "Face Hub and trains it (GPU)",
    r"--engine prime-rl": "needs a prime-rl checkout and 2+ GPUs",
    r"^uv pip install \"tinker-cookbook": "installs Tinker's cookbook from the package index (network)",
    r"^python -m tinker_cookbook\.": "samples and trains on Tinker's service (network, TINKER_API_KEY, cost)",
    r"^uv run .*examples/train_integrations/verifiers/": "needs a SkyRL checkout and an environment on the Hub (network)",
    r"^bash examples/train_integrations/verifiers/run_verifiers\.sh": "a SkyRL training run (SkyRL checkout, GPUs)",
    rf"^{SCRIPT_RE}".replace(r"(\w+)", "check_reward_distribution") + r" --results outputs/local-train": "reads "
    "the output of the local training run above, which is not run",
    rf"^{SCRIPT_RE}".replace(r"(\w+)", "diagnose_run") + r" --run outputs/local-train": "reads "
    "the output of the local training run above, which is not run",
}


def not_run_reason(command: str) -> str | None:
    for pattern, reason in NOT_RUN.items():
        if re.search(pattern, command):
            return reason
    return None


def generation_skip(command: str) -> str | None:
    """Commands that belong to one verifiers generation run only in its virtual environment."""
    if command.startswith("vf-gepa"):
        if not (VERIFIERS.v1 and not VERIFIERS.classic):
            return "vf-gepa is verifiers >= 0.4's CLI; runs in the 0.4 venv"
    elif command.startswith("vf-validate"):
        if not (VERIFIERS.v1 and not VERIFIERS.classic):
            return "vf-validate is verifiers >= 0.4's CLI (0.3.1 installs it as `validate`); runs in the 0.4 venv"
    elif is_v1_eval(command):
        if VERIFIERS.classic:
            return "v1 vf-eval (verifiers >= 0.4; 0.3.1 installs it as `eval`); runs in the 0.4 venv"
        if shutil.which("uv") is None:
            return (
                "v1 vf-eval's null harness runs its program with uv, which is not on PATH (the test extra installs it)"
            )
    elif command.startswith("vf-eval") and not VERIFIERS.classic:
        return "classic vf-eval (verifiers 0.3.x); runs in the 0.3.1 venv"
    elif command.startswith(SCRIPT + 'migrate_env.py"') and not VERIFIERS.classic:
        return "migrate_env reads a classic environment (verifiers 0.3.x); runs in the 0.3.1 venv, its v1 side in .venv/vf040"
    elif VERIFIERS.classic and (
        "configs/my-env.toml" in command
        or "--stops diag.json" in command
        or (command.startswith(SCRIPT + 'submit_training.py"') and "--status" not in command)
    ):
        # SKILL.md's hosted steps (8a) on the environment its workflow made: classic in this venv, which
        # the generation gate (it reads environments/<module>/ when the folder is there) refuses for Hosted
        # Training and prime-rl alike (tests/test_generation_gate.py proves that).
        return "Hosted Training runs v1 tasksets only; SKILL.md's hosted steps run in the 0.4 venv, on a v1 taskset"
    return None


def is_v1_eval(command: str) -> bool:
    return command.startswith("vf-eval") and " --env." in command


def v1_eval_env(env: dict[str, str]) -> dict[str, str]:
    """v1 vf-eval's null harness starts its chat program with `uv run` once per rollout (80 here), in uv's cached
    environment, which uv installs without bytecode: under PYTHONDONTWRITEBYTECODE each start compiled openai and
    httpx from source, 55 s of CPU an eval. A user's Python writes that bytecode once; so does this one."""
    return {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}


def v1_eval_failures(sandbox: Path, before: set[Path]) -> list[str]:
    """vf-eval exits 0 even when every rollout failed: read the traces the command just wrote."""
    written = [p for p in sandbox.glob("**/traces.jsonl") if p not in before]
    if not written:
        return ["wrote no traces.jsonl"]
    problems = []
    for path in written:
        episodes = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        failed = [e for e in episodes if not e.get("ok")]
        if not episodes or failed:
            first = failed[0].get("errors") if failed else "no episodes"
            problems.append(f"{path}: {len(failed)} of {len(episodes)} episodes failed; first: {first}"[:1500])
    return problems


# -- extraction ---------------------------------------------------------------------------------


@dataclass
class Command:
    doc: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.text}"


def bash_commands(path: Path) -> list[Command]:
    """Commands of every ```bash block: continuation lines joined, comments and blanks dropped."""
    commands, in_block, pending, start = [], False, "", 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_block = stripped == "```bash"
            continue
        if not in_block or (not pending and (not stripped or stripped.startswith("#"))):
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        text = (pending + stripped).split("  #")[0].strip()
        pending = ""
        commands.append(Command(path.relative_to(ROOT).as_posix(), start, text))
    return commands


def python_examples(path: Path) -> list[tuple[str, str, str]]:
    """(file name, data kind, source) of every ```python block that opens with `# file:`."""
    found = []
    for block in re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
        m = re.match(r"# file: (\S+\.py)\n# data: (\S+)\n", block)
        if m:
            found.append((m.group(1), m.group(2), block))
    return found


ALL_COMMANDS = [c for doc in DOCS for c in bash_commands(doc)]


def test_docs_show_commands_and_every_one_is_accounted_for():
    assert len(ALL_COMMANDS) >= 20
    for command in ALL_COMMANDS:
        assert command.text.split()[0] in {
            *("python", "vf-eval", "vf-validate", "vf-gepa", "prime", "pip", "mkdir", "cp"),
            *("uv", "bash"),  # other trainers' commands (references/other-trainers.md), none of them run
        }, command


def test_every_not_run_rule_matches_a_command():
    """A rule that matches nothing is stale and would hide nothing, or worse, hide a future command."""
    for pattern in NOT_RUN:
        assert any(re.search(pattern, c.text) for c in ALL_COMMANDS), f"unused NOT_RUN rule {pattern!r}"


def test_skill_md_names_only_existing_scripts_and_references():
    text = "\n".join(doc.read_text() for doc in DOCS)
    for script in set(re.findall(r"scripts/([a-z_]+)\.py", text)):
        assert (SKILL_ROOT / "scripts" / f"{script}.py").is_file(), script
    for ref in set(re.findall(r"references/([\w.-]+\.(?:md|json))", text)):
        assert (SKILL_ROOT / "references" / ref).is_file(), ref
    for template in set(re.findall(r"templates/(?:environments|configs)/[\w.-]+", text)):
        assert (SKILL_ROOT / template).exists(), template


def test_every_reference_says_when_to_read_it():
    for doc in DOCS[1:]:
        head = doc.read_text(encoding="utf-8").split("\n\n")[1]
        assert head.lower().startswith("read this when"), doc.name


def test_script_flags_in_docs_exist():
    """Each `--flag` a doc passes to a pack script appears in that script's --help."""
    helps: dict[str, str] = {}
    for command in ALL_COMMANDS:
        m = re.match(SCRIPT_RE, command.text)
        if not m:
            continue
        script = m.group(1)
        if script not in helps:
            helps[script] = run_script(script, "--help").stdout
        for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", command.text):
            assert flag in helps[script], f"{command}: {flag} is not in {script} --help"


# -- the sandbox ------------------------------------------------------------------------------------

FLAT_CONFIG = """\
model = "Qwen/Qwen3-4B-Instruct-2507"
max_steps = 20
batch_size = 64
rollouts_per_example = 8
learning_rate = 1e-6

[sampling]
max_tokens = 512

[[env]]
id = "acme/my-env"
"""


# data/code.jsonl: HumanEval's layout (prompt, canonical_solution, test with check(candidate), entry_point)
CODE_ROWS = [
    {
        "prompt": f'def add{i}(a, b):\n    """Return a + b + {i}."""\n',
        "canonical_solution": f"    return a + b + {i}\n",
        "test": f"def check(candidate):\n    assert candidate(1, 2) == {3 + i}\n    assert candidate(0, 0) == {i}\n",
        "entry_point": f"add{i}",
    }
    for i in range(6)
]


def make_sandbox(root: Path, with_env: bool) -> Path:
    """The user's project: data and an old config; the skill stays where it is ($SKILL_DIR)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "home").mkdir()
    subprocess.run(
        [sys.executable, str(ROOT / "demo" / "make_data.py"), str(root / "data" / "train.jsonl"), "200"],
        check=True,
        capture_output=True,
    )
    (root / "data" / "code.jsonl").write_text("".join(json.dumps(r) + "\n" for r in CODE_ROWS))
    (root / "old-rl.toml").write_text(FLAT_CONFIG)
    if with_env:  # the references assume the environment SKILL.md's step 3 created
        api = "classic" if VERIFIERS.classic else "v1"
        made = run_script(
            "new_env",
            "my-env",
            "--template",
            f"{api}-numeric",
            "--path",
            str(root / "environments"),
            "--json",
            cwd=root,
        )
        assert made.returncode == 0, made
    return root


def rewrite(command: str, model_url: str) -> tuple[str, list[str]]:
    """Apply SUBSTITUTIONS; returns the command and folders to add to PYTHONPATH."""
    paths = []
    m = re.fullmatch(r"pip install -e (\S+)", command)
    if m:
        return "true", [m.group(1)]
    if command.startswith(SCRIPT + 'submit_training.py"'):
        command = re.sub(r"(--(?:eval-)?env) owner/", r"\1 acme/", command)
        if "--offline" not in command.split():
            command += " --offline"
    if is_v1_eval(command):
        command = command.replace(*V1_EVAL_SIZE)
    return command.replace(LOCAL_URL, model_url), paths


def has_eval_results(sandbox: Path) -> bool:
    """Model rollouts exist (vf-eval -s results or v1 traces), not only vf-validate's model-free checks."""
    return any(sandbox.glob("**/evals/*/*/results.jsonl")) or any(sandbox.glob("**/traces.jsonl"))


def sections(doc: Path) -> list[tuple[str, list[Command]]]:
    """The document's commands grouped by the heading (## or ###) they sit under, in order: (heading, commands)
    for each heading with a command."""
    heads, fenced = [], False
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{2,3} ", line):
            heads.append((number, line.lstrip("#").strip()))
    grouped: list[tuple[str, list[Command]]] = []
    for command in bash_commands(doc):
        head = next((title for number, title in reversed(heads) if number < command.line), doc.name)
        if not grouped or grouped[-1][0] != head:
            grouped.append((head, []))
        grouped[-1][1].append(command)
    return grouped


class DocWalk:
    """One document's commands, run in order in one sandbox with the stubs up, a section at a time."""

    def __init__(self, doc: Path, tmp_path: Path):
        self.doc = doc
        self.parts = sections(doc)
        self.outcomes: list[tuple[list[str], list[str], list[str]]] = []  # each section run so far: DocWalk.section
        self.sandbox = make_sandbox(tmp_path / "skill", with_env=doc.name != "SKILL.md")
        self.stubs = contextlib.ExitStack()
        self.model = self.stubs.enter_context(ModelStub())
        prime = self.stubs.enter_context(PrimeStub())
        prime.responses["GET /api/v1/user/whoami"] = (200, WHOAMI_OK)
        # diagnose_run --run RUN_ID: a finished healthy Hosted Training run (tests/diagnose_fixtures.py)
        prime.responses["GET /api/v1/rft/runs/RUN_ID/metrics"] = (200, {"metrics": hosted_records(simulate("healthy"))})
        prime.responses["GET /api/v1/rft/runs/RUN_ID"] = (200, {"run": hosted_run("RUN_ID", "COMPLETED")})
        self.pythonpath: list[str] = []
        env = dict(os.environ)
        env.pop("VLAB_DEBUG", None)
        env.update(prime_env(self.sandbox / "home", prime.url))
        env.update(
            {
                "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
                "OPENAI_API_KEY": "stub-key",
                "HF_HUB_OFFLINE": "1",
                "HF_DATASETS_OFFLINE": "1",
                "PYTHONDONTWRITEBYTECODE": "1",
                "COLUMNS": "120",
                "SKILL_DIR": str(SKILL_ROOT),
                # HOME is the sandbox's: keep uv's cache (the null harness's program environment) across runs
                "UV_CACHE_DIR": os.environ.get("UV_CACHE_DIR") or str(Path.home() / ".cache" / "uv"),
            }
        )
        self.env = env

    def through(self, part: int) -> tuple[list[str], list[str], list[str]]:
        """Run the sections not run yet through ``part``; that section's (ran, not run, failures)."""
        while len(self.outcomes) <= part:
            self.outcomes.append(self.section(self.parts[len(self.outcomes)][1]))
        return self.outcomes[part]

    def section(self, commands: list[Command]) -> tuple[list[str], list[str], list[str]]:
        failures, ran, skipped = [], [], []
        sandbox, env = self.sandbox, self.env
        for command in commands:
            reason = not_run_reason(command.text) or generation_skip(command.text)
            if (
                reason is None
                and command.text.startswith(SCRIPT + 'check_reward_distribution.py"')
                and "--results" not in command.text
                and not has_eval_results(sandbox)
            ):
                reason = "no eval ran before it in this verifiers generation"
            if reason:
                skipped.append(f"{command}  [{reason}]")
                continue
            text, extra = rewrite(command.text, self.model.base_url)
            self.pythonpath += [str(sandbox / p) for p in extra]
            env["PYTHONPATH"] = os.pathsep.join(self.pythonpath)
            traces_before = set(sandbox.glob("**/traces.jsonl"))
            proc = subprocess.run(
                ["bash", "-c", text],
                cwd=sandbox,
                env=v1_eval_env(env) if is_v1_eval(text) else env,
                capture_output=True,
                text=True,
                timeout=600,
                stdin=subprocess.DEVNULL,
            )
            endpoints = sandbox / "configs" / "endpoints.toml"
            if endpoints.is_file() and LOCAL_URL in endpoints.read_text():
                endpoints.write_text(endpoints.read_text().replace(LOCAL_URL, self.model.base_url))
            ran.append(str(command))
            if proc.returncode != 0:
                failures.append(
                    f"{command}\n  exit {proc.returncode}\n  stdout: {proc.stdout[-1500:]}\n"
                    f"  stderr: {proc.stderr[-1500:]}"
                )
                continue
            if is_v1_eval(text):
                failures += [f"{command}\n  {problem}" for problem in v1_eval_failures(sandbox, traces_before)]
            if "--json" in text.split() and ">" not in text:
                try:
                    obj = json.loads(proc.stdout)
                    assert_result(obj)
                except Exception as err:  # noqa: BLE001 - reported with the command
                    failures.append(f"{command}\n  --json output is not one valid result object: {err}")
        return ran, skipped, failures


@pytest.fixture(scope="module")
def doc_walks(tmp_path_factory):
    """``walk(doc)``: the document's DocWalk, made on first use; its stubs stop with the module."""
    walks: dict[Path, DocWalk] = {}

    def walk(doc: Path) -> DocWalk:
        if doc not in walks:
            walks[doc] = DocWalk(doc, tmp_path_factory.mktemp(doc.stem))
        return walks[doc]

    yield walk
    for opened in walks.values():
        opened.stubs.close()


# A document's commands a section a test (each under a minute on a loaded machine), in the document's order in
# one sandbox: a section run alone runs the sections before it first.
DOC_PARTS = [(doc, k) for doc in DOCS for k in range(len(sections(doc)))]


@pytest.mark.slow
@pytest.mark.parametrize("doc,part", DOC_PARTS, ids=[f"{doc.name}-{k + 1}" for doc, k in DOC_PARTS])
def test_doc_commands_run(doc, part, doc_walks):
    walk = doc_walks(doc)
    ran, skipped, failures = walk.through(part)
    heading = walk.parts[part][0]
    print(f"\n{doc.name}, {heading}: ran {len(ran)}, not run {len(skipped)}")
    for line in skipped:
        print("  not run:", line)
    if part == len(walk.parts) - 1:
        assert any(ran for ran, _, _ in walk.outcomes), f"{doc.name}: no command ran"
    assert not failures, "\n\n".join(failures)
    if not ran:
        pytest.skip(f"{doc.name}, {heading}: no command runs here: " + "; ".join(skipped)[:500])


# -- the environment guide's code -------------------------------------------------------------------

EXAMPLE_DATA = {
    "numeric": None,  # data/train.jsonl, the demo dataset
    "multiple-choice": [
        {"question": f"What is {i} + 1?", "choices": [str(i), str(i + 1), str(i + 2)], "answer": 1} for i in range(8)
    ],
    "classification": [
        {"text": t, "label": lbl}
        for t, lbl in [
            ("a joy to watch", "positive"),
            ("dull and slow", "negative"),
            ("loved every minute", "positive"),
            ("a waste of time", "negative"),
        ]
        * 2
    ],
}
GUIDE_EXAMPLES = python_examples(SKILL_ROOT / "references" / "environment-guide.md")


def test_environment_guide_has_examples_of_each_kind():
    names = [name for name, _, _ in GUIDE_EXAMPLES]
    assert {
        "guide_numeric_classic.py",
        "guide_numeric_v1.py",
        "guide_choice_classic.py",
        "guide_label_classic.py",
        "guide_tool_classic.py",
    } <= set(names)


@pytest.mark.slow
@pytest.mark.parametrize("name,kind,source", GUIDE_EXAMPLES, ids=[e[0] for e in GUIDE_EXAMPLES])
def test_environment_guide_example_passes_test_reward(name, kind, source, tmp_path):
    v1 = "import verifiers.v1 as vf" in source
    if v1 and VERIFIERS.classic:
        pytest.skip("v1 example: tested in the verifiers 0.4 venv")
    if not v1 and not VERIFIERS.classic:
        pytest.skip("classic example: tested in the verifiers 0.3.1 venv")
    folder = tmp_path / name[:-3]
    folder.mkdir()
    (folder / name).write_text(source)
    data = tmp_path / "data.jsonl"
    if EXAMPLE_DATA[kind] is None:
        subprocess.run(
            [sys.executable, str(ROOT / "demo" / "make_data.py"), str(data), "20"], check=True, capture_output=True
        )
    else:
        data.write_text("".join(json.dumps(r) + "\n" for r in EXAMPLE_DATA[kind]))
    proc = run_script(
        "test_reward",
        str(folder / name),
        "--env-args",
        json.dumps({"dataset_path": str(data)}),
        "--num-examples",
        "3",
        "--json",
        cwd=tmp_path,
    )
    obj = assert_result(proc.json, "test_reward")
    assert proc.returncode == 0, [(c["id"], c["message"]) for c in obj["checks"] if c["status"] == "fail"] or obj


def test_not_run_list_is_printed_in_one_place():
    """The brief's promise: commands not run as written are listed with a reason in ONE place (this module)."""
    assert all(reason for reason in NOT_RUN.values())
    assert all(len(row) == 3 for row in SUBSTITUTIONS)
