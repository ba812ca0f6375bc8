"""Inspect a dataset: read a bounded sample, profile columns, find roles and the answer format, recommend."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from vlab import catalog
from vlab.core.invocation import command, doc
from vlab.core.result import EXIT_USAGE, Result, UsageError
from vlab.inspect import labels, splits
from vlab.inspect.columns import profile_columns, truncate
from vlab.inspect.formats import WARN_BELOW, calculator_annotations, detect_answer_format
from vlab.inspect.hub import looks_like_hub_id, read_hub
from vlab.inspect.readers import read_local
from vlab.inspect.recommend import recommend
from vlab.inspect.roles import confident, detect_roles
from vlab.inspect.sample import DEFAULT_SAMPLE, MAX_MALFORMED_SHARE, Sample
from vlab.kinds.number.values import extract_boxed

SNIPPETS = ("classic", "v1", "none")


@dataclass(frozen=True)
class InspectRequest:
    """What inspect_dataset is asked: the source, how much of it to read, columns named by hand, the snippet shown."""

    source: str | None
    config: str | None = None
    split: str | None = None
    sample: int = DEFAULT_SAMPLE
    timeout: float = 30.0
    prompt_column: str | tuple[str, ...] | None = None  # several columns: the prompt joins them in this order
    answer_column: str | None = None
    snippet: str = "none"  # the API generation whose ready code the human report prints
    label_names: tuple[str, ...] | None = None  # --label-names a,b,c: the names of class ids 0, 1, 2
    label_map: str | None = None  # --label-map FILE: a label map file (index/name lines, or JSON)

    def __post_init__(self) -> None:
        if isinstance(self.prompt_column, (list, tuple)):
            columns = tuple(str(c) for c in self.prompt_column)
            if len(set(columns)) != len(columns):
                raise UsageError("--prompt-column names the same column twice", hint="name each column once, in order")
            object.__setattr__(self, "prompt_column", columns[0] if len(columns) == 1 else columns or None)
        if not self.source:
            raise UsageError("no dataset given", hint="pass a file, a folder or a hub id: inspect_dataset data.jsonl")
        if self.snippet not in SNIPPETS:
            raise UsageError(f"unknown snippet {self.snippet!r}", hint="one of: " + ", ".join(SNIPPETS))
        if isinstance(self.label_names, str):
            object.__setattr__(self, "label_names", tuple(n.strip() for n in self.label_names.split(",")))
        if self.label_names is not None:
            names = tuple(self.label_names)
            if len(names) < 2 or not all(names) or len({n.casefold() for n in names}) != len(names):
                raise UsageError(
                    f"--label-names needs two or more distinct, non-empty names (got {','.join(names)!r})",
                    hint="--label-names anger,joy,optimism,sadness (the names of ids 0, 1, 2, ... in order)",
                )
            if self.label_map:
                raise UsageError("--label-names and --label-map both given", hint="give the names one way")
        if self.prompt_column is not None and self.prompt_column == self.answer_column:
            raise UsageError(
                f"--prompt-column and --answer-column are both {self.prompt_column!r}",
                hint="the answer must come from another column than the prompt (else every answer is in the prompt)",
            )


def read_sample(
    source: str, n: int = DEFAULT_SAMPLE, split: str | None = None, config: str | None = None, timeout: float = 30.0
) -> Sample:
    """The first ``n`` rows of a local file/folder or a hub dataset."""
    if n < 1:
        raise UsageError(f"--sample must be at least 1 (got {n})")
    if looks_like_hub_id(source):
        return read_hub(source, n, config=config, split=split, timeout=timeout)
    return read_local(source, n, split=split, config=config)


def analyse(
    sample: Sample,
    prompt_column: str | tuple[str, ...] | None = None,
    answer_column: str | None = None,
    label_names: tuple[list[str], str] | None = None,
) -> dict[str, Any]:
    """Everything the tool reports about a sample, as the stable ``data`` shape.

    ``prompt_column`` may name several columns: the prompt is their texts joined in that order
    (``roles.prompt.columns``). ``label_names``: (names, where from) the user gave for integer
    class ids (``labels.names_given``); else a label map file beside local data is looked for.
    """
    columns = profile_columns(sample.rows, sample.columns, sample.features)
    by_name = {c.name: c for c in columns}
    prompt_columns = [prompt_column] if isinstance(prompt_column, str) else list(prompt_column or [])
    for flag, name in [*(("--prompt-column", c) for c in prompt_columns), ("--answer-column", answer_column)]:
        if name is not None and name not in by_name:
            raise UsageError(f"{flag} {name!r} is not a column; columns: {', '.join(by_name)}")
    roles = detect_roles(columns)
    if prompt_columns:
        first = prompt_columns[0]
        kind = "messages" if by_name[first].type == "messages" else "text"
        if kind == "messages" and len(prompt_columns) > 1:
            raise UsageError(f"--prompt-column {first!r} holds chat messages; it cannot be joined with other columns")
        roles["prompt"] = {
            "column": prompt_columns[-1],
            "confidence": 1.0,
            "reason": "given with --prompt-column"
            + (f" ({len(prompt_columns)} columns, joined in order)" if len(prompt_columns) > 1 else ""),
            "kind": kind,
        }
        if len(prompt_columns) > 1:
            roles["prompt"]["columns"] = prompt_columns
    if answer_column:
        roles["answer"] = {"column": answer_column, "confidence": 1.0, "reason": "given with --answer-column"}
    fmt = None
    if roles["answer"]:
        ans = roles["answer"]["column"]
        found = roles.get("choices") or {}
        choices = found.get("columns") or found.get("column")
        tests = (roles.get("tests") or {}).get("column")
        class_names, names_from = by_name[ans].class_names, "ClassLabel feature" if by_name[ans].class_names else None
        ids = None if class_names or choices or tests else labels.integer_labels([r.get(ans) for r in sample.rows])
        if ids is not None:
            names, names_from = label_names or _map_beside(sample)
            if names and ids[-1] < len(names):
                class_names = names
            elif names:
                names_from = f"{names_from} names {len(names)} labels but the data has id {ids[-1]}"
        multiple = (roles.get("multiple") or {}).get("column")
        fmt = detect_answer_format(sample.rows, ans, choices, class_names, tests_column=tests, multiple_column=multiple)
        if catalog.answer_kind(fmt["type"]).check != "math":  # several answers and units: the numeric templates'
            roles["multiple"] = roles["unit"] = None
            if fmt.get("answer_list", {}).get("flag_column"):
                del fmt["answer_list"]["flag_column"], fmt["answer_list"]["flagged_rows"]
        if fmt["type"] == "class_label":
            values = [r.get(ans) for r in sample.rows]
            if class_names:
                fmt["label_names"] = list(class_names)
                fmt["label_names_from"] = names_from
                fmt["extraction"] = f"the integer is a class id: name = names[answer] (names from {names_from})"
                if label_names and names_from == "ClassLabel feature":  # the file's own names win over the user's
                    given, where = label_names
                    fmt["label_names_ignored"] = {"names": given, "from": where, "agrees": given == list(class_names)}
            elif ids is not None:
                fmt["integer_labels"] = True
                if names_from:
                    fmt["label_names_problem"] = names_from
            fmt["distribution"] = labels.distribution(values, class_names)
    if fmt and catalog.calculator_templates(fmt["type"]):  # worked solutions with <<48/2=24>>: a calculator fits
        prompt_cols = set((roles["prompt"] or {}).get("columns") or [(roles["prompt"] or {}).get("column")])
        others = [c.name for c in columns if c.name not in prompt_cols and c.name != roles["answer"]["column"]]
        found = calculator_annotations(sample.rows, [roles["answer"]["column"], *others])
        if found:
            fmt["calculator_annotations"] = found
    rec = None
    if confident(roles["prompt"]) and confident(roles["answer"]) and fmt:
        rec = recommend(roles, fmt, sample.loader)
    return {
        "source": {
            "source": sample.source,
            "kind": sample.kind,
            "rows_sampled": len(sample.rows),
            "total_rows": sample.total_rows,
            "bytes": sample.bytes_total,
            "notes": sample.notes,
            "malformed": {
                "count": sample.problem_count,
                "share": round(sample.problem_share, 4),
                "examples": [p.to_dict() for p in sample.problems],
            },
            "loader": sample.loader,
            "splits": sample.splits,
            "splits_from": sample.splits_from,
        },
        "columns": [c.to_dict() for c in columns],
        "roles": roles,
        "answer_format": fmt,
        "recommendation": rec,
        "references": _references(sample, roles),
    }


def _references(sample: Sample, roles: dict[str, Any]) -> dict[str, Any] | None:
    """The references' lengths and the completion budget a reply needs (``inspect.references``)."""
    from vlab.inspect.references import completion_budget

    answer = (roles.get("answer") or {}).get("column")
    budget = completion_budget(sample.rows, [row.get(answer) for row in sample.rows] if answer else None)
    return budget.to_dict() if budget else None


