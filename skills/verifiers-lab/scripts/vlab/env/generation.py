"""Which verifiers generation an environment is (``v1``, ``classic`` or ``unknown``), with the evidence.

Decided without importing the user's code: the module's source is parsed (``ast``) and its
package's ``verifiers`` requirement read. A v1 package exports a ``vf.Taskset`` subclass in
``__all__``; a classic one defines (or re-exports) ``load_environment``. The requirement only
decides when the source does not: a pin below 0.4 is classic, a floor at 0.4 or above is v1
(0.4.0 has only the v1 API). prime's own push label uses a floor of 0.2.0, which mislabels
classic packages, so it is not followed here.

``detect(spec, online=..., timeout=...)`` takes a module file, a package folder, an installed
module or distribution name, or a Hub id ``owner/name[@version]``. A Hub id is read with
``prime env inspect`` (the package's source, without downloading it; prime 0.18's ``env info``
prints no runtime label), then, failing that, from the installed module of the same name.
Offline or not found, the answer is ``unknown`` and says why: it never guesses.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from vlab.core.files import looks_local
from vlab.core.installed import version_tuple
from vlab.core.result import UsageError
from vlab.env.spec import locate

V1 = "v1"
CLASSIC = "classic"
UNKNOWN = "unknown"

# Classic-only names a module reaches through `vf.` (verifiers 0.4.0 has none of them).
CLASSIC_API = (
    "SingleTurnEnv",
    "MultiTurnEnv",
    "ToolEnv",
    "StatefulToolEnv",
    "Rubric",
    "RubricGroup",
    "JudgeRubric",
    "MathRubric",
    "XMLParser",
    "ThinkParser",
    "MaybeThinkParser",
    "load_example_dataset",
)
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*(@[A-Za-z0-9][A-Za-z0-9.+_-]*)?$")
_INSTALLED_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass
class Finding:
    """The generation of one environment and how it was told."""

    spec: str
    generation: str = UNKNOWN  # v1 | classic | unknown
    evidence: list[str] = field(default_factory=list)
    where: str = ""  # file | package | installed | hub | "" (not found)
    source: str | None = None  # the file read, or the Hub path

    @property
    def known(self) -> bool:
        return self.generation != UNKNOWN

    def because(self) -> str:
        return "; ".join(self.evidence) or "no evidence"

    def to_dict(self) -> dict:
        return {
            "spec": self.spec,
            "generation": self.generation,
            "evidence": list(self.evidence),
            "where": self.where,
            "source": self.source,
        }


# -- the module's source ----------------------------------------------------------------------------


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):  # vf.Taskset[MyTask]
        return _base_name(node.value)
    return ""


def _string_list(node: ast.expr) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return None


def taskset_classes(tree: ast.AST) -> dict[str, str]:
    """Classes (anywhere in the tree) whose bases name a ``...Taskset``: name -> the base as written."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                name = _base_name(base)
                if name.endswith("Taskset"):
                    found[node.name] = ast.unparse(base)
    return found


@dataclass
class SourceFacts:
    """What one module's source says, before any verdict."""

    load_environment: str | None = None  # "defines" | "re-exports"
    all_names: list[str] | None = None
    tasksets: dict[str, str] = field(default_factory=dict)
    imports_v1: bool = False
    classic_calls: list[str] = field(default_factory=list)
    syntax_error: str | None = None


