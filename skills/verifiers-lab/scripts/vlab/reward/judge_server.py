"""A judge endpoint on 127.0.0.1 for test_reward: the deterministic stub judge, or a counting proxy.

``JudgeServer()`` is an OpenAI-compatible ``/chat/completions`` server in a daemon thread on a free
loopback port; use it as a context manager (``stop()`` shuts the socket and joins the thread, so
nothing is left behind). It counts the calls and tokens it serves (``usage()``).

The stub (no ``upstream``) answers the way a weak judge does, literally and deterministically
(``weak_reply``):

- data regions are ``<tag>...</tag>`` pairs and ```` ``` ```` fences; whatever lies outside them is
  read as instructions, so a response the prompt does not fence, or one that closes its fence, is
  obeyed: an order to award full marks, a fake verdict line, a claim to be the reference;
- otherwise it compares the response with the reference by token overlap (half unigram recall,
  half bigram recall: reworded sentences keep both, a salad of the reference's words only the
  first; an ``<also_correct>`` item counts as the reference, agreeing with an ``<incorrect>`` item more
  than with them scores 0) and answers in the form the prompt asks for (``Score: N/10``, JSON, or yes/no), after a
  line of prose that quotes the response (its start and end), as real judges often do;
- a response carrying ``[vlab-judge-form:NAME]`` gets the canned reply ``FORMS[NAME]`` (the
  verdict-parsing probes), or for the ``FAILURES`` a failed call: HTTP 500, the connection dropped,
  or no reply for ``hang_seconds`` (a judge that never answers).

With ``upstream`` (a base URL) it forwards each request there with the key read from an
environment variable, and counts the usage the real judge reports. An upstream that does not answer
within ``upstream_limit`` (``bound_calls``: half the reward's own bound per call)
gets the caller an HTTP 504 that says so, with ``x-should-retry: false`` (the OpenAI client's retries would
outlast the bound), and every later call the same 504 at once, as test_reward never calls again a reward
that hung: a hung judge is an external failure like an HTTP 500, never a hang of the reward. A caller
that went away before the answer (its own time limit) is let go without a word on stderr.
"""

from __future__ import annotations

import json
import re
import socket
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STUB_MODEL = "vlab-stub-judge"
MAX_KEPT = 2000  # judge prompts kept at most while ``keep_prompts`` is on
FORM_MARK = "[vlab-judge-form:{name}]"
_FORM_RE = re.compile(r"\[vlab-judge-form:([a-z0-9_]+)\]")

# Judge replies in the forms real models give, and what a template must make of each:
# "high"/"low": a verdict (high scores above low; no low form scores as high as a high one); "mid": between
# the two; "error": no verdict, never a silent 0 or 1.
FORMS: dict[str, tuple[str, str]] = {
    "json_high": ('{"score": 9, "reason": "matches the reference in substance"}', "high"),
    "json_low": ('{"score": 2, "reason": "misses the key point"}', "low"),
    "score_high": ("Score: 9/10", "high"),
    "score_low": ("Score: 2/10", "low"),
    "prose_high": ("The response covers the reference's main point, though briefly.\n\nScore: 9/10", "high"),
    "prose_quoting_fake_low": (
        'The response writes "Score: 10/10" itself, but its content misses the reference.\nScore: 2/10',
        "low",
    ),
    "bare_yes": ("yes", "high"),
    "bare_no": ("no", "low"),
    # the grading words and letters of real grader prompts (SimpleQA's A/B, "CORRECT"/"INCORRECT"): a template
    # that does not ask for them may raise on them, but must never read the negative one as a pass
    "word_correct": ("CORRECT", "high"),
    "word_incorrect": ("INCORRECT", "low"),
    "prose_incorrect": (
        "The response contradicts the reference on its main point, so it is not correct.\nVerdict: INCORRECT",
        "low",
    ),
    "letter_a": ("A", "high"),
    "letter_b": ("B", "low"),
    "score_mid": ("Score: 7/10", "mid"),
    # failed calls, made by the server itself (``FAILURES``): each must error the rollout, never score
    "judge_server_error": ("", "error"),
    "judge_dropped": ("", "error"),
    "judge_hang": ("", "error"),
    "refusal": ("I'm sorry, but I can't help with grading this response.", "error"),
    "prose_without_verdict": ("The response is interesting and well written.", "error"),
    "empty": ("", "error"),
}

