"""The catalog is the one knowledge table: every template folder matches its entry, inspect's
recommendation and new_env's choices are read from it, and its correctness rule gives the
answers test_reward and check_reward_distribution gave before they shared it."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import re
import tomllib

import dataset_fixtures as fx
import pytest
from conftest import SKILL_ROOT, run_script

from vlab import catalog
from vlab.core.result import Result, UsageError
from vlab.inspect import analyse, formats, read_sample
from vlab.inspect.recommend import recommend
from vlab.scaffold import create as scaffold

# the pack's own logic, the same for both verifiers generations: run once, with verifiers hidden (conftest)
pytestmark = pytest.mark.once

TEMPLATES = SKILL_ROOT / "templates" / "environments"
ENTRIES = {t.name: t for t in catalog.TEMPLATES}


# -- the template folders ---------------------------------------------------------------------


def test_every_folder_has_an_entry_and_every_entry_a_folder():
    folders = sorted(p.name for p in TEMPLATES.iterdir() if p.is_dir())
    assert folders == catalog.template_names()
    assert len(ENTRIES) == len(catalog.TEMPLATES)  # no name twice


def _module(t: catalog.Template) -> ast.Module:
    return ast.parse((TEMPLATES / t.name / f"{t.module}.py").read_text(encoding="utf-8"))


def _column_constants(tree: ast.Module) -> list[tuple[str, str]]:
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name.endswith("_COLUMN"):
                assert isinstance(node.value, ast.Constant), f"{name} ships as a plain string"
                out.append((name, node.value.value))
    return out


def _list_aware(t: catalog.Template) -> dict[str, bool]:
    """Per column constant: does the module read it as one column or a list of columns (the entry's `many`)?"""
    source = (TEMPLATES / t.name / f"{t.module}.py").read_text(encoding="utf-8")
    return {c.constant: f"isinstance({c.constant}, str)" in source for c in t.columns}


def _weight(node: ast.expr) -> float:
    return float(ast.literal_eval(node))


def _declared_rewards(t: catalog.Template, tree: ast.Module) -> list[tuple[str, float]]:
    """The reward functions and metrics the module declares, read from its source."""
    if t.generation == "classic":
        rubrics = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and ast.unparse(n.func) == "vf.Rubric"
            and {k.arg for k in n.keywords} >= {"funcs"}
        ]
        math = [
            n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and "vf.MathRubric" in map(ast.unparse, n.bases)
        ]
        assert len(rubrics) + len(math) == 1, "a classic template builds one vf.Rubric(funcs=, weights=) or MathRubric"
        if math:  # verifiers' MathRubric declares correct_answer (weight 1); more come with add_reward_func
            added = [
                (ast.unparse(n.args[0]), _weight(next(k.value for k in n.keywords if k.arg == "weight")))
                for n in ast.walk(tree)
                if isinstance(n, ast.Call) and ast.unparse(n.func).endswith(".add_reward_func")
            ]
            return [("correct_answer", 1.0), *added]
        kw = {k.arg: k.value for k in rubrics[0].keywords}
        names = [ast.unparse(f) for f in kw["funcs"].elts]
        weights = [_weight(w) for w in kw["weights"].elts]
        assert len(names) == len(weights)
        return list(zip(names, weights))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any("vf.Task[" in ast.unparse(b) for b in node.bases):
            for fn in node.body:
                if not isinstance(fn, ast.AsyncFunctionDef | ast.FunctionDef):
                    continue
                for dec in fn.decorator_list:
                    if isinstance(dec, ast.Call) and ast.unparse(dec.func) == "vf.reward":
                        out.append((fn.name, _weight(next(k.value for k in dec.keywords if k.arg == "weight"))))
                    elif ast.unparse(dec) == "vf.metric":
                        out.append((fn.name, 0.0))
    return out


