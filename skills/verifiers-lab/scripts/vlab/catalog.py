"""The pack's one knowledge table: answer kinds, the templates, parser and reward that fit each,
and which reward function counts as correctness.

Read by ``inspect`` (format labels, the recommendation), ``scaffold`` (template list, column
constants, the fit check), ``reward`` (the function test_reward probes) and ``evals`` (function
kinds, the correctness function). ``tests/test_catalog.py`` proves every folder under
``templates/environments/`` matches its entry here, and that the rule below picks each
template's own correctness function. It stays one module: the pack's one knowledge table, one home
for answer kinds and templates.
"""

from __future__ import annotations

import ast
import builtins
import json
import keyword
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from vlab.core.templatecode import run_template_definitions

Generation = Literal["classic", "v1"]
# How a reply is compared with the gold answer (the snippet inspect_dataset writes follows it):
# math: math-verify on \boxed{} (numbers of every spelling, fractions, LaTeX; verifiers' own
# MathRubric / verify_boxed_math_answer); letter: the choice letter; normalised: text after
# lower-casing and dropping punctuation and articles; tests: run the code against the row's tests
# in a child process; judge: an LLM judge.
Check = Literal["math", "letter", "normalised", "tests", "judge"]
FunctionKind = Literal["correctness", "format", "shaping", "metric"]

# The letters that name multiple-choice options, in order.
CHOICE_LETTERS = "ABCDEFGHIJ"
# An option that carries its own label: "A) 21", "(B) 22", "C. 23", "D: 24".
_OWN_LABEL = r"^\s*(?:\(\s*{letter}\s*\)|{letter}\s*[).:])\s*"


def carries_own_labels(options: Sequence[str]) -> bool:
    """Every option starts with its own letter, in order: list them as they are, never "A) A) 21"."""
    return len(options) >= 2 and all(
        i < len(CHOICE_LETTERS) and re.match(_OWN_LABEL.format(letter=CHOICE_LETTERS[i]), str(o))
        for i, o in enumerate(options)
    )


def option_texts(options: Sequence[str]) -> list[str]:
    """The options without the labels they carry themselves."""
    if not carries_own_labels(options):
        return [str(o).strip() for o in options]
    return [
        re.sub(_OWN_LABEL.format(letter=CHOICE_LETTERS[i]), "", str(o), count=1).strip() for i, o in enumerate(options)
    ]


# -- column roles ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Role:
    """A dataset column role a template maps, and the new_env flag that names it."""

    name: str  # prompt | answer | choices
    flag: str


ROLES: tuple[Role, ...] = (
    Role("prompt", "--question-column"),
    Role("answer", "--answer-column"),
    Role("choices", "--choices-column"),
    Role("tests", "--tests-column"),
    Role("entry_point", "--entry-point-column"),
    Role("criteria", "--criteria-column"),  # per-row rubric criteria for a judge (inspect.roles.CRITERIA_NAMES)
    # code the tests need run first (MBPP's test_setup_code: imports, helpers; inspect.roles.SETUP_NAMES)
    Role("setup", "--setup-column"),
    # reference lists for a judge: answers it must count as right, and answers it must count as wrong (lists, or
    # strings separated by ';' or '|'; inspect.roles.CORRECT_LIST_NAMES / INCORRECT_LIST_NAMES)
    Role("answers_correct", "--correct-answers-column"),
    Role("answers_incorrect", "--incorrect-answers-column"),
    # a numeric row's several answers and its unit (OlympiadBench's is_multiple_answer and unit;
    # inspect.roles.MULTIPLE_NAMES / UNIT_NAMES): the numeric templates say in the prompt how to write them
    Role("multiple", "--multiple-answer-column"),
    Role("unit", "--unit-column"),
)


def role(name: str) -> Role:
    return next(r for r in ROLES if r.name == name)


# -- the function a code row's tests call ----------------------------------------------------------

# The rule's one home: the code templates' ``called_name`` (classic-code carries the same function; the
# templates' prompts say "The function must be named ..." with it). Read from v1-code's source and run here.
CODE_TEMPLATE = ("v1-code", "v1_code.py")


@cache
def _called_name():
    modules = {"ast": ast, "builtins": builtins, "re": re}
    return run_template_definitions(*CODE_TEMPLATE, ("called_name",), modules)["called_name"]