def inspect_dataset(request: InspectRequest, result: Result) -> dict[str, Any]:
    """Read, analyse and record the verdicts as checks on ``result``; returns the data too."""
    sample = read_sample(
        request.source, request.sample, split=request.split, config=request.config, timeout=request.timeout
    )
    given = labels.names_given(request.label_names, request.label_map)
    data = analyse(sample, request.prompt_column, request.answer_column, given)
    result.data.update(data)
    add_checks(result, sample, data, request)
    return data


def add_checks(result: Result, sample: Sample, data: dict[str, Any], request: InspectRequest | None = None) -> None:
    src = data["source"]
    size = f", {_size(src['bytes'])}" if src["bytes"] else ""
    total = f" of {src['total_rows']:,}" if src["total_rows"] is not None else ""
    first = "" if src["total_rows"] == src["rows_sampled"] else "the first "
    result.passed("read", f"read {first}{src['rows_sampled']}{total} rows from {sample.source} ({sample.kind}{size})")

    if sample.problem_count:
        where = "; ".join(f"{p.where}: {p.reason}" for p in sample.problems[:3])
        msg = (
            f"{sample.problem_count} of {sample.units_read} rows read are malformed "
            f"({sample.problem_share:.0%}): {where}"
        )
        if sample.problem_share > MAX_MALFORMED_SHARE:
            result.fail(
                "malformed-rows",
                msg,
                "fix the file: an environment loading it will fail or skip rows",
                exit_code=EXIT_USAGE,
            )
        else:
            result.warn(
                "malformed-rows",
                msg + "; carried on without them",
                "fix or drop those rows before training: datasets' loader stops at the first one",
            )
    for note in sample.notes:
        if note.startswith("stopped"):
            result.warn("partial-read", note)

    roles = data["roles"]
    for role in ("prompt", "answer"):
        found = roles[role]
        if confident(found):
            result.passed(
                f"{role}-column", f"{role}: {found['column']!r} ({found['confidence']:.2f}) - {found['reason']}"
            )
        else:
            guess = f" best guess {found['column']!r} ({found['confidence']:.2f}): {found['reason']}." if found else ""
            result.fail(
                f"{role}-column",
                f"no {role} column identified with confidence.{guess} Tried {roles['tried'][role]}",
                f"name it with --{role}-column COLUMN (columns: {', '.join(c['name'] for c in data['columns'])})",
            )
    if roles.get("choices"):
        result.passed("choices-column", f"choices: {roles['choices']['column']!r} - {roles['choices']['reason']}")
    for role in ("tests", "entry_point", "criteria", "answers_correct", "answers_incorrect", "multiple", "unit"):
        if roles.get(role):
            result.passed(
                f"{role.replace('_', '-')}-column", f"{role}: {roles[role]['column']!r} - {roles[role]['reason']}"
            )

    for role in ("prompt", "answer"):
        col = next((c for c in data["columns"] if roles[role] and c["name"] == roles[role]["column"]), None)
        if col and col["nulls"]:
            result.warn(
                f"{role}-nulls",
                f"{col['nulls']} of {col['rows']} sampled rows have no {role} ({col['name']!r})",
                "drop or fill them: an empty answer scores every completion 0",
            )

    fmt = data["answer_format"]
    if fmt:
        msg = f"answer format: {fmt['label']} - {fmt['match_share']:.0%} of {fmt['rows']} rows match"
        if fmt.get("extraction_share") is not None:
            msg += f", extraction works on {fmt['extraction_share']:.0%}"
        # numeric and math answers in other forms: listed only where the numeric templates cannot read them
        written = _read_as_written(sample, data) if fmt["match_share"] < WARN_BELOW else None
        if fmt["match_share"] >= WARN_BELOW:
            result.passed("answer-format", msg)
        elif written is not None and not written["unread"] and not written["unasked"]:
            result.passed("answer-format", msg + "; the other rows are forms the numeric templates read (answer-forms)")
        else:
            listed = written["unread"] if written is not None else [m["row"] for m in fmt["non_matching"]]
            more = len(listed) - 5 + (written["unasked"] if written is not None else 0)
            rows = ", ".join(str(i) for i in listed[:5]) + (f" and {more} more" if more > 0 else "")
            result.warn(
                "answer-format",
                msg + f"; not matching: rows {rows}",
                "normalise those answers, or the reward scores them 0 whatever the model says",
            )
        if written and written["read"]:
            shown = ", ".join(f"{i} ({truncate(v, 30)!r})" for i, v in written["read"][:5])
            more = f" and {len(written['read']) - 5} more" if len(written["read"]) > 5 else ""
            result.passed(
                "answer-forms",
                f"{len(written['read'])} answers outside the {fmt['type']} format are read as written by math-verify "
                f"(rows {shown}{more}): the numeric templates score them; keep them as they are",
            )
        listed = fmt.get("answer_list")
        if listed:
            result.passed("answer-list", _list_message(listed, fmt))
        if roles.get("unit"):
            column = roles["unit"]["column"]
            units = sorted({str(r.get(column)).strip() for r in sample.rows if r.get(column) not in (None, "")})
            result.passed(
                "answer-unit",
                f"{column!r} holds the answer's unit ({', '.join(map(repr, units[:5])) or 'empty in the rows read'}): "
                "the numeric templates say it in the prompt and accept it after the value, never require it",
            )
        if fmt["type"] == "long_text":
            result.warn(
                "judge-needed",
                "answers are long free text: exact match would score ~0; use an LLM judge",
                "a judge costs API calls per rollout: start from the judge template and run "
                "test_reward --judge stub (injection probes, verdict parsing, cost per step) before paying for one",
            )
    splits.check_splits(result, sample)
    refs = data.get("references")
    if refs:
        result.passed(
            "completion-budget",
            f"the references ({refs['from']}) run to a median of {refs['median_tokens']} tokens and "
            f"{refs['p75_tokens']} at the 75th percentile ({refs['rows']} rows read): give a reply about "
            f"{refs['needed_completion_tokens']} tokens (max_tokens / max_completion_tokens); local_train's default "
            "256 and the hosted template's 512 cut longer ones",
        )
    if fmt and fmt["type"] == "class_label":
        labels.check_label_names(result, fmt)
    rec = data["recommendation"]
    if rec:
        prompt = roles["prompt"].get("columns") or roles["prompt"]["column"]
        result.summary = (
            f"prompt={prompt!r} answer={roles['answer']['column']!r} format={fmt['type']} -> {rec['reward_strategy']}"
        )
        if rec.get("calculator"):
            result.passed("calculator", rec["calculator"]["why"])
        _next_steps(result, rec, request)


