"""Scripted conversations through a multi-turn or tool environment's own rollout loop.

A scripted policy stands in for the model behind the environment's own client (classic: the
in-process client of ``env.classic``; v1: the tool loop of ``env.v1_loop``): each script is a
list of replies with real tool calls, built from the tools the environment offers. Per probed
row:

- ``gold_via_tools``: tool calls, then the gold answer  -> must earn the reward
- ``gold_first_then_wrong``: the gold in the first turn (with a tool call), a wrong final one -> must not
- ``tool_echo_then_wrong``: the tool asked to echo the gold, the reply quoting it, a wrong final answer -> must not
- ``calls_then_wrong``: N tool calls then a wrong answer -> must not earn more than the wrong answer alone
- ``bad_arguments``: missing and malformed arguments; the tool answers with an error, the rollout goes on
- ``never_stop``: tool calls that never stop; a turn limit must end it, leaving room for a call and an answer
- ``file_and_code``: arguments that read a file or run code; the tool must not execute them
- ``leak``: the question given to every tool; no output may hold the gold or the worked solution
- ``slow``: an argument that takes forever to evaluate; the tool must be time-bounded (run last:
  a tool that hangs costs the worker process)
"""

from __future__ import annotations

import base64
import json
import re
import secrets as pysecrets
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlab.core.result import Result
from vlab.env import Environment, Reply, Row
from vlab.reward import budget
from vlab.reward import probes as rp

CONVERSATION_ROWS = 2  # rows the scripts run on (each script is a few cheap turns)
TOOL_CALLS = 3  # calls before the wrong answer of calls_then_wrong
NEVER_STOP_CAP = 40  # model turns a never-stopping script tries before it gives up
SLOW_LIMIT = 3.0  # seconds per reward function a slow tool call may take before the worker is stopped
SLOW_ARGUMENT = "(((9**64)**64)**64)**64"
# Tools whose job is to find information: the gold in their output is not a leak by itself.
_RETRIEVAL = re.compile(r"search|retriev|look ?up|wiki|browse|fetch|query|document|knowledge", re.I)
_MENTIONS_TOOL = re.compile(r"\b(tools?|function call(?:s|ing)?|calculator)\b", re.I)


@dataclass
class Script:
    """Replies in order; after the last, ``final`` every turn (a text reply ends a tool rollout)."""

    turns: list[Reply]
    final: Reply
    repeat: Reply | None = None  # replied after the turns, up to ``cap`` times, before ``final``
    cap: int = 0
    sent: int = 0
    tools_seen: list[str] = field(default_factory=list)

    def __call__(self, messages, sampling_args, tools=None) -> Reply:
        if tools and not self.tools_seen:
            self.tools_seen = [_tool_name(t) for t in tools]
        self.sent += 1
        if self.sent <= len(self.turns):
            return self.turns[self.sent - 1]
        if self.repeat is not None and self.sent <= len(self.turns) + self.cap:
            return self.repeat
        return self.final


def _tool_name(tool: dict) -> str:
    return str(tool.get("name") or (tool.get("function") or {}).get("name") or "")


def _description(tool: dict) -> str:
    return str(tool.get("description") or (tool.get("function") or {}).get("description") or "")


def _parameters(tool: dict) -> dict:
    return tool.get("parameters") or (tool.get("function") or {}).get("parameters") or {}


def arguments(tool: dict, value: str) -> dict:
    """Arguments for every required parameter (every parameter when none is required): text
    parameters get ``value``, numbers 1, flags true."""
    params = _parameters(tool)
    props = params.get("properties") or {}
    names = params.get("required") or list(props)
    out: dict[str, Any] = {}
    for name in names:
        kind = (props.get(name) or {}).get("type")
        out[name] = 1 if kind in ("integer", "number") else True if kind == "boolean" else value
    return out


class Calls:
    """Tool calls with fresh ids."""

    def __init__(self) -> None:
        self.n = 0

    def reply(self, tool: dict, args: dict | str, text: str = "") -> Reply:
        self.n += 1
        raw = args if isinstance(args, str) else json.dumps(args)
        return Reply(text=text, tool_calls=[{"id": f"vlab_{self.n}", "name": _tool_name(tool), "arguments": raw}])


def _tool_outputs(completion: list[dict]) -> list[str]:
    return [str(m.get("content") or "") for m in completion if m.get("role") == "tool"]


def _assistant_turns(completion: list[dict]) -> int:
    return sum(1 for m in completion if m.get("role") == "assistant")


def _total(result) -> float:
    total = result.score.total
    return float(total) if isinstance(total, (int, float)) else 0.0


def _mentions_gold(text: str, gold: str) -> bool:
    if rp.NUMBER.fullmatch(gold):
        return re.search(rf"(?<![\d.]){re.escape(gold)}(?![\d])", text.replace(",", "")) is not None
    return len(gold) >= 3 and gold.lower() in text.lower()


