"""The generation gate: classic environments never reach a Hosted Training or current prime-rl config.

Detection is static (the source is parsed, never imported), so every case here runs in both
virtual environments; the Hub is the real prime CLI against a loopback stub of `prime env inspect`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from conftest import SKILL_ROOT, VERIFIERS, assert_result, run_script
from prime_stub import PrimeStub
from trainconfig_fixtures import NATIVE_CONFIG, cli_env, hub_routes

from vlab.env.generation import CLASSIC, UNKNOWN, V1, detect, requirement_verdict
from vlab.hosted import gate

TOOL = "submit_training"
MODEL = "Qwen/Qwen3-4B-Instruct-2507"

needs_prime = pytest.mark.skipif(
    not (Path(sys.executable).parent / "prime").exists(), reason="the prime CLI is not installed in this venv"
)

CLASSIC_SRC = """\
import verifiers as vf


def load_environment(dataset_path="data.jsonl", **kwargs):
    parser = vf.XMLParser(["answer"])
    return vf.SingleTurnEnv(dataset=None, parser=parser, rubric=vf.Rubric(funcs=[], parser=parser))
"""

V1_SRC = """\
import verifiers.v1 as vf


class Data(vf.TaskData):
    answer: str


class MathTaskset(vf.Taskset):
    def load(self):
        return []


