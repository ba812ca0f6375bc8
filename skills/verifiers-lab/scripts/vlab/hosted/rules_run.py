"""Validation rules on a run's numbers: batch and group sizes, the learning rate for LoRA or full
fine-tuning, completion tokens within ``seq_len``, difficulty filtering. (Whether ``seq_len`` holds a
multi-turn environment's turns is ``hosted.tokens``: it needs the environment, these rules do not.)"""

from __future__ import annotations

from vlab.core.result import Check
from vlab.hosted.document import config_seq_len, get, is_lora, rule, train_sources

# Usual learning-rate ranges (prime-rl examples and Hosted Training docs): full fine-tuning RL
# runs at ~1e-7..1e-5 (prime-rl default 1e-6); LoRA at ~1e-6..5e-4 (examples 1e-5..1e-4).
LR_RANGES = {"lora": (1e-6, 5e-4), "full": (1e-7, 1e-5)}
LR_DIVERGE = {"lora": 1e-2, "full": 1e-3}  # above this a run almost surely diverges: fail


def check_batch(doc: dict) -> list[Check]:
    checks = []
    batch = get(doc, "orchestrator.batch_size")
    group = get(doc, "orchestrator.group_size", 1)
    if not isinstance(group, int) or isinstance(group, bool):
        return [
            rule("group-size", "fail", f"orchestrator.group_size = {group!r} is not an integer", "set group_size = 8")
        ]
    if group < 2:
        checks.append(
            rule(
                "group-size",
                "fail",
                f"group_size = {group}: a group of one has zero advantage, so nothing is learned",
                "set orchestrator.group_size = 8 (16 for long-horizon tasks)",
            )
        )
    elif group < 8:
        checks.append(
            rule(
                "group-size",
                "warn",
                f"group_size = {group} gives noisy group-relative advantages",
                "8 is the usual minimum; 16 for long-horizon or mostly-failing tasks",
            )
        )
    elif group > 16:
        checks.append(
            rule(
                "group-size",
                "warn",
                f"group_size = {group} is large for a first run",
                "rules of thumb: quick tests group 8 / batch 128; longer-horizon group 16 / batch 512",
            )
        )
    else:
        checks.append(rule("group-size", "pass", f"group_size = {group}"))
    if batch is None:
        if get(doc, "orchestrator.token_batch_size") is None:
            checks.append(
                rule(
                    "batch-size",
                    "fail",
                    "no orchestrator.batch_size (or token_batch_size)",
                    "set orchestrator.batch_size = 128",
                )
            )
        return checks
    if not isinstance(batch, int) or isinstance(batch, bool) or batch < 1:
        checks.append(
            rule(
                "batch-size",
                "fail",
                f"orchestrator.batch_size = {batch!r} is not a positive integer",
                "set orchestrator.batch_size = 128",
            )
        )
        return checks
    groups = [("orchestrator", group)] + [
        (f"source {s.get('name', i)!r}", s["group_size"])
        for i, s in enumerate(train_sources(doc))
        if isinstance(s.get("group_size"), int)
    ]
    bad = [(w, g) for w, g in groups if g >= 1 and batch % g]
    if bad:
        checks.append(
            rule(
                "batch-divisible",
                "fail",
                "batch_size "
                + str(batch)
                + " is not divisible by group_size "
                + ", ".join(f"{g} ({w})" for w, g in bad),
                f"use a multiple, e.g. batch_size = {max(g for _, g in bad) * max(1, batch // max(g for _, g in bad))}",
            )
        )
    else:
        checks.append(
            rule("batch-divisible", "pass", f"batch_size {batch} = {batch // max(group, 1)} groups of {group}")
        )
    if batch > 512:
        checks.append(
            rule(
                "batch-size",
                "warn",
                f"batch_size = {batch} is large for a first run",
                "rules of thumb: quick tests batch 128 or lower; longer-horizon 512",
            )
        )
    return checks


