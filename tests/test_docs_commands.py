"""Every shell command shown in SKILL.md and references/ works as written.

Each ```bash block's commands run in order, per document, in a sandbox folder laid out
like the skill root (scripts/ and templates/ linked in) with the demo data in place:
`data/train.jsonl` is `demo/make_data.py`'s GSM8K-shaped arithmetic dataset. Model
calls go to a loopback OpenAI-compatible stub, `prime` calls to a loopback Prime API
stub. Every python example in environment-guide.md that names a `# file:` is loaded
and scored by test_reward in its own verifiers generation.

What is NOT run as written is listed in exactly one place, below: SUBSTITUTIONS
(what the sandbox changes in a command and why) and NOT_RUN (commands that need the
network, a login, a GPU or money, each with its reason).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, VERIFIERS, assert_result, run_script
from docs_fixtures import ModelStub
from prime_stub import WHOAMI_OK, PrimeStub, prime_env

DOCS = [ROOT / "SKILL.md", *sorted((ROOT / "references").glob("*.md"))]
LOCAL_URL = "http://localhost:8000/v1"

# -- the one list of what is not run as written -------------------------------------------------

# (pattern, replacement-or-action, why)
SUBSTITUTIONS = [
    (LOCAL_URL, "the model stub's URL", "no model server runs in tests: a loopback stub answers instead"),
    ("pip install -e DIR", "DIR is added to PYTHONPATH", "tests never change the virtual environment"),
    ("configs/endpoints.toml", f"{LOCAL_URL} in the copied file becomes the stub's URL", "same as the first row"),
    ("python scripts/submit_training.py ...", "--offline is appended when absent",
     "its online checks ask the platform whether owner/my-env (published by the push step, not run) and the model "
     "exist; every other check runs"),
]

NOT_RUN: dict[str, str] = {
    r"^prime env push\b": "publishes to the Environments Hub (network, login, and the user's choice of visibility)",
    r"^prime env (info|install)\b": "reads or installs from the Environments Hub (network)",
    r"^prime eval run\b": "a hosted evaluation on the Prime Intellect platform (network, login, cost)",
    r"^prime train (progress|metrics|logs)\b": "reads a training run that exists only on the platform",
    r"--submit\b": "submits a paid training run",
    r"--status RUN_ID": "reads a training run that exists only on the platform",
    r"^python scripts/test_reward\.py name\b": "needs the Hub environment the (not run) `prime env install` installs",
    r"^python scripts/local_train\.py .*--model Qwen/": "downloads a model from the Hugging Face Hub and trains it (GPU)",
    r"--engine prime-rl": "needs a prime-rl checkout and 2+ GPUs",
    r"^python scripts/check_reward_distribution\.py --results outputs/local-train":
        "reads the output of the local training run above, which is not run",
    r"^vf-eval \S+ --env\.": "v1 vf-eval's null harness bootstraps uv and its script environment from the network "
                             "(offline: HarnessError 'failed to prepare uv script')",
}


def not_run_reason(command: str) -> str | None:
    for pattern, reason in NOT_RUN.items():
        if re.search(pattern, command):
            return reason
    return None


def generation_skip(command: str) -> str | None:
    """Commands that belong to one verifiers generation run only in its virtual environment."""
    if command.startswith("vf-validate"):
        if not (VERIFIERS.v1 and not VERIFIERS.classic):
            return "vf-validate is verifiers >= 0.4's CLI (0.3.1 installs it as `validate`); runs in the 0.4 venv"
    elif command.startswith("vf-eval") and not VERIFIERS.classic:
        return "classic vf-eval (verifiers 0.3.x); runs in the 0.3.1 venv"
    return None


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
        assert command.text.split()[0] in {"python", "vf-eval", "vf-validate", "prime", "pip", "mkdir", "cp"}, command


def test_every_not_run_rule_matches_a_command():
    """A rule that matches nothing is stale and would hide nothing, or worse, hide a future command."""
    for pattern in NOT_RUN:
        assert any(re.search(pattern, c.text) for c in ALL_COMMANDS), f"unused NOT_RUN rule {pattern!r}"


def test_skill_md_names_only_existing_scripts_and_references():
    text = "\n".join(doc.read_text() for doc in DOCS)
    for script in set(re.findall(r"scripts/([a-z_]+)\.py", text)):
        assert (ROOT / "scripts" / f"{script}.py").is_file(), script
    for ref in set(re.findall(r"references/([\w.-]+\.(?:md|json))", text)):
        assert (ROOT / "references" / ref).is_file(), ref
    for template in set(re.findall(r"templates/(?:environments|configs)/[\w.-]+", text)):
        assert (ROOT / template).exists(), template


def test_every_reference_says_when_to_read_it():
    for doc in DOCS[1:]:
        head = doc.read_text(encoding="utf-8").split("\n\n")[1]
        assert head.lower().startswith("read this when"), doc.name


def test_script_flags_in_docs_exist():
    """Each `--flag` a doc passes to a pack script appears in that script's --help."""
    helps: dict[str, str] = {}
    for command in ALL_COMMANDS:
        m = re.match(r"python scripts/(\w+)\.py", command.text)
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
id = "owner/my-env"
"""


def make_sandbox(root: Path, with_env: bool) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name in ("scripts", "templates"):
        (root / name).symlink_to(ROOT / name)
    (root / "home").mkdir()
    subprocess.run([sys.executable, str(ROOT / "demo" / "make_data.py"), str(root / "data" / "train.jsonl"), "200"],
                   check=True, capture_output=True)
    (root / "old-rl.toml").write_text(FLAT_CONFIG)
    if with_env:  # the references assume the environment SKILL.md's step 3 created
        api = "classic" if VERIFIERS.classic else "v1"
        made = run_script("new_env", "my-env", "--template", f"{api}-numeric", "--path", str(root / "environments"),
                          "--json", cwd=root)
        assert made.returncode == 0, made
    return root


def rewrite(command: str, model_url: str) -> tuple[str, list[str]]:
    """Apply SUBSTITUTIONS; returns the command and folders to add to PYTHONPATH."""
    paths = []
    m = re.fullmatch(r"pip install -e (\S+)", command)
    if m:
        return "true", [m.group(1)]
    if command.startswith("python scripts/submit_training.py") and "--offline" not in command.split():
        command += " --offline"
    return command.replace(LOCAL_URL, model_url), paths


def has_eval_results(sandbox: Path) -> bool:
    """Model rollouts exist (vf-eval -s results or v1 traces), not only vf-validate's model-free checks."""
    return any(sandbox.glob("**/evals/*/*/results.jsonl")) or any(sandbox.glob("**/traces.jsonl"))