@pytest.mark.parametrize("t", catalog.TEMPLATES, ids=lambda t: t.name)
def test_template_folder_matches_its_entry(t):
    folder = TEMPLATES / t.name
    assert (folder / f"{t.module}.py").is_file() and (folder / "pyproject.toml").is_file()
    tree = _module(t)
    source = ast.unparse(tree)

    # generation: the name's prefix, the import, the verifiers pin
    assert t.name.startswith(f"{t.generation}-")
    assert catalog.generation(t.name) == t.generation
    imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert ("verifiers.v1" in imports) == (t.generation == "v1") and ("verifiers" in imports) == (
        t.generation == "classic"
    )
    deps = " ".join(tomllib.loads((folder / "pyproject.toml").read_text())["project"]["dependencies"])
    assert ("verifiers>=0.3.1,<0.4" in deps) if t.generation == "classic" else ("verifiers>=0.4" in deps)

    # the column constants: exactly the entry's, in order, with its defaults
    assert _column_constants(tree) == [(c.constant, c.default) for c in t.columns]
    assert _list_aware(t) == {c.constant: c.many for c in t.columns}  # a list of columns is read where promised
    for constant in {k for kind in t.settings.values() for k in kind}:
        assert re.search(rf"^{constant} = ", (TEMPLATES / t.name / f"{t.module}.py").read_text(), re.M), constant
    assert {c.role for c in t.columns} <= {r.name for r in catalog.ROLES}
    assert {"prompt", "answer"} <= set(t.role_constants)

    # the parser: the module reads the reply with the entry's expression
    assert ast.unparse(ast.parse(t.parser)) in source

    # the rewards: what the module declares, and the correctness one is the catalog rule's pick
    assert _declared_rewards(t, tree) == [(r.name, r.weight) for r in t.rewards]
    assert dict((r.name, r.weight) for r in t.rewards)[t.correctness] == 1.0
    assert catalog.correctness_function([catalog.FunctionFacts(r.name, r.weight) for r in t.rewards]) == t.correctness
    correct_fn = next(
        n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == t.correctness
    )
    reads_reply = "parser.parse_answer(completion)" if t.generation == "classic" else t.parser
    assert reads_reply in ast.unparse(correct_fn)

    # the answer kinds it reads are kinds the pack knows
    assert t.reads and t.reads <= {k.name for k in catalog.ANSWER_KINDS}


def test_new_env_help_lists_every_template_with_its_summary():
    text = run_script("new_env", "--help").stdout
    for t in catalog.TEMPLATES:
        line = next((ln for ln in text.splitlines() if ln.split()[:1] == [t.name]), None)
        assert line is not None, f"new_env --help does not list {t.name}"
        assert t.summary in line
        assert ("verifiers 0.3.x" in line) if t.generation == "classic" else ("verifiers >= 0.4" in line)


# -- answer kinds -----------------------------------------------------------------------------


def test_answer_kinds_are_what_inspect_detects():
    """Every catalog answer kind is a format of the unit the catalog names for it, and inspect asks every format."""
    from vlab import kinds

    detected = {f.name for f in kinds.formats()}
    assert detected == {k.name for k in catalog.ANSWER_KINDS}
    for k in catalog.ANSWER_KINDS:
        unit = importlib.import_module(k.unit).UNIT
        assert k.name in {f.name for f in unit.formats}, (k.name, k.unit)
    assert formats.FORMAT_LABELS == {k.name: k.label for k in catalog.ANSWER_KINDS}


@pytest.mark.parametrize("kind", catalog.ANSWER_KINDS, ids=lambda k: k.name)
def test_recommended_templates_exist_in_their_generation(kind):
    for gen, name in kind.templates.items():
        if name is not None:
            assert ENTRIES[name].generation == gen
    # a judged kind has no template, or the judge templates (the judge call is their correctness function)
    judge_templates = {n for n in kind.templates.values() if n} <= {
        t.name for t in catalog.TEMPLATES if t.name.endswith("-judge")
    }
    assert kind.judged == ((kind.classic is None and kind.v1 is None) or (kind.name == "long_text" and judge_templates))


# -- inspect and new_env read the catalog --------------------------------------------------------


def _recommend(kind_name: str, installed_classic: bool | None = None) -> dict:
    roles = {"prompt": {"column": "q"}, "answer": {"column": "a"}, "choices": {"column": "opts"}}
    return recommend(
        roles, {"type": kind_name, "labels": ["x", "y"]}, {"builder": "json", "data_files": "d"}, installed_classic
    )