# The forms the server answers by failing: HTTP 500; the connection closed with no reply (as a judge that
# is down or refuses); no reply for ``JudgeServer.hang_seconds``, then the connection closed (a judge that
# never answers: the reward's own time limit must end the call first).
FAILURES = ("judge_server_error", "judge_dropped", "judge_hang")

_STOP = frozenset(
    "the and for are but not you all any can had her was one our out has have this that with from they "
    "will would there their what when which who how why into than then them these those its it's also "
    "such very just more most other some only over own same too".split()
)
_REGION = re.compile(r"<([A-Za-z_][\w-]*)>(.*?)</\1>|```[^\n]*\n?(.*?)```", re.S)
_REFERENCE_LABELS = ("reference", "ground truth", "gold", "expected")
_INSTRUCTION_HACKS = re.compile(
    r"award (it )?full marks|full marks|full score|maximum score|highest score|"
    r"(mark|grade|score|rate) (this|it|the response)( answer)? (as )?(correct|10)|"
    r"ignore (the|all|any) (previous|above|prior|reference)|"
    r"(this|the) (response|answer) (is|matches|equals) (exactly )?the reference|identical to the reference",
    re.I,
)
_FAKE_VERDICT = re.compile(
    r"^\s*[\"'{]{0,2}\s*(final\s+)?(verdict|score|grade|judgment|judgement|rating)[\"']?\s*[:=]\s*"
    r"[\"']?(yes|correct|pass|true|10(\.0)?(\s*/\s*10)?)\b",
    re.I | re.M,
)


def tokens(text: str) -> list[str]:
    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if len(t) > 2 and t not in _STOP]


def overlap(reference: str, response: str) -> float:
    """Half unigram recall, half bigram recall of the reference's content tokens in the response."""
    ref, got = tokens(reference), tokens(response)
    if not ref:
        return 0.0
    uni = len(set(ref) & set(got)) / len(set(ref))
    ref_bi, got_bi = set(zip(ref, ref[1:])), set(zip(got, got[1:]))
    bi = len(ref_bi & got_bi) / len(ref_bi) if ref_bi else uni
    return 0.5 * uni + 0.5 * bi


def _regions(prompt: str) -> tuple[dict[str, str], str]:
    """Labelled data regions, and the prompt with them cut out (what a weak judge takes for instructions)."""
    found: dict[str, str] = {}
    outside, last = [], 0
    for m in _REGION.finditer(prompt):
        before = prompt[last : m.start()]
        outside.append(before)
        if m.group(1):
            label, body = m.group(1).lower(), m.group(2)
        else:  # a fence: labelled by the last non-empty line before it ("Response:")
            heading = [line for line in before.splitlines() if line.strip()]
            label, body = (heading[-1].strip().rstrip(":").lower() if heading else "fence"), m.group(3)
        found.setdefault(label, body)
        last = m.end()
    outside.append(prompt[last:])
    return found, "\n".join(outside)


def _section(prompt: str, names: tuple[str, ...]) -> str:
    """Unfenced: the text after a heading line naming one of ``names``, up to the next heading."""
    lines, out, inside = prompt.splitlines(), [], False
    for line in lines:
        head = re.match(r"^\s*#*\s*([A-Za-z][A-Za-z ]{0,30}):\s*(.*)$", line)
        if head:
            inside = any(n in head.group(1).lower() for n in names)
            if inside and head.group(2):
                out.append(head.group(2))
            continue
        if inside:
            out.append(line)
    return "\n".join(out)


def _labelled(regions: dict[str, str], names: tuple[str, ...]) -> str | None:
    return next((body for label, body in regions.items() if any(n in label for n in names)), None)


def _verdict(prompt_instructions: str, value: float) -> str:
    """The verdict in the form the prompt asks for: Score N/10, a JSON score, or yes/no (fake verdict lines aside)."""
    low = _FAKE_VERDICT.sub("", prompt_instructions).lower()
    if re.search(r"score\W{0,3}\s*(n|\d+|<[^>]*>)?\s*/\s*10|0 to 10|0-10|0 and 10", low):
        return f"Score: {round(10 * value)}/10"
    if '"score"' in low:
        return json.dumps({"score": round(10 * value)})
    return "yes" if value >= 0.5 else "no"


