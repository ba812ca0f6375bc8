"""The gate in front of every Hosted Training and prime-rl config: will the run start?

- **Generation** (``generation_checks``): Hosted Training and current prime-rl run v1 tasksets
  only (prime-rl PR #3226 dropped classic environments after v0.8.0). A classic environment is
  refused (exit 1) with the migration command; on a prime-rl checkout at v0.8.0 (``inspect_checkout``)
  it is written as that release's ``legacy = { id, args }`` block instead (``to_legacy``). An
  environment whose generation cannot be told is a warning, never a refusal.
- **Data that travels** (``data_path_checks``): an absolute path (or ``~``) fails for a hosted run
  (the platform cannot read it) and warns for a self-managed prime-rl run (it must exist on the
  machine that runs it; a missing one fails). A relative path is decided by evidence, not by its
  look: the rehearsal (``rehearse``) accepts it exactly when the built wheel ships the file; with
  ``rehearsing=False`` (``--no-rehearse``) it is a warning that says it was not checked.
- **Placeholders** (``placeholders.placeholder_checks``): an id still naming the docs' owner (``owner/``,
  ``OWNER/``, ``your-org/``, ``<owner>/``...) fails, offline too.
- The next step of a prime-rl config (``prime_rl_command``): ``uv run rl @ FILE`` in the checkout.

Used by ``submit.run_submit_training`` and ``vlab.train.primerl`` (local_train --engine prime-rl).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlab.core.installed import run_command
from vlab.core.invocation import command
from vlab.core.result import EXIT_FAIL, Check, ToolError
from vlab.env.generation import CLASSIC, UNKNOWN, V1, Finding, detect
from vlab.hosted.placeholders import placeholder_checks

# The last prime-rl release whose orchestrator runs classic environments (the `legacy` block).
LAST_CLASSIC_PRIME_RL = (0, 8, 0)
# Where a prime-rl checkout keeps its orchestrator config (newest layout first).
ORCHESTRATOR_CONFIG_FILES = (
    "packages/prime-rl-configs/src/prime_rl/configs/orchestrator.py",
    "src/prime_rl/configs/orchestrator.py",
    "src/prime_rl/orchestrator/config.py",
)
# migrate_env writes the v1 package as <module>_v1 next to the classic one (--path DIR elsewhere).
PUSH_V1 = "prime env push --path MIGRATED_FOLDER --runtime v1"


def migrate_command(env_path: str = "ENV_PATH") -> str:
    return f"{command('migrate_env')} {shlex.quote(env_path) if env_path != 'ENV_PATH' else env_path}"


def _check(id: str, status: str, message: str, hint: str = "") -> Check:
    return Check(id, status, message, hint, EXIT_FAIL)


# -- a prime-rl checkout -----------------------------------------------------------------------------


@dataclass
class Checkout:
    """What a prime-rl checkout runs: classic environments (its ``legacy`` block) and/or v1 tasksets."""

    path: str
    version: str | None = None
    classic: bool | None = None  # None: could not tell
    v1: bool | None = None
    evidence: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "version": self.version,
            "classic": self.classic,
            "v1": self.v1,
            "evidence": self.evidence,
        }


def _vtuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text.split("dev")[0].split("+")[0])[:3])


def _pyproject_version(root: Path) -> str | None:
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = re.search(r'^\s*version\s*=\s*"([^"]+)"', text, re.M)
    return m.group(1) if m else None


def _git_tag(root: Path) -> str | None:
    if not (root / ".git").exists():
        return None
    try:
        out = run_command(["git", "-C", str(root), "describe", "--tags", "--abbrev=0"], timeout=10)
    except ToolError:  # no git, or it did not answer: the tag is unknown
        return None
    return (out.stdout.strip() or None) if out.returncode == 0 else None


def inspect_checkout(path: str | Path) -> Checkout:
    """Read the checkout's own orchestrator config source first; its git tag, then pyproject version, second.

    prime-rl's main still says version 0.8.0 in pyproject.toml after the drop (its tags say
    v0.8.1.devN), so a bare pyproject 0.8.0 cannot tell the two apart and is left undecided.
    """
    root = Path(path).expanduser()
    tag, declared = _git_tag(root), _pyproject_version(root)
    found = Checkout(str(path), version=tag or declared)
    older = found.version is not None and _vtuple(found.version) < LAST_CLASSIC_PRIME_RL
    for rel in ORCHESTRATOR_CONFIG_FILES:
        source = root / rel
        if not source.is_file() or older:
            continue
        text = source.read_text(encoding="utf-8", errors="replace")
        has_legacy = bool(re.search(r"LegacyEnvConfig|^\s*legacy\s*:", text, re.M))
        has_taskset = "taskset" in text
        found.classic, found.v1 = has_legacy, has_taskset
        found.evidence.append(
            f"{rel} {'has' if has_legacy else 'has no'} `legacy` env block"
            f" and {'configures' if has_taskset else 'does not configure'} v1 tasksets"
        )
        return found
    if found.version is None:
        found.evidence.append("no orchestrator config source and no version found")
        return found
    v = _vtuple(found.version)
    where = "git tag" if tag else "pyproject version"
    if older:
        found.classic, found.v1 = False, False
        found.evidence.append(
            f"{where} {found.version}: older than v0.8.0, whose config shape this pack does not write"
        )
    elif v > LAST_CLASSIC_PRIME_RL or "dev" in found.version:
        found.classic, found.v1 = False, True
        found.evidence.append(f"{where} {found.version}: after v0.8.0, which dropped classic environments")
    elif tag:
        found.classic, found.v1 = True, True
        found.evidence.append(f"git tag {tag}: v0.8.0 runs both generations (classic through `legacy`)")
    else:
        found.v1 = True
        found.evidence.append(
            f"pyproject version {found.version} without its orchestrator source: v0.8.0 and the main branch "
            "after the drop both say 0.8.0 (check out the tag v0.8.0 to run a classic environment)"
        )
    return found


# -- the generation of each environment ---------------------------------------------------------------


def _sources(doc: dict) -> list[tuple[str, dict]]:
    out = []
    orch = doc.get("orchestrator") if isinstance(doc.get("orchestrator"), dict) else {}
    for kind in ("train", "eval"):
        sources = ((orch or {}).get(kind) or {}).get("source") if isinstance((orch or {}).get(kind), dict) else None
        if isinstance(sources, list):
            out += [(f"orchestrator.{kind}.source[{i}]", s) for i, s in enumerate(sources) if isinstance(s, dict)]
    return out


def source_id_and_args(source: dict) -> tuple[str | None, dict, bool]:
    """(environment id, its load arguments, written as a legacy block?) of one source table."""
    legacy = source.get("legacy")
    if isinstance(legacy, dict) and legacy.get("id"):
        return str(legacy["id"]), dict(legacy.get("args") or {}), True
    taskset = ((source.get("env") or {}).get("taskset") or {}) if isinstance(source.get("env"), dict) else {}
    env_id = taskset.get("id") if isinstance(taskset, dict) else None
    args = {k: v for k, v in taskset.items() if k != "id"} if isinstance(taskset, dict) else {}
    return (env_id if isinstance(env_id, str) else None), args, False


@dataclass
class GateOutcome:
    checks: list[Check] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    legacy_ids: set[str] = field(default_factory=set)  # classic ids to write as `legacy = {id, args}`

    @property
    def refused(self) -> bool:
        return any(c.id == "env-generation" and c.status == "fail" for c in self.checks)

    def migrate_steps(self) -> list[str]:
        """The migration command for each classic environment that was refused."""
        if not self.refused:
            return []
        return [migrate_command(_migrate_path(f)[0]) for f in self.findings if f.generation == CLASSIC]


def _migrate_path(finding: Finding) -> tuple[str, str]:
    """(the path to give migrate_env, how to get the source first)."""
    if finding.where in ("file", "package"):
        return finding.spec, ""
    if finding.where == "installed" and finding.source:
        return finding.source, ""
    return "ENV_PATH", (f" (get its source first: prime env pull {finding.spec})" if "/" in finding.spec else "")


def _refusal_hint(finding: Finding, target: str) -> str:
    path, fetch = _migrate_path(finding)
    first = (
        f"migrate it to a v1 taskset: {migrate_command(path)}{fetch} (it writes <module>_v1 next to it and "
        f"proves the port score for score), then {PUSH_V1} and train on the new id"
    )
    if target == "hosted":
        return first + "; or train it yourself on prime-rl v0.8.0 (--target prime-rl --prime-rl-dir CHECKOUT_AT_v0.8.0)"
    return (
        first + "; or pass --prime-rl-dir a prime-rl checkout at v0.8.0 (git checkout v0.8.0), "
        "the last release that runs classic environments"
    )


def generation_check(finding: Finding, where: str, target: str, checkout: Checkout | None) -> Check:
    """One environment's verdict for ``target`` ("hosted" | "prime-rl") and, for prime-rl, the checkout."""
    what = f"{where}: {finding.spec}"
    if finding.generation == V1:
        if target == "prime-rl" and checkout is not None and checkout.v1 is False:
            return _check(
                "env-generation",
                "fail",
                f"{what} is a v1 taskset, but the prime-rl checkout {checkout.path} predates the v1 config "
                f"({'; '.join(checkout.evidence)})",
                "update the checkout (git pull) to v0.8.0 or later",
            )
        return _check("env-generation", "pass", f"{what} is a v1 taskset ({finding.because()})")
    if finding.generation == CLASSIC:
        if target == "prime-rl" and checkout is not None and checkout.classic:
            return _check(
                "env-generation",
                "pass",
                f"{what} is a classic environment ({finding.because()}); written as `legacy = {{ id, args }}` "
                f"for the prime-rl checkout at {checkout.version or checkout.path}, which still runs classic environments",
            )
        runs = (
            "Hosted Training runs v1 tasksets only"
            if target == "hosted"
            else f"prime-rl after v0.8.0 runs v1 tasksets only{' (checkout: ' + '; '.join(checkout.evidence) + ')' if checkout else ''}"
        )
        return _check(
            "env-generation",
            "fail",
            f"{what} is a classic environment ({finding.because()}); {runs}, so the run would fail at start",
            _refusal_hint(finding, target),
        )
    return _check(
        "env-generation",
        "warn",
        f"{what}: generation unknown ({finding.because()})",
        "make sure it is a v1 taskset (its module's __all__ exports a vf.Taskset subclass); a classic one "
        f"(load_environment) fails at start: {migrate_command()}",
    )


