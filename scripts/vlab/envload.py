"""THE adapter between verifiers generations: every classic-vs-v1 difference lives here.

Classic environments (verifiers <= 0.3.x: ``load_environment(**kwargs) -> vf.Environment``)
and v1 tasksets (verifiers.v1, 0.3.1+ and 0.4.x: ``__all__`` exports one ``vf.Taskset``)
are loaded, listed, scored and rolled out through one API. Scoring always goes through
verifiers' own code (``rubric.score_rollout`` / ``score_group`` on a state built by
``env.init_state``; ``task.score(trace)`` for v1) so argument injection, parsers, group
functions and weights behave exactly as in training. Each reward function is wrapped
(keeping its signature, so verifiers' injection still decides the arguments) to capture
exceptions the classic Rubric would swallow, to time each call and to stop hanging ones.

API::

    env = load_env("path/to/env.py" | "path/to/package_dir" | "owner/name" | "name", {"arg": 1})
    env.kind                 # "classic" | "v1"
    env.verifiers_version    # installed verifiers version
    env.reward_functions     # [RewardFunction(name, weight, is_group)]
    env.format_hints()       # FormatHints: parser kind, XML fields, answer field, system prompt
    env.num_rows()           # rows in the dataset the trainer samples from
    rows = env.rows(n)       # [Row(index, prompt messages, answer, question, raw)]
    scores = env.score_sync([(row, completion), ...], timeout=10, concurrency=32)
    #   completion: text or a list of chat messages; -> [Score(total, per_function, errors, seconds)]
    result = env.rollout_sync(row, generate, sampling_args)   # env's own rollout loop
    group = env.rollout_group_sync(row, generate, n)          # n rollouts scored as one group

``generate(messages, sampling_args) -> Reply | str`` (sync or async) is the one seam for
model output: the offline scripted client of test_reward and the local trainer's sampler
both plug in here. ``messages`` are plain dicts (role/content/tool_calls/...). A ``Reply``
can carry token ids and logprobs, which land in the rollout's trajectory as verifiers
would record them from a real inference server. If ``generate`` accepts a ``tools`` keyword
it receives the environment's tool definitions (name/description/parameters dicts).

Scoring text completions of a classic multi-turn or tool environment drives its rollout
loop with a scripted client that answers with that text each turn; message-list
completions are scored as recorded. Limits: v1 rollouts here are one model turn scored
by ``task.score`` (harness/runtime-driven v1 rollouts are not run); a reward function that
timed out once is skipped (recorded as a timeout) for the rest of the process
(``env.calls.hung``), so one hang costs one timeout, not one per call.

Loading errors are mapped to the foundation's exceptions: bad path/id or bad env args ->
UsageError (2); missing package, the wrong verifiers generation, a missing API key ->
PrerequisiteError (3); a dataset that needs the network -> ExternalError (4).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import importlib.util
import inspect
import itertools
import json
import logging
import math
import os
import re
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable

from .probe import verifiers_info, version_tuple
from .result import ExternalError, PrerequisiteError, ToolError, UsageError

CLASSIC = "classic"
V1 = "v1"
CLASSIC_INSTALL = 'pip install "verifiers==0.3.1"'
V1_INSTALL = 'pip install "verifiers>=0.3.1"'
# Names that make a classic reward function a group function (verifiers' own rule).
_GROUP_PARAMS = {"states", "prompts", "completions", "answers", "tasks", "infos"}


# -- public data ----------------------------------------------------------------------


@dataclass
class Reply:
    """One model turn returned by a ``generate`` callable."""

    text: str | None = ""
    tool_calls: list[dict] | None = None  # [{"id", "name", "arguments": JSON string}]
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    completion_logprobs: list[float] | None = None
    finish_reason: str = "stop"  # "stop" | "length" | "tool_calls"


Generate = Callable[..., "Reply | str | Awaitable[Reply | str]"]


@dataclass
class Row:
    index: int  # position in the dataset the trainer samples from (the example_id)
    prompt: list[dict]  # chat messages as the model sees them (system, few-shot, user)
    answer: Any  # the gold answer the reward compares against (None when the env has none)
    question: str  # the last user message's text
    raw: Any  # the dataset row (classic) or the v1 Task


@dataclass
class RewardFunction:
    name: str
    weight: float
    is_group: bool = False


@dataclass
class FunctionError:
    type: str
    message: str
    traceback: str  # last frames, enough to find the line


@dataclass
class Score:
    total: float | None  # weighted total as verifiers computes it (None: scoring itself failed)
    per_function: dict[str, float | None]
    errors: dict[str, FunctionError] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)  # per-function call time
    timed_out: list[str] = field(default_factory=list)
    scoring_error: FunctionError | None = None  # the whole scoring call raised (v1 TaskError)


@dataclass
class FormatHints:
    parser: str | None = None  # parser class name
    xml_fields: list[str] = field(default_factory=list)
    answer_field: str | None = None
    think: bool = False  # the parser expects <think>...</think> before the answer
    system_prompt: str | None = None
    parser_obj: Any = None  # the env's parser (classic), for parser.format(...)


@dataclass
class RolloutResult:
    completion: list[dict]  # the conversation after the prompt, plain dicts
    prompt: list[dict]
    score: Score
    turns: list[dict]  # per model turn: prompt_ids, completion_ids, completion_logprobs (or None)
    stop_condition: str | None
    error: str | None
    state: Any = None  # the verifiers State (classic) or Trace (v1)


# -- exceptions captured inside reward functions -------------------------------------


class RewardTimeout(Exception):
    """A reward function ran past the timeout and was stopped."""


def describe_error(err: BaseException) -> FunctionError:
    frames = traceback.extract_tb(err.__traceback__)
    # Drop our own wrapper frames: the user wants their function's lines.
    frames = [f for f in frames if not f.filename.endswith(os.path.join("vlab", "envload.py"))] or frames
    tb = "".join(traceback.format_list(frames[-3:])).rstrip()
    return FunctionError(type(err).__name__, str(err)[:500], tb)


class _Calls:
    """What happened inside each instrumented function, per scoring context (state/trace)."""

    def __init__(self) -> None:
        self.by_ctx: dict[int, dict[str, Any]] = {}
        self.hung: set[str] = set()
        self.timeout: float = 10.0

    def open(self, ctx: Any) -> None:
        self.by_ctx[id(ctx)] = {"errors": {}, "seconds": {}, "values": {}, "timed_out": []}

    def close(self, ctx: Any) -> dict[str, Any]:
        return self.by_ctx.pop(id(ctx), {"errors": {}, "seconds": {}, "values": {}, "timed_out": []})

    def record(self, ctxs: list[Any], name: str, seconds: float, err: BaseException | None, value: Any = None) -> None:
        for ctx in ctxs:
            slot = self.by_ctx.get(id(ctx))
            if slot is None:
                continue
            slot["seconds"][name] = slot["seconds"].get(name, 0.0) + seconds
            if err is not None:
                slot["errors"][name] = describe_error(err)
                if isinstance(err, RewardTimeout):
                    slot["timed_out"].append(name)
            else:
                slot["values"][name] = value


@contextlib.contextmanager
def _alarm(seconds: float):
    """Interrupt synchronous code running on the main thread after ``seconds`` (SIGALRM)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer") or seconds <= 0:
        yield
        return

    def on_alarm(signum, frame):
        raise RewardTimeout(f"did not return within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _instrument(func: Callable, calls: _Calls, ctx_param: str, group: bool) -> Callable:
    """Wrap a reward function: same name, same injected arguments, plus the scoring context.

    The wrapper's signature is the function's own plus ``ctx_param`` (``state``/``states``
    for classic, ``trace`` for v1), so verifiers injects exactly what the function asked for
    and we learn which rollout the call belongs to. Exceptions are recorded and re-raised,
    so verifiers reacts as it would in training (classic: 0.0; v1: the scoring fails).
    """
    if getattr(func, "_vlab_instrumented", False):
        return func
    name = getattr(func, "__name__", repr(func))
    sig = inspect.signature(func)
    params = list(sig.parameters.values())
    takes_kwargs = any(p.kind == p.VAR_KEYWORD for p in params)
    has_ctx = ctx_param in sig.parameters
    if not takes_kwargs and not has_ctx:
        extra = inspect.Parameter(ctx_param, inspect.Parameter.KEYWORD_ONLY, default=None)
        insert_at = len(params)
        new_params = params[:insert_at] + [extra]
        wrapper_sig = sig.replace(parameters=new_params)
    else:
        wrapper_sig = sig
    is_coroutine = inspect.iscoroutinefunction(func)

    @functools.wraps(func)
    async def wrapper(*args, **kwargs):
        ctx = kwargs.get(ctx_param)
        if not has_ctx and not takes_kwargs:
            kwargs.pop(ctx_param, None)
        ctxs = list(ctx) if group and isinstance(ctx, list) else [ctx]
        if name in calls.hung:
            err = RewardTimeout(f"skipped: it did not return within {calls.timeout:g} s on an earlier call")
            calls.record(ctxs, name, 0.0, err)
            raise err
        start = time.perf_counter()
        try:
            # asyncio.timeout, not wait_for: it needs no extra task per call
            if is_coroutine:
                async with asyncio.timeout(calls.timeout):
                    value = await func(*args, **kwargs)
            else:
                with _alarm(calls.timeout):
                    value = func(*args, **kwargs)
                if inspect.isawaitable(value):
                    async with asyncio.timeout(calls.timeout):
                        value = await value
            _check_value(value, group)
        except (asyncio.TimeoutError, RewardTimeout) as err:
            timeout = err if isinstance(err, RewardTimeout) else RewardTimeout(f"did not return within {calls.timeout:g} s")
            calls.hung.add(name)
            calls.record(ctxs, name, time.perf_counter() - start, timeout)
            raise timeout from None
        except Exception as err:
            calls.record(ctxs, name, time.perf_counter() - start, err)
            raise
        calls.record(ctxs, name, time.perf_counter() - start, None, value)
        return value

    wrapper.__signature__ = wrapper_sig  # type: ignore[attr-defined]
    wrapper._vlab_instrumented = True  # type: ignore[attr-defined]
    return wrapper


def _check_value(value: Any, group: bool) -> None:
    """Raise the error verifiers would hit converting the value (it would swallow it as 0.0)."""
    if group:
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"group reward function returned {type(value).__name__}, expected a list of floats")
        for v in value:
            float(v)
        return
    if isinstance(value, dict):  # v1 keyed scores
        for v in value.values():
            float(v)
        return
    if value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"returned {value!r}, not a number")
    float(value)