# The report file and the environment name as SKILL.md's steps 2 and 3 write them.
REPORT_FILE = "inspect.json"
ENV_NAME = "my-env"


def _next_steps(result: Result, rec: dict[str, Any], request: InspectRequest | None) -> None:
    """SKILL.md's step 3: new_env --from-inspect on this report, with the template it takes and why."""
    saved = f"{REPORT_FILE} is this report: {_rerun(request)} --json > {REPORT_FILE}"
    create = f"{command('new_env')} {ENV_NAME} --from-inspect {REPORT_FILE}"
    if not rec["template"]:
        result.step(
            f"no template scores this answer kind: write the reward from data.recommendation.snippets "
            f"(`{_rerun(request)} --snippet v1` prints it) and {doc('environment-guide')}"
        )
        return
    other = next(((g, t) for g, t in rec["templates"].items() if t and g != rec["generation"]), None)
    result.step(
        f"{create}   # creates environments/{ENV_NAME.replace('-', '_')}/ from templates/environments/{rec['template']}/ "
        f"({rec['why']}), the columns filled in"
        + (f"; --api {other[0]} for templates/environments/{other[1]}/" if other else "")
        + f"; {saved}"
    )
    tool = rec.get("calculator")
    if tool:
        result.step(
            f"{create} --template {tool['template']}   # the same data with a calculator tool over several turns "
            f"(the worked solutions carry calculator annotations); then size its rollouts: "
            f"{command('test_reward')} environments/{ENV_NAME.replace('-', '_')}/ --seq-len SEQ_LEN"
        )