def run_doc(doc: Path, tmp_path: Path) -> list[str]:
    sandbox = make_sandbox(tmp_path / "skill", with_env=doc.name != "SKILL.md")
    failures, ran, skipped = [], [], []
    pythonpath: list[str] = []
    with ModelStub() as model, PrimeStub() as prime:
        prime.responses["GET /api/v1/user/whoami"] = (200, WHOAMI_OK)
        env = dict(os.environ)
        env.pop("VLAB_DEBUG", None)
        env.update(prime_env(sandbox / "home", prime.url))
        env.update({
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
            "OPENAI_API_KEY": "stub-key", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "120",
        })
        for command in bash_commands(doc):
            reason = not_run_reason(command.text) or generation_skip(command.text)
            if reason is None and command.text.startswith("python scripts/check_reward_distribution.py") \
                    and "--results" not in command.text and not has_eval_results(sandbox):
                reason = "no eval ran before it in this verifiers generation"
            if reason:
                skipped.append(f"{command}  [{reason}]")
                continue
            text, extra = rewrite(command.text, model.base_url)
            pythonpath += [str(sandbox / p) for p in extra]
            env["PYTHONPATH"] = os.pathsep.join(pythonpath)
            proc = subprocess.run(["bash", "-c", text], cwd=sandbox, env=env, capture_output=True, text=True,
                                  timeout=600, stdin=subprocess.DEVNULL)
            endpoints = sandbox / "configs" / "endpoints.toml"
            if endpoints.is_file() and LOCAL_URL in endpoints.read_text():
                endpoints.write_text(endpoints.read_text().replace(LOCAL_URL, model.base_url))
            ran.append(str(command))
            if proc.returncode != 0:
                failures.append(f"{command}\n  exit {proc.returncode}\n  stdout: {proc.stdout[-1500:]}\n"
                                f"  stderr: {proc.stderr[-1500:]}")
                continue
            if "--json" in text.split() and ">" not in text:
                try:
                    obj = json.loads(proc.stdout)
                    assert_result(obj)
                except Exception as err:  # noqa: BLE001 - reported with the command
                    failures.append(f"{command}\n  --json output is not one valid result object: {err}")
    print(f"\n{doc.name}: ran {len(ran)}, not run {len(skipped)}")
    for line in skipped:
        print("  not run:", line)
    assert ran, f"{doc.name}: no command ran"
    return failures


