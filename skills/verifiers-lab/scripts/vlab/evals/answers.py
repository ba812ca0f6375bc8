"""What the model answered, read from the completions: one answer for every input, and the majority class.

Two failure shapes the reward figures alone do not name:

- every rollout of most groups gives the same answer (``same_answers``): the model answers one
  thing whatever it samples, so GRPO sees no difference to learn from even where rewards vary
  across groups;
- the mean correctness is close to the majority class's share (``majority_class``): on a
  classification set where 43% of golds are "anger", a model that always answers "anger" scores
  0.43, so a score near that share proves nothing about the task.

The answer of a completion (``final_answer``), by one rule: its last ``\\boxed{}``, else its last
``<answer>`` tag, else, for a code reply (a fenced block: ```python ... ```, closed or not), the
program in its LAST block (a ``Program``: whitespace runs made one space, case and punctuation
kept, so two rollouts writing the same program give the same answer; not when a line after the
last block states an answer: "Answer: 42"), else its last line;
normalised (``\\text{}``, case, spaces and punctuation around it dropped). What normalises to
nothing is no answer (None): a reply ending in a closing fence is never "the answer ''". When
most answers are programs (``Answers.code``), ``same_answers`` speaks of programs written alike in
a group and quotes no "most common answer" (one program across different tasks means nothing). Classic
and plain result files and v1 ``traces.jsonl`` are read as ``read.iter_rows`` reads them (the first ``MAX_ROWS``
rollouts, the last ``TAIL_CHARS`` characters of each completion), a chunk of lines at a time decoded into the few
fields the pass needs (a chunk msgspec refuses by the row readers' own rules); a v1
trace's completion is its sampled messages, its group the task key and its gold ``task.data.answer``
(as ``read.py`` groups them; a frozen agent's trace is skipped). vf-validate output has no answers.
The thresholds are ``Thresholds.same_answer_groups`` and ``Thresholds.majority_margin``.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from vlab.core.result import Result
from vlab.evals import chunks, v1batches
from vlab.evals.fields import MISSING_MS, example_of, is_missing, msgspec
from vlab.evals.read import ReadStats, classic_structs, numbered_lines, v1_example, v1_rows
from vlab.evals.source import CLASSIC_FAMILY, V1_TRACES, EvalSource

MAX_ROWS = 20_000  # a bounded pass: about 0.7 s on the 1.24 KB rows of bench/bench_check_reward_distribution.py
TAIL_CHARS = 65_536  # only a completion's last characters are searched for its final answer
MAX_CLASSES = 20  # golds with at most this many distinct values (each on 2+ examples) are class labels
_TEXT = re.compile(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}")
_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
_FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:```|\Z)", re.S)  # a fenced block; the last may be left open
_STATED = re.compile(r"\banswer\b", re.I)  # "Answer: 42" after the last block: a stated answer, not code
_DEPTH = {"{": 1, "}": -1}  # a brace's change of the nesting depth


class Program(str):
    """A code reply's answer: the program in its last fenced block, whitespace runs made one space."""

    __slots__ = ()


@dataclass(frozen=True)
class Answers:
    rollouts: int  # rollouts read with a completion
    groups: int  # examples with 2+ rollouts that gave an answer
    same_answer_groups: int  # ... whose rollouts all gave the same answer
    top_answer: str | None  # the answer given most often, over every rollout
    top_answer_share: float | None
    examples: int  # examples with a gold answer
    classes: int | None  # distinct golds when they look like class labels, else None
    majority: str | None  # the most common gold (class labels only)
    majority_share: float | None
    code: int = 0  # rollouts whose answer is a program (a code reply's last fenced block)

    @property
    def programs(self) -> bool:
        """Most answers are programs: the replies are code, compared as code."""
        return self.code * 2 > self.rollouts

    @property
    def same_answer_share(self) -> float | None:
        return self.same_answer_groups / self.groups if self.groups else None

    def to_data(self) -> dict[str, Any]:
        return {
            "rollouts": self.rollouts,
            "groups": self.groups,
            "same_answer_groups": self.same_answer_groups,
            "same_answer_share": None if self.same_answer_share is None else round(self.same_answer_share, 4),
            "top_answer": self.top_answer,
            "top_answer_share": self.top_answer_share,
            "classes": self.classes,
            "majority_class": self.majority,
            "majority_share": self.majority_share,
            "code_answers": self.code,
        }


def normalise(text: str) -> str:
    if "\\" in text:  # \text{} and its kin start with a backslash: most answers have none to unwrap
        text = _TEXT.sub(r"\1", text)
    return " ".join(text.split()).strip(" .,;:!?\"'`*").casefold()


