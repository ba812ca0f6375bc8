#!/usr/bin/env python3
"""Build, convert and validate a Hosted Training (prime-rl) config; show it; submit it only when asked."""

from __future__ import annotations

import argparse
import sys

sys.dont_write_bytecode = True  # before the pack's first import: vlab moves the cache out of the skill folder
import vlab.core.guard  # noqa: F401  (first: a missing dependency exits 3 with its install command)
from vlab.core import numbers
from vlab.core.cli import main_guard, make_parser, run_request
from vlab.hosted.prime import FORWARDABLE_SECRETS
from vlab.hosted.render import render
from vlab.hosted.request import TARGETS, EnvEvent, SubmitRequest
from vlab.hosted.submit import run_submit_training

DESCRIPTION = """\
Build a training config in the current prime-rl shape that `prime train` accepts ([model] name,
[orchestrator] batch/group sizes and [[orchestrator.train.source]] environments, [trainer.optim],
optional [trainer.model.lora], [monitors.wandb], [ckpt], [deployment]), from flags, a starting
TOML (--config; its comments and key order are kept) or an old flat config (--from-flat; every
key is listed as mapped, renamed, kept or dropped, with the reason). Then validate it: strict
TOML, no flat-shape keys, no keys unknown to prime-rl (the schema's prime-rl version is in the
result), batch_size divisible by group_size, group_size >= 2, learning rate range for LoRA vs full
fine-tuning, completion tokens within seq_len, environment ids (and, online, that they exist on
the Hub), the model (online: `prime train models`), no secrets in the file, and secrets forwarded
only with -e. --prime-rl-dir also validates with a prime-rl checkout's own schema.

Then rehearse the run (skip knowingly with --no-rehearse): each environment's wheel is built as
`prime env push` does, installed with its Requires-Dist and verifiers 0.4.0 into a throwaway venv
(cached by the wheel's hash under ~/.cache/verifiers-lab/rehearse), loaded from an empty folder
with the config's exact arguments, and the gold of --rehearse-rows rows scored by the installed
package's rewards. The environment's folder is environments/<module>/ under the current folder:
run from the project folder that holds it. No config is written without a rehearsal: with nothing
to rehearse (no such folder, e.g. a Hub environment you did not write, or no uv) the run stops
unless --no-rehearse says to write the config without one.
A judge-scored environment is scored against test_reward's loopback stub judge (no key, no cost);
the config's judge settings are checked by name and the result gives the judge calls per step
for the config's batch size (the dollar cost needs the judge's prices). A data file keeps its
format's extension (a CSV ships as train.csv); one whose content is not what its name says fails.

The token budget of each train source (token-budget): seq_len must hold the environment's
turn limit in turns of max_completion_tokens (--max-tokens), the longest rehearsed prompt and a
tool reply between two turns; the check names the sum and the seq_len that holds it. The
completion budget (completion-budget, a warning): max_completion_tokens against the data's own
references (worked solutions, reference programs, long answers: the rehearsed rows' and the data
file's), which a reply must have room to write out.

The train split (train-split): a train source whose arguments name a test or validation (dev)
split (dataset_split="test", a file named test.jsonl or NQ-open.dev.jsonl) or whose rehearsed
rows' ids say test/ fails unless --train-on-eval-split says it is meant.

The default is a dry run: the config is shown (with a diff against the starting TOML), written
only when every check passed (--output, default configs/<env>.toml; never over an existing file
without --force) and nothing leaves the machine. --submit runs `prime train CONFIG -y -o json [-e NAME]` after every check
passed and only with --yes (or a confirmation typed on a terminal), and writes a run record
(<config>.<run id>.run.json). --status RUN_ID reports a run through `prime train get/progress`.
"""

