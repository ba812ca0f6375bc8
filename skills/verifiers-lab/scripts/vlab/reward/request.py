"""What test_reward is asked (``TestRewardRequest``, its judge in ``JudgeSettings``), below every module of the run
that reads it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from vlab.core import secrets
from vlab.core.files import ensure_writable
from vlab.core.result import UsageError

DEFAULT_BATCH = 128  # judge rollouts per step without --judge-batch-size: SKILL.md's submit_training, --batch-size 128
PROBE_ROWS = 5  # rows probed in full when --num-examples is not given
SHAPE_ROWS = 8  # at most this many more: the first row of each math answer shape the first rows lack
REACH_SECONDS = 60.0  # default time budget of the reachability pass


@dataclass(frozen=True)
class JudgeSettings:
    """Which judge test_reward runs against: "stub", or a base URL with the key's variable NAME."""

    judge: str | None = None  # "stub" or None
    base_url: str | None = None
    api_key_var: str | None = None
    model: str | None = None
    batch_size: int = DEFAULT_BATCH
    price_in: float | None = None  # USD per million prompt tokens
    price_out: float | None = None  # USD per million completion tokens

    def __post_init__(self) -> None:
        if self.judge not in (None, "stub"):
            raise UsageError(f"--judge takes 'stub' (got {self.judge!r})", hint="or give --judge-base-url URL")
        if self.judge and self.base_url:
            raise UsageError("--judge stub and --judge-base-url exclude each other")
        if self.base_url and not re.match(r"^https?://", self.base_url):
            raise UsageError(f"--judge-base-url must be an http(s) URL (got {self.base_url!r})")
        if self.api_key_var and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.api_key_var):
            raise UsageError(
                "--judge-api-key-var takes the NAME of an environment variable, not a key",
                hint="e.g. --judge-api-key-var OPENAI_API_KEY (export the key in that variable)",
            )
        if self.batch_size < 1:
            raise UsageError("--judge-batch-size must be at least 1")

    @property
    def active(self) -> bool:
        return bool(self.judge or self.base_url)

    @property
    def stub(self) -> bool:
        return self.judge == "stub"


@dataclass(frozen=True)
class TestRewardRequest:
    """What test_reward is asked: the environment, its arguments, the probes and files to score, the limits.

    num_examples None: probe PROBE_ROWS rows in full and check the gold of every row (within
    reach_seconds); a number narrows both to the first N rows (-1: all rows).
    """

    __test__ = False  # not a pytest test class, whatever its name says

    env: str | None  # module file, package folder, or installed id
    env_args: dict[str, Any] | str = field(default_factory=dict)  # a dict, or its JSON text (--env-args)
    num_examples: int | None = None
    gold_template: str | None = None
    preset: str | None = None
    completions: str | None = None
    custom: str | None = None
    timeout: float = 10.0
    slow: float = 1.0
    margin: float = 0.3
    concurrency: int = 32
    min_agreement: float = 0.9
    correct_threshold: float = 0.5
    skip_probes: bool = False
    reach_seconds: float = REACH_SECONDS
    load_timeout: float | None = None  # None: the worker's load time limit (vlab.env.remote.LOAD_LIMIT)
    judge: JudgeSettings = field(default_factory=JudgeSettings)  # --judge stub / --judge-base-url (reward.judge)
    rows_out: str | None = None  # JSON Lines file for every row a dataset or prompt check names
    force: bool = False  # replace rows_out when it exists
    seq_len: int | None = None  # --seq-len: the rollout token budget of a multi-turn/tool environment (reward.budget)
    max_tokens: int | None = None  # --max-tokens: tokens per model turn (None: budget.TURN_TOKENS)
    tokenizer: str | None = None  # --tokenizer: count tokens with it (else budget.CHARS_PER_TOKEN)

    def __post_init__(self) -> None:
        if not self.env:
            raise UsageError(
                "no environment given", hint="pass a module file, a package folder or an installed env id; see --help"
            )
        if isinstance(self.env_args, str):
            try:
                object.__setattr__(self, "env_args", json.loads(self.env_args))
            except json.JSONDecodeError as err:
                raise UsageError(
                    f"--env-args is not valid JSON: {err.msg}", hint="""e.g. --env-args '{"num_examples": 10}'"""
                ) from err
        if not isinstance(self.env_args, dict):
            raise UsageError("--env-args must be a JSON object")
        secrets.register(self.env_args)  # masked wherever it shows up from here on
        if self.num_examples is not None and (self.num_examples == 0 or self.num_examples < -1):
            raise UsageError("--num-examples must be a positive number or -1 (all rows)")
        if self.load_timeout is not None and not self.load_timeout > 0:
            raise UsageError("--load-timeout must be a positive number of seconds")
        if self.timeout <= 0 or self.concurrency < 1:
            raise UsageError("--timeout must be positive and --concurrency at least 1")
        if self.reach_seconds < 0:
            raise UsageError("--reach-seconds must be 0 (skip the pass over the dataset) or more")
        if self.rows_out:
            ensure_writable(self.rows_out, self.force)  # refused before the environment loads
        for name in ("seq_len", "max_tokens"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise UsageError(f"--{name.replace('_', '-')} must be a whole number of tokens, at least 1")
        if self.skip_probes and not (self.completions or self.custom):
            raise UsageError("--no-probes leaves nothing to score", hint="add --completions FILE or --custom FILE")
