"""Create an environment package from one of the pack's templates.

A template is a working package in ``templates/environments/<template>/``: one module named after the
template (``classic_numeric.py``), its ``pyproject.toml`` and ``README.md``. Scaffolding copies it under a
new name (module, distribution name, class names) and rewrites the column-mapping constants at the top of
the module (``QUESTION_COLUMN = "..."``) from ``inspect_dataset --json`` output or from flags. The new folder
appears whole or not at all: it is assembled in a temporary folder and renamed into place. An existing
package is refused unless ``--force``: then the template's files are written again and everything else in
the folder (``data/``, files the user added) stays. The name's rules are ``scaffold.names``.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from vlab import catalog
from vlab.core.installed import verifiers_info
from vlab.core.invocation import command, doc
from vlab.core.paths import templates_dir
from vlab.core.result import UsageError
from vlab.inspect.taskwords import task_sentence
from vlab.scaffold.names import Names, validate_name  # validate_name: also imported from here (migrate)
from vlab.scaffold.place import put_in_place, refuse_existing

TEMPLATES_DIR = templates_dir() / "environments"
LABEL_NAMES = "LABEL_NAMES"  # the classification templates' names of integer class ids
TASK = "TASK"  # the classification templates' task sentence, written from the data's own words
# The module constants that make up what the model is shown (the judge's own prompt is not the policy's).
PROMPT_CONSTANT = re.compile(r"^(TASK|SYSTEM_PROMPT\w*|PROMPT\w*|USER_PROMPT\w*|INSTRUCTIONS?\w*)\s*=", re.M)


def templates() -> list[str]:
    """The template names (the catalog's; tests/test_catalog.py proves each folder matches)."""
    return catalog.template_names()


def generation(template: str) -> str:
    return catalog.generation(template)


def role_constants(template: str) -> dict[str, str]:
    """role -> the module constant that holds its column, for a template."""
    return catalog.template(template).role_constants


@dataclass
class Mapping:
    """Dataset columns for the template's roles, and where each came from."""

    columns: dict[str, str | list[str]] = field(default_factory=dict)  # role -> column (or columns, in order)
    sources: dict[str, str] = field(
        default_factory=dict
    )  # role -> "flag" / "inspect_dataset (0.95)" / "template default"
    dataset: dict[str, str | None] = field(
        default_factory=dict
    )  # Hub defaults: dataset_name, dataset_config, dataset_split
    recommended: dict[str, str | None] = field(default_factory=dict)  # inspect_dataset's template per generation
    calculator: dict[str, str | None] = field(default_factory=dict)  # its calculator tool template, if it names one
    answer_format: str | None = None
    prompt_kind: str | None = None
    inspect_status: str | None = None
    local_path: str | None = None  # the local data file inspect_dataset read (for next steps, never written)
    label_names: list[str] | None = None  # names of integer class ids (inspect_dataset found them)
    label_names_from: str | None = None
    # whole programs: the completion budget inspect_dataset read from the reference programs' length
    max_completion_tokens: int | None = None
    source: str | None = None  # the data inspect_dataset read (a path or a Hub id): its name's words state the task
    source_config: str | None = None


def read_inspect(path: str) -> dict:
    """The result object `inspect_dataset --json` printed, from a file or '-' (stdin)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise UsageError(
            f"cannot read inspect_dataset output {path}: {err.strerror or err}",
            hint=f"save it first: {command('inspect_dataset')} DATA --json > inspect.json",
        ) from err
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        raise UsageError(
            f"{path} is not JSON ({err.msg} at line {err.lineno})",
            hint="pass the file `inspect_dataset --json` wrote, unchanged",
        ) from err
    if not isinstance(obj, dict) or obj.get("tool") != "inspect_dataset" or not isinstance(obj.get("data"), dict):
        raise UsageError(
            f"{path} is not inspect_dataset --json output (no tool='inspect_dataset' result)",
            hint=f"{command('inspect_dataset')} DATA --json > inspect.json",
        )
    return obj


def mapping_from_inspect(obj: dict) -> Mapping:
    data = obj["data"]
    roles = data.get("roles") or {}
    rec = data.get("recommendation") or {}
    found = Mapping(inspect_status=obj.get("status"))
    for role in (r.name for r in catalog.ROLES):
        entry = roles.get(role)
        if isinstance(entry, dict) and entry.get("column"):
            many = entry.get("columns")
            found.columns[role] = (
                [str(c) for c in many] if isinstance(many, list) and len(many) > 1 else str(entry["column"])
            )
            conf = entry.get("confidence")
            found.sources[role] = (
                f"inspect_dataset ({conf:.2f})" if isinstance(conf, (int, float)) else "inspect_dataset"
            )
    mapping = rec.get("column_mapping") or {}
    for role in ("prompt", "answer"):  # the recommendation has the final say (it honours --*-column overrides)
        if mapping.get(role) and role not in found.columns:
            found.columns[role] = str(mapping[role])
            found.sources[role] = "inspect_dataset"
    found.prompt_kind = mapping.get("prompt_kind") or (roles.get("prompt") or {}).get("kind")
    source = data.get("source") or {}
    if isinstance(source, dict) and isinstance(source.get("source"), str):
        found.source = source["source"]
        loader = source.get("loader") or {}
        found.source_config = loader.get("config") if isinstance(loader, dict) else None
    found.recommended = dict(rec.get("templates") or {})
    tool = rec.get("calculator")
    if isinstance(tool, dict) and isinstance(tool.get("templates"), dict):
        found.calculator = dict(tool["templates"])
    if rec.get("template") and not any(found.recommended.values()):
        found.recommended[generation(rec["template"])] = rec["template"]
    fmt = data.get("answer_format") or {}
    found.answer_format = fmt.get("type") if isinstance(fmt, dict) else None
    loader = (data.get("source") or {}).get("loader") or {}
    if isinstance(loader, dict) and loader.get("hub"):
        # A Hub dataset: the package can default to it (a local path never goes into a package).
        found.dataset = {
            "dataset_name": loader["hub"],
            "dataset_config": loader.get("config"),
            "dataset_split": loader.get("split"),
        }
    elif isinstance(loader, dict) and isinstance(loader.get("data_files"), str):
        found.local_path = loader["data_files"]
    elif isinstance(loader, dict) and isinstance(loader.get("data_files"), list) and len(loader["data_files"]) == 1:
        found.local_path = str(loader["data_files"][0])  # one split file of a folder (train.jsonl)
    elif isinstance(loader, dict) and isinstance(loader.get("problem_folders"), str):
        found.local_path = loader["problem_folders"]  # a folder of problem folders: the program templates read it
    budget = fmt.get("max_completion_tokens") if isinstance(fmt, dict) else None
    if isinstance(budget, int) and not isinstance(budget, bool) and budget > 0:
        found.max_completion_tokens = budget
    names = (fmt.get("label_names") if isinstance(fmt, dict) else None) or rec.get("label_names")
    if isinstance(names, list) and len(names) >= 2 and all(isinstance(n, str) for n in names):
        found.label_names = names
        found.label_names_from = fmt.get("label_names_from") if isinstance(fmt, dict) else None
    return found


def _literal(value) -> str:
    """A column value as Python source: "col", ["a", "b"], None, 1."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(json.dumps(str(v)) for v in value) + "]"
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    return json.dumps(str(value))


