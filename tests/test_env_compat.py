"""Each private verifiers API that scripts/vlab/env/compat.py relies on, against the installed verifiers.

compat.py is the only module allowed to touch verifiers internals; every internal it uses is
listed in ``compat.PRIVATE_APIS`` and has exactly one test here. When a verifiers release
changes one, its test fails with the API's name and the verifiers version, so the fix is
known to be in compat.py. Tests of the generation that is not installed are skipped (the
classic ones under verifiers 0.4, which has only v1).

Longer than the ~500-line guide on purpose: one small test per private API keeps each
failure pointing at exactly one API.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import re
import sys

import env_fixtures as fx
import pytest
from conftest import ROOT, SKILL_ROOT, VERIFIERS

from vlab.env import Reply, compat

COVERED: dict[str, str] = {}  # private API -> the test that exercises it


def covers(api: str):
    def mark(test):
        assert api not in COVERED, f"{api} has two tests"
        COVERED[api] = test.__name__
        return test

    return mark


@contextlib.contextmanager
def private(api: str):
    """Turn any failure into one message naming the API and the installed verifiers version."""
    try:
        yield
    except Exception as err:  # noqa: BLE001 - AssertionError included: any change is reported by name
        pytest.fail(
            f"verifiers {VERIFIERS.version} changed the private API {api!r} that scripts/vlab/env/compat.py "
            f"relies on ({compat.PRIVATE_APIS.get(api, '?')} generation): {type(err).__name__}: {err}",
            pytrace=True,
        )


def run(coro):
    return asyncio.run(coro)


# -- classic fixtures: environments built in code ----------------------------------------------

ROWS = [
    {"prompt": [{"role": "user", "content": q}], "question": q, "answer": a}
    for q, a in (("What is 30 + 1?", "31"), ("What is 2 * 42?", "84"))
]


def _exact(completion, answer, parser) -> float:
    return 1.0 if parser.parse_answer(completion) == answer else 0.0


def _spread(completions, **kwargs) -> list[float]:  # a group function
    return [0.5] * len(completions)


def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression."""
    return str(eval(expression, {"__builtins__": {}}))


@pytest.fixture(scope="module")
def classic():
    """(single-turn env with a group function, tool env, the parser)."""
    import verifiers as vf
    from datasets import Dataset

    parser = vf.XMLParser(["answer"], answer_field="answer")
    single = vf.SingleTurnEnv(
        dataset=Dataset.from_list(ROWS),
        parser=parser,
        rubric=vf.Rubric(funcs=[_exact, _spread], weights=[1.0, 0.5], parser=parser),
    )
    tools = vf.ToolEnv(
        dataset=Dataset.from_list(ROWS),
        parser=parser,
        rubric=vf.Rubric(funcs=[_exact], parser=parser),
        tools=[calculator],
        max_turns=3,
    )
    return single, tools, parser


def _scripted(*replies: Reply):
    queue = list(replies)
    seen = []

    async def respond(messages, sampling_args, tools):
        seen.append((messages, tools))
        return queue.pop(0)

    return compat.scripted_client(respond), seen


# -- classic -----------------------------------------------------------------------------------


@pytest.mark.classic
@covers("Rubric._get_reward_funcs")
def test_rubric_get_reward_funcs(classic):
    single, _, _ = classic
    with private("Rubric._get_reward_funcs"):
        names = [f.__name__ for f in single.rubric._get_reward_funcs()]
        # SingleTurnEnv wraps the rubric in a RubricGroup with its num_turns metric
        assert names[:2] == ["_exact", "_spread"] and "num_turns" in names, names


@pytest.mark.classic
@covers("Rubric._get_reward_weights")
def test_rubric_get_reward_weights(classic):
    single, _, _ = classic
    with private("Rubric._get_reward_weights"):
        weights = list(single.rubric._get_reward_weights())
        assert weights[:2] == [1.0, 0.5] and len(weights) == len(single.rubric._get_reward_funcs()), weights