def _run(coro):
    """Run a coroutine to completion from sync code (one event loop per call)."""
    return asyncio.run(coro)


# -- loading ----------------------------------------------------------------------------


@dataclass
class _Located:
    module_name: str
    search_path: str | None  # folder put on sys.path, None for an installed module
    source: Path | None  # the module's file when known before importing


def _locate(spec: str) -> _Located:
    path = Path(spec).expanduser()
    if spec.endswith(".py") or path.is_file():
        if not path.is_file():
            raise UsageError(f"environment file not found: {spec}", hint="pass a module file, a package folder or an installed env id")
        return _Located(path.stem, str(path.resolve().parent), path.resolve())
    if path.is_dir():
        folder = path.resolve()
        if (folder / "__init__.py").is_file():
            return _Located(folder.name, str(folder.parent), folder / "__init__.py")
        stem = folder.name.replace("-", "_")
        # environments/<name>/<name>.py (classic hub layout) or <name>/<name>/__init__.py (vf-init)
        for candidate in (folder / f"{stem}.py", folder / stem / "__init__.py"):
            if candidate.is_file():
                return _Located(stem, str(folder), candidate)
        modules = [p for p in folder.glob("*.py") if not p.name.startswith(("test_", "_"))]
        if len(modules) == 1:
            return _Located(modules[0].stem, str(folder), modules[0])
        raise UsageError(
            f"no environment module found in {spec} (looked for {stem}.py or {stem}/__init__.py)",
            hint="pass the module file itself: path/to/env_module.py",
        )
    if re.fullmatch(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)?(@[\w.+-]+)?", spec) and not spec.startswith((".", "/")):
        name = spec.split("/")[-1].split("@")[0].replace("-", "_")
        return _Located(name, None, None)
    raise UsageError(f"not an environment file, folder or id: {spec}", hint="pass a module file, a package folder or an installed env id")