def _replace_constant(text: str, constant: str, value) -> str:
    pattern = re.compile(rf"^{constant} = .*$", re.M)
    if len(pattern.findall(text)) != 1:
        raise RuntimeError(f"template defines {constant} {len(pattern.findall(text))} times, expected once")
    return pattern.sub(lambda _: f"{constant} = {_literal(value)}", text)


def _replace_default(text: str, field_name: str, value: str | None) -> str:
    """Set a `dataset_*` default, both as a function argument and as a config field."""
    pattern = re.compile(rf"(\b{field_name}: [^=\n]+= )([^,\n]+)")
    if not pattern.search(text):
        return text
    return pattern.sub(lambda m: m.group(1) + ("None" if value is None else json.dumps(value)), text, count=1)


def render_module(template: str, names: Names, mapping: Mapping) -> str:
    tpl = Names.of(template)
    text = (TEMPLATES_DIR / template / f"{tpl.module}.py").read_text(encoding="utf-8")
    text = text.replace(tpl.prefix, names.prefix).replace(tpl.module, names.module)
    for role, constant in role_constants(template).items():
        if role in mapping.columns:
            text = _replace_constant(text, constant, mapping.columns[role])
        elif role in _optional(template) and mapping.inspect_status is not None:
            text = _replace_constant(text, constant, None)  # the dataset has none: the module does without
    for constant, value in settings_for(template, mapping.answer_format).items():
        text = _replace_constant(text, constant, value)
    if mapping.label_names and re.search(rf"^{LABEL_NAMES} = ", text, re.M):
        text = _replace_constant(text, LABEL_NAMES, mapping.label_names)
    if re.search(rf"^{TASK} = ", text, re.M):
        text = _replace_constant(text, TASK, task_for(mapping))
    if mapping.dataset.get("dataset_name"):
        for key in ("dataset_name", "dataset_config", "dataset_split"):
            if key != "dataset_split" or mapping.dataset.get(key):
                text = _replace_default(text, key, mapping.dataset.get(key))
        if generation(template) == "classic":  # the new dataset's eval split is unknown: evaluate on its rows
            text = _replace_default(text, "eval_split", None)
    ast.parse(text)  # a template edit that breaks the module must never reach the user
    return text