EPILOG = """\
examples:
  %(prog)s --model Qwen/Qwen3-4B-Instruct-2507 --env owner/my-env \\
      --env-arg dataset_path='"train.jsonl"' --max-steps 50   # from the folder holding environments/my_env/
  %(prog)s --model Qwen/Qwen3-4B-Instruct-2507 --env primeintellect/alphabet-sort \\
      --env-arg min_turns=3 --max-steps 50 --offline --no-rehearse   # a Hub environment without its source
  %(prog)s --from-flat old-rl.toml --output configs/alphabet-sort.toml
  %(prog)s --config configs/alphabet-sort.toml --submit --yes --forward-env WANDB_API_KEY
  %(prog)s --status RUN_ID --json
  several environments: --env owner/a --ratio 0.7 --env owner/b --env-arg difficulty=hard --ratio 0.3

what the exit codes mean here:
  1  a check failed, the platform rejected the config (HTTP 422), the environment is not on the Hub,
     or --status found the run FAILED/STOPPED; nothing was submitted unless the result says so.
     Also: a classic environment for Hosted Training or prime-rl after v0.8.0 (nothing written; the
     hint names migrate_env), an environment argument naming a local file for a hosted run, an
     OWNER/... placeholder id, nothing to rehearse (no environments/<module>/ under the current
     folder: run from the project folder, or pass --no-rehearse), a failed rehearsal, a seq_len
     that cannot hold the environment's turns (token-budget: raise --seq-len to the number it names),
     a train source on a test or dev split without --train-on-eval-split (train-split)
  2  bad input: unreadable or malformed TOML, an existing --output without --force, --submit without --yes,
     --submit with --target prime-rl (run that config with `uv run rl @` in the checkout)
  3  the prime CLI is missing, not logged in or its key was rejected (401/403); uv is missing for the
     rehearsal (pip install uv, or --no-rehearse)
  4  the platform or the network failed (connection refused, timeout, HTTP 5xx)
"""


class EnvEventAction(argparse.Action):
    """Keeps --env/--eval-env/--env-arg/--ratio in command-line order, so args attach to their env."""

    def __call__(self, parser, namespace, values, option_string=None):
        events = list(getattr(namespace, "env_events", None) or [])
        events.append(EnvEvent(self.const, values))
        namespace.env_events = events


def build_parser():
    p = make_parser("submit_training", DESCRIPTION, EPILOG)
    src = p.add_argument_group("starting point (one of, or neither for a new config from flags)")
    src.add_argument("--config", metavar="TOML", help="a prime-rl-native config to check, edit with flags, submit")
    src.add_argument("--from-flat", metavar="OLD.toml", help="convert a config in the old flat Hosted Training shape")
    src.add_argument(
        "--target",
        choices=TARGETS,
        default="hosted",
        help="hosted: `prime train` (default); prime-rl: a self-managed `uv run rl @` config",
    )
    run_ = p.add_argument_group("run parameters (each overrides the starting TOML or the template)")
    run_.add_argument("--model", help="model name, e.g. Qwen/Qwen3-4B-Instruct-2507")
    run_.add_argument(
        "--env",
        dest="env_events",
        action=EnvEventAction,
        const="env",
        metavar="ID",
        help="environment (Hub id owner/name[@version]) to train on; repeat for several",
    )
    run_.add_argument(
        "--env-arg",
        dest="env_events",
        action=EnvEventAction,
        const="arg",
        metavar="KEY=VALUE",
        help='load argument for the --env before it (value read as TOML: 5, true, "text")',
    )
    run_.add_argument(
        "--ratio",
        dest="env_events",
        action=EnvEventAction,
        const="ratio",
        metavar="R",
        help="sampling weight of the --env before it",
    )
    run_.add_argument(
        "--eval-env",
        dest="env_events",
        action=EnvEventAction,
        const="eval-env",
        metavar="ID",
        help="environment for online evaluation; repeatable",
    )
    run_.add_argument("--max-steps", type=numbers.integer(1))
    run_.add_argument("--batch-size", type=numbers.integer(1), help="rollouts per step (orchestrator.batch_size)")
    run_.add_argument("--group-size", type=numbers.integer(1), help="rollouts per example (orchestrator.group_size)")
    run_.add_argument(
        "--max-tokens",
        type=numbers.integer(1),
        help="max completion tokens per model turn (orchestrator.train.sampling.max_completion_tokens)",
    )
    run_.add_argument("--temperature", type=numbers.real(0, 10))
    run_.add_argument(
        "--seq-len",
        type=numbers.integer(1),
        help="tokens per training sample: the prompt and every turn and tool reply of a rollout (seq_len)",
    )
    run_.add_argument("--lr", type=numbers.real(0, 1, lo_open=True), help="learning rate (trainer.optim.lr)")
    run_.add_argument("--lora", action="store_true", help="train a LoRA adapter ([trainer.model.lora])")
    run_.add_argument("--lora-rank", type=numbers.integer(1))
    run_.add_argument("--lora-alpha", type=numbers.real(0, lo_open=True))
    run_.add_argument("--train-gpus", type=numbers.integer(1), help="deployment.num_train_gpus")
    run_.add_argument("--infer-gpus", type=numbers.integer(1), help="deployment.num_infer_gpus")
    run_.add_argument("--wandb-project")
    run_.add_argument("--wandb-name")
    run_.add_argument("--wandb-entity")
    run_.add_argument("--ckpt-interval", type=numbers.integer(1))
    run_.add_argument("--eval-interval", type=numbers.integer(1))
    run_.add_argument("--eval-num-examples", type=numbers.integer(1))
    act = p.add_argument_group("what to do")
    act.add_argument("--output", metavar="PATH", help="where to write the config (default configs/<env>.toml)")
    act.add_argument("--force", action="store_true", help="replace an existing --output file")
    act.add_argument("--dry-run", action="store_true", help="build, validate and write only (the default)")
    act.add_argument("--submit", action="store_true", help="submit with `prime train` after every check passed")
    act.add_argument("--yes", action="store_true", help="confirm the submission (needed without a terminal)")
    act.add_argument(
        "--forward-env",
        "-e",
        action="append",
        choices=FORWARDABLE_SECRETS,
        default=[],
        metavar="NAME",
        help="secret forwarded by name with `prime train -e` (WANDB_API_KEY, HF_TOKEN)",
    )
    act.add_argument("--status", metavar="RUN_ID", help="report a submitted run's state and progress")
    act.add_argument("--offline", action="store_true", help="no Hub or model lookups (they become skip/warn)")
    act.add_argument(
        "--no-rehearse",
        dest="rehearse",
        action="store_false",
        help="write the config without a rehearsal (build, install, load, score each environment): for an "
        "environment whose source is not under environments/ here; the result says it was skipped",
    )
    act.add_argument(
        "--train-on-eval-split",
        action="store_true",
        help="train on data named as a test or validation (dev) split knowingly: without it such a train source "
        "fails (train-split), since its scores then say nothing and no held-out rows are left",
    )
    act.add_argument(
        "--rehearse-rows",
        type=numbers.integer(1),
        default=20,
        metavar="N",
        help="rows whose gold the rehearsal scores (default 20)",
    )
    act.add_argument(
        "--prime-rl-dir",
        metavar="DIR",
        help="also validate with this prime-rl checkout's own schema; with --target prime-rl, a checkout "
        "at v0.8.0 gets classic environments as `legacy` blocks",
    )
    act.add_argument(
        "--prime-rl-python",
        metavar="PY",
        help="Python 3.12 that can import prime-rl-configs' dependencies (default: uv run)",
    )
    act.add_argument("--timeout", type=numbers.seconds(), default=30.0, help="seconds per prime lookup (default 30)")
    act.add_argument(
        "--submit-timeout", type=numbers.seconds(), default=300.0, help="seconds for `prime train` (default 300)"
    )
    act.add_argument(
        "--schema-timeout", type=numbers.seconds(), default=300.0, help="seconds for prime-rl's schema (default 300)"
    )
    return p