def generation_checks(
    doc: dict,
    target: str,
    *,
    online: bool,
    timeout: float = 30.0,
    checkout: Checkout | None = None,
    classic_ids: set[str] | frozenset[str] = frozenset(),
    finder=detect,
) -> GateOutcome:
    """Every source's environment: detected (once per id), judged for ``target``; ``classic_ids``: ids the
    starting config named in legacy blocks (``from_legacy``)."""
    outcome = GateOutcome()
    seen: dict[str, Finding] = {}
    for where, source in _sources(doc):
        env_id, _, as_legacy = source_id_and_args(source)
        if not env_id:
            continue
        if env_id not in seen:
            if as_legacy or env_id in classic_ids:
                seen[env_id] = Finding(env_id, CLASSIC, ["the config names it in a `legacy` block"], where="config")
            else:
                try:
                    seen[env_id] = finder(env_id, online=online, timeout=timeout)
                except Exception as err:  # noqa: BLE001 - a detection failure is an unknown, not a crash
                    seen[env_id] = Finding(env_id, UNKNOWN, [f"could not inspect it: {err}"])
            outcome.findings.append(seen[env_id])
        check = generation_check(seen[env_id], where, target, checkout)
        outcome.checks.append(check)
        if check.status == "pass" and seen[env_id].generation == CLASSIC:
            outcome.legacy_ids.add(env_id)
    return outcome