@pytest.mark.slow
@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_doc_commands_run(doc, tmp_path):
    if not bash_commands(doc):
        pytest.skip(f"{doc.name} shows no shell commands")
    failures = run_doc(doc, tmp_path)
    assert not failures, "\n\n".join(failures)


# -- the environment guide's code -------------------------------------------------------------------

EXAMPLE_DATA = {
    "numeric": None,  # data/train.jsonl, the demo dataset
    "multiple-choice": [{"question": f"What is {i} + 1?", "choices": [str(i), str(i + 1), str(i + 2)], "answer": 1}
                        for i in range(8)],
    "classification": [{"text": t, "label": lbl} for t, lbl in
                       [("a joy to watch", "positive"), ("dull and slow", "negative"),
                        ("loved every minute", "positive"), ("a waste of time", "negative")] * 2],
}
GUIDE_EXAMPLES = python_examples(ROOT / "references" / "environment-guide.md")


def test_environment_guide_has_examples_of_each_kind():
    names = [name for name, _, _ in GUIDE_EXAMPLES]
    assert {"guide_numeric_classic.py", "guide_numeric_v1.py", "guide_choice_classic.py", "guide_label_classic.py",
            "guide_tool_classic.py"} <= set(names)


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
        subprocess.run([sys.executable, str(ROOT / "demo" / "make_data.py"), str(data), "20"], check=True,
                       capture_output=True)
    else:
        data.write_text("".join(json.dumps(r) + "\n" for r in EXAMPLE_DATA[kind]))
    proc = run_script("test_reward", str(folder / name), "--env-args", json.dumps({"dataset_path": str(data)}),
                      "--num-examples", "3", "--json", cwd=tmp_path)
    obj = assert_result(proc.json, "test_reward")
    assert proc.returncode == 0, [(c["id"], c["message"]) for c in obj["checks"] if c["status"] == "fail"] or obj


def test_not_run_list_is_printed_in_one_place():
    """The brief's promise: commands not run as written are listed with a reason in ONE place (this module)."""
    assert all(reason for reason in NOT_RUN.values())
    assert all(len(row) == 3 for row in SUBSTITUTIONS)


# -- optional tier: install the pack the way users do -----------------------------------------------


def _node_tools() -> tuple[str, str] | None:
    """(node, skills) executables when `skills` (npm, needs Node >= 22.20) is on PATH; never downloads.

    Get them from the npm registry with: npm install --prefix .node node@22 skills@1.7.4
    and put .node/node_modules/.bin on PATH.
    """
    import shutil

    node, skills = shutil.which("node"), shutil.which("skills")
    if not node or not skills:
        return None
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip().lstrip("v")
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    return (node, skills) if parts >= (22, 20) else None


@pytest.mark.slow
def test_npx_skills_add_installs_the_pack_and_preflight_runs(tmp_path):
    tools = _node_tools()
    if tools is None:
        pytest.skip("needs `skills` (npm) and Node >= 22.20 on PATH: npm install --prefix .node node@22 skills@1.7.4")
    try:
        files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.split()
    except (subprocess.CalledProcessError, FileNotFoundError):
        pytest.skip("not a git checkout")
    source = tmp_path / "verifiers-lab"
    for name in files:  # what a clone holds: no virtual environments, no outputs
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((ROOT / name).read_bytes())
            (source / name).chmod((ROOT / name).stat().st_mode)
    project = tmp_path / "project"
    project.mkdir()
    env = dict(os.environ, HOME=str(tmp_path / "home"), DISABLE_TELEMETRY="1", DO_NOT_TRACK="1", CI="1")
    proc = subprocess.run([tools[1], "add", str(source), "-y", "-a", "claude-code", "--copy"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    installed = project / ".claude" / "skills" / "verifiers-lab"
    assert (installed / "SKILL.md").is_file()
    assert not list(installed.rglob("metadata.json"))
    assert os.access(installed / "scripts" / "preflight.py", os.X_OK)
    run = subprocess.run([sys.executable, str(installed / "scripts" / "preflight.py"), "--offline", "--json"],
                         cwd=project, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert_result(json.loads(run.stdout), "preflight")
    assert run.returncode == 0, run.stdout