def _classify_import_error(err: BaseException, located: _Located, spec: str, vf_version: str | None) -> ToolError:
    if isinstance(err, ModuleNotFoundError):
        missing = err.name or ""
        if missing.split(".")[0] == located.module_name and located.search_path is None:
            owner_hint = f"prime env install {spec}" if "/" in spec else f"pip install {spec} (or prime env install OWNER/{spec})"
            return UsageError(f"environment {spec!r} is not installed (no module {located.module_name!r})", hint=owner_hint)
        if missing.startswith("verifiers"):
            return PrerequisiteError(f"environment imports {missing!r}, which verifiers {vf_version} lacks", hint=CLASSIC_INSTALL)
        return PrerequisiteError(
            f"environment {located.module_name!r} needs the package {missing.split('.')[0]!r}, which is not installed",
            hint=f"pip install {missing.split('.')[0]} (or install the environment with its dependencies: pip install -e <env folder>)",
        )
    if isinstance(err, ImportError):
        return PrerequisiteError(f"importing environment {located.module_name!r} failed: {err}", hint="install the environment's dependencies")
    if isinstance(err, SyntaxError):
        return UsageError(f"environment module has a syntax error: {err.filename}:{err.lineno}: {err.msg}", hint="fix the syntax error")
    return ToolError(f"importing environment {located.module_name!r} raised {type(err).__name__}: {err}", hint="fix the module's top-level code (re-run with --debug for the traceback)")


def _source_text(located: _Located) -> str:
    path = located.source
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path and path.is_file() else ""
    except OSError:
        return ""


def _looks_classic(text: str) -> bool:
    return bool(re.search(r"^\s*def\s+load_environment\s*\(", text, re.M))


