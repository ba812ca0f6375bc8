"""Which template, parser and reward fit a dataset, and ready environment code for both API generations.

The template, parser and reward strategy per answer format are the catalog's
(``vlab.catalog.ANSWER_KINDS``); this module fills in the column mapping and writes the code.

The snippets are complete modules with the column mapping filled in:
``classic`` is verifiers 0.3.1 code (``load_environment`` returning a
``vf.SingleTurnEnv``), ``v1`` is verifiers 0.4.0 code (a ``vf.TaskData``
subclass with ``answer``, a ``vf.Task`` with an async ``@vf.reward`` and a
``vf.Taskset`` whose ``load()`` builds the tasks). Both score a completion that
puts the gold answer in ``\\boxed{}`` at 1.0 (the tests execute them).

Class labels are compared by the classification templates' own ``normalise`` (its one home is
``templates/environments/v1-classification``; the snippet carries its source, read from there), so
a snippet accepts the spellings the templates accept: ``\\boxed{\\text{joy}}``, ``joy.``, ``JOY``.
"""

from __future__ import annotations

import ast
from functools import cache
from typing import Any

from vlab import catalog
from vlab.core.installed import verifiers_info
from vlab.core.invocation import command
from vlab.core.paths import templates_dir
from vlab.kinds.number.equivalence import comparison_source

LETTERS = catalog.CHOICE_LETTERS


def recommend(
    roles: dict[str, Any], fmt: dict[str, Any], loader: dict[str, Any], installed_classic: bool | None = None
) -> dict[str, Any]:
    """{"template", "generation", "why", "templates": {"classic", "v1"}, "parser", "reward_strategy",
    "snippets": {"classic", "v1"}}.

    "template" is the v1 one unless the installed verifiers is 0.3.x (``installed_classic``; read
    from the installed package when None), or the kind has no template of that generation."""
    kind = catalog.answer_kind(fmt["type"])
    classic_t, v1_t = kind.classic, kind.v1
    if installed_classic is None:
        installed_classic = verifiers_info().classic
    generation = catalog.preferred_generation(installed_classic)
    if kind.templates[generation] is None and kind.templates["classic" if generation == "v1" else "v1"]:
        generation = "classic" if generation == "v1" else "v1"
    why = (
        "the installed verifiers is 0.3.x (classic API); v1 tasksets need verifiers >= 0.4 and are what "
        "current prime-rl and Hosted Training run"
        if installed_classic
        else "v1 tasksets are what current prime-rl and Hosted Training run; classic is for " + catalog.CLASSIC_FOR
    )
    spec = _Spec(roles, fmt, loader)
    out = {
        "template": kind.templates[generation],
        "generation": generation if kind.templates[generation] else None,
        "why": why,
        "templates": kind.templates,
        "parser": kind.parser,
        "reward_strategy": kind.reward_strategy,
        "column_mapping": spec.mapping(),
        "snippets": spec.pointers() if spec.pointer_reason else {"classic": spec.classic(), "v1": spec.v1()},
    }
    calculator = _calculator(fmt, generation, out["template"])
    if calculator:
        out["calculator"] = calculator
    if fmt.get("label_names"):  # new_env writes them into the environment: the prompt asks for names
        out["label_names"] = list(fmt["label_names"])
    if spec.criteria_col:  # a judge with each row's own rubric: the judge templates' rubric-criteria variant
        out["variant"] = "rubric-criteria"
        out["note"] = (
            f"each row carries rubric criteria ({spec.criteria_col!r}): use the rubric-criteria variant of "
            f"{out['template']} (CRITERIA_COLUMN = {spec.criteria_col!r}; new_env --from-inspect maps it), so the "
            "judge grades every row against its own criteria beside the reference"
        )
    elif spec.pointer_reason:
        out["note"] = f"{spec.pointer_reason}: create the package with new_env --from-inspect"
    elif classic_t is None:
        out["note"] = "no template in templates/ scores this format; start from the judge snippet"
    elif v1_t is None:
        out["note"] = "no v1 template for this format; start from the v1 snippet"
    return out