def final_answer(completion: Any) -> str | None:
    """The answer a completion (text or chat messages) ends with, normalised; None for none."""
    if isinstance(completion, list):
        texts = [_text(m.get("content")) for m in completion if isinstance(m, dict) and m.get("role") == "assistant"]
        text = next((t for t in reversed(texts) if isinstance(t, str) and t.strip()), "")
    else:
        text = completion if isinstance(completion, str) else ""
    text = text[-TAIL_CHARS:]  # the answer is at the end: a 100 MB completion costs no more than its tail
    if not text.strip():
        return None
    start = text.rfind("\\boxed{")
    if start >= 0:
        depth, begin = 1, start + 7
        for end in range(begin, len(text)):
            depth += _DEPTH.get(text[end], 0)
            if depth == 0:
                return normalise(text[begin:end]) or None
    tags = _ANSWER_TAG.findall(text) if "<" in text else None  # no tag without its "<"
    if tags:
        return normalise(tags[-1]) or None
    lines = [ln for ln in text.splitlines() if ln.strip()]
    after = text.rsplit("```", 1)[-1] if text.count("```") % 2 == 0 else ""
    if "```" in text and not _STATED.search(after):  # a code reply: its last block is its answer, as a program
        blocks = _FENCE.findall(text)
        program = " ".join(blocks[-1].split()) if blocks else ""
        return Program(program) if program else None
    return (normalise(lines[-1][-80:]) or None) if lines else None


def _text(content: Any) -> Any:
    """A message's text: the string, or the text parts of an OpenAI-style content list joined."""
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "\n".join(parts)
    return content


if msgspec is not None:
    # what the answers pass reads of a row, a chunk of lines at a time; gc=False: decoded JSON makes no cycles
    class _ClassicAnswer(msgspec.Struct, gc=False):
        example_id: Any = MISSING_MS
        id: Any = MISSING_MS
        completion: Any = MISSING_MS

    class _ClassicAnswerGold(_ClassicAnswer, gc=False):
        answer: Any = MISSING_MS

    # a v1 episode: every type the row reader's decoder (read._V1Episode) checks is checked here too, so what this
    # reads the row reader would have read the same way (json reads the rest, and may call it another shape)
    class _V1AnswerNode(msgspec.Struct, gc=False):
        message: msgspec.Raw = msgspec.Raw(b"null")  # decoded for the sampled nodes only
        sampled: bool = False

    class _V1AnswerTrace(msgspec.Struct, gc=False):
        nodes: list[_V1AnswerNode] = []
        calls: list[v1batches.V1Call] = []
        agent: v1batches.V1Agent | None = None

    class _V1AnswerEpisode(msgspec.Struct, gc=False):
        task: v1batches.V1Task | None = None
        traces: list[_V1AnswerTrace] = []

    class _V1Gold(msgspec.Struct, gc=False):
        answer: Any = None

    _gold_of_data = msgspec.json.Decoder(_V1Gold).decode
    _decode = msgspec.json.Decoder().decode


def _v1_gold(task: Any) -> Any:
    """``task.data.answer`` of a decoded episode's task (None where the data is not an object)."""
    if task is None:
        return None
    try:
        return _gold_of_data(task.data).answer
    except msgspec.ValidationError:
        return None


def _answer_rows(source: EvalSource) -> Iterator[tuple[Any, str | None, Any]]:
    """(example, final answer, gold) of each rollout, as ``read.iter_rows`` with ``answer_of`` reads them, a chunk of
    lines decoded at a time into structs of the few fields the pass needs (a chunk msgspec refuses is read by the
    row readers' own rules: ``read.classic_structs``, ``read.v1_rows``)."""
    stats = ReadStats()
    with_answer = "answer" not in source.score_names  # a score named "answer" is read as one, not as the gold
    if msgspec is None:
        lines = numbered_lines(source.path, stats)
        yield from _reference_rows(source, lines, stats, with_answer)
        return
    v1 = source.shape == V1_TRACES
    decoder = msgspec.json.Decoder(_V1AnswerEpisode if v1 else _ClassicAnswerGold if with_answer else _ClassicAnswer)
    for chunk in chunks.line_chunks(source.path, stats):
        try:
            rows = chunk.decode(decoder)
        except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError, RecursionError):
            rows = None
        if rows is None or len(rows) != chunk.count:  # a row msgspec refuses, or a blank line
            yield from _reference_rows(source, chunk.numbered(stats, newlines=True), stats, with_answer)
        elif v1:
            for episode in rows:
                example = v1_example(episode.task)
                if not episode.traces:  # an episode without traces: an errored rollout without an answer
                    yield example, None, None
                for trace in episode.traces:
                    if trace.agent is not None and trace.agent.trainable is False:  # a frozen agent's (judges)
                        continue
                    sampled = [_decode(node.message) or {} for node in trace.nodes if node.sampled]
                    yield example, final_answer([m for m in sampled if isinstance(m, dict)]), _v1_gold(episode.task)
        else:
            for row in rows:
                completion, gold, example = row.completion, row.answer if with_answer else None, row.example_id
                if example is MISSING_MS:  # 2025 rows: ``id`` alone
                    example = row.id
                yield (
                    example if type(example) is int else example_of(row),  # an integer id is its own group key
                    final_answer(None if completion is MISSING_MS else completion),
                    None if gold is MISSING_MS else gold,
                )