def _classify_load_error(err: BaseException, what: str) -> ToolError:
    """Map an exception raised while building the environment to an exit code and a fix."""
    text = f"{type(err).__name__}: {err}"
    lowered = text.lower()
    names = {t.__name__ for t in type(err).__mro__}
    if isinstance(err, TypeError) and re.search(r"unexpected keyword argument|missing \d+ required (positional|keyword-only)", lowered):
        return UsageError(f"{what} does not accept these --env-args: {err}", hint="check the function's parameters and pass matching --env-args JSON")
    if "MissingKeyError" in names or re.search(r"api[_ ]?key", lowered):
        key = re.search(r"\b([A-Z][A-Z0-9_]*_API_KEY)\b", str(err))
        return PrerequisiteError(
            f"{what} needs an API key: {err}",
            hint=f"export {key.group(1) if key else 'OPENAI_API_KEY'}=... (judge rubrics build their client when loaded; a dummy value is enough to load)",
        )
    network_types = {"ConnectionError", "ConnectError", "ConnectTimeout", "OfflineModeIsEnabled", "LocalEntryNotFoundError",
                     "HfHubHTTPError", "ReadTimeout", "Timeout", "MaxRetryError", "NewConnectionError", "gaierror"}
    if names & network_types or any(s in lowered for s in ("couldn't reach", "could not reach", "connection", "offline mode", "name resolution", "temporary failure in name")):
        return ExternalError(
            f"{what} needs the network to get its dataset: {text[:300]}",
            hint="run once with network access to fill the Hugging Face cache, or pass a local dataset path in --env-args",
        )
    if isinstance(err, FileNotFoundError):
        return UsageError(f"{what}: file not found: {err.filename or err}", hint="check the dataset path in --env-args")
    if isinstance(err, (ValueError,)) and "validation error" in lowered:
        return UsageError(f"{what}: bad --env-args: {str(err).splitlines()[0]}", hint="\n".join(str(err).splitlines()[:4]))
    return ToolError(f"{what} raised {text[:400]}", hint="fix the environment's loading code (re-run with --debug for the traceback)")


def load_env(spec: str, env_args: dict | None = None) -> "LoadedEnv":
    """Load a classic environment or a v1 taskset from a file, folder or installed id."""
    env_args = dict(env_args or {})
    info = verifiers_info()
    if info.version is None:
        raise PrerequisiteError("verifiers is not installed", hint=CLASSIC_INSTALL + "   (classic envs)  or  " + V1_INSTALL)
    located = _locate(spec)
    if located.search_path and located.search_path not in sys.path:
        sys.path.insert(0, located.search_path)
    if located.search_path:  # a stale module of the same name must not shadow the file asked for
        sys.modules.pop(located.module_name, None)
    if located.search_path is None and importlib.util.find_spec(located.module_name) is None:
        hint = f"prime env install {spec}" if "/" in spec else f"pip install the environment package, or pass its path (e.g. environments/{located.module_name}/)"
        raise UsageError(f"environment {spec!r} is not installed (no module {located.module_name!r})", hint=hint)
    _quiet_verifiers_logs()
    source = _source_text(located)
    new_only = version_tuple(info.version) >= (0, 4) or not info.classic
    if new_only and _looks_classic(source):
        raise PrerequisiteError(
            f"{spec} is a classic environment (load_environment); verifiers {info.version} only has the v1 API",
            hint=CLASSIC_INSTALL,
        )
    try:
        module = importlib.import_module(located.module_name)
    except BaseException as err:  # noqa: BLE001 - import-time errors of user code, classified
        if isinstance(err, (KeyboardInterrupt, SystemExit)):
            raise
        if new_only and isinstance(err, (AttributeError, ImportError)) and "verifiers" in str(err):
            raise PrerequisiteError(
                f"{spec} uses the classic verifiers API, which verifiers {info.version} removed ({err})",
                hint=CLASSIC_INSTALL,
            ) from err
        raise _classify_import_error(err, located, spec, info.version) from err
    if callable(getattr(module, "load_environment", None)):
        if new_only:
            raise PrerequisiteError(
                f"{spec} is a classic environment (load_environment); verifiers {info.version} only has the v1 API",
                hint=CLASSIC_INSTALL,
            )
        return _ClassicEnv.load(module, spec, env_args, info.version)
    if getattr(module, "__all__", None) is not None:
        if not info.v1:
            raise PrerequisiteError(f"{spec} is a v1 taskset; verifiers {info.version} has no verifiers.v1", hint=V1_INSTALL)
        return _V1Env.load(module, spec, env_args, info.version)
    raise UsageError(
        f"{spec} is neither a classic environment (no load_environment) nor a v1 taskset (no __all__)",
        hint="a classic env defines load_environment(**kwargs); a v1 taskset exports its vf.Taskset subclass in __all__",
    )