def check_learning_rate(doc: dict) -> list[Check]:
    lr = get(doc, "trainer.optim.lr")
    kind = "lora" if is_lora(doc) else "full"
    label = "LoRA" if kind == "lora" else "full fine-tuning"
    if lr is None:
        return [
            rule(
                "learning-rate",
                "pass" if kind == "full" else "warn",
                f"trainer.optim.lr unset: prime-rl's default 1e-6 ({label})",
                "" if kind == "full" else "1e-6 is low for LoRA; LoRA runs usually take 1e-5 to 1e-4",
            )
        ]
    if not isinstance(lr, (int, float)) or isinstance(lr, bool) or lr <= 0:
        return [rule("learning-rate", "fail", f"trainer.optim.lr = {lr!r} is not a positive number", "set lr = 1e-6")]
    low, high = LR_RANGES[kind]
    if lr > LR_DIVERGE[kind]:
        return [
            rule(
                "learning-rate",
                "fail",
                f"lr = {lr:g} for {label} will almost surely diverge",
                f"use {low:g} to {high:g} for {label}",
            )
        ]
    if lr < low or lr > high:
        why = " (1e-4-ish rates are LoRA rates; full fine-tuning needs ~1e-6)" if kind == "full" and lr > high else ""
        return [
            rule(
                "learning-rate",
                "warn",
                f"lr = {lr:g} is outside the usual {low:g}..{high:g} for {label}{why}",
                "a conservative first run stays inside the usual range",
            )
        ]
    return [rule("learning-rate", "pass", f"lr = {lr:g} is in the usual range for {label}")]


def check_tokens(doc: dict) -> list[Check]:
    seq_len = config_seq_len(doc)
    if not isinstance(seq_len, int) or seq_len < 1:
        return [
            rule("completion-tokens", "fail", f"seq_len = {seq_len!r} is not a positive integer", "set seq_len = 2048")
        ]
    found = [("orchestrator.train.sampling", get(doc, "orchestrator.train.sampling.max_completion_tokens"))]
    found += [
        (f"orchestrator.train.source[{i}].sampling", get(s, "sampling.max_completion_tokens"))
        for i, s in enumerate(train_sources(doc))
    ]
    found = [(w, v) for w, v in found if v is not None]
    if not found:
        return [
            rule(
                "completion-tokens",
                "warn",
                "no max_completion_tokens: completions may run to the sequence limit",
                "set [orchestrator.train.sampling] max_completion_tokens (e.g. 512)",
            )
        ]
    checks = []
    for where, value in found:
        if not isinstance(value, int) or value < 1:
            checks.append(
                rule(
                    "completion-tokens",
                    "fail",
                    f"{where}.max_completion_tokens = {value!r} is not a positive integer",
                    "set it to e.g. 512",
                )
            )
        elif value >= seq_len:
            checks.append(
                rule(
                    "completion-tokens",
                    "fail",
                    f"{where}.max_completion_tokens = {value} leaves no room for the prompt in seq_len = {seq_len}",
                    f"raise seq_len above {value} + the prompt length",
                )
            )
        elif value > 0.75 * seq_len:
            checks.append(
                rule(
                    "completion-tokens",
                    "warn",
                    f"{where}.max_completion_tokens = {value} leaves "
                    f"{seq_len - value} tokens of seq_len = {seq_len} for the prompt",
                    "check your longest prompt fits, or raise seq_len",
                )
            )
        else:
            checks.append(
                rule("completion-tokens", "pass", f"max_completion_tokens = {value} within seq_len = {seq_len}")
            )
    return checks


def check_filtering(doc: dict) -> list[Check]:
    value = get(doc, "orchestrator.train.filter_zero_advantages")
    if value is False:
        return [
            rule(
                "difficulty-filtering",
                "warn",
                "filter_zero_advantages = false: groups whose rollouts all score "
                "the same (all 0 or all 1) still fill the batch but teach nothing",
                "keep orchestrator.train.filter_zero_advantages = true, especially for mostly binary rewards",
            )
        ]
    return [
        rule(
            "difficulty-filtering",
            "pass",
            "groups with zero advantage are filtered out" + (" (prime-rl default)" if value is None else ""),
        )
    ]