def _solution_texts(row: Row, gold: str) -> list[str]:
    """Long text fields of the row that are not in the prompt (a worked solution, a rationale)."""
    prompt = " ".join(str(m.get("content") or "") for m in row.prompt)
    out = []
    for value in row.fields.values():
        if isinstance(value, str) and len(value) >= 40 and value[:40] not in prompt:
            out.append(" ".join(value.split())[:40])
    return out


@dataclass
class Finding:
    check: str
    message: str
    hint: str


def conversation_checks(result: Result, env: Environment, rows: list[Row], hints, opts) -> None:
    """Run the scripts on up to CONVERSATION_ROWS rows and record one check per property."""
    caps = env.capabilities
    if not (caps.multi_turn or caps.tools):
        return
    rows = [r for r in rows if rp.gold_value(r.answer) is not None][:CONVERSATION_ROWS]
    if not rows:
        result.skip("conversation", "no probed row has a gold answer to script conversations with")
        return
    threshold = opts.correct_threshold
    env = _Recorder(env)  # keeps every tool output and environment reply, for the token budget
    data: dict[str, Any] = {"multi_turn": caps.multi_turn, "tools": [], "rows": []}
    result.data["conversation"] = data
    # the tools the environment offers, as the model sees them
    captured: list[list[dict]] = []

    def capture(messages, sampling_args, tools=None):
        captured.append(list(tools or []))
        return Reply(text="ok")

    env.rollout_sync(rows[0], capture, timeout=opts.timeout)
    tools = [t for t in (captured[0] if captured else []) if _tool_name(t)]
    data["tools"] = [_tool_name(t) for t in tools]
    if caps.tools and not tools:
        result.skip(
            "conversation",
            "the environment declares tools, but they cannot run here (e.g. a toolset that needs a sandbox); "
            "no scripted conversation was run",
            "run an eval with the tools (vf-eval) and read it with check_reward_distribution",
        )
        return
    prompt_text = " ".join(str(m.get("content") or "") for m in rows[0].prompt)
    if tools:
        result.passed("tools_offered", f"the model is offered {len(tools)} tool(s): {', '.join(data['tools'])}")
    elif _MENTIONS_TOOL.search(prompt_text):
        result.fail(
            "tools_offered",
            "the prompt tells the model to use a tool, but no tool is offered in the request",
            "return the toolset from Task.toolsets (v1) or pass tools=[...] to vf.ToolEnv (classic)",
        )
        return
    else:
        result.skip("tools_offered", "the environment offers no tools; only the turn limit is checked")

    findings: dict[str, list[str]] = {}
    hints_by_check: dict[str, str] = {}

    def bad(check: str, message: str, hint: str) -> None:
        findings.setdefault(check, []).append(message)
        hints_by_check[check] = hint

    passed: dict[str, str] = {}
    slow_rows: list[tuple[Row, str]] = []
    for row in rows:
        gold = rp.gold_value(row.answer)
        template = _gold_format(env, row, gold, hints, opts)
        wrong_text = rp.fill(template, rp.wrong_value(gold))
        gold_text = rp.fill(template, gold)
        record: dict[str, Any] = {"row": row.index, "format": template}
        data["rows"].append(record)

        def run(script: Script, name: str, row: Row = row, record: dict = record):
            out = env.rollout_sync(row, script, timeout=opts.timeout)
            record[name] = round(_total(out), 4)
            return out

        if not tools:
            _turn_limit(env, row, None, Calls(), gold_text, opts, record, bad, passed)
            continue
        tool = tools[0]
        calls = Calls()
        out = run(Script([calls.reply(tool, arguments(tool, gold))], Reply(text=gold_text)), "gold_via_tools")
        if _total(out) < threshold:
            bad(
                "conversation_gold",
                f"row {row.index}: a tool call then the gold answer ({gold_text[:60]}) scored {_total(out):g}",
                "the reward must read the model's final answer; check the turn limit leaves room for it",
            )
        first = Reply(text=gold_text, tool_calls=calls.reply(tool, arguments(tool, "1+1")).tool_calls)
        out = run(Script([first], Reply(text=wrong_text)), "gold_first_then_wrong")
        if _total(out) >= threshold:
            bad(
                "reads_final_answer",
                f"row {row.index}: the gold in the first turn then a wrong final answer scored {_total(out):g}",
                "score the last assistant turn (trace.last_reply / parser.parse_answer(completion)), not the first",
            )
        quote = Reply(text=f"The tool returned {gold}. " + wrong_text)
        out = run(Script([calls.reply(tool, arguments(tool, gold))], quote), "tool_echo_then_wrong")
        if _total(out) >= threshold:
            bad(
                "answer_from_tool",
                f"row {row.index}: the tool echoing the gold then a wrong final answer scored {_total(out):g}",
                "take the answer from the model's final reply, never from tool output (the model can make a tool echo anything)",
            )
        alone = run(Script([], Reply(text=wrong_text)), "wrong_alone")
        many = run(
            Script([calls.reply(tool, arguments(tool, "1+1")) for _ in range(TOOL_CALLS)], Reply(text=wrong_text)),
            "calls_then_wrong",
        )
        if _total(many) > _total(alone) + rp.EPS:
            bad(
                "tool_calls_pay",
                f"row {row.index}: {TOOL_CALLS} tool calls then a wrong answer scored {_total(many):g}, "
                f"the wrong answer alone {_total(alone):g}",
                "do not reward tool calls; count them in a metric (weight 0) instead",
            )
        script = Script(
            [calls.reply(tool, {}), calls.reply(tool, "{not json"), calls.reply(tool, arguments(tool, "2 +* ("))],
            Reply(text=gold_text),
        )
        out = run(script, "bad_arguments")
        empty = [t for t in _tool_outputs(out.completion)[:3] if not t.strip()]
        if out.tool_errors:
            bad(
                "tool_bad_arguments",
                f"row {row.index}: {out.tool_errors[0]}",
                "catch bad input inside the tool and return an error message the model can read",
            )
        elif out.error or empty or _total(out) < threshold <= record["gold_via_tools"]:
            bad(
                "tool_bad_arguments",
                f"row {row.index}: bad tool arguments then the gold answer "
                + (
                    f"ended in an error ({out.error})"
                    if out.error
                    else "got an empty tool reply"
                    if empty
                    else f"scored {_total(out):g} (stop: {out.stop_condition}; {record['gold_via_tools']:g} without them)"
                ),
                "answer bad arguments with an error message, let the model try again, and score its final answer",
            )
        _turn_limit(env, row, tool, calls, gold_text, opts, record, bad, passed)
        _file_and_code(env, row, tool, calls, gold_text, opts, bad)
        _leak(env, row, tools, calls, gold, gold_text, opts, bad)
        slow_rows.append((row, gold_text))

    turn_limits = [r.get("turns_until_stop") for r in data["rows"]]
    for check, text in (
        ("conversation_gold", "tool calls then the gold answer earn the reward on every row"),
        ("reads_final_answer", "the gold in the first turn does not earn the reward after a wrong final answer"),
        ("answer_from_tool", "a tool echoing the gold does not earn the reward"),
        ("tool_calls_pay", "tool calls earn nothing by themselves"),
        ("tool_bad_arguments", "bad or missing arguments get an error message and the rollout goes on"),
        ("turn_limit", passed.get("turn_limit", f"a turn limit ends never-stopping rollouts (turns: {turn_limits})")),
        ("tool_executes_input", "the tool does not read files or run code from its arguments"),
        ("tool_leak", "no tool output holds the gold answer or the worked solution"),
    ):
        if check in findings:
            result.fail(check, "; ".join(findings[check][:2]), hints_by_check[check])
        elif tools or check == "turn_limit":
            result.passed(check, text)
    budget.token_budget_check(
        result,
        rows,
        tools,
        env.outputs,
        [r.get("turns_until_stop") if r.get("turn_limit_met") else None for r in data["rows"]],
        caps,
        opts,
    )
    if tools and slow_rows and hasattr(env, "incidents"):
        _slow(result, env, slow_rows[0], tools[0])