def read_source(text: str, filename: str = "<module>") -> SourceFacts:
    facts = SourceFacts()
    try:
        tree = ast.parse(text, filename=filename)
    except SyntaxError as err:
        facts.syntax_error = f"{filename}:{err.lineno}: {err.msg}"
        return facts
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "load_environment":
            facts.load_environment = "defines"
        elif isinstance(node, ast.ImportFrom) and any(a.name == "load_environment" for a in node.names):
            facts.load_environment = facts.load_environment or "re-exports"
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            facts.all_names = _string_list(node.value) or []
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "__all__":
            facts.all_names = _string_list(node.value) if node.value is not None else []
    facts.tasksets = taskset_classes(tree)
    classic_aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "verifiers.v1" or a.name.startswith("verifiers.v1."):
                    facts.imports_v1 = True
                elif a.name == "verifiers":
                    classic_aliases.add(a.asname or "verifiers")
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "verifiers.v1" or node.module.startswith("verifiers.v1."):
                facts.imports_v1 = True
            elif node.module == "verifiers":
                if any(a.name == "v1" for a in node.names):
                    facts.imports_v1 = True
                facts.classic_calls += [a.name for a in node.names if a.name in CLASSIC_API]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in classic_aliases
            and node.attr in CLASSIC_API
        ):
            facts.classic_calls.append(f"{node.value.id}.{node.attr}")
    facts.classic_calls = sorted(set(facts.classic_calls))
    return facts


def verdict_from_source(
    facts: SourceFacts, where: str, extra_tasksets: dict[str, str] | None = None
) -> tuple[str, list[str]]:
    """(generation, evidence) from one module's facts; ``extra_tasksets``: Taskset subclasses of sibling modules."""
    if facts.syntax_error:
        return UNKNOWN, [f"{where} does not parse ({facts.syntax_error})"]
    tasksets = {**(extra_tasksets or {}), **facts.tasksets}
    if facts.all_names is not None:
        exported = [n for n in facts.all_names if n in tasksets]
        if exported:
            ev = [f"{where}: __all__ exports {exported[0]}({tasksets[exported[0]]}), a Taskset subclass"]
            if facts.load_environment:
                ev.append(f"it also {facts.load_environment} load_environment, which current prime-rl ignores")
            return V1, ev
    if facts.load_environment:
        ev = [f"{where} {facts.load_environment} load_environment() (the classic entry point)"]
        if facts.classic_calls:
            ev.append("uses " + ", ".join(facts.classic_calls[:4]))
        return CLASSIC, ev
    if facts.all_names is not None and facts.imports_v1:
        return V1, [f"{where}: has __all__ and imports verifiers.v1"]
    if facts.classic_calls:
        return CLASSIC, [f"{where} uses the classic API ({', '.join(facts.classic_calls[:4])})"]
    return UNKNOWN, [f"{where} neither defines load_environment nor exports a Taskset subclass in __all__"]


# -- the package's verifiers requirement ------------------------------------------------------------

_CLAUSE = re.compile(r"(===|==|~=|!=|>=|<=|>|<)\s*([0-9][0-9A-Za-z.*+!-]*)")


def requirement_verdict(requirement: str) -> tuple[str, str] | None:
    """A ``verifiers`` requirement string -> (generation, why), or None when it allows both APIs."""
    spec = requirement.split(";")[0]
    m = re.match(r"\s*verifiers\s*(\[[^\]]*\])?\s*(.*)$", spec, re.I)
    if not m:
        return None
    clauses = _CLAUSE.findall(m.group(2))
    floor, below_04 = (0,), False
    for op, version in clauses:
        v = version_tuple(version.rstrip(".*")) or (0,)
        if op in (">=", ">", "~=", "==", "==="):
            floor = max(floor, v)
        if op in ("==", "===", "~=") and v < (0, 4):
            below_04 = True
        if op == "<" and v <= (0, 4):
            below_04 = True
        if op == "<=" and v < (0, 4):
            below_04 = True
    shown = requirement.strip()
    if below_04:
        return CLASSIC, f"requires {shown} (below 0.4: the classic API)"
    if floor >= (0, 4):
        return V1, f"requires {shown} (0.4 and later have only the v1 API)"
    return None


def _requirements_of_pyproject(path: Path) -> list[str]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    deps = (data.get("project") or {}).get("dependencies") or []
    return [d for d in deps if isinstance(d, str)]


def verifiers_requirements(requirements: list[str]) -> list[str]:
    return [r for r in requirements if re.match(r"\s*verifiers\b(?![-_.\w])", r, re.I) and "extra" not in r]