__all__ = ["MathTaskset"]
"""

# Neither entry point: only the package's requirement can tell.
PLAIN_SRC = "def helper():\n    return 1\n"


def write_module(folder: Path, name: str, source: str, requirement: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(source)
    if requirement is not None:
        (folder / "pyproject.toml").write_text(
            f'[project]\nname = "{name.replace("_", "-")}"\nversion = "0.1.0"\ndependencies = ["{requirement}"]\n'
        )
    return folder


# -- static detection -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, requirement, expected, evidence",
    [
        (CLASSIC_SRC, None, CLASSIC, "load_environment"),
        (V1_SRC, None, V1, "MathTaskset"),
        (CLASSIC_SRC, "verifiers>=0.4.0", CLASSIC, "disagrees"),  # the source wins, the pin is noted
        (PLAIN_SRC, "verifiers==0.3.1", CLASSIC, "below 0.4"),
        (PLAIN_SRC, "verifiers>=0.3.1,<0.4", CLASSIC, "below 0.4"),
        (PLAIN_SRC, "verifiers>=0.4.0", V1, "0.4 and later"),
        (PLAIN_SRC, "verifiers>=0.2.0", UNKNOWN, "allows both"),  # prime's push label would say v1 here
        (PLAIN_SRC, None, UNKNOWN, "neither"),
        ("def load_environment(:\n", None, UNKNOWN, "does not parse"),
        ("from .impl import load_environment\n", None, CLASSIC, "re-exports"),
        ("import verifiers as vf\nenv = vf.SingleTurnEnv()\n", None, CLASSIC, "vf.SingleTurnEnv"),
        # __all__ with a class that is not a Taskset and no v1 import: no verdict
        ("class Helper:\n    pass\n__all__ = ['Helper']\n", None, UNKNOWN, "neither"),
    ],
)
def test_module_file_and_package_folder(tmp_path, source, requirement, expected, evidence):
    folder = write_module(tmp_path / "my_env", "my_env", source, requirement)
    for spec in (str(folder / "my_env.py"), str(folder)):
        found = detect(spec, online=False)
        assert found.generation == expected, found
        assert evidence in found.because(), found.because()
        assert found.where == ("file" if spec.endswith(".py") else "package")


def test_package_init_reexporting_a_sibling_taskset(tmp_path):
    pkg = tmp_path / "env" / "sorter"
    pkg.mkdir(parents=True)
    (pkg / "tasks.py").write_text("import verifiers.v1 as vf\n\nclass SortTaskset(vf.Taskset):\n    pass\n")
    (pkg / "__init__.py").write_text("from .tasks import SortTaskset\n\n__all__ = ['SortTaskset']\n")
    found = detect(str(pkg), online=False)
    assert found.generation == V1 and "SortTaskset" in found.because()
    # the neighbour: the same __init__ exporting a name that is not a Taskset anywhere
    (pkg / "__init__.py").write_text("from .tasks import helper\n\n__all__ = ['helper']\n")
    assert detect(str(pkg), online=False).generation == UNKNOWN


@pytest.mark.parametrize(
    "requirement, expected",
    [
        ("verifiers==0.3.1", CLASSIC),
        ("verifiers~=0.3.0", CLASSIC),
        ("verifiers<0.4", CLASSIC),
        ("verifiers>=0.4", V1),
        ("verifiers[all]>=0.4.1; python_version >= '3.11'", V1),
        ("verifiers>=0.1.5", None),
        ("verifiers", None),
    ],
)
def test_requirement_verdicts(requirement, expected):
    verdict = requirement_verdict(requirement)
    assert (verdict[0] if verdict else None) == expected


def test_installed_module_is_read_never_imported(tmp_path, monkeypatch):
    # Importing this module would exit the process: detection must only read it.
    write_module(tmp_path / "site", "trap_env", "import sys\nsys.exit(7)\n\n" + CLASSIC_SRC)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    found = detect("trap_env", online=False)
    assert found.generation == CLASSIC and found.where == "installed"
    assert "trap_env" not in sys.modules
    # a Hub id offline falls back to the installed module of the same name, and says so
    found = detect("someone/trap-env", online=False)
    assert found.generation == CLASSIC and "installed module 'trap_env'" in found.because()
    missing = detect("someone/not-installed-env", online=False)
    assert missing.generation == UNKNOWN and "offline" in missing.because()


def test_missing_path_is_bad_input(tmp_path):
    from vlab.core.result import UsageError

    with pytest.raises(UsageError):
        detect(str(tmp_path / "nope.py"), online=False)


@pytest.mark.parametrize("template", sorted(p.name for p in (SKILL_ROOT / "templates" / "environments").iterdir()))
def test_pack_templates_are_told_apart(template):
    found = detect(str(SKILL_ROOT / "templates" / "environments" / template), online=False)
    assert found.generation == (CLASSIC if template.startswith("classic") else V1), found


def test_static_verdict_agrees_with_the_loader(tmp_path):
    """In each venv, the generation it can load: the loader and the static reading agree."""
    from vlab.env import load_env

    if VERIFIERS.version and tuple(int(x) for x in VERIFIERS.version.split(".")[:2]) >= (0, 4):
        template = SKILL_ROOT / "templates" / "environments" / "v1-numeric"
    elif VERIFIERS.classic:
        template = SKILL_ROOT / "templates" / "environments" / "classic-numeric"
    else:
        pytest.skip("no verifiers generation installed")
    data = tmp_path / "data.jsonl"
    data.write_text('{"question": "1+1", "answer": "2"}\n{"question": "2+2", "answer": "4"}\n')
    env = load_env(str(template), {"dataset_path": str(data)})
    found = detect(str(template), online=False)
    assert found.generation == (V1 if "v1" in type(env).__name__.lower() else CLASSIC)


# -- the Hub --------------------------------------------------------------------------------------


class HubStub(PrimeStub):
    """`prime env inspect ID [PATH] -o json`: the listing, or one file, of each environment in ``sources``."""

    def __init__(self, sources: dict[str, dict[str, str]]):
        self.sources = sources
        super().__init__()

    def match(self, method: str, path: str):
        url = urlparse(path)
        if method == "GET" and url.path.endswith("/inspect"):
            parts = url.path.split("/")  # /api/v1/environmentshub/OWNER/NAME/@VERSION/inspect
            files = self.sources.get(f"{parts[4]}/{parts[5]}")
            if files is None:
                return 404, {"detail": "Environment not found"}
            want = parse_qs(url.query).get("path", [None])[0]
            if want is None:
                entries = [{"name": p, "path": p, "is_directory": False, "size": len(c)} for p, c in files.items()]
                return 200, {"data": {"kind": "directory", "path": "/", "entries": entries, "truncated": False}}
            if want not in files:
                return 404, {"detail": "no such file"}
            return 200, {"data": {"kind": "file", "path": want, "content": files[want], "truncated": False}}
        return super().match(method, path)


HUB = {
    "me/old-math": {"old_math.py": CLASSIC_SRC, "pyproject.toml": '[project]\nname = "old-math"\n'},
    "me/new-math": {"new_math.py": V1_SRC, "README.md": "# new"},
    "me/pinned": {"pinned.py": PLAIN_SRC, "pyproject.toml": '[project]\ndependencies = ["verifiers==0.3.1"]\n'},
}


@needs_prime
def test_hub_ids_are_read_with_prime_env_inspect(tmp_path, monkeypatch):
    with HubStub(HUB) as stub:
        for key, value in cli_env(stub.url, tmp_path / "home").items():
            monkeypatch.setenv(key, value)
        assert detect("me/old-math", timeout=120).generation == CLASSIC
        new = detect("me/new-math@0.2.0", timeout=120)
        assert new.generation == V1 and new.source == "me/new-math@0.2.0:new_math.py"
        pinned = detect("me/pinned", timeout=120)
        assert pinned.generation == CLASSIC and "pyproject.toml" in pinned.because()
        gone = detect("me/unknown-env", timeout=120)
        assert gone.generation == UNKNOWN and "not on the Environments Hub" in gone.because()
        paths = [r["path"] for r in stub.requests]
    assert any("/@0.2.0/inspect" in p for p in paths)


@needs_prime
def test_submit_refuses_a_classic_hub_environment_and_writes_nothing(tmp_path):
    out = tmp_path / "configs" / "run.toml"
    with HubStub(HUB) as stub:
        stub.responses.update(hub_routes("me/old-math", "me/new-math"))
        env = cli_env(stub.url, tmp_path / "home")
        r = run_script(
            TOOL, "--model", MODEL, "--env", "me/old-math", "--output", str(out), "--json", "--timeout", "120", env=env
        )
        obj = assert_result(r.json, TOOL, 1)
        gen = [c for c in obj["checks"] if c["id"] == "env-generation"]
        assert gen[0]["status"] == "fail" and "classic" in gen[0]["message"]
        assert "migrate_env.py ENV_PATH " in gen[0]["hint"] and "--runtime v1" in gen[0]["hint"]
        assert "prime env pull me/old-math" in gen[0]["hint"]
        assert any("migrate_env.py" in s for s in obj["next_steps"])
        assert not out.exists() and obj["data"]["written"] is False
        # --submit: nothing launched either
        r = run_script(
            TOOL,
            "--model",
            MODEL,
            "--env",
            "me/old-math",
            "--submit",
            "--yes",
            "--json",
            "--timeout",
            "120",
            env=env,
            cwd=tmp_path,
        )
        assert_result(r.json, TOOL, 1)
        assert not [q for q in stub.requests if q["method"] == "POST"]
        # the v1 neighbour passes the gate (its source is not here: written without a rehearsal)
        args = ["--env", "me/new-math", "--no-rehearse", "--output", str(out), "--json", "--timeout", "120"]
        r = run_script(TOOL, "--model", MODEL, *args, env=env)
        obj = assert_result(r.json, TOOL, 0)
        assert [c["status"] for c in obj["checks"] if c["id"] == "env-generation"] == ["pass"]
        assert obj["data"]["generations"][0]["generation"] == V1


def test_offline_unknown_generation_only_warns(tmp_path):
    args = ["--env", "me/not-installed-env", "--no-rehearse", "--offline", "--json"]
    r = run_script(TOOL, "--model", MODEL, *args, cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 0)
    gen = [c for c in obj["checks"] if c["id"] == "env-generation"]
    assert gen[0]["status"] == "warn" and "offline" in gen[0]["message"]


# -- prime-rl checkouts on each side of the drop ---------------------------------------------------

ORCH = "packages/prime-rl-configs/src/prime_rl/configs/orchestrator.py"
ORCH_080 = """\
class EnvConfig(BaseConfig):
    env: SerializeAsAny[vf.EnvConfig] = vf.SingleAgentEnvConfig()
    legacy: vf.LegacyEnvConfig = vf.LegacyEnvConfig()
    # env = { taskset = { id = "<id>" } } (v1) or legacy = { id = "<id>" } (v0)