def call_tests(tests: Any) -> tuple[str, str] | None:
    """(the test code, the code run before it) of a code row's tests: asserts as text or a list (also as
    JSON), or the code templates' spec ({"mode": "call", "tests", "helpers", "setup"}, also as JSON; its
    helpers and setup are what runs first). None for stdin/stdout cases ({"inputs", "outputs"}, mode "io")."""
    if isinstance(tests, str) and tests.strip()[:1] in ("{", "["):
        try:
            tests = json.loads(tests)
        except ValueError:
            pass
    before = ""
    if isinstance(tests, dict):
        if tests.get("mode") == "io" or {"inputs", "outputs"} <= set(tests) or "cases" in tests:
            return None
        before = "\n".join(str(tests.get(k) or "") for k in ("helpers", "setup") if tests.get(k))
        tests = tests.get("tests", "")
    if isinstance(tests, (list, tuple)):
        tests = "\n".join(str(t) for t in tests)
    return str(tests or ""), before


def entry_point(tests: Any, reference: str | None = None, setup: str | None = None) -> str | None:
    """The function a code row's tests call, by the code templates' rule (``called_name``): the first call in
    the asserts of a plain name that is no keyword, builtin (set, sorted, abs...) or module attribute
    (math.isclose), nor defined by the setup code or the tests; with a reference program, one it defines wins.
    inspect reports it, the templates' prompts name it, test_reward checks the prompt does. None for
    stdin/stdout tests, and where no such call is found."""
    found = call_tests(tests)
    if found is None:
        return None
    text, before = found
    if isinstance(setup, (list, tuple)):
        setup = "\n".join(str(line) for line in setup)
    before = "\n".join(p for p in (before, str(setup or "").strip()) if p)
    return _called_name()(f"{before}\n{text}" if before else text, reference or None)


def bad_entry_name(name: str | None) -> bool:
    """A name no tested function can have: empty, not an identifier, a keyword; or a builtin (set, len)."""
    return not name or not name.isidentifier() or keyword.iskeyword(name) or hasattr(builtins, name)