@pytest.mark.parametrize("kind", catalog.ANSWER_KINDS, ids=lambda k: k.name)
@pytest.mark.parametrize("installed_classic", [False, True], ids=["v1-available", "verifiers-0.3"])
def test_inspect_recommendation_is_the_catalog_entry(kind, installed_classic):
    rec = _recommend(kind.name, installed_classic)
    wanted = "classic" if installed_classic else "v1"
    assert rec["template"] == kind.templates[wanted] and rec["templates"] == {"classic": kind.classic, "v1": kind.v1}
    assert rec["generation"] == (wanted if kind.templates[wanted] else None)
    assert (rec["parser"], rec["reward_strategy"]) == (kind.parser, kind.reward_strategy)
    if installed_classic:
        assert "0.3.x" in rec["why"]
    else:
        assert catalog.CLASSIC_FOR in rec["why"] and "Hosted Training" in rec["why"]


def test_every_kind_a_template_scores_has_a_v1_template():
    """v1 first: no answer kind is left with a classic template only."""
    assert [k.name for k in catalog.ANSWER_KINDS if k.classic and not k.v1] == []
    assert {t.name.removeprefix("classic-") for t in catalog.TEMPLATES if t.generation == "classic"} == {
        t.name.removeprefix("v1-") for t in catalog.TEMPLATES if t.generation == "v1"
    }


def test_inspect_follows_a_changed_catalog(monkeypatch):
    changed = dataclasses.replace(catalog.answer_kind("number"), v1=None, reward_strategy="changed strategy")
    monkeypatch.setattr(catalog, "ANSWER_KINDS", (changed,))
    rec = _recommend("number", installed_classic=False)
    assert rec["templates"] == {"classic": "classic-numeric", "v1": None}
    assert rec["template"] == "classic-numeric" and rec["generation"] == "classic"  # the only one there is
    assert rec["reward_strategy"] == "changed strategy" and "no v1 template" in rec["note"]


@pytest.mark.parametrize(
    "make",
    [fx.make_gsm8k_jsonl, fx.make_mmlu_parquet, fx.make_boolean_tsv, fx.make_code_jsonl],
    ids=lambda m: m.__name__,
)
def test_inspect_on_a_dataset_recommends_its_kinds_entry(tmp_path, make):
    data = analyse(read_sample(str(make(tmp_path)), 300))
    kind = catalog.answer_kind(data["answer_format"]["type"])
    assert data["answer_format"]["label"] == kind.label
    assert data["recommendation"]["templates"] == kind.templates
    assert data["recommendation"]["reward_strategy"] == kind.reward_strategy


def _mapping(kind: catalog.AnswerKind) -> scaffold.Mapping:
    report = {"tool": "inspect_dataset", "status": "pass", "data": {"answer_format": {"type": kind.name}}}
    report["data"]["recommendation"] = _recommend(kind.name)
    return scaffold.mapping_from_inspect(report)


@pytest.mark.parametrize("kind", catalog.ANSWER_KINDS, ids=lambda k: k.name)
@pytest.mark.parametrize("api", ["classic", "v1"])
def test_new_env_takes_the_catalogs_template_and_fit(kind, api):
    req = scaffold.ScaffoldRequest(name="x", from_inspect="-", api=api)
    wanted = kind.templates[api]
    if wanted is None:
        with pytest.raises(UsageError, match="recommends no"):
            scaffold.choose_template(req, _mapping(kind), Result("new_env"))
        return
    result = Result("new_env")
    assert scaffold.choose_template(req, _mapping(kind), result) == wanted
    scaffold.check_fit(wanted, _mapping(kind), result)
    fit = next(c for c in result.checks if c.id == "answer-format")
    assert fit.status == ("pass" if kind.name in ENTRIES[wanted].reads else "warn")


def test_new_env_lists_and_maps_the_catalogs_templates():
    assert scaffold.templates() == catalog.template_names()
    for t in catalog.TEMPLATES:
        assert scaffold.role_constants(t.name) == t.role_constants
        assert scaffold.generation(t.name) == t.generation
    result = Result("new_env")
    req = scaffold.ScaffoldRequest(name="x", columns={"prompt": "stem"})
    scaffold.resolve_columns(req, "classic-multiple-choice", scaffold.Mapping(), result)
    by_id = {c.id: c for c in result.checks}
    assert "from --question-column" in by_id["column-prompt"].message
    assert catalog.role("choices").flag in by_id["column-choices"].hint