"""
ORCH_MAIN = """\
class EnvConfig(BaseConfig):
    env: SerializeAsAny[vf.EnvConfig] = vf.SingleAgentEnvConfig()
    # env = { taskset = { id = "<id>" } }
"""


# A tiny RLConfig for --prime-rl-dir's own-schema check: a train source takes `legacy` only where
# the orchestrator source has it, as in prime-rl ("Extra inputs are not permitted" after the drop).
FAKE_RLCONFIG = """
from pydantic import BaseModel, ConfigDict

class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")

class Legacy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    args: dict = {}

class Source(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    ratio: float = 1.0
    env: _Open | None = None
    LEGACY_FIELD

class Train(_Open):
    source: list[Source] = []

class Orchestrator(_Open):
    train: Train

class RLConfig(_Open):
    orchestrator: Orchestrator
"""
FAKE_PYDANTIC_CONFIG = """
import tomllib
def cli(cls, args):
    return cls.model_validate(tomllib.load(open(args[1], "rb")))
"""


def checkout(root: Path, version: str, orchestrator: str | None) -> Path:
    """A fake prime-rl checkout: pyproject version, optionally the orchestrator config source and a tiny schema."""
    (root / "src" / "prime_rl").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "prime-rl"\nversion = "{version}"\n\n[project.scripts]\nrl = "prime_rl.entrypoints.rl:main"\n'
    )
    if orchestrator is not None:
        (root / ORCH).parent.mkdir(parents=True)
        (root / ORCH).write_text(orchestrator)
        legacy = "legacy: Legacy | None = None" if "legacy" in orchestrator else "pass"
        (root / ORCH).with_name("rl.py").write_text(FAKE_RLCONFIG.replace("LEGACY_FIELD", legacy))
        (root / ORCH).parents[2].joinpath("pydantic_config.py").write_text(FAKE_PYDANTIC_CONFIG)
    return root


@pytest.mark.parametrize(
    "version, source, classic, v1",
    [
        ("0.8.0", ORCH_080, True, True),
        ("0.8.1.dev70", ORCH_MAIN, False, True),
        ("0.8.0", None, None, True),  # no source: main's pyproject says 0.8.0 too, so undecided
        ("0.8.1.dev3", None, False, True),
        ("0.9.2", None, False, True),
        ("0.7.0", None, False, False),
    ],
)
def test_checkout_inspection(tmp_path, version, source, classic, v1):
    found = gate.inspect_checkout(checkout(tmp_path / "prl", version, source))
    assert (found.classic, found.v1) == (classic, v1), found


@pytest.mark.skipif(not shutil.which("git"), reason="git is not installed")
@pytest.mark.parametrize("tag, classic", [("v0.8.0", True), ("v0.8.1.dev67", False)])
def test_checkout_git_tag_decides_a_bare_080(tmp_path, tag, classic):
    root = checkout(tmp_path / "prl", "0.8.0", None)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"], ["tag", tag]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    found = gate.inspect_checkout(root)
    assert found.version == tag and found.classic is classic


@pytest.fixture
def installed(tmp_path):
    site = tmp_path / "site"
    write_module(site, "old_math", CLASSIC_SRC)
    write_module(site, "new_math", V1_SRC)
    return {"PYTHONPATH": str(site)}


def submit_prime_rl(tmp_path, env_id, prl, env, *extra):
    out = tmp_path / "out" / f"{env_id}-{prl.name if prl else 'none'}.toml"
    args = ["--target", "prime-rl", "--model", MODEL, "--env", env_id, "--offline", "--output", str(out), "--json"]
    args.append("--no-rehearse")  # installed modules, no source folder here: the gate is what is tested
    if prl is not None:
        args += ["--prime-rl-dir", str(prl), "--prime-rl-python", sys.executable, "--schema-timeout", "120"]
    r = run_script(TOOL, *args, *extra, env=env, cwd=tmp_path)
    return r, out


def test_prime_rl_target_on_each_side_of_the_drop(tmp_path, installed):
    old = checkout(tmp_path / "prl-080", "0.8.0", ORCH_080)
    new = checkout(tmp_path / "prl-main", "0.8.1.dev70", ORCH_MAIN)
    # a classic env on current prime-rl (no checkout given: current is assumed): refused
    for prl in (None, new):
        r, out = submit_prime_rl(tmp_path, "old_math", prl, installed)
        obj = assert_result(r.json, TOOL, 1)
        assert [c["status"] for c in obj["checks"] if c["id"] == "env-generation"] == ["fail"]
        assert "v0.8.0" in obj["checks"][[c["id"] for c in obj["checks"]].index("env-generation")]["hint"]
        assert not out.exists()
    # on v0.8.0 it is written as the legacy block, with its arguments
    r, out = submit_prime_rl(tmp_path, "old_math", old, installed, "--env-arg", "difficulty=3")
    obj = r.json
    assert [c["status"] for c in obj["checks"] if c["id"] == "env-generation"] == ["pass"], obj["checks"]
    source = tomllib.loads(out.read_text())["orchestrator"]["train"]["source"][0]
    assert source["legacy"] == {"id": "old_math", "args": {"difficulty": 3}} and "env" not in source
    schema = [c["status"] for c in obj["checks"] if c["id"] == "prime-rl-schema"]
    assert "pass" in schema and "fail" not in schema  # accepted by v0.8.0's own schema
    assert obj["data"]["prime_rl_checkout"]["classic"] is True
    # a v1 env runs on both sides, as env.taskset
    for prl in (old, new):
        r, out = submit_prime_rl(tmp_path, "new_math", prl, installed)
        assert [c["status"] for c in r.json["checks"] if c["id"] == "env-generation"] == ["pass"]
        assert (
            tomllib.loads(out.read_text())["orchestrator"]["train"]["source"][0]["env"]["taskset"]["id"] == "new_math"
        )
    # ... but not on a checkout older than 0.8.0
    r, out = submit_prime_rl(tmp_path, "new_math", checkout(tmp_path / "prl-070", "0.7.0", None), installed)
    assert r.returncode != 0 and not out.exists()
    assert "predates" in next(c for c in r.json["checks"] if c["id"] == "env-generation")["message"]


def test_a_config_with_legacy_blocks(tmp_path, installed):
    text = NATIVE_CONFIG.split("[[orchestrator.train.source]]")[0] + (
        '[[orchestrator.train.source]]\nname = "old"\nlegacy = { id = "old_math", args = { n = 2 } }\n'
    )
    path = tmp_path / "legacy.toml"
    path.write_text(text)
    old = checkout(tmp_path / "prl-080", "0.8.0", ORCH_080)
    # Hosted: refused, whatever the environment's source says
    r = run_script(TOOL, "--config", str(path), "--offline", "--json", cwd=tmp_path, env=installed)
    assert_result(r.json, TOOL, 1)
    assert "legacy" in next(c for c in r.json["checks"] if c["id"] == "env-generation")["message"]
    # prime-rl v0.8.0: checked in the current shape, written back as the legacy block
    out = tmp_path / "out.toml"
    r = run_script(
        TOOL, "--config", str(path), "--target", "prime-rl", "--prime-rl-dir", str(old),
        "--prime-rl-python", sys.executable, "--schema-timeout", "120", "--offline", "--output", str(out), "--json",
        cwd=tmp_path, env=installed,
    )  # fmt: skip
    assert [c["status"] for c in r.json["checks"] if c["id"] in ("env-generation", "unknown-keys")] == ["pass", "pass"]
    assert tomllib.loads(out.read_text())["orchestrator"]["train"]["source"][0]["legacy"]["args"] == {"n": 2}


# -- data that travels, placeholders, next steps ---------------------------------------------------


@pytest.mark.parametrize(
    "arg, hosted, prime_rl",
    [
        ("dataset_path=ABS", "fail", "warn"),  # an absolute path that exists here
        # relative: only the built wheel tells whether the run finds it (the rehearsal decides;
        # without it, --no-rehearse, a warning says it was not checked)
        ('dataset_path="data/train.jsonl"', "warn", "warn"),
        ('dataset_path="/nowhere/train.jsonl"', "fail", "fail"),  # missing: fails for prime-rl too
        ('data_file="./missing.csv"', "warn", "warn"),
        ('dataset_name="openai/gsm8k"', None, None),  # a Hub dataset: no finding
        ('split="train"', None, None),
        ("num_examples=5", None, None),
    ],
)
def test_local_data_paths(tmp_path, arg, hosted, prime_rl):
    from vlab.hosted.builder import parse_env_arg

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.jsonl").write_text("{}\n")
    key, value = parse_env_arg(arg.replace("ABS", f'"{tmp_path / "data" / "train.jsonl"}"'))
    doc = tomllib.loads(NATIVE_CONFIG)
    doc["orchestrator"]["train"]["source"][0]["env"]["taskset"][key] = value
    for target, expected in (("hosted", hosted), ("prime-rl", prime_rl)):
        found = [c.status for c in gate.data_path_checks(doc, target, cwd=tmp_path)]
        assert found == ([expected] if expected else []), (target, key, value)


def test_relative_data_path_without_rehearsal_is_a_warning_not_a_pass(tmp_path):
    """--no-rehearse: a relative path is neither refused by its look nor passed; the result says it was not checked."""
    (tmp_path / "data.jsonl").write_text("{}\n")
    common = ["--model", MODEL, "--env", "me/math", "--env-arg", 'dataset_path="data.jsonl"', "--offline", "--json"]
    for target in ("hosted", "prime-rl"):
        r = run_script(TOOL, *common, "--no-rehearse", "--target", target, "--output", f"{target}.toml", cwd=tmp_path)
        obj = assert_result(r.json, TOOL, 0)
        check = next(c for c in obj["checks"] if c["id"] == "env-data")
        assert check["status"] == "warn" and "not checked" in check["message"], target
        skipped = next(c for c in obj["checks"] if c["id"] == "rehearse")
        assert skipped["status"] == "skip" and "--no-rehearse" in skipped["message"]


def test_absolute_data_path_refused_for_a_hosted_run(tmp_path):
    (tmp_path / "data.jsonl").write_text("{}\n")
    arg = f'dataset_path="{tmp_path / "data.jsonl"}"'
    common = ["--model", MODEL, "--env", "me/math", "--env-arg", arg, "--offline", "--no-rehearse", "--json"]
    r = run_script(TOOL, *common, "--output", "h.toml", cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 1)
    check = next(c for c in obj["checks"] if c["id"] == "env-data")
    assert check["status"] == "fail" and "inside the environment package" in check["hint"]
    assert not (tmp_path / "h.toml").exists() and obj["data"]["written"] is False  # a failing config is not written
    r = run_script(TOOL, *common, "--target", "prime-rl", "--output", "p.toml", cwd=tmp_path)
    assert [c["status"] for c in assert_result(r.json, TOOL, 0)["checks"] if c["id"] == "env-data"] == ["warn"]


def test_placeholder_id_fails_offline(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(NATIVE_CONFIG.replace("primeintellect/reverse-text", "OWNER/my-env"))
    r = run_script(TOOL, "--config", str(path), "--offline", "--json", cwd=tmp_path)
    obj = assert_result(r.json, TOOL, 1)
    assert [c["status"] for c in obj["checks"] if c["id"] == "env-placeholder"] == ["fail"]
    # SKILL.md's own spelling is the placeholder too (issue 52); a real-looking id is not
    path.write_text(NATIVE_CONFIG.replace("primeintellect/reverse-text", "owner/my-env"))
    r = run_script(TOOL, "--config", str(path), "--offline", "--json", cwd=tmp_path)
    assert [c["status"] for c in r.json["checks"] if c["id"] == "env-placeholder"] == ["fail"]
    path.write_text(NATIVE_CONFIG.replace("primeintellect/reverse-text", "acme/color-toy"))
    r = run_script(TOOL, "--config", str(path), "--offline", "--json", cwd=tmp_path)
    assert not [c for c in r.json["checks"] if c["id"] == "env-placeholder"]


def test_next_steps_per_target(tmp_path):
    common = ["--model", MODEL, "--env", "me/math", "--offline", "--no-rehearse", "--json"]
    r = run_script(TOOL, *common, "--output", "hosted.toml", cwd=tmp_path)
    steps = " ".join(assert_result(r.json, TOOL, 0)["next_steps"])
    assert "--submit --yes" in steps and "uv run rl" not in steps
    r = run_script(TOOL, *common, "--target", "prime-rl", "--output", "self.toml", cwd=tmp_path)
    steps = " ".join(assert_result(r.json, TOOL, 0)["next_steps"])
    assert "--submit" not in steps and f"uv run rl @ {(tmp_path / 'self.toml').resolve()}" in steps
    assert "cd PRIME_RL_DIR" in steps
    # and --submit is for Hosted Training only
    r = run_script(TOOL, *common, "--target", "prime-rl", "--submit", "--yes", cwd=tmp_path)
    assert_result(r.json, TOOL, 2)


# -- preflight and local_train ---------------------------------------------------------------------


def test_preflight_reports_the_generation(tmp_path):
    classic = write_module(tmp_path / "old_env", "old_env", CLASSIC_SRC)
    v1 = write_module(tmp_path / "new_env", "new_env", V1_SRC)
    r = run_script("preflight", "--for", "hosted", "--offline", "--env", str(classic), "--json", cwd=tmp_path)
    gen = [c for c in r.json["checks"] if c["id"] == "env-generation"]
    assert gen[0]["status"] == "fail" and f"migrate_env.py {classic} " in gen[0]["hint"]
    assert r.returncode != 0 and r.json["data"]["env_generation"]["generation"] == CLASSIC
    r = run_script("preflight", "--for", "hosted", "--offline", "--env", str(v1), "--json", cwd=tmp_path)
    assert [c["status"] for c in r.json["checks"] if c["id"] == "env-generation"] == ["pass"]
    # other profiles report a classic environment without failing on it
    r = run_script("preflight", "--offline", "--env", str(classic), "--json", cwd=tmp_path)
    assert [c["status"] for c in r.json["checks"] if c["id"] == "env-generation"] == ["pass"]


def test_local_train_prime_rl_gate(tmp_path):
    pytest.importorskip("torch")
    classic = write_module(tmp_path / "old_env", "old_env", CLASSIC_SRC)
    args = ["--engine", "prime-rl", "--env", str(classic), "--model", "Qwen/Qwen3-0.6B", "--dry-run", "--gpus", "2"]
    r = run_script("local_train", *args, "--output-dir", str(tmp_path / "a"), "--json", cwd=tmp_path)
    obj = assert_result(r.json, "local_train", 1)
    assert not (tmp_path / "a" / "rl.toml").exists()
    assert any(f"migrate_env.py {classic}" in s for s in obj["next_steps"])
    old = checkout(tmp_path / "prl-080", "0.8.0", ORCH_080)
    r = run_script(
        "local_train", *args, "--prime-rl-dir", str(old), "--output-dir", str(tmp_path / "b"), "--json", cwd=tmp_path
    )
    assert_result(r.json, "local_train", 0)
    source = tomllib.loads((tmp_path / "b" / "rl.toml").read_text())["orchestrator"]["train"]["source"][0]
    assert source["legacy"]["id"] == "old_env" and "env" not in source