@pytest.mark.classic
@covers("Rubric._is_group_func")
def test_rubric_is_group_func(classic):
    single, _, _ = classic
    with private("Rubric._is_group_func"):
        assert single.rubric._is_group_func(_spread) is True and single.rubric._is_group_func(_exact) is False
        # and compat's combination of the three
        found = {f.__name__: (w, g) for f, w, g in compat.reward_functions(single.rubric)}
        assert found["_exact"] == (1.0, False) and found["_spread"] == (0.5, True) and found["num_turns"][0] == 0.0


@pytest.mark.classic
@covers("Rubric.funcs")
def test_rubric_funcs_can_be_replaced_in_place():
    import verifiers as vf

    parser = vf.XMLParser(["answer"], answer_field="answer")
    rubric = vf.Rubric(funcs=[_exact], parser=parser)
    called = []

    def wrap(func, group):
        def wrapper(completion, answer, parser):
            called.append(func.__name__)
            return func(completion, answer, parser)

        wrapper.__name__ = func.__name__
        return wrapper

    with private("Rubric.funcs"):
        compat.replace_reward_functions(rubric, wrap)
        state = compat.scoring_state(ROWS[0], [{"role": "assistant", "content": "<answer>31</answer>"}])
        run(rubric.score_rollout(state))
        assert called == ["_exact"], "score_rollout did not call the function placed in rubric.funcs"
        assert compat.state_scores(state)[0] == 1.0


@pytest.mark.classic
@covers("RubricGroup.rubrics")
def test_rubric_group_rubrics_are_walked():
    import verifiers as vf

    inner = vf.Rubric(funcs=[_exact], parser=vf.XMLParser(["answer"], answer_field="answer"))
    group = vf.RubricGroup(rubrics=[inner])
    seen = []
    with private("RubricGroup.rubrics"):
        compat.replace_reward_functions(group, lambda func, is_group: seen.append(func.__name__) or func)
        assert seen == ["_exact"], seen
        assert [f.__name__ for f, _, _ in compat.reward_functions(group)] == ["_exact"]


@pytest.mark.classic
@covers("Rubric.has_group_rewards")
def test_rubric_has_group_rewards(classic):
    single, tools, _ = classic
    with private("Rubric.has_group_rewards"):
        assert compat.has_group_rewards(single.rubric) is True
        assert compat.has_group_rewards(tools.rubric) is False


@pytest.mark.classic
@covers("Environment.dataset_source")
def test_environment_dataset_source():
    import verifiers as vf
    from datasets import Dataset

    with private("Environment.dataset_source"):
        train = vf.SingleTurnEnv(dataset=Dataset.from_list(ROWS), rubric=vf.Rubric(funcs=[_exact]))
        assert [r["answer"] for r in compat.dataset(train)] == ["31", "84"]
        eval_only = vf.SingleTurnEnv(eval_dataset=Dataset.from_list(ROWS[:1]), rubric=vf.Rubric(funcs=[_exact]))
        assert [r["answer"] for r in compat.dataset(eval_only)] == ["31"]


def _fresh_env():
    import verifiers as vf
    from datasets import Dataset

    return vf.SingleTurnEnv(dataset=Dataset.from_list(ROWS), rubric=vf.Rubric(funcs=[_exact]))


@pytest.mark.classic
@covers("Environment.env_id")
def test_environment_env_id():
    env = _fresh_env()
    with private("Environment.env_id"):
        assert env.env_id == "", f"a new environment's env_id is {env.env_id!r}, not empty"
        compat.set_identity(env, "owner/my-env", {})
        assert env.env_id == "owner/my-env"


@pytest.mark.classic
@covers("Environment.env_args")
def test_environment_env_args():
    env = _fresh_env()
    with private("Environment.env_args"):
        assert env.env_args == {}, f"a new environment's env_args is {env.env_args!r}, not empty"
        compat.set_identity(env, "my-env", {"n": 1})
        assert env.env_args == {"n": 1}