def _reference_rows(source: EvalSource, lines, stats: ReadStats, with_answer: bool):
    """``_answer_rows`` by the row readers' rules, over (line number, line) pairs."""
    if source.shape == V1_TRACES:
        for row in v1_rows(lines, stats, answer_of=final_answer):
            yield row.example, row.answer, row.gold
        return
    for _, _, row in classic_structs(source, lines, stats, with_answer):
        completion, gold = row.completion, row.answer if with_answer else None
        yield (
            example_of(row),
            final_answer(None if is_missing(completion) else completion),
            None if is_missing(gold) else gold,
        )


def read_answers(source: EvalSource) -> Answers | None:
    """The answers of a classic, plain or v1 traces file (None for vf-validate output or no completions):
    the first ``MAX_ROWS`` rollouts of ``read.iter_rows``, each with its final answer and gold."""
    if source.shape not in CLASSIC_FAMILY and source.shape != V1_TRACES:
        return None
    by_group: dict[Any, list[str]] = {}
    golds: dict[Any, str] = {}
    given: Counter = Counter()
    code = 0
    for example, answer, gold in itertools.islice(_answer_rows(source), MAX_ROWS):
        if answer is not None:
            given[answer] += 1
            code += isinstance(answer, Program)
            if example is not None:
                by_group.setdefault(example, []).append(answer)
        if example is not None and example not in golds and isinstance(gold, (str, int)) and str(gold).strip():
            golds[example] = normalise(str(gold))  # an example's first gold, as setdefault kept it
    if not given:
        return None
    multi = [a for a in by_group.values() if len(a) >= 2]
    top, top_n = given.most_common(1)[0]
    classes = majority = majority_share = None
    counts = Counter(golds.values())
    if len(golds) >= 10 and 2 <= len(counts) <= MAX_CLASSES and len(counts) * 2 <= len(golds):
        classes = len(counts)
        majority, m = counts.most_common(1)[0]
        majority_share = round(m / len(golds), 4)
    return Answers(
        rollouts=sum(given.values()),
        groups=len(multi),
        same_answer_groups=sum(1 for a in multi if len(set(a)) == 1),
        top_answer=top,
        top_answer_share=round(top_n / sum(given.values()), 4),
        examples=len(golds),
        classes=classes,
        majority=majority,
        majority_share=majority_share,
        code=code,
    )


def judge_answers(answers: Answers | None, solve_rate: float | None, th, result: Result) -> None:
    """same_answers and majority_class: warnings (training may still be worth it; the figures mislead)."""
    if answers is None:
        return
    share = answers.same_answer_share
    easy = solve_rate is not None and solve_rate >= th.too_easy  # all-correct groups agree: too_easy says so
    if share is not None and answers.groups >= th.min_examples and share >= th.same_answer_groups and not easy:
        if answers.programs:  # code replies: programs written alike; one program across tasks means nothing
            result.warn(
                "same_answers",
                f"every rollout writes the same program (its last fenced block, spaces aside) in "
                f"{answers.same_answer_groups}/{answers.groups} groups ({share:.0%}; {answers.code} of "
                f"{answers.rollouts} rollouts are code replies)",
                "a group whose rollouts all write one program teaches GRPO nothing: raise the sampling "
                "temperature, or use a model that samples different programs",
            )
            result.step(
                f"the model writes one program per task in {share:.0%} of groups: raise the sampling temperature "
                "before changing difficulty or group size"
            )
            return _majority(answers, solve_rate, th, result)
        result.warn(
            "same_answers",
            f"every rollout gives the same answer in {answers.same_answer_groups}/{answers.groups} groups "
            f"({share:.0%}); the most common answer overall is {answers.top_answer!r} "
            f"({answers.top_answer_share:.0%} of {answers.rollouts} rollouts)",
            "a group whose rollouts all answer alike teaches GRPO nothing: raise the sampling temperature, check "
            "the prompt offers the answers it should, or use a model that does not collapse to one answer",
        )
        result.step(
            f"the model answers {answers.top_answer!r} in {answers.top_answer_share:.0%} of rollouts: fix that "
            "(sampling temperature, the prompt's list of answers, the model) before changing difficulty or group size"
        )
    _majority(answers, solve_rate, th, result)


def _majority(answers: Answers, solve_rate: float | None, th, result: Result) -> None:
    if answers.majority_share is not None and solve_rate is not None:
        if abs(solve_rate - answers.majority_share) <= th.majority_margin:
            result.warn(
                "majority_class",
                f"the solve rate {solve_rate:.2f} is within {th.majority_margin:.2f} of the majority class's share "
                f"{answers.majority_share:.2f} ({answers.majority!r} is the gold of "
                f"{answers.majority_share:.0%} of {answers.examples} examples, {answers.classes} classes): "
                f"a constant answer {answers.majority!r} would score the same",
                "compare against that baseline, not 0: look at the answers' spread (same_answers, the model's "
                "confusion between classes) before reading the score as skill; balance the classes or "
                "report per-class accuracy",
            )