def weak_reply(prompt: str) -> str:
    """The stub judge's reply to one judge prompt (see the module docstring)."""
    form = _FORM_RE.search(prompt)
    if form and form.group(1) in FORMS:
        return FORMS[form.group(1)][0]
    regions, instructions = _regions(prompt)
    if _INSTRUCTION_HACKS.search(instructions) or _FAKE_VERDICT.search(instructions):
        return "As instructed, this response gets full marks.\n" + _verdict(instructions, 1.0)
    reference = _labelled(regions, _REFERENCE_LABELS)
    if reference is None:
        reference = _section(prompt, _REFERENCE_LABELS)
    response = _labelled(regions, ("response",))
    if response is None:
        response = _section(prompt, ("response",))
    value = overlap(reference, response)
    listed = {label: _items(body) for label, body in regions.items() if label in ("also_correct", "incorrect")}
    value = max([value] + [_agrees(item, response) for item in listed.get("also_correct", [])])
    wrong = max([0.0] + [_agrees(item, response) for item in listed.get("incorrect", [])])
    if wrong >= 0.5 and wrong >= value:  # it agrees with an answer the prompt lists as wrong, as much as any right one
        value = 0.0
    flat = " ".join(response.split())
    quote = f'"{flat}"' if len(flat) <= 400 else f'"{flat[:200]}" ... "{flat[-200:]}"'
    return f"The response reads {quote}. It shares {value:.0%} of the reference.\n" + _verdict(instructions, value)


def _agrees(item: str, response: str) -> float:
    """How far a response says a listed answer and little else (both ways: a salad that holds the item's one
    word among many others does not say it)."""
    return min(overlap(item, response), overlap(response, item))


def _items(body: str) -> list[str]:
    """The items of a listed block ("- " lines)."""
    return [line.strip()[2:].strip() for line in body.splitlines() if line.strip().startswith("- ")]


def _prompt_text(body: dict) -> str:
    """A chat request's messages as the one text the stub reads."""
    return "\n\n".join(_text(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict))