def test_new_env_fit_check_follows_a_changed_catalog(monkeypatch):
    changed = dataclasses.replace(ENTRIES["classic-numeric"], reads=frozenset({"boxed"}))
    monkeypatch.setattr(catalog, "TEMPLATES", (changed,))
    result = Result("new_env")
    scaffold.check_fit("classic-numeric", scaffold.Mapping(answer_format="boxed"), result)
    assert result.checks[-1].status == "pass"


# -- which reward function counts as correctness ------------------------------------------------------

F = catalog.FunctionFacts


def declared(*pairs) -> list[catalog.FunctionFacts]:
    """A rubric as test_reward reads it: names and weights, no scores yet."""
    return [F(n, w) for n, w in pairs]


# Every rubric test_reward met in tests/ (test_test_reward.py, test_new_env.py, the demo envs),
# and the function it treated as correctness before the rule moved here.
DECLARED = [
    (
        [("exact_match", 1.0), ("async_format", 0.2), ("uses_question", 0.0), ("diversity", 0.1), ("num_turns", 0.0)],
        "exact_match",
    ),
    (
        [
            ("exact_match", 1.0),
            ("raises", 0.1),
            ("hangs", 0.1),
            ("nan_reward", 0.1),
            ("hangs_async", 0.1),
            ("num_turns", 0.0),
        ],
        "exact_match",
    ),
    ([("substring_match", 1.0), ("num_turns", 0.0)], "substring_match"),
    ([("never", 1.0), ("num_turns", 0.0)], "never"),
    ([("exact_match", 1.0), ("num_turns", 0.0), ("total_tool_calls", 0.0), ("calculator_calls", 0.0)], "exact_match"),
    ([("exact", 1.0)], "exact"),
    ([("crashes", 0.5), ("exact", 1.0)], "exact"),
    ([("contains", 1.0)], "contains"),
    ([("correct_answer", 1.0), ("format_reward_func", 0.2), ("num_turns", 0.0)], "correct_answer"),
    ([("answer_format", 0.2), ("correct_answer", 1.0)], "correct_answer"),
    ([("correct", 1.0), ("num_turns", 0.0)], "correct"),
    ([("correct_label", 1.0), ("allowed_label", 0.0), ("num_turns", 0.0)], "correct_label"),
    ([("correct_choice", 1.0), ("boxed_answer", 0.0), ("num_turns", 0.0)], "correct_choice"),
    (
        [("correct_answer", 1.0), ("num_turns", 0.0), ("total_tool_calls", 0.0), ("calculate_calls", 0.0)],
        "correct_answer",
    ),
    ([("correct_choice", 1.0), ("format_reward_func", 0.1), ("num_turns", 0.0)], "correct_choice"),
    ([("foo", 2.0), ("bar", 0.5)], "foo"),  # without names to go by, the heaviest
    ([("num_turns", 0.0)], None),
    ([("penalty", -1.0)], None),
]


@pytest.mark.parametrize("pairs, expected", DECLARED)
def test_correctness_of_a_declared_rubric(pairs, expected):
    assert catalog.correctness_function(declared(*pairs)) == expected


def observed(name, weight, count=80, lo=0.0, hi=1.0, binary=True, role="reward"):
    """A function as check_reward_distribution reads it from an eval file."""
    return F(name, weight, catalog.Scores(count, lo, hi, binary), role)


# Every eval file check_reward_distribution read in tests/ and in shared real data (kinds, pick).
OBSERVED = [
    (
        [
            observed("correct_answer", 1.0),
            observed("format_reward_func", None, lo=1.0),
            observed("num_turns", None, lo=1.0),
        ],
        ["correctness", "format", "metric"],
        "correct_answer",
    ),
    (
        [observed("correct_answer_reward_func", 1.0), observed("format_reward_func", 0.2, lo=1.0)],
        ["correctness", "format"],
        "correct_answer_reward_func",
    ),
    (
        [
            observed("correct", 1.0, hi=0.0),
            observed("formatted", 0.2),
            observed("reply_chars", None, lo=18.0, hi=19.0, binary=False, role="metric"),
        ],
        ["correctness", "format", "metric"],
        "correct",
    ),
    (
        [
            observed("correct_answer", None, hi=0.0),
            observed("format_reward_func", None, hi=0.0),
            observed("num_turns", 0.0, lo=1.0),
        ],
        ["correctness", "format", "metric"],
        "correct_answer",
    ),
    (
        [
            observed("total_tool_calls", None, lo=1.0, hi=5.0, binary=False, role="reward or metric"),
            observed("python_calls", None, lo=1.0, hi=5.0, binary=False, role="reward or metric"),
            observed("correct_answer_reward_func", 1.0, role="reward or metric"),
        ],
        ["metric", "metric", "correctness"],
        "correct_answer_reward_func",
    ),
    ([observed("reply_chars", None, lo=18.0, hi=19.0, binary=False, role="metric")], ["metric"], None),
    ([], [], None),
]