@pytest.mark.classic
@covers("Environment.tool_defs")
def test_environment_tool_defs(classic):
    single, tools, _ = classic
    with private("Environment.tool_defs"):
        assert compat.has_tools(tools) is True and compat.has_tools(single) is False


@pytest.mark.classic
@covers("MultiTurnEnv.max_turns")
def test_multi_turn_env_max_turns(classic):
    import verifiers as vf

    single, tools, _ = classic
    with private("MultiTurnEnv.max_turns"):
        assert isinstance(tools, vf.MultiTurnEnv) and tools.max_turns == 3
        assert compat.turn_limit(tools) == 3 and compat.turn_limit(single) is None


@pytest.mark.classic
@covers("Environment.init_state")
def test_environment_init_state(classic):
    single, _, _ = classic
    row = ROWS[0]
    with private("Environment.init_state"):
        state = run(compat.init_state(single, row, compat.scripted_client(None), "m"))
        assert state["answer"] == "31" and state["prompt"][-1].content == ROWS[0]["question"]
        state["answer"] = "changed"
        assert row["answer"] == "31", "init_state no longer copies the row"


@pytest.mark.classic
@covers("verifiers.utils.message_utils.normalize_messages")
def test_normalize_messages(classic):
    single, _, _ = classic
    row = ROWS[0]
    with private("verifiers.utils.message_utils.normalize_messages"):
        state = run(compat.init_state(single, row, compat.scripted_client(None), "m"))
        compat.set_completion(state, [{"role": "assistant", "content": "<answer>31</answer>"}])
        assert state["completion"][0].content == "<answer>31</answer>"
        assert state["completion"][0]["content"] == "<answer>31</answer>"  # dict-style access as well


@pytest.mark.classic
@covers("Environment.rollout")
def test_environment_rollout(classic):
    single, _, _ = classic
    client, seen = _scripted(Reply(text="<answer>31</answer>"))
    row = ROWS[0]
    with private("Environment.rollout"):
        state = run(compat.rollout(single, row, client, "m", {}))
        assert len(seen) == 1 and seen[0][0][-1]["content"] == ROWS[0]["question"]
        assert compat.state_view(state).completion[-1]["content"] == "<answer>31</answer>"


@pytest.mark.classic
@covers("verifiers.clients.Client (subclass protocol)")
def test_client_subclass_protocol(classic):
    _, tools, _ = classic
    client, seen = _scripted(
        Reply(text="", tool_calls=[{"id": "c1", "name": "calculator", "arguments": {"expression": "30+1"}}]),
        Reply(text="<answer>31</answer>"),
    )
    row = ROWS[0]
    with private("verifiers.clients.Client (subclass protocol)"):
        state = run(compat.rollout(tools, row, client, "m", {}))
        view = compat.state_view(state)
        assert [t["name"] for t in seen[0][1]] == ["calculator"], "tool definitions did not reach the client"
        assert [m["role"] for m in view.completion] == ["assistant", "tool", "assistant"], view.completion
        assert view.completion[1]["content"] == "31" and view.error is None


@pytest.mark.classic
@covers("verifiers.types.Response/ResponseMessage/ResponseTokens/ToolCall")
def test_response_types_carry_tokens(classic):
    single, _, _ = classic
    client, _ = _scripted(
        Reply(text="<answer>31</answer>", prompt_token_ids=[1, 2], completion_token_ids=[3], completion_logprobs=[-0.5])
    )
    row = ROWS[0]
    with private("verifiers.types.Response/ResponseMessage/ResponseTokens/ToolCall"):
        state = run(compat.rollout(single, row, client, "m", {}))
        assert compat.state_view(state).turns == [
            {"prompt_ids": [1, 2], "completion_ids": [3], "completion_logprobs": [-0.5]}
        ]