def request(args) -> SubmitRequest:
    return SubmitRequest(
        config=args.config,
        from_flat=args.from_flat,
        target=args.target,
        model=args.model,
        env_events=tuple(args.env_events or ()),
        max_steps=args.max_steps,
        batch_size=args.batch_size,
        group_size=args.group_size,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        seq_len=args.seq_len,
        lr=args.lr,
        lora=args.lora,
        lora_rank=args.lora_rank,
        lora_alpha=args.lora_alpha,
        train_gpus=args.train_gpus,
        infer_gpus=args.infer_gpus,
        wandb_project=args.wandb_project,
        wandb_name=args.wandb_name,
        wandb_entity=args.wandb_entity,
        ckpt_interval=args.ckpt_interval,
        eval_interval=args.eval_interval,
        eval_num_examples=args.eval_num_examples,
        output=args.output,
        force=args.force,
        dry_run=args.dry_run,
        submit=args.submit,
        yes=args.yes,
        forward_env=tuple(args.forward_env),
        status=args.status,
        offline=args.offline,
        prime_rl_dir=args.prime_rl_dir,
        prime_rl_python=args.prime_rl_python,
        timeout=args.timeout,
        submit_timeout=args.submit_timeout,
        schema_timeout=args.schema_timeout,
        strict=args.strict,
        rehearse=args.rehearse,
        rehearse_rows=args.rehearse_rows,
        train_on_eval_split=args.train_on_eval_split,
    )


def main(argv=None) -> int:
    return run_request("submit_training", build_parser(), request, run_submit_training, render, argv=argv)


if __name__ == "__main__":
    main_guard(main)