def _calculator(fmt: dict[str, Any], generation: str, single_turn: str | None) -> dict[str, Any] | None:
    """The calculator tool template, when the worked solutions carry calculator annotations and its reward
    reads the answer kind: {"template", "templates", "column", "share", "why"}; else None."""
    found = fmt.get("calculator_annotations")
    tools = catalog.calculator_templates(fmt["type"]) if found else {}
    if not tools:
        return None
    tool = tools.get(generation) or next(iter(tools.values()))
    return {
        "template": tool,
        "templates": {"classic": tools.get("classic"), "v1": tools.get("v1")},
        "column": found["column"],
        "share": found["share"],
        "why": (
            f"{found['annotated']} of the {found['rows']} worked solutions in {found['column']!r} carry calculator "
            f"annotations (e.g. {found['example']}): they were written with a calculator. {tool} gives the model "
            "one, a calculate tool it calls over several turns, and scores the boxed final number against the same "
            "gold; its rollouts are longer (size them with test_reward --seq-len)"
            + (f". Without a tool, single turn: {single_turn}" if single_turn else "")
        ),
    }


LABEL_TEMPLATE = ("v1-classification", "v1_classification.py")
LABEL_NORMALISER = ("normalise", "_LATEX_TEXT", "_AROUND")  # the function and the names it reads


@cache
def label_normaliser() -> str:
    """The source of the classification templates' ``normalise`` and the module names it reads."""
    path = templates_dir() / "environments" / LABEL_TEMPLATE[0] / LABEL_TEMPLATE[1]
    text = path.read_text(encoding="utf-8")
    found: dict[str, str] = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name in LABEL_NORMALISER:
            found[node.name] = ast.get_source_segment(text, node) or ""
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in LABEL_NORMALISER:
                found[node.targets[0].id] = ast.get_source_segment(text, node) or ""
    missing = [name for name in LABEL_NORMALISER if not found.get(name)]
    if missing:
        raise RuntimeError(f"{path}: the label normaliser lacks {', '.join(missing)}")
    names = "\n".join(found[name] for name in LABEL_NORMALISER[1:])
    return f"{names}\n\n\n{found['normalise']}\n"