def task_for(mapping: Mapping) -> str:
    """The classification templates' TASK: the data's own words (its name, its label column), never a guess."""
    label = mapping.columns.get("answer")
    return task_sentence(
        mapping.source or mapping.local_path, mapping.source_config, label if isinstance(label, str) else None
    )


def prompt_lines(module_text: str) -> list[tuple[int, str, str]]:
    """(line number, constant, its first line) of each module constant that makes up the policy's prompt."""
    out = []
    for m in PROMPT_CONSTANT.finditer(module_text):
        line = module_text.count("\n", 0, m.start()) + 1
        first = module_text[m.start() :].split("\n", 1)[0]
        out.append((line, m.group(1), first))
    return out


def _optional(template: str) -> set[str]:
    """Roles the template does without (the code templates: no entry point column, no reference solution)."""
    return {c.role for c in catalog.template(template).columns if c.optional}


def settings_for(template: str, answer_format: str | None) -> dict:
    """Module constants the catalog sets for this answer kind (e.g. INDEX_BASE = 1 for 1-based keys)."""
    return dict(catalog.template(template).settings.get(answer_format or "", {}))


def render_text(template: str, names: Names, text: str) -> str:
    tpl = Names.of(template)
    return text.replace(tpl.prefix, names.prefix).replace(tpl.module, names.module).replace(tpl.dist, names.dist)


