"""submit_training's request: what it is asked (a starting point, run parameters that override it, what
to do), and the command line's --env/--env-arg/--ratio events turned into the builder's parameters."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from vlab.core.result import UsageError
from vlab.hosted.builder import SourceSpec, TrainParams, parse_env_arg, source_name_for
from vlab.hosted.document import ENV_ID_RE

TARGETS = ("hosted", "prime-rl")
RUN_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")


# -- the request -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class EnvEvent:
    """One --env/--eval-env/--env-arg/--ratio, kept in command-line order so args attach to their env."""

    kind: str  # env | eval-env | arg | ratio
    value: str


@dataclass(frozen=True)
class SubmitRequest:
    """What submit_training is asked: a starting point, run parameters that override it, and what to do."""

    # starting point (one of, or neither for a new config from the parameters)
    config: str | None = None
    from_flat: str | None = None
    target: str = "hosted"
    # run parameters (None: keep the starting TOML's value or the template's)
    model: str | None = None
    env_events: tuple[EnvEvent, ...] = ()
    max_steps: int | None = None
    batch_size: int | None = None
    group_size: int | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    seq_len: int | None = None
    lr: float | None = None
    lora: bool = False
    lora_rank: int | None = None
    lora_alpha: float | None = None
    train_gpus: int | None = None
    infer_gpus: int | None = None
    wandb_project: str | None = None
    wandb_name: str | None = None
    wandb_entity: str | None = None
    ckpt_interval: int | None = None
    eval_interval: int | None = None
    eval_num_examples: int | None = None
    # what to do
    output: str | None = None
    force: bool = False
    dry_run: bool = False
    submit: bool = False
    yes: bool = False
    forward_env: tuple[str, ...] = ()
    status: str | None = None  # a run id: report it instead of building a config
    offline: bool = False
    prime_rl_dir: str | None = None
    prime_rl_python: str | None = None
    timeout: float = 30.0
    submit_timeout: float = 300.0
    schema_timeout: float = 300.0
    strict: bool = False  # warnings block a submission too
    rehearse: bool = True  # build, install, load and score each environment as the run will (--no-rehearse)
    rehearse_rows: int = 20
    train_on_eval_split: bool = False  # a test or dev split as a train source, knowingly (else train-split fails)

    def __post_init__(self) -> None:
        object.__setattr__(self, "env_events", tuple(self.env_events))
        object.__setattr__(self, "forward_env", tuple(self.forward_env))
        if self.submit and self.dry_run:
            raise UsageError("--submit and --dry-run are exclusive")
        if self.rehearse_rows < 1:
            raise UsageError(f"--rehearse-rows {self.rehearse_rows} must be at least 1")
        if self.target not in TARGETS:
            raise UsageError(f"unknown target {self.target!r}", hint="one of: " + ", ".join(TARGETS))
        if self.submit and self.target == "prime-rl":
            raise UsageError(
                "--submit sends a config to Hosted Training; a --target prime-rl config runs on your own machines",
                hint="run it from the prime-rl checkout: cd PRIME_RL_DIR && uv run rl @ CONFIG",
            )
        if self.status:
            if not RUN_ID_RE.match(self.status):
                raise UsageError(f"{self.status!r} is not a run id")
        elif self.config and self.from_flat:
            raise UsageError(
                "--config and --from-flat are exclusive", hint="convert with --from-flat, or check with --config"
            )


# -- command-line events -> parameters -------------------------------------------------------------


@dataclass
class SourcePlan:
    train: list[SourceSpec] = field(default_factory=list)
    eval: list[SourceSpec] = field(default_factory=list)


def sources_from_events(events: list[EnvEvent]) -> SourcePlan:
    """``--env A --env-arg k=v --ratio 0.7 --env B``: each --env-arg/--ratio belongs to the --env before it."""
    plan = SourcePlan()
    last: SourceSpec | None = None
    for ev in events:
        if ev.kind in ("env", "eval-env"):
            if not ENV_ID_RE.match(ev.value):
                raise UsageError(f"{ev.value!r} is not an environment id", hint="use owner/name or owner/name@version")
            last = SourceSpec(taskset_id=ev.value)
            (plan.train if ev.kind == "env" else plan.eval).append(last)
        elif last is None:
            raise UsageError(
                f"--{'env-arg' if ev.kind == 'arg' else 'ratio'} {ev.value} comes before any --env",
                hint="put it after the --env it belongs to",
            )
        elif ev.kind == "arg":
            key, value = parse_env_arg(ev.value)
            last.args[key] = value
        elif ev.kind == "ratio":
            try:
                last.ratio = float(ev.value)
            except ValueError as exc:
                raise UsageError(f"--ratio {ev.value!r} is not a number") from exc
            if last.ratio <= 0:
                raise UsageError(f"--ratio {ev.value} must be > 0")
    for specs in (plan.train, plan.eval):
        seen: dict[str, int] = {}
        for spec in specs:
            name = source_name_for(spec.taskset_id)
            seen[name] = seen.get(name, 0) + 1
            spec.name = name if seen[name] == 1 else f"{name}-{seen[name]}"
    return plan


def params_from_request(req: SubmitRequest) -> TrainParams:
    plan = sources_from_events(list(req.env_events))
    return TrainParams(
        model=req.model,
        max_steps=req.max_steps,
        seq_len=req.seq_len,
        batch_size=req.batch_size,
        group_size=req.group_size,
        max_completion_tokens=req.max_tokens,
        temperature=req.temperature,
        sources=plan.train or None,
        eval_sources=plan.eval or None,
        eval_interval=req.eval_interval,
        eval_num_examples=req.eval_num_examples,
        lr=req.lr,
        lora=True if req.lora else None,
        lora_rank=req.lora_rank,
        lora_alpha=req.lora_alpha,
        num_train_gpus=req.train_gpus,
        num_infer_gpus=req.infer_gpus,
        wandb_project=req.wandb_project,
        wandb_name=req.wandb_name,
        wandb_entity=req.wandb_entity,
        ckpt_interval=req.ckpt_interval,
    )