@pytest.mark.classic
@covers("State['reward'] / State['metrics']")
def test_state_reward_and_metrics(classic):
    single, _, _ = classic
    with private("State['reward'] / State['metrics']"):
        states = [
            compat.scoring_state(ROWS[0], [{"role": "assistant", "content": text}])
            for text in ("<answer>31</answer>", "<answer>30</answer>")
        ]
        run(single.rubric.score_group(states))
        (good, good_metrics), (bad, bad_metrics) = (compat.state_scores(s) for s in states)
        assert good == 1.25 and bad == 0.25, (good, bad)
        assert good_metrics["_exact"] == 1.0 and bad_metrics["_exact"] == 0.0 and good_metrics["_spread"] == 0.5


@pytest.mark.classic
@covers("State['trajectory'][i]['tokens']")
def test_state_trajectory_tokens(classic):
    _, tools, _ = classic
    client, _ = _scripted(
        Reply(
            text="",
            tool_calls=[{"id": "c1", "name": "calculator", "arguments": '{"expression": "2*42"}'}],
            prompt_token_ids=[1],
            completion_token_ids=[2, 3],
            completion_logprobs=[-0.1, -0.2],
        ),
        Reply(text="<answer>84</answer>", prompt_token_ids=[1, 2, 3, 4], completion_token_ids=[5]),
    )
    row = ROWS[1]
    with private("State['trajectory'][i]['tokens']"):
        turns = compat.state_view(run(compat.rollout(tools, row, client, "m", {}))).turns
        assert turns == [
            {"prompt_ids": [1], "completion_ids": [2, 3], "completion_logprobs": [-0.1, -0.2]},
            {"prompt_ids": [1, 2, 3, 4], "completion_ids": [5], "completion_logprobs": [0.0]},
        ], turns


@pytest.mark.classic
@covers("State rollout fields")
def test_state_rollout_fields(classic):
    single, _, _ = classic
    client, _ = _scripted(Reply(text="<answer>3", finish_reason="length"))
    row = ROWS[0]
    with private("State rollout fields"):
        view = compat.state_view(run(compat.rollout(single, row, client, "m", {})))
        assert view.prompt[-1] == {"role": "user", "content": ROWS[0]["question"]}
        assert view.completion[-1]["content"] == "<answer>3" and view.error is None
        assert isinstance(view.stop_condition, str) and view.stop_condition, view.stop_condition
        assert view.truncated is True, "a reply cut by the length limit is no longer marked is_truncated"


@pytest.mark.classic
@covers("vf.State(input=...)")
def test_state_from_input(classic):
    _, tools, _ = classic  # a rubric without group functions
    with private("vf.State(input=...)"):
        state = compat.scoring_state(ROWS[1], [{"role": "assistant", "content": "<answer>84</answer>"}])
        assert state["answer"] == "84"  # input fields forward
        run(tools.rubric.score_rollout(state))
        assert compat.state_scores(state)[1]["_exact"] == 1.0


@pytest.mark.classic
@covers("verifiers.types.RolloutTiming")
def test_rollout_timing(classic):
    _, tools, _ = classic  # a rubric without group functions
    with private("verifiers.types.RolloutTiming"):
        from verifiers.types import RolloutTiming

        state = compat.scoring_state(ROWS[0], [{"role": "assistant", "content": "<answer>31</answer>"}])
        assert isinstance(state["timing"], RolloutTiming)
        run(tools.rubric.score_rollout(state))  # scoring writes its time into state["timing"]
        assert compat.state_scores(state)[1]["_exact"] == 1.0


# -- v1 ----------------------------------------------------------------------------------------

V1_TASK = """
class T(vf.Task[Data]):
    @vf.reward(weight=1.0)
    async def exact(self, trace: vf.Trace) -> float:
        found = TAG.findall(trace.last_reply)
        return 1.0 if len(found) == 1 and found[0] == self.data.answer else 0.0

    @vf.reward(weight=0.25)
    async def tagged(self, trace: vf.Trace) -> float:
        return 1.0 if "<answer>" in trace.last_reply else 0.0

    @vf.metric
    async def reply_chars(self, trace: vf.Trace) -> float:
        return float(len(trace.last_reply))
"""