def _list_message(listed: dict[str, Any], fmt: dict[str, Any]) -> str:
    """The answer-list check: how the answers are held, and what the lists are read as."""
    held = f"the answers are {listed['held_as']} ({listed['rows']} rows)"
    if listed["shape"] == "aliases":
        return (
            f"{held}: aliases, any one is right ({listed['several_rows']} rows list several); compared by exact match "
            "after QA normalisation against every alias, never sent to a judge"
        )
    flagged = (
        f"; {listed['flagged_rows']} rows flagged by {listed['flag_column']!r} hold several answers that must all be "
        "given (in one box, separated by commas, in any order)"
        if listed.get("flagged_rows")
        else ""
    )
    if listed["shape"] == "several":
        return f"{held}: {listed['why']}; read as {fmt['type']} answers{flagged}"
    return f"{held}: one answer each, unwrapped and read as {fmt['type']}{flagged}"


def _rerun(request: InspectRequest | None) -> str:
    """This inspect_dataset run as a command (its source and the flags that change the report)."""
    if request is None:
        return f"{command('inspect_dataset')} DATA"
    args = [request.source or "DATA"]
    for flag, value in (("--config", request.config), ("--split", request.split)):
        if value:
            args += [flag, value]
    if request.sample != DEFAULT_SAMPLE:
        args += ["--sample", str(request.sample)]
    prompt = request.prompt_column
    for column in [prompt] if isinstance(prompt, str) else list(prompt or []):
        args += ["--prompt-column", column]
    if request.answer_column:
        args += ["--answer-column", request.answer_column]
    if request.label_names:
        args += ["--label-names", ",".join(request.label_names)]
    if request.label_map:
        args += ["--label-map", request.label_map]
    return " ".join([command("inspect_dataset"), *(shlex.quote(str(a)) for a in args)])