class _Recorder:
    """The environment, keeping the text of every tool output and environment reply its rollouts hold."""

    def __init__(self, env: Environment) -> None:
        self._env = env
        self.outputs: list[str] = []

    def rollout_sync(self, row: Row, generate, sampling_args: dict | None = None, timeout: float = 10.0):
        out = self._env.rollout_sync(row, generate, sampling_args, timeout)
        self.outputs += [str(m.get("content") or "") for m in out.completion if m.get("role") in ("tool", "user")]
        return out

    def __getattr__(self, name: str):
        return getattr(self._env, name)


def _gold_format(env: Environment, row: Row, gold: str, hints, opts) -> str:
    """The first answer format whose gold earns the reward as one reply (else the primary one)."""
    templates = [t for _, t in rp.gold_templates(hints, opts.gold_template)] + [t for _, t in rp.CONVENTIONS]
    templates = list(dict.fromkeys(templates))
    scores = env.score_sync([(row, rp.fill(t, gold)) for t in templates], opts.timeout, opts.concurrency)
    for template, score in zip(templates, scores):
        if isinstance(score.total, (int, float)) and score.total >= opts.correct_threshold:
            return template
    return templates[0]


def _turn_limit(env, row, tool, calls, gold_text, opts, record, bad, passed) -> None:
    """Tool calls (or plain turns) that never stop: the environment must end the rollout, after at
    least one tool call and an answer."""
    if tool is not None:
        repeat = calls.reply(tool, arguments(tool, "1+1"))
    else:
        repeat = Reply(text="Let me keep thinking.")
    script = Script([], Reply(text=gold_text), repeat=repeat, cap=NEVER_STOP_CAP)
    out = env.rollout_sync(row, script, timeout=opts.timeout)
    turns = _assistant_turns(out.completion)
    record["turns_until_stop"] = turns
    record["turn_limit_met"] = script.sent <= NEVER_STOP_CAP
    record["stop_condition"] = out.stop_condition
    if script.sent > NEVER_STOP_CAP:
        if tool is None:
            return  # a multi-turn environment without tools ends on the model's own text reply
        bad(
            "turn_limit",
            f"row {row.index}: {NEVER_STOP_CAP} tool calls in a row and the rollout never stopped",
            "set a turn limit (max_turns for vf.ToolEnv; a @vf.stop on trace.num_turns for v1)",
        )
    elif turns < 2 and tool is not None:
        bad(
            "turn_limit",
            f"row {row.index}: the rollout stopped after {turns} model turn(s) ({out.stop_condition}); "
            "there is no room for a tool call and an answer",
            "allow at least 2 model turns (one tool call and the answer); 4-10 is usual",
        )
    else:
        passed["turn_limit"] = (
            f"a turn limit ends never-stopping rollouts after {turns} model turns ({out.stop_condition})"
        )