class _Spec:
    """The pieces both snippets share: loading, the row mapping, the system prompt, the comparison."""

    def __init__(self, roles: dict[str, Any], fmt: dict[str, Any], loader: dict[str, Any]):
        self.prompt_col = roles["prompt"]["column"]
        self.prompt_cols = list(roles["prompt"].get("columns") or [self.prompt_col])
        self.messages = roles["prompt"].get("kind") == "messages"
        self.answer_col = roles["answer"]["column"]
        self.kind = catalog.answer_kind(fmt["type"])
        self.check = self.kind.check
        found = roles.get("choices") or {}
        self.choices_col = found.get("column") if self.check == "letter" else None
        self.choices_cols = list(found.get("columns") or []) if self.check == "letter" else []
        self.tests_col = (roles.get("tests") or {}).get("column")
        self.entry_col = (roles.get("entry_point") or {}).get("column")
        self.setup_col = (roles.get("setup") or {}).get("column") if self.tests_col else None
        self.info_col = (roles.get("info") or {}).get("column")
        self.criteria_col = (roles.get("criteria") or {}).get("column") if self.check == "judge" else None
        self.multiple_col = (roles.get("multiple") or {}).get("column")
        self.unit_col = (roles.get("unit") or {}).get("column")
        self.fmt = fmt
        self.type = fmt["type"]
        self.loader = loader

    @property
    def pointer_reason(self) -> str | None:
        """Why the reward does not fit in a snippet (a code harness, answers held as lists, several answers or units:
        the templates read them), else None."""
        if self.check == "tests":
            return "the test harness does not fit in a snippet"
        if self.fmt.get("answer_list"):
            return f"the answers are {self.fmt['answer_list']['held_as']}, which the templates read (answer_list)"
        if self.multiple_col or self.unit_col:
            return "several answers and units are the numeric templates' work"
        return None

    def mapping(self) -> dict[str, Any]:
        out = {
            "prompt": self.prompt_col,
            "prompt_columns": self.prompt_cols,
            "prompt_kind": "messages" if self.messages else "text",
            "answer": self.answer_col,
            "answer_transform": self.fmt.get("extraction", ""),
        }
        if self.choices_col:
            out["choices"] = self.choices_col
        if self.choices_cols:
            out["choices_columns"] = self.choices_cols
        if self.type in catalog.CHOICE_KEY_FORMS:
            out["answer_key"] = catalog.CHOICE_KEY_FORMS[self.type]
        if self.tests_col:
            out["tests"] = self.tests_col
        if self.entry_col:
            out["entry_point"] = self.entry_col
        if self.setup_col:
            out["setup"] = self.setup_col
        if self.info_col:
            out["info"] = self.info_col
        if self.criteria_col:
            out["criteria"] = self.criteria_col
        if self.multiple_col:
            out["multiple"] = self.multiple_col
        if self.unit_col:
            out["unit"] = self.unit_col
        if self.fmt.get("answer_list"):
            out["answer_list"] = self.fmt["answer_list"]["shape"]
        return out

    def pointers(self) -> dict[str, str]:
        """For kinds whose reward needs more than a snippet (the code harness, answers held as lists): how to get
        the package."""
        why = (
            "the reward runs the tests in a child process; the template ships that\n# harness"
            if self.check == "tests"
            else f"{self.pointer_reason};\n# the template does it"
        )
        return {
            gen: f"# {self.kind.label}: {why}. Create the package from it (the columns are filled in from this report):\n"
            f"#   {command('inspect_dataset')} DATA --json > inspect.json\n"
            f"#   {command('new_env')} my-env --from-inspect inspect.json --api {gen}\n"
            f"# templates/environments/{template}/\n"
            for gen, template in self.kind.templates.items()
            if template
        }

    # -- shared pieces ----------------------------------------------------------------

    def load_lines(self, source_expr: str) -> tuple[str, str, str]:
        """(import line, default source value, the statement that builds `dataset`)."""
        ld = self.loader
        if "load_from_disk" in ld:
            split = f"[{ld['split']!r}]" if ld.get("split") else ""
            return (
                "from datasets import load_from_disk",
                repr(ld["load_from_disk"]),
                f"dataset = load_from_disk({source_expr}){split}",
            )
        if "hub" in ld:
            args = [source_expr]
            if ld.get("config"):
                args.append(repr(ld["config"]))
            args.append(f"split={ld.get('split') or 'train'!r}")
            return "from datasets import load_dataset", repr(ld["hub"]), f"dataset = load_dataset({', '.join(args)})"
        files = ld["data_files"]
        extra = "".join(f", {k}={ld[k]!r}" for k in ("field", "delimiter") if ld.get(k))
        return (
            "from datasets import load_dataset",
            repr(files),
            f"dataset = load_dataset({ld['builder']!r}, data_files={source_expr}, split='train'{extra})",
        )

    def system_prompt(self) -> str:
        if self.kind.judged:
            return "Answer the question."
        if self.check == "letter":
            return "Think step by step, then give only the letter of the correct option inside \\boxed{}."
        if self.type == "boolean":
            return "Think step by step, then answer yes or no inside \\boxed{}."
        if self.type == "class_label":
            labels = ", ".join(str(x) for x in self.fmt.get("labels", []) if str(x))
            return f"Think step by step, then give only the label ({labels}) inside \\boxed{{}}."
        return "Think step by step, then give only the final answer inside \\boxed{}."

    def helpers(self) -> str:
        """Module-level helpers: turning a row into prompt + answer, and the comparison."""
        a = f"row[{self.answer_col!r}]"
        lines = []
        if self.type == "class_label" and self.fmt.get("label_names"):
            lines.append(f"LABELS = {list(self.fmt['label_names'])!r}  # class id -> name\n")
        if self.type == "gsm8k":
            answer = f'{a}.split("####")[-1].strip().replace(",", "")'
        elif self.type == "multiple_choice_index":
            answer = f'"{LETTERS}"[int({a})]'
        elif self.type == "multiple_choice_one_based":
            answer = f'"{LETTERS}"[int({a}) - 1]'
        elif self.type == "multiple_choice_text":
            answer = f'"{LETTERS}"[as_options({self._options_expr()}).index(str({a}).strip())]'
        elif self.type == "multiple_choice_letter":
            answer = f'str({a}).strip().strip("().:").upper()'
        elif self.type == "boolean":
            answer = f"normalise(str({a}))"
        elif self.type == "class_label":
            answer = f"normalise(LABELS[int({a})])" if lines else f"normalise(str({a}))"
        elif self.check == "math":
            answer = f"extract_boxed(str({a}))"
        elif self.type == "short_text":
            answer = f"normalise(str({a}))"
        else:
            answer = f"str({a}).strip()"
        if self.messages:
            # A prompt column replaces the env's system_prompt: the instruction must go into the messages.
            lines.append(
                "def with_system(messages):\n"
                '    messages = [{"role": m["role"], "content": m["content"]} for m in messages]\n'
                '    if messages and messages[0]["role"] == "system":\n'
                '        messages[0]["content"] += "\\n\\n" + SYSTEM_PROMPT\n'
                "        return messages\n"
                '    return [{"role": "system", "content": SYSTEM_PROMPT}] + messages\n'
            )
            prompt = f"with_system(row[{self.prompt_col!r}])"
        elif self.choices_col:
            labelled = bool(self.fmt.get("options_labelled"))
            listing = (
                '"\\n".join(options)  # the options carry their own labels: listed once, as they are'
                if labelled
                else f'"\\n".join(f"{{letter}}. {{option}}" for letter, option in zip("{LETTERS}", options))'
            )
            lines.append(
                "def as_options(options):\n"
                "    if isinstance(options, dict):  # {'text': [...], 'label': [...]}\n"
                "        options = options['text']\n"
                "    return [str(o).strip() for o in options if o is not None and str(o).strip()]\n\n\n"
                "def with_options(question, options):\n"
                "    options = as_options(options)\n"
                f"    listed = {listing}\n"
                '    return f"{question}\\n\\n{listed}"\n'
            )
            prompt = f"with_options({self._question_expr()}, {self._options_expr()})"
        else:
            prompt = self._question_expr()
        if self.check == "letter":
            lines.append(
                "def letter_of(text):\n"
                '    """B, (B), B), \\\\text{B} and \\\\textbf{B} all name option B."""\n'
                '    text = re.sub(r"^\\\\(?:text|textbf|mathrm)\\{(.*)\\}$", r"\\1", str(text).strip())\n'
                '    text = text.strip().strip("().:").upper()\n'
                "    return text[:1] if len(text) == 1 or (text[:1].isalpha() and not text[1:2].isalnum()) else text\n"
            )
        if self.type == "class_label":
            lines.append(label_normaliser())
        elif self.check == "normalised":
            lines.append(
                "def normalise(text):\n"
                '    text = re.sub(r"[^\\w\\s]", " ", str(text).lower())\n'
                '    words = [w for w in text.split() if w not in ("a", "an", "the")]\n'
                '    text = " ".join(words)\n'
                '    return {"true": "yes", "false": "no"}.get(text, text)\n'
            )
        if self.check == "math":  # the numeric templates' comparison: readable spellings, plain numbers exactly
            lines.append(comparison_source())
            lines.append(
                "def extract_boxed(text):\n"
                '    start = text.rfind("\\\\boxed{")\n'
                "    if start < 0:\n"
                "        return text.strip()\n"
                "    depth, begin = 1, start + 7\n"
                "    for end in range(begin, len(text)):\n"
                '        depth += {"{": 1, "}": -1}.get(text[end], 0)\n'
                "        if depth == 0:\n"
                "            return text[begin:end]\n"
                "    return text.strip()\n"
            )
        self.answer_expr, self.prompt_expr = answer, prompt
        return "\n\n".join(lines)

    def _question_expr(self) -> str:
        if len(self.prompt_cols) == 1:
            return f"str(row[{self.prompt_col!r}])"
        return f'"\\n\\n".join(str(row[c]) for c in {self.prompt_cols!r})'

    def _options_expr(self) -> str:
        if self.choices_cols:
            return f"[row[c] for c in {self.choices_cols!r}]"
        return f"row[{self.choices_col!r}]"

    def compare(self, guess: str, answer: str) -> str:
        """An expression true when the extracted guess is right."""
        if self.check == "letter":
            return f"letter_of({guess}) == {answer}"
        if self.check == "normalised":
            return f"normalise({guess}) == {answer}"
        raise ValueError(self.type)

    def _imports(self, first: str, json_too: bool = False) -> str:
        stdlib = (
            (["json"] if json_too else [])
            + (["re"] if self.check in ("normalised", "letter", "math") else [])
            + (["threading"] if self.check == "math" and "verifiers.v1" in first else [])
        )
        fraction = "from fractions import Fraction\n" if self.check == "math" else ""
        return "".join(f"import {m}\n" for m in stdlib) + fraction + ("\n" if stdlib else "") + first

    # -- classic (verifiers 0.3.1) --------------------------------------------------------

    def classic(self) -> str:
        imp, default, load = self.load_lines("dataset_path")
        helpers = self.helpers()
        key = "prompt" if self.messages else "question"
        ic = f"row[{self.info_col!r}]"
        # classic takes info as a dict or a JSON string; a string column type keeps every row's keys
        info = f', "info": {ic} if isinstance({ic}, str) else json.dumps({ic})' if self.info_col else ""
        row_fn = f'def to_row(row):\n    return {{"{key}": {self.prompt_expr}, "answer": {self.answer_expr}{info}}}\n'
        prompt_feat = '[{"role": Value("string"), "content": Value("string")}]' if self.messages else 'Value("string")'
        feats = (
            f"# Explicit features: datasets would otherwise cast the new answer back to the old column's type.\n"
            f'FEATURES = Features({{"{key}": {prompt_feat}, "answer": Value("string")'
            + (', "info": Value("string")' if self.info_col else "")
            + "})\n"
        )
        imp = imp.replace("from datasets import ", "from datasets import Features, Value, ")
        head = (
            f"{self._imports('import verifiers as vf', json_too=bool(self.info_col))}\n{imp}\n\n"
            f"SYSTEM_PROMPT = {self.system_prompt()!r}\n"
            + feats
            + "\n\n"
            + (helpers + "\n\n" if helpers else "")
            + row_fn
            + "\n\n"
        )
        sig = (
            f"def load_environment(dataset_path={default}, **kwargs) -> vf.Environment:\n"
            f"    {load}\n"
            "    dataset = dataset.map(to_row, remove_columns=dataset.column_names, features=FEATURES)\n"
        )
        if self.kind.judged:
            body = (
                "    # JudgeRubric builds an AsyncOpenAI() client: OPENAI_API_KEY must be set.\n"
                '    rubric = vf.JudgeRubric(judge_model="gpt-4.1-mini")\n\n'
                "    async def judged_correct(judge, prompt, completion, answer, state, **kwargs) -> float:\n"
                "        verdict = await judge(prompt, completion, answer, state)\n"
                '        return 1.0 if "yes" in verdict.lower() else 0.0\n\n'
                "    rubric.add_reward_func(judged_correct, weight=1.0)\n"
                "    return vf.SingleTurnEnv(dataset=dataset, system_prompt=SYSTEM_PROMPT, rubric=rubric, **kwargs)\n"
            )
        elif self.check == "math":
            body = (
                "    # math-verify (in MathRubric's worker) on the last \\boxed{} of the reply, made readable;\n"
                "    # two plain numbers compared exactly first (math-verify rounds to 6 places)\n"
                '    parser = vf.Parser(extract_fn=lambda text: readable(vf.extract_boxed_answer(text, strict=True) or ""))\n\n'
                "    class ExactMathRubric(vf.MathRubric):\n"
                "        async def correct_answer(self, parser, completion, answer, **kwargs) -> float:\n"
                '            fast = plain_verdict(parser.parse_answer(completion) or "", str(answer))\n'
                "            if fast is not None:\n"
                "                return fast\n"
                "            return await super().correct_answer(parser, completion, answer, **kwargs)\n\n"
                "    rubric = ExactMathRubric(parser=parser)\n"
                "    return vf.SingleTurnEnv(dataset=dataset, system_prompt=SYSTEM_PROMPT, parser=parser,\n"
                "                            rubric=rubric, **kwargs)\n"
            )
        else:
            body = (
                "    parser = vf.Parser(extract_fn=vf.extract_boxed_answer)\n\n"
                "    def correct_answer(parser, completion, answer, **kwargs) -> float:\n"
                '        guess = parser.parse_answer(completion) or ""\n'
                f"        return 1.0 if {self.compare('guess', 'answer')} else 0.0\n\n"
                "    rubric = vf.Rubric(funcs=[correct_answer], weights=[1.0], parser=parser)\n"
                "    return vf.SingleTurnEnv(dataset=dataset, system_prompt=SYSTEM_PROMPT, parser=parser,\n"
                "                            rubric=rubric, **kwargs)\n"
            )
        if self.messages:
            body = body.replace("system_prompt=SYSTEM_PROMPT, ", "")
        return head + sig + body

    # -- v1 (verifiers 0.4.0) --------------------------------------------------------------

    def v1(self) -> str:
        imp, default, load = self.load_lines("self.config.dataset_path")
        helpers = self.helpers()
        judged = self.kind.judged
        head = (
            f"{self._imports('import verifiers.v1 as vf')}\n{imp}\n\n"
            f"SYSTEM_PROMPT = {self.system_prompt()!r}\n\n\n" + (helpers + "\n\n" if helpers else "")
        )
        data = "class RowData(vf.TaskData):\n    answer: str\n\n\n"
        if judged:
            head += (
                "class CorrectnessJudge(vf.Judge[bool]):\n"
                '    prompt = "Question: {question}\\nReference answer: {answer}\\nResponse: {response}\\n'
                'Is the response correct? Answer yes or no."\n\n'
                "    def parse(self, response: vf.JudgeResponse[bool]) -> bool:\n"
                '        return response.text.strip().lower().startswith("yes")\n\n\n'
                "class RowTaskConfig(vf.TaskConfig):\n"
                "    judge: vf.JudgeConfig = vf.JudgeConfig()\n\n\n"
            )
            task = (
                "class RowTask(vf.Task[RowData, vf.State, RowTaskConfig]):\n"
                "    @vf.reward(weight=1.0)\n"
                "    async def judged_correct(self, trace: vf.Trace) -> float:\n"
                "        judge = CorrectnessJudge(self.config.judge)\n"
                "        result = await judge.evaluate(trace=trace, question=self.data.prompt_text,\n"
                "                                      answer=self.data.answer, response=trace.last_reply)\n"
                "        return float(result.parsed)\n\n\n"
            )
            config_task = "    task: RowTaskConfig = RowTaskConfig()\n"
        else:
            if self.check == "math":
                reward = (
                    '        given = readable(vf.extract_boxed_answer(trace.last_reply or "", strict=True) or "")\n'
                    "        fast = plain_verdict(given, self.data.answer)  # two plain numbers: exactly\n"
                    "        if fast is not None:\n"
                    "            return fast\n"
                    "        # math-verify's timeout uses SIGALRM, which only the main thread may set\n"
                    "        main = threading.current_thread() is threading.main_thread()\n"
                    '        return vf.verify_boxed_math_answer(f"\\\\boxed{{{given}}}", self.data.answer, '
                    "timeout_seconds=5 if main else 0)\n"
                )
            else:
                reward = (
                    "        guess = vf.extract_boxed_answer(trace.last_reply, strict=True)\n"
                    f"        return 1.0 if {self.compare('guess', 'self.data.answer')} else 0.0\n"
                )
            task = (
                "class RowTask(vf.Task[RowData]):\n"
                "    @vf.reward(weight=1.0)\n"
                "    async def correct_answer(self, trace: vf.Trace) -> float:\n" + reward + "\n\n"
            )
            config_task = ""
        config = f"class RowConfig(vf.TasksetConfig):\n{config_task}    dataset_path: str | list[str] = {default}\n\n\n"
        taskset = (
            "class RowTaskset(vf.Taskset[RowTask, RowConfig]):\n"
            "    def load(self) -> list[RowTask]:\n"
            f"        {load}\n"
            "        return [\n"
            "            RowTask(RowData(id=str(i), prompt="
            + self.prompt_expr
            + ("," if self.messages else ", system_prompt=SYSTEM_PROMPT,")
            + "\n"
            "                            answer=" + self.answer_expr + "), self.config.task)\n"
            "            for i, row in enumerate(dataset)\n"
            "        ]\n\n\n"
            '__all__ = ["RowTaskset"]\n'
        )
        return head + data + task + config + taskset
