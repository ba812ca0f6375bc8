#!/usr/bin/env python3
"""`make demo`: SKILL.md's v1 road, end to end and offline, from a project folder outside the skill.

Run with the verifiers 0.4 python (the v1 road); migrate_env's classic side runs in the 0.3.1
python (`--classic-python`, default .venv/vf031/bin/python). Every step calls a pack script the
way SKILL.md tells users to (`python "$SKILL_DIR/scripts/NAME.py" ... --json`, from the project
folder), checks the exit code and the verdict the step must give, and records it. At the end
`report.html` (one self-contained page) is written and its path printed. A step that fails stops
the demo: it says which step and why, the page still shows the steps so far, and the exit code is 1.

The training is a toy on purpose (see demo/toy.py): a 0.1M-parameter model learns which colour each
of three things is (balanced classes: a constant answer scores 1/3), so that a run visibly learns in a
minute or two on CPU. The model is warmed up first, by supervised steps that teach it to read the
question and write \\boxed{...}, never which colour a thing is; the demo says so in its output and on the page.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKILL_DIR = REPO / "skills" / "verifiers-lab"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import report  # noqa: E402  (demo/report.py)
import toy  # noqa: E402  (demo/toy.py)

# The road's one size: `make demo` and tests/test_demo.py walk exactly the same steps on the same data, so the
# suite fails where `make demo` would.
SIZE = {"rows": 120, "base_steps": 120, "eval_n": 20, "train_steps": 25, "migrate_rows": 6, "arith_rows": 40}
ENV_ARGS = json.dumps({"dataset_path": "data/train.jsonl"})


class StepFailed(Exception):
    pass


@dataclass
class Step:
    name: str
    title: str
    command: str = ""
    rc: int | None = None
    ok: bool = False
    verdict: str = ""
    why: str = ""
    seconds: float = 0.0
    result: dict = field(default_factory=dict)
    images: dict = field(default_factory=dict)  # caption -> file


class Demo:
    def __init__(self, out: Path, classic_python: str, quiet: bool = False):
        self.out = out.resolve()
        self.project = self.out / "project"
        self.classic_python = classic_python
        self.quiet = quiet
        self.steps: list[Step] = []

    def say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr, flush=True)

    # -- running one step --------------------------------------------------------
    def run(self, step: Step, argv: list[str], python: str | None = None, expect: int = 0) -> dict:
        """Run a pack script (or a demo helper) from the project folder; its --json result, or StepFailed."""
        py = python or sys.executable
        shown = [("$SKILL_DIR" + a[len(str(SKILL_DIR)) :]) if a.startswith(str(SKILL_DIR)) else a for a in argv]
        step.command = " ".join(["python", *(_quote(a) for a in shown)])
        self.say(f"   $ {step.command}")
        log = self.out / "logs" / f"{len(self.steps):02d}-{step.name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "SKILL_DIR": str(SKILL_DIR), "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1"}
        t0 = time.perf_counter()
        with log.open("w") as err:
            proc = subprocess.run(
                [py, *argv], cwd=self.project, stdout=subprocess.PIPE, stderr=err, text=True, env=env, check=False
            )
        step.seconds += time.perf_counter() - t0
        step.rc = proc.returncode
        try:
            result = json.loads(proc.stdout)
        except json.JSONDecodeError:
            tail = log.read_text(errors="replace").strip().splitlines()[-3:]
            raise StepFailed(f"exit {proc.returncode} and no JSON result; stderr ends: {' | '.join(tail)}") from None
        step.result = result
        if proc.returncode != expect:
            failed = [f"{c['id']}: {c['message']}" for c in result.get("checks", []) if c.get("status") == "fail"]
            why = "; ".join(failed) or result.get("summary", "")
            raise StepFailed(f"exit {proc.returncode} (expected {expect}): {why} (log: {log})")
        return result

    def step(self, name: str, title: str, body) -> Step:
        step = Step(name, title)
        self.steps.append(step)
        self.say(f"\n== {len(self.steps)}. {title}")
        try:
            body(step)
            step.ok = True
            step.verdict = step.verdict or step.result.get("summary", "")
            self.say(f"   ok: {step.verdict}")
        except Exception as err:  # noqa: BLE001 - any failure of a step is that step's failure, named
            step.why = str(err) if isinstance(err, StepFailed) else f"{type(err).__name__}: {err}"
            self.say(f"   FAILED: {step.why}")
            raise StepFailed(step.why) from err
        return step

    def script(self, name: str) -> str:
        return str(SKILL_DIR / "scripts" / f"{name}.py")

    # -- the road -----------------------------------------------------------------
    def go(self, until: str | None = None) -> None:
        """Run the road's steps not run yet, in order, through the step named `until` (all of them by default)."""
        done = {st.name for st in self.steps}
        for name, title, body in self.road():
            if name not in done:
                self.step(name, title, body)
            if name == until:
                return

    def road(self) -> list[tuple]:
        """SKILL.md's v1 road: (name, title, body) a step; every step runs from the project folder."""
        s = SIZE
        p = self.project
        (p / "data").mkdir(parents=True, exist_ok=True)
        steps = [
            (
                "preflight",
                "preflight: is this machine ready?",
                lambda st: self.run(st, [self.script("preflight"), "--offline", "--json"]),
            )
        ]

        def data(st: Step) -> None:
            toy.write_rows(p / "data" / "train.jsonl", s["rows"])
            st.command = f"python demo/toy.py data data/train.jsonl {s['rows']}"
            counts = {c: sum(r["label"] == c for r in toy.make_rows(s["rows"])) for c in toy.COLOURS}
            st.verdict = (
                f"{s['rows']} rows: which colour is the {', the '.join(toy.THINGS)}? (a toy); answers balanced "
                f"({', '.join(f'{c} {n}' for c, n in counts.items())}): a constant answer scores "
                f"{max(counts.values()) / s['rows']:.2f}"
            )
            st.result = {"rows": toy.make_rows(3)}

        steps.append(("data", "the toy dataset (shipped in demo/toy.py)", data))

        def inspect(st: Step) -> None:
            r = self.run(st, [self.script("inspect_dataset"), "data/train.jsonl", "--json"])
            (p / "inspect.json").write_text(json.dumps(r))
            rec = r["data"]["recommendation"]
            if rec.get("template") != "v1-classification":
                raise StepFailed(f"expected the v1-classification template, got {rec.get('template')}")

        steps.append(("inspect_dataset", "inspect_dataset: the prompt, the answer, its kind, the template", inspect))

        def new_env(st: Step) -> None:
            self.run(st, [self.script("new_env"), "color-toy", "--from-inspect", "inspect.json", "--json"])
            # new_env's next step: say in TASK what is classified (the data's name, data/train.jsonl, says nothing)
            module = p / "environments" / "color_toy" / "color_toy.py"
            text = module.read_text(encoding="utf-8")
            module.write_text(
                re.sub(r"^TASK = .*$", 'TASK = "Classify the text."', text, flags=re.M).replace(
                    "exactly one of these labels inside \\\\boxed{{}}.",
                    "exactly one label inside \\\\boxed{{}}, for example \\\\boxed{{blue}}.",
                ),
                encoding="utf-8",
            )
            # SKILL.md: for a run on another machine, ship the data in the package's data/ folder.
            shipped = p / "environments" / "color_toy" / "data"
            shipped.mkdir(exist_ok=True)
            shutil.copy(p / "data" / "train.jsonl", shipped / "train.jsonl")

        steps.append(("new_env", "new_env: the v1 taskset package from the template", new_env))
        env_dir = "environments/color_toy/"
        steps.append(
            (
                "test_reward",
                "test_reward: does the reward separate right from wrong?",
                lambda st: self.run(st, [self.script("test_reward"), env_dir, "--env-args", ENV_ARGS, "--json"]),
            )
        )

        def base_model(st: Step) -> None:
            argv = [str(REPO / "demo" / "toy.py"), "base-model", "models/tiny-colour", "--env", env_dir]
            info = self.run(st, [*argv, "--env-args", ENV_ARGS, "--steps", str(s["base_steps"])])
            st.verdict = (
                f"a 0.1M-parameter model warmed up by {s['base_steps']} supervised steps (a toy this small needs it): "
                "it learns to write \\boxed{...} and to read the question, boxing the thing it names or a colour "
                "drawn at random whatever the thing is (nothing about which colour is right); "
                "RL has to find which colour each thing is "
                f"(loss {info['losses'][0]:.2f} -> {info['losses'][-1]:.2f})"
            )

        steps.append(("base_model", "the model to train (a toy base model, built in code)", base_model))

        def baseline(st: Step) -> None:
            argv = [str(REPO / "demo" / "toy.py"), "eval", "--model", "models/tiny-colour", "--env", env_dir]
            argv += ["--env-args", ENV_ARGS, "--output-dir", "outputs/baseline", "-n", str(s["eval_n"]), "-r", "4"]
            r = self.run(st, argv)
            st.verdict = (
                f"base model: mean reward {r['avg_reward']:.3f} over {r['num_rollouts']} rollouts ({s['eval_n']} x 4)"
            )

        steps.append(("eval", "eval: the base model, 4 rollouts per example", baseline))

        def distribution(st: Step) -> None:
            argv = [self.script("check_reward_distribution"), "--results", "outputs/baseline"]
            self.run(st, [*argv, "--plot", str(self.out / "distribution.png"), "--force", "--json"])
            st.images["reward distribution of the base model's eval"] = self.out / "distribution.png"

        steps.append(("check_reward_distribution", "check_reward_distribution: worth training?", distribution))

        def train(st: Step) -> None:
            argv = [self.script("local_train"), "--env", env_dir, "--env-args", ENV_ARGS]
            argv += [
                "--model",
                "models/tiny-colour",
                "--max-steps",
                str(s["train_steps"]),
                "--output-dir",
                "outputs/local-train",
            ]
            for kv in (
                "batch_size=64",  # 8 questions x 8 rollouts a step: learns as fast as 128 did, in half the time
                "group_size=8",
                f"sampling.temperature={toy.TEMPERATURE}",
                "sampling.max_completion_tokens=16",
                "optim.lr=2e-3",
                "optim.warmup_steps=5",
            ):
                argv += ["--set", kv]
            r = self.run(st, [*argv, "--set", f"eval.num_examples={s['eval_n']}", "--no-progress", "--json"])
            d = r["data"]
            learning = next((c for c in r["checks"] if c["id"] == "learning"), {})
            if learning.get("status") != "pass" or d["eval"]["avg_reward"] < 0.8:
                raise StepFailed(
                    f"the run did not learn: {learning.get('message')}; final eval {d['eval']['avg_reward']:.3f}"
                )
            st.verdict = (
                f"{d['steps']} GRPO steps on CPU in {d['train_wall_s']:.0f} s: reward {d['reward_first']:.2f} -> "
                f"{d['reward_last']:.2f}, final eval {d['eval']['avg_reward']:.2f} (the toy's maximum is 1)"
            )

        steps.append(("local_train", "local_train: GRPO on CPU, the reward must rise", train))

        def diagnose(st: Step) -> None:
            argv = [self.script("diagnose_run"), "--run", "outputs/local-train", "--plot", str(self.out / "run.png")]
            r = self.run(st, [*argv, "--force", "--json"])
            st.images["diagnose_run's panels"] = self.out / "run.png"
            bad = [c["id"] for c in r["checks"] if c["status"] == "fail"]
            if bad:
                raise StepFailed(f"alarms on a healthy run: {bad}")

        steps.append(("diagnose_run", "diagnose_run: is the run healthy?", diagnose))

        def migrate(st: Step) -> None:
            toy_arith = REPO / "demo" / "make_data.py"
            subprocess.run(
                [sys.executable, str(toy_arith), str(p / "data" / "arith.jsonl"), str(s["arith_rows"])],
                check=True,
                capture_output=True,
            )
            shutil.copytree(REPO / "demo" / "environments" / "arith_classic", p / "environments" / "arith_classic")
            argv = [
                self.script("migrate_env"),
                "environments/arith_classic",
                "--env-args",
                '{"dataset_path": "data/arith.jsonl"}',
            ]
            argv += ["--v1-python", sys.executable, "--rows", str(s["migrate_rows"]), "--json"]
            r = self.run(st, argv, python=self.classic_python)
            st.verdict = next((c["message"] for c in r["checks"] if c["id"] == "proof"), r.get("summary", ""))

        steps.append(("migrate_env", "migrate_env: a classic environment to a v1 taskset, proven", migrate))

        def submit(st: Step) -> None:
            # --offline: the demo machine has no network, so Hub and model lookups become skip/warn.
            argv = [self.script("submit_training"), "--model", "Qwen/Qwen3-4B-Instruct-2507", "--env", "demo/color-toy"]
            # The data ships in the package's data/ folder, as SKILL.md advises: the rehearsal builds the wheel,
            # installs it in a throwaway venv and loads train.jsonl from it before the config is written.
            argv += ["--env-arg", 'dataset_path="train.jsonl"', "--max-steps", "50", "--group-size", "8"]
            argv += ["--batch-size", "128", "--output", "configs/color-toy.toml", "--offline", "--json"]
            self.run(st, argv)
            st.result["config_text"] = (p / "configs" / "color-toy.toml").read_text()

        steps.append(
            ("submit_training", "submit_training (dry run): the Hosted Training config, nothing submitted", submit)
        )
        return steps


def _quote(arg: str) -> str:
    return arg if arg and all(c.isalnum() or c in "/._-=$:" for c in arg) else "'" + arg.replace("'", "'\\''") + "'"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / ".demo-out", help="output folder (replaced)")
    ap.add_argument("--classic-python", default=str(REPO / ".venv" / "vf031" / "bin" / "python"))
    args = ap.parse_args(argv)
    shutil.rmtree(args.out, ignore_errors=True)
    demo = Demo(args.out, os.path.abspath(args.classic_python))  # abspath: keep the venv link
    t0 = time.perf_counter()
    failed = None
    try:
        demo.go()
    except StepFailed:
        failed = demo.steps[-1]
    page = report.write(demo.out / "report.html", demo.steps, demo.out, time.perf_counter() - t0, failed)
    if failed:
        print(f"\ndemo FAILED at step {len(demo.steps)} ({failed.name}): {failed.why}", file=sys.stderr)
        print(f"report: {page}")
        return 1
    print(f"\ndemo finished: every step passed in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(f"report: {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