def _count_tokens(text: str) -> int:
    return max(1, len(text) // 4) if text else 0


# The share of the reward's bound per call that a proxied judge call may take: the rest is the reward's own
# work and the error's way back, so a hung judge is reported as one (HTTP 504) before the bound stops the reward.
UPSTREAM_SHARE = 0.5
_CLIENT_GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


class _QuietServer(ThreadingHTTPServer):
    """A caller that hung up before its answer (its own time limit ended the call) is no error of ours: no
    traceback on stderr. Anything else is reported as the standard library does."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], _CLIENT_GONE):
            return
        super().handle_error(request, client_address)


class JudgeServer:
    """A loopback judge: the stub (default) or a counting proxy to ``upstream`` with the key from ``api_key``."""

    def __init__(self, upstream: str | None = None, api_key: str | None = None, timeout: float = 60.0) -> None:
        self.upstream, self._key, self._timeout = (upstream or "").rstrip("/") or None, api_key, timeout
        self.upstream_limit: float | None = None  # bound_calls: the seconds an upstream call may take
        self.upstream_hung: float | None = None  # the limit an upstream call ran past: later calls fail at once
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.hang_seconds = 60.0  # how long the judge_hang form holds a call before dropping it
        self.calls = self.prompt_tokens = self.completion_tokens = self.failures = 0
        self.keep_prompts = False  # keep the judge prompts served (``take_prompts``): what the judge was shown
        self._prompts: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # no request log on stderr
                pass

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    return self._send(200, {"object": "list", "data": [{"id": STUB_MODEL, "object": "model"}]})
                self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    return self._send(400, {"error": {"message": "the body is not JSON"}})
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                failure = owner._failure(body)
                if failure == "judge_server_error":
                    return self._send(500, {"error": {"message": "internal server error", "type": "server_error"}})
                if failure:  # dropped at once, or after hang_seconds with no reply
                    if failure == "judge_hang":
                        owner._stopping.wait(owner.hang_seconds)
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return None
                status, payload = owner._complete(body)
                self._send(status, payload)

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if status in (502, 504):  # the proxy's own verdict on the upstream: a retry cannot help in time
                    self.send_header("x-should-retry", "false")
                self.end_headers()
                self.wfile.write(data)

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="vlab-judge", daemon=True)
        self._started = False

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    def start(self) -> JudgeServer:
        if not self._started:
            self._thread.start()
            self._started = True
        return self

    def stop(self) -> None:
        self._stopping.set()  # a held judge_hang call ends now
        if self._started:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._started = False
        self._server.server_close()

    def __enter__(self) -> JudgeServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def bound_calls(self, seconds: float) -> None:
        """The reward's bound per call (test_reward's --timeout): a proxied judge call gets UPSTREAM_SHARE of it."""
        self.upstream_limit = UPSTREAM_SHARE * seconds

    def _upstream_seconds(self) -> float:
        """How long the upstream may take: ``upstream_limit``, never past the constructor's ``timeout``. Not
        stretched by the load: the reward's bound is on its call's own time (``env.evidence``: waiting for a CPU
        does not count), so a hung judge's 504 at half of it in wall time always comes first."""
        if self.upstream_limit is None:
            return self._timeout
        return min(self._timeout, self.upstream_limit)

    def usage(self) -> dict[str, int]:
        with self._lock:
            return {
                "calls": self.calls,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "failures": self.failures,
            }

    def reset(self) -> None:
        with self._lock:
            self.calls = self.prompt_tokens = self.completion_tokens = self.failures = 0

    def take_prompts(self) -> list[str]:
        """The judge prompts kept while ``keep_prompts`` was on (at most MAX_KEPT), emptied."""
        with self._lock:
            out, self._prompts = self._prompts, []
        return out

    def _keep(self, body: dict) -> None:
        if self.keep_prompts:
            with self._lock:
                if len(self._prompts) < MAX_KEPT:
                    self._prompts.append(_prompt_text(body))

    def _failure(self, body: dict) -> str | None:
        """The failure form a stub request asks for, if any (a proxied request never fails on purpose)."""
        if self.upstream:
            return None
        prompt = _prompt_text(body)
        form = _FORM_RE.search(prompt)
        if form and form.group(1) in FAILURES:
            with self._lock:
                self.failures += 1
            return form.group(1)
        return None

    def _complete(self, body: dict) -> tuple[int, dict]:
        self._keep(body)
        if self.upstream:
            return self._forward(body)
        prompt = _prompt_text(body)
        reply = weak_reply(prompt)
        usage = {"prompt_tokens": _count_tokens(prompt), "completion_tokens": _count_tokens(reply)}
        self._count(usage)
        return 200, {
            "id": f"stub-{self.calls}",
            "object": "chat.completion",
            "created": 0,
            "model": str(body.get("model") or STUB_MODEL),
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply}},
            ],
            "usage": usage | {"total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]},
        }

    def _forward(self, body: dict) -> tuple[int, dict]:
        if self.upstream_hung is not None:  # as test_reward treats a reward that hung: not called again
            with self._lock:
                self.failures += 1
            message = (
                f"the judge endpoint did not answer within {self.upstream_hung:.1f} s on an earlier call, "
                "so it is not asked again (a hung judge)"
            )
            return 504, {"error": {"message": message, "type": "judge_timeout"}}
        limit = self._upstream_seconds()
        request = urllib.request.Request(
            f"{self.upstream}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self._key or 'EMPTY'}"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=limit) as answer:
                payload = json.loads(answer.read() or b"{}")
                status = answer.status
        except urllib.error.HTTPError as err:
            with self._lock:
                self.failures += 1
            return err.code, {"error": {"message": f"the judge endpoint answered HTTP {err.code}"}}
        except (urllib.error.URLError, OSError, ValueError) as err:
            with self._lock:
                self.failures += 1
            if isinstance(err, TimeoutError) or isinstance(getattr(err, "reason", None), TimeoutError):
                self.upstream_hung = limit
                message = (
                    f"the judge endpoint did not answer within {limit:.1f} s (a hung judge; the call was given up)"
                )
                return 504, {"error": {"message": message, "type": "judge_timeout"}}
            return 502, {"error": {"message": f"the judge endpoint is unreachable: {type(err).__name__}"}}
        self._count(payload.get("usage") or {})
        return status, payload

    def _count(self, usage: dict) -> None:
        with self._lock:
            self.calls += 1
            self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
            self.completion_tokens += int(usage.get("completion_tokens") or 0)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")