def _read_as_written(sample: Sample, data: dict[str, Any]) -> dict[str, Any] | None:
    """The numeric and math answers that do not match the format, scored as the numeric templates score them:
    a reply boxing the gold is read back whole (its braces balance) and math-verify reads the gold as itself
    (``same_value(gold, gold)``: 6 - 5i, 52_8). {"read": [(row, gold)], "unread": [row], "unasked": count past
    formats.READ_BACK_AT_MOST}, also on the data's answer_format; None for other formats, or where the
    comparison cannot load (math-verify missing: every such row is then listed)."""
    fmt = data["answer_format"]
    if fmt["type"] not in ("number", "math") or not fmt.get("non_matching_rows"):
        return None
    try:
        from vlab.kinds.number.equivalence import same_value, template_answers

        same_value("1/2", "1/2")  # the comparison loads (math-verify, the templates' rewrites), else rows stay listed
        reference_of, several_flag = template_answers().reference_of, template_answers().several_flag
    except (ImportError, OSError, RuntimeError):
        return None
    column = data["roles"]["answer"]["column"]
    flag = (data["roles"].get("multiple") or {}).get("column")
    read, unread = [], []
    for i in fmt["non_matching_rows"]:
        gold = sample.rows[i].get(column)
        if isinstance(gold, bool) or not isinstance(gold, (str, int, float, list, tuple)):
            gold = ""
        # as the numeric templates read it: a list unwrapped, math mode's $ dropped, several answers one by one
        answer, parts = reference_of(gold, several_flag(sample.rows[i].get(flag)) if flag else None)
        texts = parts or [answer]
        if answer and all(extract_boxed(f"\\boxed{{{t}}}") == t and same_value(t, t) for t in texts):
            read.append((i, answer))
        else:
            unread.append(i)
    unasked = fmt["rows"] - fmt["matched"] - len(fmt["non_matching_rows"])
    fmt["read_as_written"] = [{"row": i, "value": truncate(v, 80)} for i, v in read]
    fmt["not_read"] = unread
    return {"read": read, "unread": unread, "unasked": unasked}


def _map_beside(sample: Sample) -> tuple[list[str] | None, str | None]:
    """(names, file name) of a label map beside local data; (None, why) when the file found is none."""
    path = None if sample.kind == "hub" else labels.find_label_map(sample.source)
    if path is None:
        return None, None
    try:
        return labels.read_label_map(path), path.name
    except UsageError as err:
        return None, f"{path.name} was found but not read: {err.message}"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