def _file_and_code(env, row, tool, calls, gold_text, opts, bad) -> None:
    token_file, token_code = f"VLAB{pysecrets.token_hex(6)}", f"VLAB{pysecrets.token_hex(6)}"
    with tempfile.TemporaryDirectory(prefix="vlab-canary-") as folder:
        path = Path(folder) / "canary.txt"
        path.write_text(token_file)
        b64 = base64.b64encode(token_code.encode()).decode()
        script = Script(
            [
                calls.reply(tool, arguments(tool, f"open({str(path)!r}).read()")),
                calls.reply(tool, arguments(tool, f"__import__('base64').b64decode('{b64}').decode()")),
            ],
            Reply(text=gold_text),
        )
        out = env.rollout_sync(row, script, timeout=opts.timeout)
    outputs = " ".join(_tool_outputs(out.completion))
    done = [what for what, token in (("read a file", token_file), ("ran code", token_code)) if token in outputs]
    if done:
        bad(
            "tool_executes_input",
            f"row {row.index}: the tool {' and '.join(done)} given in its arguments (eval/exec of model text)",
            "parse the input (ast with an allow-list of operators), never eval/exec it",
        )


def _leak(env, row, tools, calls, gold, gold_text, opts, bad) -> None:
    question = row.question or ""
    script = Script([calls.reply(t, arguments(t, question)) for t in tools], Reply(text=gold_text))
    out = env.rollout_sync(row, script, timeout=opts.timeout)
    outputs = " ".join(" ".join(t.split()) for t in _tool_outputs(out.completion))
    leaks = [f"the solution text {s[:30]!r}..." for s in _solution_texts(row, gold) if s in outputs]
    if not _mentions_gold(question, gold) and _mentions_gold(outputs, gold):
        if not leaks and any(_RETRIEVAL.search(_tool_name(t) + " " + _description(t)) for t in tools):
            return  # finding the answer is what a search tool is for
        leaks.append(f"the gold answer {gold!r}")
    if leaks:
        bad(
            "tool_leak",
            f"row {row.index}: given the question, a tool answered with {', '.join(leaks)}",
            "tools must compute from their arguments, never look up the dataset's answers or solutions",
        )


def _slow(result: Result, env, row_gold: tuple[Row, str], tool: dict) -> None:
    row, gold_text = row_gold
    before = len(env.incidents)
    calls = Calls()
    script = Script([calls.reply(tool, arguments(tool, SLOW_ARGUMENT))], Reply(text=gold_text))
    out = env.rollout_sync(row, script, timeout=SLOW_LIMIT)
    hung = [i for i in env.incidents[before:] if i.get("kind") == "timeout"]
    if hung:
        del env.incidents[before:]  # reported here, not again as a worker timeout
        result.fail(
            "tool_time_bound",
            f"the tool call {_tool_name(tool)}({SLOW_ARGUMENT!r}) did not return; the rollout was stopped",
            "bound the tool's work: limit number sizes and exponents, or run it with a time limit",
        )
    elif out.error:
        result.warn("tool_time_bound", f"the slow tool call ended the rollout with an error: {out.error}", "")
    else:
        result.passed("tool_time_bound", f"the tool answered {SLOW_ARGUMENT!r} promptly")