def to_legacy(doc: Any, legacy_ids: set[str]) -> int:
    """Rewrite (a tomlkit document, in place) each source naming one of ``legacy_ids`` as
    ``legacy = { id, args }`` (prime-rl v0.8.0's classic block) instead of ``env.taskset``; returns how many."""
    import tomlkit

    changed = 0
    for _, source in _sources(doc):
        env_id, args, as_legacy = source_id_and_args(source)
        if as_legacy or env_id not in legacy_ids:
            continue
        block = tomlkit.inline_table()
        block["id"] = env_id
        if args:
            block["args"] = args
        del source["env"]
        source["legacy"] = block
        changed += 1
    return changed


def from_legacy(doc: Any) -> set[str]:
    """The reverse, so a config that already has legacy blocks is validated in the current shape."""
    import tomlkit

    ids = set()
    for _, source in _sources(doc):
        env_id, args, as_legacy = source_id_and_args(source)
        if not as_legacy or env_id is None:
            continue
        taskset = tomlkit.table()
        taskset["id"] = env_id
        for k, v in args.items():
            taskset[k] = v
        env = tomlkit.table()
        env["taskset"] = taskset
        agent = tomlkit.table()
        agent["harness"] = {"id": "null"}
        agent["runtime"] = {"type": "subprocess"}
        env["agent"] = agent
        del source["legacy"]
        source["env"] = env
        ids.add(env_id)
    return ids