def constants_in(module_text: str, template: str, settings: bool = False) -> dict:
    """The column constants (or, with ``settings``, the catalog's per-kind settings) a module defines, read with ast."""
    if settings:
        wanted = {k for kind in catalog.template(template).settings.values() for k in kind}
    else:
        wanted = set(role_constants(template).values())
    found = {}
    for node in ast.parse(module_text).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in wanted:
                try:
                    found[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    continue
    return found


# The completion budget the program templates' README quickstart evaluates with, replaced by inspect_dataset's.
README_TOKENS = re.compile(r"(?<= -t )\d+\b")


def readme_text(template: str, names: Names, mapping: Mapping) -> str:
    """The template's README under the package's names, the pack's own test_reward command, and (whole programs)
    inspect_dataset's completion budget in its evaluation command."""
    text = render_text(template, names, (TEMPLATES_DIR / template / "README.md").read_text(encoding="utf-8"))
    text = text.replace('python "$SKILL_DIR/scripts/test_reward.py"', command("test_reward"))
    if mapping.max_completion_tokens:
        text = README_TOKENS.sub(str(mapping.max_completion_tokens), text)
    return text


def create_package(
    template: str, names: Names, mapping: Mapping, parent: Path, force: bool = False
) -> tuple[Path, list[Path], list[str]]:
    """Write <parent>/<module>/ from the template; an existing one is refused, or with ``force`` written again
    keeping what the template does not write. Returns the folder, its files and the names kept."""
    target = parent / names.module
    replace = refuse_existing(target, names, force)
    source = TEMPLATES_DIR / template
    tpl = Names.of(template)
    files = {
        f"{names.module}.py": render_module(template, names, mapping),
        "pyproject.toml": render_text(template, names, (source / "pyproject.toml").read_text(encoding="utf-8")),
        "README.md": readme_text(template, names, mapping),
    }
    extra = sorted(
        p
        for p in source.iterdir()
        if p.is_file()
        and p.name not in {f"{tpl.module}.py", "pyproject.toml", "README.md"}
        and not p.name.endswith((".pyc",))
    )
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{names.module}.", dir=parent))
    written = [*files, *(p.name.replace(tpl.module, names.module, 1) for p in extra)]
    try:
        for name, text in files.items():
            (staging / name).write_text(text, encoding="utf-8")
        for path in extra:  # companion modules (classic_code_harness.py) take the package's name
            shutil.copy2(path, staging / path.name.replace(tpl.module, names.module, 1))
        os.chmod(staging, 0o755)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    kept = put_in_place(staging, target, written, replace)
    return target, sorted(p for p in target.iterdir() if p.name in written), kept


# -- the new_env run -----------------------------------------------------------


@dataclass(frozen=True)
class ScaffoldRequest:
    """What the user asked new_env for."""

    name: str | None
    template: str | None = None
    from_inspect: str | None = None  # inspect_dataset --json output file, or "-"
    api: str | None = None  # classic | v1, with from_inspect and no template
    columns: dict[str, str | list[str]] = field(default_factory=dict)  # role -> column(s), from flags (they win)
    path: str = "environments"
    list_only: bool = False
    force: bool = False  # write an existing package's template files again (data/ and added files stay)

    def __post_init__(self) -> None:
        if not self.list_only and not self.name:
            raise UsageError("missing the environment name", hint=f"{command('new_env')} NAME --template TEMPLATE")


def choose_template(req: ScaffoldRequest, mapping: Mapping | None, result) -> str:
    available = templates()
    if req.template:
        if req.template not in available:
            raise UsageError(f"unknown template {req.template!r}", hint="one of: " + ", ".join(available))
        if mapping and req.template in mapping.calculator.values():
            result.passed("template", f"template {req.template} (inspect_dataset's calculator tool suggestion)")
        elif mapping and mapping.recommended and req.template not in mapping.recommended.values():
            wanted = mapping.recommended.get(generation(req.template))
            result.warn(
                "template",
                f"using {req.template}; inspect_dataset recommended {wanted or 'no template'} for this dataset",
                hint="check the answer format fits this template's reward, or take the recommended one",
            )
        else:
            result.passed("template", f"template {req.template} (chosen with --template)")
        return req.template
    if mapping is None:
        raise UsageError(
            "no template: pass --template, or --from-inspect with inspect_dataset --json output",
            hint=f"{command('new_env')} --list",
        )
    info = verifiers_info()
    api = req.api or catalog.preferred_generation(info.classic)
    chosen = mapping.recommended.get(api)
    if not chosen:
        others = {k: v for k, v in mapping.recommended.items() if v}
        raise UsageError(
            f"inspect_dataset recommends no {api} template for this dataset (answer format: {mapping.answer_format})",
            hint=(f"take --api {next(iter(others))} ({next(iter(others.values()))}), or " if others else "")
            + "write the environment from inspect_dataset's snippet (--snippet classic|v1), "
            "or force one with --template",
        )
    why = (
        "--api"
        if req.api
        else f"verifiers {info.version} is installed, which has the classic API"
        if api == "classic"
        else "v1 is the default; --api classic for " + catalog.CLASSIC_FOR
    )
    result.passed("template", f"template {chosen} (inspect_dataset's recommendation for the {api} API; {why})")
    return chosen


def resolve_columns(req: ScaffoldRequest, template: str, mapping: Mapping, result) -> None:
    """Flags override inspect_dataset; roles still unknown keep the template's default (with a warning)."""
    many = {c.role: c.many for c in catalog.template(template).columns}
    read_if_present = {c.role: c.default for c in catalog.template(template).columns if c.if_present}
    for role, constant in role_constants(template).items():
        flag_value = req.columns.get(role)
        if isinstance(flag_value, list) and len(flag_value) == 1:
            flag_value = flag_value[0]
        if isinstance(flag_value, list) and not many.get(role):
            raise UsageError(
                f"{template} reads one {role} column; {catalog.role(role).flag} was given {len(flag_value)} times",
                hint=f"give {catalog.role(role).flag} once",
            )
        if flag_value:
            mapping.columns[role], mapping.sources[role] = flag_value, catalog.role(role).flag
        if isinstance(mapping.columns.get(role), list) and not many.get(role):
            mapping.columns[role] = mapping.columns[role][0]
        if role in mapping.columns:
            result.passed(f"column-{role}", f"{constant} = {mapping.columns[role]!r} (from {mapping.sources[role]})")
        elif role in _optional(template) and mapping.inspect_status is not None:
            result.passed(f"column-{role}", f"{constant} = None (the dataset has no {role} column)")
        elif role in read_if_present:  # read only where a row has it
            result.passed(f"column-{role}", f"{constant} = {read_if_present[role]!r} (where a row has it)")
        elif role == "choices" and mapping.inspect_status is not None:
            raise UsageError(
                f"template {template} needs a column with the list of choices, and none is known",
                hint="pass --choices-column COLUMN (a list of strings per row)",
            )
        else:
            result.warn(
                f"column-{role}",
                f"{constant} keeps the template's default; no {role} column was given",
                hint=f"pass {catalog.role(role).flag} COLUMN, or --from-inspect",
            )
    unused = [catalog.role(r).flag for r in req.columns if r not in role_constants(template)]
    if unused:
        raise UsageError(
            f"template {template} has no {', '.join(unused)} role", hint="drop the flag, or pick another template"
        )


def check_fit(template: str, mapping: Mapping, result) -> None:
    if mapping.inspect_status and mapping.inspect_status != "pass":
        result.warn(
            "inspect",
            f"the inspect_dataset run passed in reported status '{mapping.inspect_status}'",
            hint="read its failed checks before trusting the column mapping",
        )
    if mapping.answer_format:
        fits = catalog.template(template).reads
        if mapping.answer_format in fits:
            result.passed("answer-format", f"answer format '{mapping.answer_format}' fits {template}'s reward")
        else:
            result.warn(
                "answer-format",
                f"answer format '{mapping.answer_format}' is not one {template}'s reward "
                f"reads (it reads: {', '.join(sorted(fits))})",
                hint=f"edit the reward in the new module, then prove it with {command('test_reward')}",
            )
    if mapping.prompt_kind == "messages":
        result.warn(
            "prompt-kind",
            "the prompt column holds chat messages; the templates read plain text",
            hint="map the messages to text in the module's row conversion, or use a text column",
        )


def scaffold_environment(req: ScaffoldRequest, result) -> None:
    """The whole new_env run: pick the template, map the columns, create the package, say what is next."""
    if req.list_only:
        for name in templates():
            result.passed(f"template-{name}", f"{name} ({generation(name)} API)")
        result.data["templates"] = templates()
        result.summary = f"{len(templates())} templates"
        return
    names = validate_name(req.name, req.path)
    refuse_existing(Path(req.path) / names.module, names, req.force)  # before any other work
    result.passed("name", f"env id {names.dist!r}, module {names.module!r}")
    mapping = mapping_from_inspect(read_inspect(req.from_inspect)) if req.from_inspect else None
    template = choose_template(req, mapping, result)
    mapping = mapping or Mapping()
    resolve_columns(req, template, mapping, result)
    check_fit(template, mapping, result)
    if mapping.label_names:
        shown = ", ".join(f"{i}={n}" for i, n in enumerate(mapping.label_names) if n)
        if LABEL_NAMES in (TEMPLATES_DIR / template / f"{Names.of(template).module}.py").read_text(encoding="utf-8"):
            result.passed(
                "label-names",
                f"{LABEL_NAMES} = {shown} (from {mapping.label_names_from or 'inspect_dataset'}): the prompt offers "
                "the names and each reference answer is a name",
            )
        else:
            result.warn(
                "label-names",
                f"inspect_dataset named the class ids ({shown}) but {template} has no {LABEL_NAMES} to take them",
                hint="use a classification template, or map the ids to names in the module's row conversion",
            )

    folder, files, kept = create_package(template, names, mapping, Path(req.path), req.force)
    module_text = (folder / f"{names.module}.py").read_text(encoding="utf-8")
    written = constants_in(module_text, template)
    result.passed(
        "created",
        f"{folder}/ ({', '.join(p.name for p in files)})"
        + (f"; written again (--force), kept: {', '.join(kept) or 'nothing else'}" if req.force else ""),
    )
    gen = generation(template)
    info = verifiers_info()
    if gen == "classic" and not info.classic:
        result.warn(
            "verifiers",
            f"{template} is classic code; the installed verifiers {info.version} has no classic API",
            hint='test it in an environment with pip install "verifiers==0.3.1"',
        )
    if gen == "v1" and not info.v1:
        result.warn(
            "verifiers",
            f"{template} is a v1 taskset; the installed verifiers {info.version} has no verifiers.v1",
            hint='pip install "verifiers>=0.4"',
        )
    result.data.update(
        {
            "package": str(folder),
            "module": names.module,
            "env_id": names.dist,
            "template": template,
            "api": gen,
            "columns": written,
            "settings": constants_in(module_text, template, settings=True),
            "files": [str(p) for p in files],
            "dataset_defaults": mapping.dataset or None,
            "label_names": mapping.label_names,
            "max_completion_tokens": mapping.max_completion_tokens,
        }
    )
    result.summary = f"created {folder}/ from {template} ({gen} API)"
    env_args = (
        ""
        if mapping.dataset
        else " --env-args " + shlex.quote(json.dumps({"dataset_path": mapping.local_path or "YOUR_DATA.jsonl"}))
    )
    result.step(f"{command('test_reward')} {folder}/{env_args}")
    if not mapping.dataset:  # the package names no dataset: loading it without one is an error, by design
        result.step(
            f"to train on another machine, ship the data in the package: copy it to {folder}/data/ and pass "
            f"dataset_path as its file name (see {doc('environment-guide')})"
        )
    if mapping.max_completion_tokens:  # whole programs: the config templates' 512 tokens cut most of them short
        budget = mapping.max_completion_tokens
        result.step(
            f"give completions room for whole programs, --max-tokens {budget} when you run "
            f"{command('submit_training')} (vf-eval -t {budget}); the figure is inspect_dataset's "
            "answer_format.max_completion_tokens, from the reference programs' length"
        )
    module_file = folder / f"{names.module}.py"
    lines = prompt_lines(module_text)
    if lines:
        where = ", ".join(f"{name} (line {n})" for n, name, _ in lines)
        task = next((first for _, name, first in lines if name == TASK), None)
        result.step(
            f"edit the prompt the model sees in {module_file}: {where}"
            + (
                f"; {task.strip()} holds only the data's name: say in it what the labels mean for this data (what "
                "is classified, towards what), since the model sees only that sentence and the label names"
                if task
                else ": say the task in the data's own terms, and keep the answer and any solution out of it"
            )
        )
        result.data["prompt_lines"] = [{"line": n, "constant": name} for n, name, _ in lines]
    result.step(f"edit {folder}/README.md (task, dataset, reward) and {folder}/pyproject.toml (description, tags)")
    result.step(f"pip install -e {folder}   # then evaluate it: see {doc('evaluation-guide')}")