@pytest.fixture(scope="module")
def v1(tmp_path_factory):
    """(the taskset module, its tasks)."""
    folder = tmp_path_factory.mktemp("v1compat")
    data = fx.write_dataset(folder)
    path = fx.v1_env(folder, "compat_v1_taskset", V1_TASK)
    spec = importlib.util.spec_from_file_location("compat_v1_taskset", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["compat_v1_taskset"] = module
    spec.loader.exec_module(module)
    taskset = module.Tasks(module.Config(dataset_path=str(data)))
    return module, taskset, list(taskset)


def _trace(task, reply: str):
    return compat.scoring_trace(
        task, [{"role": "user", "content": task.data.prompt}], [{"role": "assistant", "content": reply}]
    )


@pytest.mark.v1
@covers("verifiers.v1.utils.loaders._plugin_class")
def test_loaders_plugin_class(v1, tmp_path):
    module, _, _ = v1
    with private("verifiers.v1.utils.loaders._plugin_class"):
        assert compat.taskset_class(module) is module.Tasks
        empty = fx.write_module(tmp_path, "no_taskset_here", "__all__ = []\n")
        spec = importlib.util.spec_from_file_location("no_taskset_here", empty)
        bare = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bare)
        with pytest.raises((TypeError, ValueError, AttributeError)):
            compat.taskset_class(bare)


@pytest.mark.v1
@covers("verifiers.v1.utils.loaders.Taskset")
def test_loaders_taskset(v1):
    import verifiers.v1 as vf

    with private("verifiers.v1.utils.loaders.Taskset"):
        from verifiers.v1.utils import loaders

        assert loaders.Taskset is vf.Taskset


@pytest.mark.v1
@covers("Taskset.bounded / Taskset.INFINITE")
def test_taskset_bounded(v1):
    _, taskset, _ = v1
    with private("Taskset.bounded / Taskset.INFINITE"):
        assert compat.taskset_bounded(taskset) is True
        assert hasattr(taskset, "bounded") or hasattr(taskset, "INFINITE")


@pytest.mark.v1
@covers("Taskset.config.task")
def test_taskset_config_task(v1):
    import verifiers.v1 as vf

    _, taskset, _ = v1
    with private("Taskset.config.task"):
        assert isinstance(taskset.config.task, vf.TaskConfig)
        assert compat.taskset_turn_limit(taskset) is None  # the fixture's task config declares no max_turns

        class TurnsConfig(vf.TaskConfig):
            max_turns: int = 5

        limited = taskset.config.model_copy(update={"task": TurnsConfig()})
        assert compat.taskset_turn_limit(type("Limited", (), {"config": limited})()) == 5


@pytest.mark.v1
@covers("Task.hooks")
def test_task_hooks_can_be_wrapped(v1):
    _, _, tasks = v1
    task = tasks[0]
    called = []

    def wrap(fn):
        @functools.wraps(fn)  # keeps the signature verifiers injects by, and the reward's weight
        async def wrapper(*args, **kwargs):
            called.append(fn.__name__)
            return await fn(*args, **kwargs)

        return wrapper

    with private("Task.hooks"):
        wrapped = compat.plain_task(task)
        compat.wrap_task_hooks(wrapped, wrap)
        run(wrapped.score(_trace(wrapped, "<answer>31</answer>")))
        assert sorted(called) == ["exact", "reply_chars", "tagged"], called  # metrics are hooks too
        called.clear()
        run(compat.plain_task(wrapped).score(_trace(task, "<answer>31</answer>")))
        assert called == [], "plain_task still runs the wrapped hooks"