def _quiet_verifiers_logs() -> None:
    # The classic Rubric logs every swallowed exception; we capture and report them ourselves.
    if not os.environ.get("VLAB_DEBUG"):
        for name in ("verifiers", "datasets", "httpx"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
        os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")  # read when datasets is imported
        if "datasets" in sys.modules:
            with contextlib.suppress(Exception):
                sys.modules["datasets"].disable_progress_bars()


def _message_dict(message: Any) -> dict:
    if isinstance(message, dict):
        return {k: v for k, v in message.items() if v is not None}
    if hasattr(message, "model_dump"):
        return message.model_dump(exclude_none=True)
    return dict(message)


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") if isinstance(part, dict) else str(getattr(part, "text", "")) for part in content)
    return str(content)


def _last_user_text(prompt: list[dict]) -> str:
    for m in reversed(prompt):
        if m.get("role") == "user":
            return _text_of(m.get("content"))
    return ""


def _completion_messages(completion: Any) -> list[dict]:
    if isinstance(completion, str):
        return [{"role": "assistant", "content": completion}]
    if isinstance(completion, dict):
        return [completion]
    return [_message_dict(m) for m in completion]


async def _call_generate(generate: Generate, messages: list[dict], sampling_args: dict, tools: list[dict] | None) -> Reply:
    try:
        wants_tools = "tools" in inspect.signature(generate).parameters
    except (TypeError, ValueError):
        wants_tools = False
    out = generate(messages, sampling_args, tools=tools) if wants_tools else generate(messages, sampling_args)
    if inspect.isawaitable(out):
        out = await out
    if isinstance(out, str):
        return Reply(text=out)
    if not isinstance(out, Reply):
        raise TypeError(f"generate() returned {type(out).__name__}; expected Reply or str")
    return out


class LoadedEnv:
    """Common surface of a loaded environment; see the module docstring."""

    kind: str
    name: str
    spec: str
    verifiers_version: str
    env_args: dict
    reward_functions: list[RewardFunction]
    multiturn: bool = False
    unnamed_args: list[str] = []  # env args the loader does not name (they reach only **kwargs)

    def __init__(self) -> None:
        self.calls = _Calls()

    # rows
    def num_rows(self) -> int:
        raise NotImplementedError

    def rows(self, n: int = -1, start: int = 0) -> list[Row]:
        raise NotImplementedError

    def row(self, index: int) -> Row:
        rows = self.rows(1, start=index)
        if not rows:
            raise UsageError(f"example_id {index} is out of range (the dataset has {self.num_rows()} rows)")
        return rows[0]

    def format_hints(self) -> FormatHints:
        raise NotImplementedError

    # scoring
    async def score_group(self, row: Row, completions: list[Any]) -> list[Score]:
        raise NotImplementedError

    async def score(self, items: list[tuple[Row, Any]], timeout: float = 10.0, concurrency: int = 32) -> list[Score]:
        """Score (row, completion) pairs; pairs of one row are scored as one group."""
        self.calls.timeout = timeout
        groups: dict[int, list[int]] = {}
        for i, (row, _) in enumerate(items):
            groups.setdefault(id(row), []).append(i)
        out: list[Score | None] = [None] * len(items)
        sem = asyncio.Semaphore(max(1, concurrency))

        async def one(indices: list[int]) -> None:
            async with sem:
                row = items[indices[0]][0]
                scores = await self.score_group(row, [items[i][1] for i in indices])
            for i, s in zip(indices, scores):
                out[i] = s

        await asyncio.gather(*(one(ix) for ix in groups.values()))
        return out  # type: ignore[return-value]

    def score_sync(self, items: list[tuple[Row, Any]], timeout: float = 10.0, concurrency: int = 32) -> list[Score]:
        return _run(self.score(items, timeout, concurrency))

    # rollouts
    async def rollout_group(self, row: Row, generate: Generate, n: int = 1, sampling_args: dict | None = None,
                            timeout: float = 10.0) -> list[RolloutResult]:
        raise NotImplementedError

    async def rollout(self, row: Row, generate: Generate, sampling_args: dict | None = None, timeout: float = 10.0) -> RolloutResult:
        return (await self.rollout_group(row, generate, 1, sampling_args, timeout))[0]

    def rollout_sync(self, row: Row, generate: Generate, sampling_args: dict | None = None, timeout: float = 10.0) -> RolloutResult:
        return _run(self.rollout(row, generate, sampling_args, timeout))

    def rollout_group_sync(self, row: Row, generate: Generate, n: int, sampling_args: dict | None = None,
                           timeout: float = 10.0) -> list[RolloutResult]:
        return _run(self.rollout_group(row, generate, n, sampling_args, timeout))

    def describe(self) -> dict:
        return {
            "kind": self.kind,
            "name": self.name,
            "verifiers_version": self.verifiers_version,
            "multiturn": self.multiturn,
            "reward_functions": [{"name": f.name, "weight": f.weight, "group": f.is_group} for f in self.reward_functions],
        }


def _score_from(calls: dict, per_function: dict[str, float | None], total: float | None, scoring_error=None) -> Score:
    return Score(total=total, per_function=per_function, errors=calls["errors"], seconds=calls["seconds"],
                 timed_out=calls["timed_out"], scoring_error=scoring_error)


# -- classic (verifiers <= 0.3.x) -----------------------------------------------------


class _ClassicEnv(LoadedEnv):
    kind = CLASSIC

    @classmethod
    def load(cls, module: Any, spec: str, env_args: dict, version: str) -> "_ClassicEnv":
        self = cls()
        self.spec, self.env_args, self.verifiers_version = spec, env_args, version
        self.name = module.__name__
        if threading.current_thread() is not threading.main_thread():  # verifiers installs signal handlers
            raise ToolError("classic environments must be loaded from the main thread")
        try:
            params = inspect.signature(module.load_environment).parameters
            self.unnamed_args = [k for k in env_args if k not in params]  # only reach it through **kwargs
        except (TypeError, ValueError):
            self.unnamed_args = []
        try:
            env = module.load_environment(**env_args)
        except Exception as err:  # noqa: BLE001 - classified into a clear reason + exit code
            raise _classify_load_error(err, f"{self.name}.load_environment") from err
        import verifiers as vf

        if not isinstance(env, vf.Environment):
            raise ToolError(f"{self.name}.load_environment returned {type(env).__name__}, not a vf.Environment")
        env.env_id = getattr(env, "env_id", None) or spec
        env.env_args = getattr(env, "env_args", None) or env_args
        self.env = env
        self.multiturn = not isinstance(env, vf.SingleTurnEnv)
        self._instrument_rubric(env.rubric)
        self.reward_functions = [
            RewardFunction(getattr(f, "__name__", repr(f)), float(w), env.rubric._is_group_func(f))
            for f, w in zip(env.rubric._get_reward_funcs(), env.rubric._get_reward_weights())
        ]
        try:
            self._dataset = env.get_dataset() if (env.dataset is not None or env.dataset_source is not None) else env.get_eval_dataset()
        except Exception as err:  # noqa: BLE001
            raise _classify_load_error(err, f"{self.name} dataset") from err
        self.has_group = env.rubric.has_group_rewards
        return self

    def _instrument_rubric(self, rubric: Any) -> None:
        for sub in getattr(rubric, "rubrics", None) or []:
            self._instrument_rubric(sub)
        for i, func in enumerate(rubric.funcs):
            group = rubric._is_group_func(func)
            rubric.funcs[i] = _instrument(func, self.calls, "states" if group else "state", group)

    def num_rows(self) -> int:
        return len(self._dataset)

    def rows(self, n: int = -1, start: int = 0) -> list[Row]:
        total = len(self._dataset)
        stop = total if n is None or n < 0 else min(total, start + n)
        out = []
        for i in range(max(0, start), stop):
            raw = self._dataset[i]
            prompt = raw.get("prompt")
            prompt_msgs = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else [_message_dict(m) for m in prompt or []]
            out.append(Row(i, prompt_msgs, raw.get("answer"), _last_user_text(prompt_msgs) or str(raw.get("question", "")), raw))
        return out

    def format_hints(self) -> FormatHints:
        import verifiers as vf

        parser = self.env.parser
        hints = FormatHints(parser=type(parser).__name__, system_prompt=self.env.system_prompt, parser_obj=parser)
        if isinstance(parser, vf.XMLParser):
            hints.xml_fields = parser.get_fields()
            hints.answer_field = parser.answer_field
            hints.think = "think" in hints.xml_fields
        if isinstance(parser, vf.ThinkParser):
            hints.think = True
        if hints.system_prompt is None and self.num_rows():
            first = self.rows(1)[0].prompt
            hints.system_prompt = next((_text_of(m.get("content")) for m in first if m.get("role") == "system"), None)
        return hints

    def _client(self, generate: Generate | None):
        from verifiers.clients import Client

        return _make_classic_client(Client, generate)

    async def _state(self, row: Row, completion: Any, client) -> Any:
        from verifiers.utils.message_utils import normalize_messages

        state = await self.env.init_state(row.raw, client, "test_reward", {})
        state["completion"] = normalize_messages(_completion_messages(completion), field_name="completion")
        return state

    async def _score_states(self, states: list[Any]) -> list[Score]:
        for s in states:
            self.calls.open(s)
        try:
            if self.has_group:
                await self.env.rubric.score_group(states)
            elif len(states) == 1:
                await self.env.rubric.score_rollout(states[0])
            else:
                await asyncio.gather(*(self.env.rubric.score_rollout(s) for s in states))
        finally:
            records = [self.calls.close(s) for s in states]
        out = []
        for s, rec in zip(states, records):
            metrics = dict(s.get("metrics") or {})
            out.append(_score_from(rec, {f.name: metrics.get(f.name) for f in self.reward_functions}, s.get("reward")))
        return out

    async def score_group(self, row: Row, completions: list[Any]) -> list[Score]:
        """Score completions of one row as a group.

        Text completions of a multi-turn or tool environment go through the env's own
        rollout loop with a scripted client that replies with the text every turn; recorded
        conversations (message lists) are scored as they are.
        """
        client = self._client(None)
        states = []
        for c in completions:
            if self.multiturn and isinstance(c, str):
                scripted = self._client(lambda messages, sampling_args, _text=c: Reply(text=_text))
                states.append(await self.env.rollout(row.raw, scripted, "test_reward", {}))
            else:
                states.append(await self._state(row, c, client))
        return await self._score_states(states)

    async def rollout_group(self, row: Row, generate: Generate, n: int = 1, sampling_args: dict | None = None,
                            timeout: float = 10.0) -> list[RolloutResult]:
        self.calls.timeout = timeout
        client = self._client(generate)
        states = await asyncio.gather(*(self.env.rollout(row.raw, client, "test_reward", dict(sampling_args or {})) for _ in range(n)))
        scores = await self._score_states(list(states))
        results = []
        for state, score in zip(states, scores):
            turns = []
            for step in state.get("trajectory") or []:
                tokens = step.get("tokens")
                turns.append({
                    "prompt_ids": list(tokens["prompt_ids"]) if tokens else None,
                    "completion_ids": list(tokens["completion_ids"]) if tokens else None,
                    "completion_logprobs": list(tokens["completion_logprobs"]) if tokens else None,
                })
            err = state.get("error")
            results.append(RolloutResult(
                completion=[_message_dict(m) for m in state.get("completion") or []],
                prompt=[_message_dict(m) for m in state.get("prompt") or []],
                score=score, turns=turns, stop_condition=state.get("stop_condition"),
                error=f"{type(err).__name__}: {err}" if err is not None else None, state=state,
            ))
        return results


def _make_classic_client(base: type, generate: Generate | None):
    """A vf.Client whose 'model' is a Python callable (no network)."""
    from verifiers.types import Response, ResponseMessage, ResponseTokens, ToolCall

    class ScriptedClient(base):
        def setup_client(self, config):
            return None

        async def to_native_tool(self, tool):
            return _message_dict(tool)

        async def to_native_prompt(self, messages):
            return [_message_dict(m) for m in messages], {}

        async def get_native_response(self, prompt, model, sampling_args, tools=None, **kwargs):
            if generate is None:
                raise RuntimeError("this client only scores; it has no generate() callable")
            return await _call_generate(generate, prompt, dict(sampling_args or {}), tools)

        async def raise_from_native_response(self, response):
            return None

        async def from_native_response(self, reply: Reply):
            tokens = None
            if reply.completion_token_ids is not None:
                prompt_ids = list(reply.prompt_token_ids or [])
                completion_ids = list(reply.completion_token_ids)
                tokens = ResponseTokens(
                    prompt_ids=prompt_ids, prompt_mask=[0] * len(prompt_ids),
                    completion_ids=completion_ids, completion_mask=[1] * len(completion_ids),
                    completion_logprobs=list(reply.completion_logprobs or [0.0] * len(completion_ids)),
                )
            tool_calls = [ToolCall(id=str(c.get("id") or f"call_{i}"), name=c["name"],
                                   arguments=c["arguments"] if isinstance(c.get("arguments"), str) else json.dumps(c.get("arguments") or {}))
                          for i, c in enumerate(reply.tool_calls or [])] or None
            return Response(
                id="scripted", created=int(time.time()), model="test_reward",
                message=ResponseMessage(content=reply.text, tool_calls=tool_calls,
                                        finish_reason="tool_calls" if tool_calls else reply.finish_reason,
                                        is_truncated=reply.finish_reason == "length", tokens=tokens),
            )

        async def close(self):
            return None

    return ScriptedClient(None)


# -- v1 tasksets (verifiers.v1) ---------------------------------------------------------


class _V1Env(LoadedEnv):
    kind = V1

    @classmethod
    def load(cls, module: Any, spec: str, env_args: dict, version: str) -> "_V1Env":
        from verifiers.v1.utils import loaders

        self = cls()
        self.spec, self.env_args, self.verifiers_version = spec, env_args, version
        self.name = module.__name__
        try:
            taskset_cls = loaders._plugin_class(module, loaders.Taskset, "taskset")
        except (TypeError, ValueError, AttributeError) as err:
            raise UsageError(f"{spec}: {err}", hint="export exactly one vf.Taskset subclass in __all__") from err
        try:
            config_type = loaders.taskset_config_type(self.name)
            config = config_type(**{"id": self.name, **env_args})
        except Exception as err:  # noqa: BLE001 - pydantic validation of --env-args
            lines = str(err).splitlines()
            raise UsageError(f"{spec}: bad --env-args for {config_type.__name__ if 'config_type' in locals() else 'the taskset config'}: {lines[0] if lines else err}",
                             hint=" ".join(lines[1:4]) or "check the taskset config's fields") from err
        try:
            self.taskset = taskset_cls(config)
            self._tasks = None
        except Exception as err:  # noqa: BLE001
            raise _classify_load_error(err, f"{taskset_cls.__name__}") from err
        self.task_type = self.taskset.task_type()
        self._trace_parts: dict[int, tuple] = {}
        self._trace_count = 0
        bounded = getattr(self.taskset, "bounded", not getattr(self.taskset, "INFINITE", False))  # 0.3.1 has no .bounded
        self._load_tasks(limit=None if bounded else 10_000)
        sample = self._tasks[0] if self._tasks else None
        hooks = sample.hooks("reward") if sample is not None else []
        self.reward_functions = [RewardFunction(h.__name__, float(getattr(h, "_vf_weight", 1.0))) for h in hooks]
        self.multiturn = False
        return self

    def _load_tasks(self, limit: int | None) -> None:
        try:
            it: Iterable = iter(self.taskset)
            self._tasks = list(itertools.islice(it, limit) if limit else it)
        except Exception as err:  # noqa: BLE001
            raise _classify_load_error(err, f"{type(self.taskset).__name__}.load") from err
        for task in self._tasks:
            self._instrument_task(task)

    def _instrument_task(self, task: Any) -> None:
        original = task.hooks
        calls = self.calls

        cache: dict[str, list] = {}

        def hooks(attr: str):
            if attr not in ("reward", "metric"):
                return original(attr)
            if attr not in cache:  # wrapping costs a signature inspection: once per task
                cache[attr] = [_instrument(fn, calls, "trace", False) for fn in original(attr)]
            return cache[attr]

        task.hooks = hooks  # instance attribute: Task.score() reads self.hooks(...)

    def num_rows(self) -> int:
        return len(self._tasks)

    def rows(self, n: int = -1, start: int = 0) -> list[Row]:
        stop = len(self._tasks) if n is None or n < 0 else min(len(self._tasks), start + n)
        out = []
        for i in range(max(0, start), stop):
            task = self._tasks[i]
            data = task.data
            prompt = self._prompt_messages(data)
            answer = getattr(data, "answer", None)
            out.append(Row(i, prompt, answer, _last_user_text(prompt), task))
        return out

    @staticmethod
    def _prompt_messages(data: Any) -> list[dict]:
        msgs: list[dict] = []
        if data.system_prompt:
            msgs.append({"role": "system", "content": data.system_prompt})
        if isinstance(data.prompt, str):
            msgs.append({"role": "user", "content": data.prompt})
        elif data.prompt:
            msgs.extend(_message_dict(m) for m in data.prompt)
        return msgs

    def format_hints(self) -> FormatHints:
        system = None
        if self._tasks:
            system = self._tasks[0].data.system_prompt
        return FormatHints(parser=None, system_prompt=system)

    def _trace(self, row: Row, completion: Any) -> Any:
        """A v1 Trace holding the row's prompt and ``completion`` as sampled assistant turns."""
        import verifiers.v1 as vf
        from verifiers.v1.graph import MessageNode
        from verifiers.v1.state import state_cls
        from verifiers.v1.trace import Trace, TraceTask

        task = row.raw
        cached = self._trace_parts.get(id(task))
        if cached is None:  # the task's hash/key and prompt validation cost more than the scoring
            cached = (
                TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
                vf.AgentInfo(config=vf.AgentConfig(), name="test_reward", trainable=False),
                [_message_adapter().validate_python(m) for m in row.prompt],
            )
            self._trace_parts[id(task)] = cached
        trace_task, agent, prompt = cached
        self._trace_count += 1  # a counter id: uuid4 per trace costs more than scoring here
        trace = Trace(id=f"test_reward-{self._trace_count}", task=trace_task, state=state_cls(type(task))(), agent=agent)
        completion_msgs = [_message_adapter().validate_python(m) for m in _completion_messages(completion)]
        for i, msg in enumerate(prompt + completion_msgs):
            sampled = i >= len(prompt) and msg.role == "assistant"
            trace.nodes.append(MessageNode(parent=i - 1 if i else None, message=msg, sampled=sampled))
        return trace

    async def _score_trace(self, row: Row, trace: Any) -> Score:
        self.calls.open(trace)
        scoring_error = None
        try:
            await row.raw.score(trace)  # each reward call carries its own timeout (see _instrument)
        except Exception as err:  # noqa: BLE001 - TaskError wraps the reward's own exception
            cause = err.__cause__ or err
            scoring_error = describe_error(cause if isinstance(cause, BaseException) else err)
        finally:
            rec = self.calls.close(trace)
        per = {name: (r.score if r is not None else None) for name, r in trace.rewards.items()}
        for f in self.reward_functions:
            per.setdefault(f.name, None)
        total = trace.reward if scoring_error is None else None
        return _score_from(rec, per, total, scoring_error)

    async def score_group(self, row: Row, completions: list[Any]) -> list[Score]:
        # Sequential within a row (no task per trace); rows run concurrently in score().
        return [await self._score_trace(row, self._trace(row, c)) for c in completions]

    async def rollout_group(self, row: Row, generate: Generate, n: int = 1, sampling_args: dict | None = None,
                            timeout: float = 10.0) -> list[RolloutResult]:
        """One model turn per rollout: v1 harness-driven (multi-turn, tool) rollouts need a runtime."""
        self.calls.timeout = timeout
        replies = [await _call_generate(generate, [dict(m) for m in row.prompt], dict(sampling_args or {}), None) for _ in range(n)]
        results = []
        for reply in replies:
            completion = [{"role": "assistant", "content": reply.text or ""}]
            trace = self._trace(row, completion)
            score = await self._score_trace(row, trace)
            turns = [{"prompt_ids": reply.prompt_token_ids, "completion_ids": reply.completion_token_ids,
                      "completion_logprobs": reply.completion_logprobs}]
            results.append(RolloutResult(completion, list(row.prompt), score, turns, "single_turn", None, trace))
        return results


@functools.lru_cache(maxsize=1)
def _message_adapter():
    """Validates plain message dicts into v1 message models (building one costs milliseconds)."""
    from pydantic import TypeAdapter
    from verifiers.v1 import types as v1types

    return TypeAdapter(v1types.Message)


def finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
