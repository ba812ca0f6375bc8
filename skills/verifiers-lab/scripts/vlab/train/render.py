"""The human report of local_train: steps, reward and throughput (builtin), or rl.toml and its commands (prime-rl)."""

from __future__ import annotations

from typing import Any

from vlab.core.result import Result
from vlab.train.request import LocalTrainRequest


def render(result: Result, console: Any, request: LocalTrainRequest, outcome: Any = None) -> None:
    """Drawn above the checks; plain print without rich."""
    d = result.data
    lines = []
    if d.get("engine") == "builtin" and "steps" in d:
        lines.append(
            f"steps {d['steps']} on {d.get('device')} ({d.get('dtype')}, sampler {d.get('sampler')}), "
            f"{d.get('train_wall_s')} s"
        )
        if "reward_first" in d:
            lines.append(f"reward {d['reward_first']:.3f} -> {d['reward_last']:.3f} (max {d['reward_max']:.3f})")
        if d.get("gen_tokens_per_s"):
            lines.append(
                f"tokens/s: generation {d['gen_tokens_per_s']:.0f}"
                + (
                    f", training {d['train_tokens_per_s']:.0f}"
                    if d.get("train_tokens_per_s")
                    else " (no update: every group had the same reward)"
                )
            )
        lines.append(f"metrics: {d.get('metrics_path')}")
    if d.get("dry_run") and d.get("memory"):
        m = d["memory"]
        lines.append(
            f"estimated peak {m['estimate_gib']['peak']:.2f} GiB of {m['budget_gib']:.2f} GiB usable on {m['device']} "
            f"({m['micro_batch_tokens']} tokens a micro-batch, gradient checkpointing "
            f"{'on' if m['gradient_checkpointing'] else 'off'})"
        )
        if m.get("memory_budget_gib"):
            lost = ", ".join(m.get("given_up") or []) or "nothing against the plan without it"
            lines.append(f"memory budget {m['memory_budget_gib']:g} GiB (asked): gave up {lost}")
    if d.get("engine") == "prime-rl":
        lines.append(f"rl.toml: {d.get('rl_toml')}")
        for c in d.get("commands", []):
            lines.append(f"  $ {c}")
    for line in lines:
        if console is None:
            print(line)
        else:
            from rich.markup import escape

            console.print(escape(line))