def pyproject_for(module_file: Path) -> Path | None:
    """The pyproject.toml of the package a module belongs to: its folder, or up to two above."""
    for folder in list(module_file.parents)[:3]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


# -- local and installed environments ---------------------------------------------------------------


def _combine(finding: Finding, facts_verdict: tuple[str, list[str]], reqs: list[str], req_where: str) -> Finding:
    generation, evidence = facts_verdict
    finding.evidence += evidence
    verdicts = [(r, requirement_verdict(r)) for r in verifiers_requirements(reqs)]
    decided = [v for _, v in verdicts if v]
    if generation != UNKNOWN:
        finding.generation = generation
        for gen, why in decided:
            if gen != generation:
                finding.evidence.append(f"note: {req_where} {why}, which disagrees with the source")
        return finding
    if decided:
        finding.generation = decided[0][0]
        finding.evidence.append(f"{req_where} {decided[0][1]}")
    elif verdicts:
        finding.evidence.append(f"{req_where} requires {verdicts[0][0].strip()}, which allows both APIs")
    return finding


def _sibling_tasksets(module_file: Path) -> dict[str, str]:
    """Taskset subclasses defined in the other modules of a package (``__init__.py`` re-exporting them)."""
    if module_file.name != "__init__.py":
        return {}
    found: dict[str, str] = {}
    for other in sorted(module_file.parent.glob("*.py"))[:50]:
        if other == module_file:
            continue
        try:
            found.update(taskset_classes(ast.parse(other.read_text(encoding="utf-8", errors="replace"))))
        except (SyntaxError, OSError, ValueError):
            continue
    return found


def detect_file(spec: str, module_file: Path, where: str) -> Finding:
    finding = Finding(spec, where=where, source=str(module_file))
    try:
        text = module_file.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        finding.evidence.append(f"cannot read {module_file}: {err}")
        return finding
    facts = read_source(text, module_file.name)
    verdict = verdict_from_source(facts, module_file.name, _sibling_tasksets(module_file))
    pyproject = pyproject_for(module_file)
    reqs = _requirements_of_pyproject(pyproject) if pyproject else []
    return _combine(finding, verdict, reqs, f"{pyproject.parent.name}/pyproject.toml" if pyproject else "")


def module_name_for(env_id: str) -> str:
    """How verifiers turns an id into a module: last segment, @version dropped, '-' -> '_'."""
    return env_id.split("/")[-1].split("@")[0].replace("-", "_")


def detect_installed(spec: str) -> Finding:
    """An installed module (found, never imported): its source and its distribution's requirements."""
    name = module_name_for(spec)
    finding = Finding(spec, where="installed")
    try:
        found = importlib.util.find_spec(name) if name.isidentifier() else None
    except (ImportError, ValueError):
        found = None
    origin = Path(found.origin) if found is not None and found.origin not in (None, "built-in", "frozen") else None
    if origin is None or not origin.is_file():
        finding.where = ""
        finding.evidence.append(f"no installed module {name!r}")
        return finding
    finding = detect_file(spec, origin, "installed")
    if finding.generation == UNKNOWN:
        reqs = _distribution_requirements(name)
        if reqs:
            _combine(finding, (UNKNOWN, []), reqs, f"the installed distribution of {name}")
    return finding


def _distribution_requirements(module: str) -> list[str]:
    import importlib.metadata as md

    try:
        dists = md.packages_distributions().get(module, [])
    except Exception:  # noqa: BLE001 - broken metadata of another package
        return []
    reqs: list[str] = []
    for dist in dists[:2]:
        try:
            reqs += md.requires(dist) or []
        except md.PackageNotFoundError:
            continue
    return reqs


def detect_local(spec: str) -> Finding:
    """A module file, a package folder, or an installed module; ``UsageError`` for a path that is not there."""
    path = Path(spec).expanduser()
    if spec.endswith(".py") or looks_local(spec):
        located = locate(spec)  # pure path logic, raises UsageError for a missing file
        return detect_file(spec, located.source, "file" if path.is_file() else "package")
    if _INSTALLED_ID.match(spec) or _HUB_ID.match(spec):
        return detect_installed(spec)
    raise UsageError(f"not an environment file, folder or id: {spec}")