@pytest.mark.v1
@covers("verifiers.v1.runtimes.make_runtime")
def test_make_runtime(v1):
    _, _, tasks = v1
    with private("verifiers.v1.runtimes.make_runtime"):
        import verifiers.v1 as vf
        from verifiers.v1.runtimes import make_runtime

        async def go():
            runtime = make_runtime(vf.SubprocessConfig(), name="vlab-compat-runtime-test")
            try:
                await runtime.start()
                await runtime.write("x.txt", b"seen")
                done = await runtime.run([sys.executable, "-c", "print(open('x.txt').read())"], {})
                return done.exit_code, done.stdout.strip()
            finally:
                await runtime.stop()

        assert run(go()) == (0, "seen")
        # the whole path; T defines no check: the base Task.validate says None ("no model-free check") in 0.4.0
        # and True in the verifiers.v1 that 0.3.1 ships; either way nothing is rejected
        assert run(compat.validate_in_runtime(tasks[0], 10)) is (True if VERIFIERS.classic else None)


@pytest.mark.v1
@covers("verifiers.v1.utils.compile.resolve_runtime_config")
def test_resolve_runtime_config(v1):
    _, _, tasks = v1
    with private("verifiers.v1.utils.compile.resolve_runtime_config"):
        import verifiers.v1 as vf
        from verifiers.v1.utils.compile import resolve_runtime_config

        assert isinstance(resolve_runtime_config(vf.SubprocessConfig(), tasks[0]), vf.SubprocessConfig)


@pytest.mark.v1
@covers("verifiers.v1.utils.decorators.invoke")
def test_invoke(v1):
    with private("verifiers.v1.utils.decorators.invoke"):
        from verifiers.v1.utils.decorators import invoke

        def setup(runtime):  # a hook that names only some of what is offered
            return runtime

        assert invoke(setup, {"trace": 1, "runtime": 2}) == 2


@pytest.mark.v1
@covers("@vf.reward weight (_vf_weight)")
def test_reward_weight(v1):
    _, _, tasks = v1
    with private("@vf.reward weight (_vf_weight)"):
        assert compat.task_rewards(tasks[0]) == [("exact", 1.0), ("tagged", 0.25)]


@pytest.mark.v1
@covers("verifiers.v1.types.Message")
def test_v1_message_type():
    with private("verifiers.v1.types.Message"):
        msgs = compat.v1_messages(
            [
                {"role": "system", "content": "s"},
                {"role": "user", "content": "u"},
                {"role": "assistant", "content": "a"},
            ]
        )
        assert [m.role for m in msgs] == ["system", "user", "assistant"] and msgs[2].content == "a"


@pytest.mark.v1
@covers("TraceTask(type, data, key, hash)")
def test_trace_task(v1):
    _, _, tasks = v1
    with private("TraceTask(type, data, key, hash)"):
        trace_task, _ = compat.trace_parts(tasks[0], "agent")
        assert trace_task.key == tasks[0].key and trace_task.hash == tasks[0].hash and trace_task.type == "T"


@pytest.mark.v1
@covers("AgentInfo(config, name, trainable)")
def test_agent_info(v1):
    _, _, tasks = v1
    with private("AgentInfo(config, name, trainable)"):
        _, agent = compat.trace_parts(tasks[0], "my-agent")
        assert agent.name == "my-agent" and agent.trainable is False


@pytest.mark.v1
@covers("verifiers.v1.state.state_cls")
def test_state_cls(v1):
    _, _, tasks = v1
    with private("verifiers.v1.state.state_cls"):
        from verifiers.v1.state import state_cls

        trace = _trace(tasks[0], "<answer>31</answer>")
        assert isinstance(trace.state, state_cls(type(tasks[0])))


@pytest.mark.v1
@covers("Trace(id, task, state, agent)")
def test_trace_construction(v1):
    _, _, tasks = v1
    with private("Trace(id, task, state, agent)"):
        trace = compat.new_trace("t-1", tasks[0], compat.trace_parts(tasks[0], "a"), [], [])
        assert trace.id == "t-1" and list(trace.nodes) == []