def run_gate(
    result: Any,
    doc: Any,
    plain: dict,
    target: str,
    *,
    online: bool,
    timeout: float,
    prime_rl_dir: str | None = None,
    classic_ids: set[str] | frozenset[str] = frozenset(),
    finder=detect,
    rehearsing: bool = False,
) -> GateOutcome:
    """Every gate check of a config into ``result`` (a ``Result``); on a prime-rl checkout that runs them,
    classic sources of the tomlkit ``doc`` are rewritten as legacy blocks. ``rehearsing``: the rehearsal
    checks the data arguments against the built wheel, so they are left to it."""
    checkout = inspect_checkout(prime_rl_dir) if prime_rl_dir and target == "prime-rl" else None
    outcome = generation_checks(
        plain, target, online=online, timeout=timeout, checkout=checkout, classic_ids=classic_ids, finder=finder
    )
    data = [] if rehearsing else data_path_checks(plain, target)
    ids = [(where, source_id_and_args(source)[0]) for where, source in _sources(plain)]
    result.checks += placeholder_checks(ids) + outcome.checks + data
    result.data["generations"] = [f.to_dict() for f in outcome.findings]
    if checkout is not None:
        result.data["prime_rl_checkout"] = checkout.to_dict()
    if outcome.legacy_ids and target == "prime-rl":
        to_legacy(doc, outcome.legacy_ids)
    return outcome


def gate_text(
    result: Any,
    text: str,
    target: str,
    *,
    specs: dict[str, str],
    prime_rl_dir: str | None,
    online: bool = False,
    rehearsing: bool = False,
) -> tuple[str, GateOutcome]:
    """``run_gate`` on a config's text (local_train's rl.toml); ``specs`` maps a taskset id to what the
    user named (a path), which is what gets inspected. Returns the text to write and the outcome."""
    import tomllib

    import tomlkit

    doc = tomlkit.parse(text)

    def finder(env_id: str, online: bool, timeout: float) -> Finding:
        return detect(specs.get(env_id, env_id), online=online, timeout=timeout)

    outcome = run_gate(
        result,
        doc,
        tomllib.loads(text),
        target,
        online=online,
        timeout=30.0,
        prime_rl_dir=prime_rl_dir,
        finder=finder,
        rehearsing=rehearsing,
    )
    return tomlkit.dumps(doc), outcome


# -- data that travels ------------------------------------------------------------------------------

_PATH_KEY = re.compile(r"(^|_)(path|paths|file|files|dir|dirs|directory|folder)$", re.I)
_DATA_EXT = (".jsonl", ".json", ".csv", ".tsv", ".parquet", ".arrow", ".txt", ".yaml", ".yml", ".zip", ".gz")