# -- the Environments Hub ---------------------------------------------------------------------------

HUB_FILES_MAX = 3  # files read per environment (root listing, module, pyproject)


def detect_hub(env_id: str, timeout: float = 30.0) -> Finding:
    """Read the package's source on the Hub with ``prime env inspect`` (no download)."""
    from vlab.hosted import prime

    finding = Finding(env_id, where="hub")
    listing = prime.env_inspect(env_id, timeout=timeout)
    if not listing.ok:
        reason = {
            "not_found": "not on the Environments Hub (or its source is not readable)",
            "no_cli": "the prime CLI is not installed",
            "unreachable": "the Hub could not be reached",
            "timeout": "the Hub did not answer in time",
            "platform_error": "the Hub answered with a server error",
            "no_api_key": "prime has no API key",
            "unauthorized": "the Hub refused the API key",
        }.get(listing.state, f"`prime env inspect` failed: {listing.message}")
        finding.where = ""
        finding.evidence.append(f"{env_id}: {reason}")
        return finding
    data = listing.data if isinstance(listing.data, dict) else {}
    entries = [e for e in data.get("entries") or [] if isinstance(e, dict)]
    paths = {str(e.get("path") or e.get("name") or "").lstrip("/"): bool(e.get("is_directory")) for e in entries}
    module = module_name_for(env_id)
    candidates = [p for p in (f"{module}.py", f"{module}/__init__.py", "__init__.py") if p in paths]
    if not candidates and paths.get(module):
        candidates = [f"{module}/__init__.py"]
    if not candidates:
        candidates = sorted(
            p for p, is_dir in paths.items() if not is_dir and p.endswith(".py") and not p.startswith(("test", "setup"))
        )[:1]
    verdict: tuple[str, list[str]] = (UNKNOWN, [f"{env_id}: no Python module found in its Hub listing"])
    for path in candidates[: HUB_FILES_MAX - 1]:
        text = _hub_file(env_id, path, timeout)
        if text is None:
            continue
        finding.source = f"{env_id}:{path}"
        verdict = verdict_from_source(read_source(text, path), f"{env_id}:{path}")
        break
    reqs: list[str] = []
    if verdict[0] == UNKNOWN and "pyproject.toml" in paths:
        text = _hub_file(env_id, "pyproject.toml", timeout)
        if text:
            try:
                deps = (tomllib.loads(text).get("project") or {}).get("dependencies") or []
                reqs = [d for d in deps if isinstance(d, str)]
            except tomllib.TOMLDecodeError:
                pass
    return _combine(finding, verdict, reqs, f"{env_id}:pyproject.toml")


def _hub_file(env_id: str, path: str, timeout: float) -> str | None:
    from vlab.hosted import prime

    call = prime.env_inspect(env_id, path, timeout=timeout)
    if not call.ok or not isinstance(call.data, dict) or call.data.get("kind") != "file":
        return None
    content = call.data.get("content")
    return content if isinstance(content, str) else None


# -- one entry point --------------------------------------------------------------------------------


def is_hub_id(spec: str) -> bool:
    """owner/name[@version], and nothing written like a local path (``core.files.looks_local``)."""
    return bool(_HUB_ID.match(spec)) and not looks_local(spec)


def detect(spec: str, online: bool = True, timeout: float = 30.0) -> Finding:
    """The generation of ``spec`` (file, folder, installed name, Hub id) with the evidence."""
    if is_hub_id(spec):
        notes: list[str] = []
        if online:
            hub = detect_hub(spec, timeout=timeout)
            if hub.known:
                return hub
            notes += hub.evidence
        else:
            notes.append(f"{spec}: offline, the Hub was not asked")
        installed = detect_installed(spec)
        if installed.known:
            installed.evidence.insert(0, f"read from the installed module {module_name_for(spec)!r}")
            return installed
        installed.evidence = notes + installed.evidence
        return installed
    return detect_local(spec)