@pytest.mark.v1
@covers("MessageNode(parent, message, sampled)")
def test_message_nodes(v1):
    _, _, tasks = v1
    with private("MessageNode(parent, message, sampled)"):
        trace = _trace(tasks[0], "<answer>31</answer>")
        nodes = list(trace.nodes)
        assert [n.sampled for n in nodes] == [False, True] and nodes[1].parent == 0
        assert trace.last_reply == "<answer>31</answer>"


@pytest.mark.v1
@covers("Trace.rewards")
def test_trace_rewards(v1):
    _, _, tasks = v1
    with private("Trace.rewards"):
        trace = _trace(tasks[0], "<answer>31</answer>")
        run(tasks[0].score(trace))
        assert compat.trace_rewards(trace) == {"exact": 1.0, "tagged": 1.0}


@pytest.mark.v1
@covers("Trace.reward")
def test_trace_reward(v1):
    _, _, tasks = v1
    with private("Trace.reward"):
        good, bad = _trace(tasks[0], "<answer>31</answer>"), _trace(tasks[0], "<answer>30</answer>")
        run(tasks[0].score(good))
        run(tasks[0].score(bad))
        assert compat.trace_total(good) == 1.25 and compat.trace_total(bad) == 0.25


@pytest.mark.v1
@covers("Trace.metrics")
def test_trace_metrics(v1):
    _, _, tasks = v1
    with private("Trace.metrics"):
        trace = _trace(tasks[0], "<answer>31</answer>")
        run(tasks[0].score(trace))
        assert compat.trace_metrics(trace) == {"reply_chars": float(len("<answer>31</answer>"))}
        assert "reply_chars" not in compat.trace_rewards(trace)


# -- the rule itself -------------------------------------------------------------------------------


@pytest.mark.classic
@covers("ToolEnv.tool_map")
def test_tool_env_tool_map_can_be_wrapped(classic):
    _, tools, _ = classic
    saved = dict(tools.tool_map)
    try:
        with private("ToolEnv.tool_map"):
            compat.wrap_tools(tools, lambda name, fn: lambda **kwargs: f"wrapped {name}: {fn(**kwargs)}")
            message = run(tools.call_tool("calculator", {"expression": "2+3"}, "c1"))
            assert message.content == "wrapped calculator: 5", message
    finally:
        tools.tool_map.clear()
        tools.tool_map.update(saved)


V1_TOOL_TASK = """
class Adder(vf.Toolset[vf.ToolsetConfig]):
    @vf.tool
    def add(self, a: int, b: int) -> str:
        \"\"\"Add two whole numbers.\"\"\"
        if a < 0:
            raise ValueError("only non-negative numbers")
        return str(a + b)


class T(vf.Task[Data]):
    @classmethod
    def toolsets(cls, config):
        return [Adder(vf.ToolsetConfig())]

    @vf.stop
    def two_turns(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 2

    @vf.reward(weight=1.0)
    async def exact(self, trace: vf.Trace) -> float:
        return 1.0 if TAG.findall(trace.last_reply) == [self.data.answer] else 0.0
"""