@pytest.mark.parametrize("functions, kinds, expected", OBSERVED)
def test_correctness_of_an_eval_file(functions, kinds, expected):
    assert list(catalog.function_kinds(functions).values()) == kinds
    assert catalog.correctness_function(functions) == expected


def test_evidence_decides_what_counts():
    # a binary reward at weight 1 with no name to go by counts; the same scores at 0.5 do not
    assert catalog.function_kinds([observed("foo", 1.0)]) == {"foo": "correctness"}
    assert catalog.function_kinds([observed("foo", 0.5)]) == {"foo": "shaping"}
    # a correctness name counts with scores in [0, 1], binary or not
    assert catalog.function_kinds([observed("judge_score", 0.5, binary=False, hi=0.7)]) == {
        "judge_score": "correctness"
    }
    # counts outside [0, 1] with no weight are measurements; a zero weight is a metric
    assert catalog.function_kinds([observed("foo", None, hi=7.0, binary=False)]) == {"foo": "metric"}
    assert catalog.function_kinds([F("correct", 0.0)]) == {"correct": "metric"}
    # no scores read: empty observed stats give no evidence of correctness
    assert catalog.correctness_function([F("correct", None, catalog.Scores(0))]) is None


# Where test_reward's old rule (heaviest weight, format|style|length|tag names last on a tie)
# and check_reward_distribution's (name, then binary scores, then weight) disagreed, the one
# rule follows check_reward_distribution: a name says more about correctness than a weight.
@pytest.mark.parametrize(
    "pairs, expected",
    [
        ([("reasoning_quality", 1.0), ("correct", 0.5)], "correct"),  # old test_reward: reasoning_quality
        ([("boxed_answer", 1.0), ("correct", 0.5)], "correct"),  # old test_reward: boxed_answer
        ([("format_reward", 1.0)], None),  # old test_reward: format_reward (the total is probed instead)
        ([("boxed_match", 1.0), ("length_penalty", 0.1)], None),  # a light unnamed term never stands in
        ([("foo", 1.0), ("accuracy", 1.0)], "accuracy"),  # old test_reward: foo (first listed)
    ],
)
def test_declared_rubric_follows_the_eval_rule_where_they_disagreed(pairs, expected):
    assert catalog.correctness_function(declared(*pairs)) == expected


def test_probes_use_the_catalog_rule():
    from vlab.env.types import RewardFunction
    from vlab.reward import probes

    funcs = [RewardFunction("reasoning_quality", 1.0), RewardFunction("correct", 0.5)]
    assert probes.correctness_function(funcs) == "correct"
    assert probes.correctness_function([RewardFunction(n, w) for n, w in DECLARED[0][0]]) == DECLARED[0][1]


def test_hints_are_plain_lowercase_fragments():
    for hints in (catalog.CORRECT_HINTS, catalog.FORMAT_HINTS, catalog.METRIC_HINTS):
        assert all(h == h.lower() and re.fullmatch(r"[a-z_]+", h) for h in hints)


def test_skill_md_template_table_is_the_catalogs():
    """SKILL.md step 3 lists the template per answer kind; every kind once, each with the catalog's templates."""
    lines = (SKILL_ROOT / "SKILL.md").read_text().splitlines()
    header = next(ln for ln in lines if ln.startswith("| answer kind |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    assert columns[1:3] == ["v1", "classic"], "v1 first: the table leads with the v1 templates"
    rows = [ln for ln in lines if ln.startswith("| `")]
    seen = []
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        kinds = re.findall(r"`(\w+)`", cells[0])
        v1, classic = (None if c.startswith("none") else c.strip("`") for c in cells[1:3])
        for name in kinds:
            kind = catalog.answer_kind(name)
            assert (kind.classic, kind.v1) == (classic, v1), name
            seen.append(name)
    assert sorted(seen) == sorted(k.name for k in catalog.ANSWER_KINDS)