# -- templates ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """A module constant of a template that holds one role's column name, and its default.

    many: the constant may hold a list of columns instead, read in order (a prompt made of a body
    and a question column is joined with a blank line; choices spread over columns A, B, C, D).
    optional: the constant may be None when the dataset has no such column.
    if_present: the module reads the column only where a row has it, so its default is harmless
    when no column was named (the code templates' setup code).
    """

    role: str
    constant: str  # e.g. QUESTION_COLUMN
    default: str  # the column name the template ships with
    many: bool = False
    optional: bool = False
    if_present: bool = False


@dataclass(frozen=True)
class Reward:
    """A function a template's rubric or task declares (weight 0: a metric, not rewarded)."""

    name: str
    weight: float


@dataclass(frozen=True)
class Template:
    """A working package under templates/environments/<name>/."""

    name: str
    generation: Generation
    summary: str  # one line for new_env --help
    columns: tuple[Column, ...]  # in the order the module defines them
    reads: frozenset[str]  # answer kinds its reward reads correctly (others get a warning)
    parser: str  # the expression the module reads the reply's answer with
    rewards: tuple[Reward, ...]  # what the module declares, in order
    correctness: str  # the reward that scores correctness
    # Module constants new_env sets for an answer kind, e.g. a 1-based answer key: {"INDEX_BASE": 1}.
    settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def module(self) -> str:
        return self.name.replace("-", "_")

    @property
    def role_constants(self) -> dict[str, str]:
        """role -> module constant."""
        return {c.role: c.constant for c in self.columns}


_CLASSIC_BOXED = "vf.Parser(extract_fn=lambda text: vf.extract_boxed_answer(text, strict=True))"
_V1_BOXED = "last_boxed(trace.last_reply)"
_QUESTION = Column("prompt", "QUESTION_COLUMN", "question", many=True)
_ANSWER = Column("answer", "ANSWER_COLUMN", "answer")
# The numeric templates' optional columns, read only where a row has them: several answers, the answer's unit.
_MULTIPLE = Column("multiple", "MULTIPLE_COLUMN", "is_multiple_answer", optional=True, if_present=True)
_UNIT = Column("unit", "UNIT_COLUMN", "unit", optional=True, if_present=True)
_NUMERIC_COLUMNS = (_QUESTION, _ANSWER, _MULTIPLE, _UNIT)
# The short-answer templates: one text or a list of aliases, compared after QA normalisation.
_SHORT = frozenset({"answer_aliases", "short_text"})
_SHORT_REWARDS = (Reward("correct_answer", 1.0), Reward("token_f1", 0.0), Reward("boxed_answer", 0.0))
_CHOICES = Column("choices", "CHOICES_COLUMN", "choices", many=True)
_NUMERIC = frozenset({"gsm8k", "number", "boxed", "math"})
_CHOICE = frozenset(
    {"multiple_choice_index", "multiple_choice_one_based", "multiple_choice_letter", "multiple_choice_text"}
)
_ONE_BASED = {"multiple_choice_one_based": {"INDEX_BASE": 1}}
_CODE_COLUMNS = (
    Column("prompt", "QUESTION_COLUMN", "prompt", many=True),
    Column("tests", "TESTS_COLUMN", "test"),
    Column("entry_point", "ENTRY_POINT_COLUMN", "entry_point", optional=True),
    Column("answer", "SOLUTION_COLUMN", "canonical_solution", optional=True),
    Column("setup", "SETUP_COLUMN", "test_setup_code", optional=True, if_present=True),
)
_CODE_REWARDS = (Reward("passes_tests", 1.0), Reward("code_block", 0.0))
# Whole programs on standard input (competitive programming): the statement, its stdin/stdout tests (a list of
# columns for CodeContests' public, private and generated tests), the accepted reference program.
_PROGRAM_COLUMNS = (
    Column("prompt", "QUESTION_COLUMN", "question", many=True),
    Column("tests", "TESTS_COLUMN", "input_output", many=True),
    Column("answer", "SOLUTION_COLUMN", "solutions", optional=True),
)

TEMPLATES: tuple[Template, ...] = (
    Template(
        name="classic-numeric",
        generation="classic",
        summary="numbers and math answers (math-verify), GSM8K '#### N'",
        columns=_NUMERIC_COLUMNS,
        reads=_NUMERIC,
        parser="vf.Parser(extract_fn=boxed_readable)",  # the last box, its spellings made readable
        rewards=(Reward("correct_answer", 1.0), Reward("boxed_answer", 0.0)),
        correctness="correct_answer",
    ),
    Template(
        name="classic-multiple-choice",
        generation="classic",
        summary="question + choices + letter/index/text",
        columns=(_QUESTION, _CHOICES, _ANSWER),
        reads=_CHOICE,
        parser=_CLASSIC_BOXED,
        rewards=(Reward("correct_choice", 1.0), Reward("boxed_answer", 0.0)),
        correctness="correct_choice",
        settings=_ONE_BASED,
    ),
    Template(
        name="classic-classification",
        generation="classic",
        summary="text + label",
        columns=(Column("prompt", "TEXT_COLUMN", "text", many=True), Column("answer", "LABEL_COLUMN", "label")),
        reads=frozenset({"boolean", "class_label"}),
        parser=_CLASSIC_BOXED,
        rewards=(Reward("correct_label", 1.0), Reward("allowed_label", 0.0)),
        correctness="correct_label",
    ),
    Template(
        name="classic-multiturn-tool",
        generation="classic",
        summary="numbers, with a calculator tool",
        columns=(_QUESTION, _ANSWER),
        reads=frozenset({"gsm8k", "number"}),  # exact numbers; LaTeX math needs the numeric template's math-verify
        parser=_CLASSIC_BOXED,
        rewards=(Reward("correct_answer", 1.0),),  # ToolEnv adds its zero-weight tool-call metrics
        correctness="correct_answer",
    ),
    Template(
        name="classic-code",
        generation="classic",
        summary="code run against the row's tests",
        columns=_CODE_COLUMNS,
        reads=frozenset({"code_tests"}),
        parser="vf.Parser(extract_fn=extract_code)",
        rewards=_CODE_REWARDS,
        correctness="passes_tests",
    ),
    Template(
        name="classic-program",
        generation="classic",
        summary="whole programs on standard input, judged test by test as contest judges do",
        columns=_PROGRAM_COLUMNS,
        reads=frozenset({"program_io"}),
        parser="vf.Parser(extract_fn=extract_code)",
        rewards=_CODE_REWARDS,
        correctness="passes_tests",
    ),
    Template(
        name="classic-short-answer",
        generation="classic",
        summary="short answers or lists of aliases (any one is right)",
        columns=(_QUESTION, _ANSWER),
        reads=_SHORT,
        parser="vf.Parser(extract_fn=given_answer)",
        rewards=_SHORT_REWARDS,
        correctness="correct_answer",
    ),
    Template(
        name="v1-numeric",
        generation="v1",
        summary="numbers and math answers, as a v1 taskset",
        columns=_NUMERIC_COLUMNS,
        reads=_NUMERIC,
        parser="final_boxed(trace.last_reply)",
        rewards=(Reward("correct_answer", 1.0), Reward("boxed_answer", 0.0)),
        correctness="correct_answer",
    ),
    Template(
        name="v1-short-answer",
        generation="v1",
        summary="short answers or lists of aliases, as a v1 taskset",
        columns=(_QUESTION, _ANSWER),
        reads=_SHORT,
        parser="given_answer(trace.last_reply)",
        rewards=_SHORT_REWARDS,
        correctness="correct_answer",
    ),
    Template(
        name="v1-multiple-choice",
        generation="v1",
        summary="multiple choice, as a v1 taskset",
        columns=(_QUESTION, _CHOICES, _ANSWER),
        reads=_CHOICE,
        parser=_V1_BOXED,
        rewards=(Reward("correct_choice", 1.0), Reward("boxed_answer", 0.0)),
        correctness="correct_choice",
        settings=_ONE_BASED,
    ),
    Template(
        name="v1-classification",
        generation="v1",
        summary="text + label, as a v1 taskset",
        columns=(Column("prompt", "TEXT_COLUMN", "text", many=True), Column("answer", "LABEL_COLUMN", "label")),
        reads=frozenset({"boolean", "class_label"}),
        parser="given_label(trace.last_reply)",
        rewards=(Reward("correct_label", 1.0), Reward("allowed_label", 0.0)),
        correctness="correct_label",
    ),
    Template(
        name="v1-multiturn-tool",
        generation="v1",
        summary="numbers, with a calculator tool (vf.Toolset), as a v1 taskset",
        columns=(_QUESTION, _ANSWER),
        reads=frozenset({"gsm8k", "number"}),  # exact numbers, as classic-multiturn-tool
        parser="final_boxed(trace.last_reply)",
        rewards=(Reward("correct_answer", 1.0), Reward("total_tool_calls", 0.0), Reward("calculate_calls", 0.0)),
        correctness="correct_answer",
    ),
    Template(
        name="v1-code",
        generation="v1",
        summary="code run against the row's tests, as a v1 taskset",
        columns=_CODE_COLUMNS,
        reads=frozenset({"code_tests"}),
        parser="extract_code(trace.last_reply)",
        rewards=_CODE_REWARDS,
        correctness="passes_tests",
    ),
    Template(
        name="v1-program",
        generation="v1",
        summary="whole programs on standard input, judged test by test as contest judges do, as a v1 taskset",
        columns=_PROGRAM_COLUMNS,
        reads=frozenset({"program_io"}),
        parser="extract_code(trace.last_reply)",
        rewards=_CODE_REWARDS,
        correctness="passes_tests",
    ),
)


# Judge-scored templates (free-text answers): the judge call lives in the correctness function,
# the pre-check is a zero-weight metric; test_reward probes them with --judge stub / --judge-base-url.
_JUDGE_COLUMNS = (
    _QUESTION,
    _ANSWER,
    Column("criteria", "CRITERIA_COLUMN", "criteria", optional=True),
    Column("answers_correct", "CORRECT_ANSWERS_COLUMN", "correct_answers", optional=True, if_present=True),
    Column("answers_incorrect", "INCORRECT_ANSWERS_COLUMN", "incorrect_answers", optional=True, if_present=True),
)
# The zero-weight metric the judge templates set to 1.0 on a rollout whose judge gave no verdict (a refusal,
# prose only, a failed call): local_train logs its mean as judge_error_frac, diagnose_run and
# check_reward_distribution count those rollouts apart from zero rewards.
JUDGE_ERROR_METRIC = "judge_error"
_JUDGE_REWARDS = (Reward("judge_score", 1.0), Reward("precheck_passed", 0.0), Reward(JUDGE_ERROR_METRIC, 0.0))
_JUDGE_METRICS = frozenset(r.name for r in _JUDGE_REWARDS if r.weight == 0)
TEMPLATES += (
    Template(
        name="classic-judge",
        generation="classic",
        summary="free text scored by an LLM judge against the reference",
        columns=_JUDGE_COLUMNS,
        reads=frozenset({"long_text"}),
        parser="vf.Parser()",
        rewards=_JUDGE_REWARDS,
        correctness="judge_score",
    ),
    Template(
        name="v1-judge",
        generation="v1",
        summary="free text scored by an LLM judge against the reference, as a v1 taskset",
        columns=_JUDGE_COLUMNS,
        reads=frozenset({"long_text"}),
        parser="trace.last_reply",
        rewards=_JUDGE_REWARDS,
        correctness="judge_score",
    ),
)


# Worked solutions written with a calculator (GSM8K's "<<48/2=24>>" annotations; inspect.formats finds them):
# the tool templates give the model that calculator, a tool it calls over several turns.
CALCULATOR_TEMPLATES: dict[Generation, str] = {"classic": "classic-multiturn-tool", "v1": "v1-multiturn-tool"}


def calculator_templates(kind: str) -> dict[Generation, str]:
    """The calculator tool template per generation whose reward reads this answer kind ({} for none)."""
    return {gen: name for gen, name in CALCULATOR_TEMPLATES.items() if kind in template(name).reads}


def template(name: str) -> Template:
    """The entry for a template name (KeyError for an unknown one)."""
    for t in TEMPLATES:
        if t.name == name:
            return t
    raise KeyError(name)


def template_names() -> list[str]:
    return sorted(t.name for t in TEMPLATES)


def generation(name: str) -> Generation:
    """A template's API generation; a name the pack does not know goes by its prefix."""
    known = next((t for t in TEMPLATES if t.name == name), None)
    if known is not None:
        return known.generation
    return "v1" if name.startswith("v1-") else "classic"


# Which generation the pack builds for. Current prime-rl and Hosted Training run v1 tasksets only;
# classic is for the installs and trainers that cannot run v1 (CLASSIC_FOR). verifiers 0.3.x also
# ships an early verifiers.v1, but the v1 templates need >= 0.4, so 0.3.x means classic.
CLASSIC_FOR = "verifiers 0.3.x, Tinker, SkyRL and prime-rl <= v0.8.0"


def preferred_generation(installed_classic: bool) -> Generation:
    """v1, unless the installed verifiers is 0.3.x (it has the classic API; the v1 templates need >= 0.4)."""
    return "classic" if installed_classic else "v1"


# -- answer kinds ------------------------------------------------------------------------------


@dataclass(frozen=True)
class AnswerKind:
    """An answer format inspect_dataset detects (answer_format.type), and what fits it."""

    name: str
    label: str  # human description, in inspect_dataset's answer_format.label
    classic: str | None  # the template inspect_dataset recommends, per generation (None: none fits)
    v1: str | None
    parser: str  # how the reply is read, as the recommendation words it
    reward_strategy: str
    check: Check
    # The unit that knows the kind (``vlab.kinds``: how inspect recognises it, its probes and checks): a module
    # exporting ``UNIT``. Several formats share a unit (every multiple-choice key form is vlab.kinds.choice's).
    unit: str

    @property
    def judged(self) -> bool:
        """No parser can score it: the reward is a judge."""
        return self.check == "judge"

    @property
    def templates(self) -> dict[str, str | None]:
        return {"classic": self.classic, "v1": self.v1}


_MATH_PARSER = "boxed answer, compared with math-verify (vf.MathRubric / vf.verify_boxed_math_answer)"
_MATH_VERIFY = "math-verify: equal values match in every spelling (51 = 51.0 = 102/2, \\frac{1}{2} = 0.5)"
_NORMALISED = "exact match after normalisation"
_LETTER = "choice letter"
_LETTER_PARSER = "boxed choice letter (A, (A), A), \\text{A}, \\textbf{A} and the option's text name A)"
_CLASSIFICATION = ("classic-classification", "v1-classification")
_SHORT_ANSWER = ("classic-short-answer", "v1-short-answer")
_ALIASES = (
    "exact match after QA normalisation (lower case; punctuation and a/an/the dropped) against any alias; "
    "token F1 as a metric"
)

ANSWER_KINDS: tuple[AnswerKind, ...] = (
    AnswerKind(
        "gsm8k",
        "GSM8K-style rationale ending in '#### N'",
        "classic-numeric",
        "v1-numeric",
        _MATH_PARSER,
        _MATH_VERIFY,
        "math",
        unit="vlab.kinds.number",
    ),
    AnswerKind(
        "boxed",
        "LaTeX \\boxed{...} answer",
        "classic-numeric",
        "v1-numeric",
        _MATH_PARSER,
        _MATH_VERIFY,
        "math",
        unit="vlab.kinds.number",
    ),
    AnswerKind(
        "number",
        "plain number (integer, decimal or fraction)",
        "classic-numeric",
        "v1-numeric",
        _MATH_PARSER,
        _MATH_VERIFY,
        "math",
        unit="vlab.kinds.number",
    ),
    AnswerKind(
        "math",
        "math expression (LaTeX or symbolic, no \\boxed{})",
        "classic-numeric",
        "v1-numeric",
        _MATH_PARSER,
        _MATH_VERIFY,
        "math",
        unit="vlab.kinds.number",
    ),
    AnswerKind(
        "boolean",
        "boolean / yes-no",
        *_CLASSIFICATION,
        "boxed yes/no",
        _NORMALISED,
        "normalised",
        unit="vlab.kinds.label",
    ),
    AnswerKind(
        "multiple_choice_letter",
        "multiple choice, answer is a letter",
        "classic-multiple-choice",
        "v1-multiple-choice",
        _LETTER_PARSER,
        _LETTER,
        "letter",
        unit="vlab.kinds.choice",
    ),
    AnswerKind(
        "multiple_choice_index",
        "multiple choice, answer is a 0-based index into the choices",
        "classic-multiple-choice",
        "v1-multiple-choice",
        _LETTER_PARSER,
        _LETTER,
        "letter",
        unit="vlab.kinds.choice",
    ),
    AnswerKind(
        "multiple_choice_one_based",
        "multiple choice, answer is a 1-based index into the choices",
        "classic-multiple-choice",
        "v1-multiple-choice",
        _LETTER_PARSER,
        _LETTER,
        "letter",
        unit="vlab.kinds.choice",
    ),
    AnswerKind(
        "multiple_choice_text",
        "multiple choice, answer is the text of the correct choice",
        "classic-multiple-choice",
        "v1-multiple-choice",
        _LETTER_PARSER,
        _LETTER,
        "letter",
        unit="vlab.kinds.choice",
    ),
    AnswerKind(
        "class_label",
        "class label (few distinct values)",
        *_CLASSIFICATION,
        "boxed label",
        _NORMALISED,
        "normalised",
        unit="vlab.kinds.label",
    ),
    AnswerKind(
        "program_io",
        "whole programs on standard input with stdin/stdout tests (competitive programming)",
        "classic-program",
        "v1-program",
        "the last ```python block of the reply (the whole reply without one)",
        "run the program once per test as a process of its own (standard input a file, its own CPU-time and memory "
        "limit); a crash or non-zero exit fails the test; the output compared token by token, numbers within the "
        "statement's tolerance, a checker for problems with several right answers",
        "tests",
        unit="vlab.kinds.program",
    ),
    AnswerKind(
        "code_tests",
        "code with tests (prompt + tests + entry point / reference solution)",
        "classic-code",
        "v1-code",
        "the last ```python block of the reply (the whole reply without one)",
        "run the code against the row's tests in a child process (timeout, memory and process limits)",
        "tests",
        unit="vlab.kinds.code",
    ),
    AnswerKind(
        "code",
        "code without tests",
        None,
        None,
        "none (the reply is the program)",
        "judge, or better: add tests and use the code template",
        "judge",
        unit="vlab.kinds.code",
    ),
    AnswerKind(
        "answer_aliases",
        "short answers with aliases (a list per row: any one is right)",
        *_SHORT_ANSWER,
        "boxed answer",
        _ALIASES,
        "normalised",
        unit="vlab.kinds.short_answer",
    ),
    AnswerKind(
        "short_text",
        "short free text",
        *_SHORT_ANSWER,
        "boxed answer",
        _NORMALISED,
        "normalised",
        unit="vlab.kinds.text",
    ),
    AnswerKind(
        "long_text",
        "long free text (needs a judge)",
        "classic-judge",
        "v1-judge",
        "none (the whole reply is judged)",
        "judge",
        "judge",
        unit="vlab.kinds.text",
    ),
)

# How a multiple-choice answer key names the correct option (answer_format.type -> key form).
CHOICE_KEY_FORMS = {
    "multiple_choice_letter": "letter",
    "multiple_choice_index": "index0",
    "multiple_choice_one_based": "index1",
    "multiple_choice_text": "text",
}


def answer_kind(name: str) -> AnswerKind:
    """The entry for an answer_format.type (KeyError for an unknown one)."""
    for k in ANSWER_KINDS:
        if k.name == name:
            return k
    raise KeyError(name)


# -- which reward function counts as correctness ----------------------------------------------------

# Name hints: which function looks like correctness, which like format, which like a measurement.
CORRECT_HINTS = ("correct", "accura", "exact", "match", "answer", "solve", "pass", "success", "equal", "judge", "score")
FORMAT_HINTS = ("format", "xml", "tag", "think", "parse", "style", "structure", "boxed", "syntax")
METRIC_HINTS = ("num_", "turns", "calls", "chars", "tokens", "length", "time", "latency", "count", "steps")
_EPS = 1e-9


def _named(name: str, hints: tuple[str, ...]) -> bool:
    low = name.lower()
    return any(h in low for h in hints)


@dataclass(frozen=True)
class Scores:
    """What was observed of one function's finite scores."""

    count: int
    min: float | None = None
    max: float | None = None
    binary: bool = False

    @classmethod
    def of(cls, stats: Mapping[str, Any]) -> Scores:
        """From a describe()-style dict: count, min, max, binary."""
        return cls(int(stats.get("count") or 0), stats.get("min"), stats.get("max"), bool(stats.get("binary")))


@dataclass(frozen=True)
class FunctionFacts:
    """One reward function or metric, as far as it is known.

    weight None: unknown (an eval file that does not write weights). scores None: not
    observed (a rubric read before anything was scored, as test_reward reads it).
    role: "reward", "metric", or "reward or metric" when the source cannot tell.
    """

    name: str
    weight: float | None
    scores: Scores | None = None
    role: str = "reward"


def function_kinds(functions: Sequence[FunctionFacts]) -> dict[str, FunctionKind]:
    """name -> correctness | format | shaping | metric.

    metric: declared a metric, weight 0, or (weight unknown) scores outside [0, 1] or a
    measurement's name. format: a format name. correctness, from observed scores: binary
    and weight unknown or 1, binary with a correctness name, or a correctness name with
    scores at most 1; from a declared rubric (scores unseen): a positive weight that is
    the rubric's heaviest or carries a correctness name. Anything else is shaping.
    """
    heaviest = max((f.weight for f in functions if f.weight is not None), default=None)
    return {f.name: _kind(f, heaviest) for f in functions}


def _kind(f: FunctionFacts, heaviest: float | None) -> FunctionKind:
    w, s, correct_name = f.weight, f.scores, _named(f.name, CORRECT_HINTS)
    if f.role == "metric" or (w is not None and abs(w) < _EPS) or f.name in _JUDGE_METRICS:
        return "metric"  # the judge templates' binary flags (named "pass", "judge") are never correctness
    if s is not None and s.count and w is None and ((s.max or 0) > 1 + _EPS or (s.min or 0) < -_EPS):
        return "metric"  # counts and timings live outside [0, 1]
    if _named(f.name, FORMAT_HINTS):
        return "format"
    if w is None and _named(f.name, METRIC_HINTS) and not correct_name:
        return "metric"
    if s is None:  # a declared reward whose scores are not seen: its weight and name decide
        return "correctness" if w is not None and w > 0 and (correct_name or w >= heaviest) else "shaping"
    if s.binary and (w is None or abs(w - 1) < _EPS or correct_name):
        return "correctness"
    if correct_name and s.count and (s.max or 0) <= 1:
        return "correctness"
    return "shaping"


def correctness_function(functions: Sequence[FunctionFacts]) -> str | None:
    """The function that counts as correctness, or None when none looks like it.

    Among the functions of kind correctness: a correctness name first, then binary
    scores, then the heavier weight; the one listed first wins a tie.
    """
    kinds = function_kinds(functions)
    candidates = [f for f in functions if kinds[f.name] == "correctness"]
    if not candidates:
        return None

    def rank(f: FunctionFacts) -> tuple:
        binary = f.scores is not None and f.scores.binary
        return (_named(f.name, CORRECT_HINTS), binary, f.weight or 0)

    return max(candidates, key=rank).name