def _strings(value: Any, key: str) -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(key, value)]
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _strings(v, f"{key}.{k}")]
    if isinstance(value, list):
        return [pair for i, v in enumerate(value) for pair in _strings(v, f"{key}[{i}]")]
    return []


def looks_local(key: str, value: str, cwd: Path) -> bool:
    """A value that names a file or folder on this machine (not a URL, not a Hub dataset name)."""
    v = value.strip()
    if not v or "://" in v or "\n" in v or len(v) > 1024:
        return False
    if v.startswith(("/", "~", "./", "../", ".\\", "..\\")) or re.match(r"^[A-Za-z]:[\\/]", v):
        return True
    last_key = re.split(r"[.\[]", key)[-1]
    if v.lower().endswith(_DATA_EXT) and ("/" in v or _PATH_KEY.search(last_key)):
        return True
    try:
        exists = (cwd / v).exists()
    except OSError:
        exists = False
    return exists and bool(_PATH_KEY.search(last_key) or "/" in v or "." in v)


def data_path_checks(doc: dict, target: str, cwd: Path | None = None) -> list[Check]:
    cwd = cwd or Path.cwd()
    checks = []
    for where, source in _sources(doc):
        env_id, args, _ = source_id_and_args(source)
        for key, value in [pair for k, v in args.items() for pair in _strings(v, k)]:
            if not looks_local(key, value, cwd):
                continue
            path = Path(value).expanduser()
            exists = (path if path.is_absolute() else cwd / path).exists()
            named = f"{where} ({env_id}): {key} = {value!r}"
            if not path.is_absolute():  # package-relative or not: only the built wheel can tell
                checks.append(
                    _check(
                        "env-data",
                        "warn",
                        f"{named} is a relative path; not checked (--no-rehearse): the run finds it only if the "
                        "environment's wheel ships the file",
                        "drop --no-rehearse to check it against the built wheel, or ship the file in the "
                        "package's data/ folder (listed in pyproject's [tool.hatch.build] include)",
                    )
                )
            elif target == "hosted":
                checks.append(
                    _check(
                        "env-data",
                        "fail",
                        f"{named} is a path on this machine; the hosted run cannot read it",
                        "ship the data inside the environment package (put the file in the package folder, list it "
                        "in pyproject's package data, load it relative to the module: Path(__file__).parent / NAME) "
                        "and push it again, or push the dataset to the Hugging Face Hub (Dataset.push_to_hub) and "
                        "pass its name",
                    )
                )
            elif exists:
                checks.append(
                    _check(
                        "env-data",
                        "warn",
                        f"{named} is a path on this machine; the machine that runs prime-rl must have it at the "
                        "same path"
                        + ("" if path.is_absolute() else " (relative paths resolve in the prime-rl checkout)"),
                        "use an absolute path, or ship the data inside the environment package",
                    )
                )
            else:
                checks.append(
                    _check(
                        "env-data",
                        "fail",
                        f"{named} names a path that does not exist",
                        "fix the path (absolute, on the machine that runs prime-rl), or ship the data inside the "
                        "environment package",
                    )
                )
    return checks


# -- next steps ---------------------------------------------------------------------------------------


def push_command(folder: str | None) -> str:
    """How a v1 environment reaches the Hub before a hosted run: ``prime env push`` from its folder, labelled
    ``--runtime v1`` (without it the Hub labels by the verifiers pin, ECOSYSTEM.md); SKILL.md's visibility
    (the user's choice: PUBLIC or PRIVATE)."""
    return f"prime env push --path {shlex.quote(folder) if folder else 'ENV_FOLDER'} --runtime v1 -v PRIVATE"


def prime_rl_command(config_path: str | Path, prime_rl_dir: str | None) -> str:
    """How a prime-rl config is run: ``uv run rl @ FILE`` from the checkout."""
    where = shlex.quote(str(prime_rl_dir)) if prime_rl_dir else "PRIME_RL_DIR"
    return f"cd {where} && uv run rl @ {shlex.quote(str(Path(config_path).resolve()))}"