@pytest.fixture(scope="module")
def v1_tools(tmp_path_factory):
    """A task whose toolset (prefix 'adder') offers add(a, b), and its in-process servers."""
    folder = tmp_path_factory.mktemp("v1tools")
    data = fx.write_dataset(folder)
    path = fx.v1_env(folder, "compat_v1_tools", V1_TOOL_TASK)
    spec = importlib.util.spec_from_file_location("compat_v1_tools", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["compat_v1_tools"] = module
    spec.loader.exec_module(module)
    task = next(iter(module.Tasks(module.Config(dataset_path=str(data)))))
    return task


@pytest.mark.v1
@covers("Task.toolsets(config) / Toolset.register(MCPServer) / Toolset.server_name")
def test_task_toolsets_register_in_process(v1_tools):
    with private("Task.toolsets(config) / Toolset.register(MCPServer) / Toolset.server_name"):
        servers = compat.task_tool_servers(v1_tools)
        assert [prefix for prefix, _ in servers] == ["adder"], servers
        assert [f.__name__ for f in compat.task_stops(v1_tools)] == ["two_turns"]


@pytest.mark.v1
@covers("MCPServer.list_tools (Tool.name/description/input_schema or inputSchema)")
def test_toolset_tool_definitions(v1_tools):
    with private("MCPServer.list_tools (Tool.name/description/input_schema or inputSchema)"):
        defs, dispatch = run(compat.tool_definitions(compat.task_tool_servers(v1_tools)))
        assert [d["name"] for d in defs] == ["adder_add"] and "Add two" in defs[0]["description"]
        assert set(defs[0]["parameters"]["properties"]) == {"a", "b"} and dispatch["adder_add"][1] == "add"


@pytest.mark.v1
@covers("MCPServer.call_tool -> CallToolResult.content (mcp 1.x: content blocks or (blocks, structured))")
def test_toolset_call_tool_text_and_errors(v1_tools):
    with private("MCPServer.call_tool -> CallToolResult.content (mcp 1.x: content blocks or (blocks, structured))"):
        ((_, server),) = compat.task_tool_servers(v1_tools)
        assert run(compat.call_tool(server, "add", {"a": 2, "b": 3})) == "5"
        with pytest.raises(Exception) as raised:
            run(compat.call_tool(server, "add", {"a": -1, "b": 3}))
        assert "only non-negative" in str(raised.value)


def test_every_private_api_has_one_test():
    assert set(compat.PRIVATE_APIS.values()) <= {compat.CLASSIC, compat.V1}
    assert set(compat.PRIVATE_APIS) == set(COVERED), {
        "untested": sorted(set(compat.PRIVATE_APIS) - set(COVERED)),
        "not in compat.PRIVATE_APIS": sorted(set(COVERED) - set(compat.PRIVATE_APIS)),
    }


# A verifiers submodule import or an internal name, anywhere but compat.py (and this file).
_PRIVATE_USE = re.compile(
    r"^\s*from verifiers\.(?!v1 import)[\w.]+ import"
    r"|^\s*import verifiers\.(?!v1 as vf\b)"
    r"|\._(get_reward|is_group_func|plugin_class|vf_weight)"
    r"|_vf_weight|\bstate_cls\b|\bRolloutTiming\b|\bTraceTask\b|(?<!compat)\.init_state\(|\bdataset_source\b"
    r"|\bnormalize_messages\b|(?<!compat)\.hooks\(|\bclass_objects\b",
    re.M,
)
# Tests that compare our results with verifiers' own implementation import it on purpose.
_ORACLES = {
    ("tests/test_check_reward_distribution.py", "from verifiers.legacy.utils.metric_utils import PassAtKMetric"),
    ("tests/test_templates.py", "from verifiers.legacy.utils.eval_utils import load_endpoints"),
}


def test_no_private_verifiers_api_outside_compat():
    found = []
    for folder in ("skills", "tests", "bench", "demo"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in ("skills/verifiers-lab/scripts/vlab/env/compat.py", "tests/test_env_compat.py"):
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                if _PRIVATE_USE.search(line) and (rel, line.strip()) not in _ORACLES:
                    found.append(f"{rel}: {line.strip()}")
    assert not found, "private verifiers APIs belong in scripts/vlab/env/compat.py:\n" + "\n".join(found)


def test_env_modules_reach_verifiers_internals_only_through_compat():
    for path in sorted((SKILL_ROOT / "scripts" / "vlab" / "env").glob("*.py")):
        if path.name == "compat.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from verifiers\.|import verifiers\.(?!v1 as vf\b))", text, re.M), path.name
        # an underscore attribute of anything but our own objects (self._x, our _vlab_ marks) and the
        # standard library's public os._exit (the worker's way out when its parent is gone)
        assert not re.search(r"\b(?!self\b)(?!os\._exit\b)\w+\._(?!vlab_)[a-z]\w*", text), path.name
