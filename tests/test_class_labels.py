"""Classification done right (issue 23): split files, integer labels named, the label space checked.

inspect_dataset reads one split of a folder of split files and names integer class labels
(a label map beside the data, --label-names, --label-map); new_env writes the names into the
classification templates; test_reward checks every gold is an offered label and probes with
the real labels; check_reward_distribution warns when the mean is the majority-class share.
"""

from __future__ import annotations

import json

import pytest
from conftest import assert_result, run_script

from vlab.core.result import UsageError
from vlab.inspect import analyse, read_sample
from vlab.inspect.labels import names_given, read_label_map

NAMES = ["anger", "joy", "optimism", "sadness"]
TEXTS = {
    0: ["I am so angry at this", "this makes me furious"],
    1: ["so happy today", "what a lovely day"],
    2: ["things will get better", "hopeful for tomorrow"],
    3: ["I feel so sad", "lonely again tonight"],
}


def emotion_rows(n: int, offset: int = 0) -> list[dict]:
    """43% anger, the rest spread over joy, optimism and sadness (TweetEval emotion's shape)."""
    cycle = [0, 1, 0, 2, 0, 3, 1, 0, 2, 3, 0, 1, 0, 2, 3, 0, 1, 0, 2, 3, 0, 3, 0, 1, 2, 0, 1, 0, 3, 0]  # 13/30 anger
    return [{"text": f"{TEXTS[cycle[i % 30]][i % 2]} #{i + offset}", "label": cycle[i % 30]} for i in range(n)]


def write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def emotion_folder(tmp_path, mapping: str | None = "0\tanger\n1\tjoy\n2\toptimism\n3\tsadness\n"):
    folder = tmp_path / "emotion"
    write_jsonl(folder / "train.jsonl", emotion_rows(60))
    write_jsonl(folder / "val.jsonl", emotion_rows(10, offset=1000))
    write_jsonl(folder / "test.jsonl", [{"text": "TEST ROW", "label": 3}] * 20)
    if mapping is not None:
        (folder / "mapping.txt").write_text(mapping)
    return folder


def inspect(path, split=None, names=None):
    return analyse(read_sample(str(path), 300, split=split), label_names=names)


# -- splits -------------------------------------------------------------------------------


def test_folder_of_split_files_reads_train_only(tmp_path):
    folder = emotion_folder(tmp_path)
    src = inspect(folder)["source"]
    assert src["splits"] == {"train": ["train.jsonl"], "validation": ["val.jsonl"], "test": ["test.jsonl"]}
    assert src["loader"]["split"] == "train" and src["loader"]["data_files"] == [str(folder / "train.jsonl")]
    assert src["rows_sampled"] == 60
    test = inspect(folder, split="test")["source"]
    assert test["loader"]["data_files"] == [str(folder / "test.jsonl")] and test["rows_sampled"] == 20
    assert inspect(folder, split="validation")["source"]["loader"]["data_files"] == [str(folder / "val.jsonl")]
    assert inspect(folder, split="dev")["source"]["loader"]["split"] == "validation"  # dev, val: one split
    with pytest.raises(
        UsageError, match=r"no split 'holdout'; splits found \(by file names\): test, train, validation$"
    ):
        inspect(folder, split="holdout")
    (folder / "train.jsonl").unlink()
    with pytest.raises(UsageError, match="several splits"):
        inspect(folder)


def test_test_split_chosen_by_hand_warns(tmp_path):
    r = run_script("inspect_dataset", str(emotion_folder(tmp_path)), "--split", "test", "--json")
    checks = {c["id"]: c for c in assert_result(r.json, "inspect_dataset", 0)["checks"]}
    assert checks["test-split"]["status"] == "warn" and "spoils the evaluation" in checks["test-split"]["message"]


# -- label names --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, text",
    [
        ("mapping.txt", "0\tanger\n1\tjoy\n2\toptimism\n3\tsadness\n"),
        ("labels.txt", "anger\njoy\noptimism\nsadness\n"),
        ("labels.txt", "index,name\n0,anger\n1,joy\n2,optimism\n3,sadness\n"),
        ("mapping.txt", "anger: 0\njoy: 1\noptimism: 2\nsadness: 3\n"),
        ("label_names.json", json.dumps(NAMES)),
        ("label_names.json", json.dumps({"0": "anger", "1": "joy", "2": "optimism", "3": "sadness"})),
    ],
)
def test_label_map_files(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    assert read_label_map(path) == NAMES


def test_bad_label_maps_are_refused(tmp_path):
    bad = tmp_path / "mapping.txt"
    bad.write_text("0\tanger\n0\tjoy\n")
    with pytest.raises(UsageError):
        read_label_map(bad)
    bad.write_text("0 anger\n2 joy\n")
    with pytest.raises(UsageError, match="do not count"):
        read_label_map(bad)


def test_integer_labels_named_by_the_map_beside_the_data(tmp_path):
    fmt = inspect(emotion_folder(tmp_path))["answer_format"]
    assert fmt["type"] == "class_label" and fmt["label_names"] == NAMES and fmt["label_names_from"] == "mapping.txt"
    dist = fmt["distribution"]
    assert dist["majority"] == "anger" and dist["majority_share"] == pytest.approx(26 / 60, abs=1e-3)
    assert set(dist["counts"]) == set(NAMES)


def test_names_given_on_the_command_line_win(tmp_path):
    folder = emotion_folder(tmp_path, mapping=None)
    fmt = inspect(folder, names=names_given(("a", "b", "c", "d"), None))["answer_format"]
    assert fmt["label_names"] == ["a", "b", "c", "d"] and fmt["label_names_from"] == "--label-names"
    short = inspect(folder, names=(["a", "b"], "--label-names"))["answer_format"]
    assert "label_names" not in short and "names 2 labels" in short["label_names_problem"]


@pytest.mark.parametrize(
    ("given", "agrees"), [("anger,joy,optimism,sadness", True), ("anger,optimism,joy,sadness", False)]
)
def test_label_names_beside_a_parquet_classlabel_are_named_with_it_and_the_classlabel_wins(tmp_path, given, agrees):
    """Issue 52: --label-names was dropped without a word when the Parquet file's ClassLabel names the classes.
    Both lists are named, the ClassLabel wins; two lists that differ are said loudly."""
    datasets = pytest.importorskip("datasets")
    rows = emotion_rows(12)
    features = datasets.Features({"text": datasets.Value("string"), "label": datasets.ClassLabel(names=NAMES)})
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(tmp_path / "train.parquet"))
    r = run_script("inspect_dataset", str(tmp_path / "train.parquet"), "--label-names", given, "--json")
    obj = assert_result(r.json, "inspect_dataset", 0)
    fmt = obj["data"]["answer_format"]
    assert fmt["label_names"] == NAMES and fmt["label_names_from"] == "ClassLabel feature"  # the ClassLabel wins
    assert fmt["label_names_ignored"] == {"names": given.split(","), "from": "--label-names", "agrees": agrees}
    (check,) = [c for c in obj["checks"] if c["id"] == "label-names"]
    theirs = ", ".join(f"{i}={n}" for i, n in enumerate(given.split(",")))
    assert check["status"] == "warn" and theirs in check["message"]
    assert "0=anger, 1=joy, 2=optimism, 3=sadness" in check["message"] and "the ClassLabel wins" in check["message"]
    assert ("DISAGREES" in check["message"]) is not agrees and ("the two lists agree" in check["message"]) is agrees
    assert "--label-names" in check["hint"]


def test_unnamed_integer_labels_warn(tmp_path):
    r = run_script("inspect_dataset", str(emotion_folder(tmp_path, mapping=None)), "--json")
    obj = assert_result(r.json, "inspect_dataset", 0)
    checks = {c["id"]: c for c in obj["checks"]}
    assert checks["label-names"]["status"] == "warn" and "--label-names" in checks["label-names"]["hint"]
    assert obj["data"]["answer_format"]["integer_labels"] is True
    named = run_script("inspect_dataset", str(emotion_folder(tmp_path / "b")), "--label-names", "a,b,c,d", "--json")
    checks = {c["id"]: c for c in assert_result(named.json, "inspect_dataset", 0)["checks"]}
    assert checks["label-names"]["status"] == "pass" and "0=a" in checks["label-names"]["message"]
    bad = run_script("inspect_dataset", str(tmp_path / "b" / "emotion"), "--label-names", "a,a", "--json")
    assert_result(bad.json, "inspect_dataset", 2)


# -- end to end: inspect -> new_env -> test_reward ------------------------------------------


def scaffold(tmp_path, api: str, folder=None, *flags: str) -> tuple[str, dict]:
    folder = folder or emotion_folder(tmp_path)
    report = tmp_path / "inspect.json"
    r = run_script("inspect_dataset", str(folder), *flags, "--json")
    report.write_text(r.stdout)
    made = run_script("new_env", f"emo-{api}", "--from-inspect", str(report), "--api", api, "--path", str(tmp_path))
    assert made.returncode == 0, made
    return str(tmp_path / f"emo_{api}"), r.json


def reward_run(package: str, data, *extra: str):
    return run_script(
        "test_reward",
        package,
        "--env-args",
        json.dumps({"dataset_path": str(data)}),
        "--num-examples",
        "4",
        "--reach-seconds",
        "5",
        *extra,
        "--json",
    )


SPELLINGS = [  # row 0 is anger (id 0): every spelling of it earns 1, the other names 0
    ("\\boxed{\\text{anger}}", 1.0),
    ("\\boxed{anger.}", 1.0),
    ("\\boxed{Anger}", 1.0),
    ("The label is \\boxed{ ANGER }", 1.0),
    ("\\boxed{joy}", 0.0),
    ("\\boxed{0}", 0.0),
]


@pytest.mark.parametrize(
    "api", [pytest.param("v1", marks=pytest.mark.v1), pytest.param("classic", marks=pytest.mark.classic)]
)
def test_integer_labels_with_a_mapping_file_become_names_end_to_end(tmp_path, api):
    package, report = scaffold(tmp_path, api)
    module = (tmp_path / f"emo_{api}" / f"emo_{api}.py").read_text()
    assert 'LABEL_NAMES = ["anger", "joy", "optimism", "sadness"]' in module
    custom = write_jsonl(
        tmp_path / "custom.jsonl", [{"example_id": 0, "completion": c, "expected": e} for c, e in SPELLINGS]
    )
    proc = reward_run(package, tmp_path / "emotion" / "train.jsonl", "--custom", str(custom))
    obj = assert_result(proc.json, "test_reward")
    failed = [(c["id"], c["message"]) for c in obj["checks"] if c["status"] == "fail"]
    assert proc.returncode == 0, failed
    assert obj["data"]["probes"]["answer_kind"] == "label"
    assert obj["data"]["probes"]["labels"] == {"labels": NAMES, "from": "prompt"}
    checks = {c["id"]: c["status"] for c in obj["checks"]}
    assert checks.get("validate") == ("pass" if api == "v1" else None)  # classic has no validate()


# -- test_reward on broken label spaces and planted reward bugs (v1: the label checks are generation-free) --

REWARD_LINE = "        given = given_label(trace.last_reply)\n"
RETURN_LINE = "        return 1.0 if given and given == normalise(self.data.answer) else 0.0\n"
PLANTS = {
    # plant: (text replaced, replacement, the check that must fail)
    "case_sensitive": (
        REWARD_LINE + RETURN_LINE,
        '        given = (vf.extract_boxed_answer(trace.last_reply or "", strict=True) or "").strip()\n'
        "        return 1.0 if given == self.data.answer else 0.0\n",
        "label_forms",
    ),
    "partial_credit": (
        RETURN_LINE,
        "        if given and given == normalise(self.data.answer):\n"
        "            return 1.0\n"
        "        return 0.5 if given in {normalise(x) for x in self.data.labels} else 0.0\n",
        "label_others",
    ),
    "first_box": (
        REWARD_LINE,
        '        given = normalise((re.findall(r"\\\\boxed\\{([^{}]*)\\}", trace.last_reply or "") or [""])[0])\n',
        "label_hacks",
    ),
    "no_label_list": (
        "The allowed labels are: {labels}. Think briefly, then give exactly one of these labels",
        "Think briefly, then give exactly one label",
        "label_prompt",
    ),
}


def failed_checks(obj) -> dict[str, str]:
    return {c["id"]: c["message"] for c in obj["checks"] if c["status"] == "fail"}


@pytest.mark.v1
@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_each_label_plant_fails_its_check(tmp_path, plant):
    package, _ = scaffold(tmp_path, "v1")
    module = tmp_path / "emo_v1" / "emo_v1.py"
    old, new, check = PLANTS[plant]
    text = module.read_text()
    assert old in text
    module.write_text(text.replace(old, new))
    proc = reward_run(package, tmp_path / "emotion" / "train.jsonl")
    failed = failed_checks(assert_result(proc.json, "test_reward", 1))
    assert check in failed, failed


@pytest.mark.v1
def test_names_offered_with_digit_golds_fail(tmp_path):
    """The issue's case: the template's labels option set to the names on data whose golds stay digits."""
    package, _ = scaffold(tmp_path, "v1", emotion_folder(tmp_path, mapping=None))
    data = tmp_path / "emotion" / "train.jsonl"
    proc = run_script(
        "test_reward",
        package,
        "--env-args",
        json.dumps({"dataset_path": str(data), "labels": NAMES}),
        "--num-examples",
        "4",
        "--reach-seconds",
        "5",
        "--json",
    )
    obj = assert_result(proc.json, "test_reward", 1)
    failed = failed_checks(obj)
    assert "label_golds" in failed and "example_id 0 has gold '0'" in failed["label_golds"], failed
    assert "anger, joy, optimism, sadness" in failed["label_golds"]
    assert "validate() rejects 4/4" in failed["validate"] and obj["data"]["validate"]["rejected"][:3] == [0, 1, 2]


@pytest.mark.v1
def test_digit_labels_are_labels_not_numbers(tmp_path):
    """Unnamed digit labels offered as they are: probed with the other labels, never as numbers."""
    package, report = scaffold(tmp_path, "v1", emotion_folder(tmp_path, mapping=None))
    assert report["data"]["answer_format"]["integer_labels"] is True
    proc = reward_run(package, tmp_path / "emotion" / "train.jsonl")
    obj = assert_result(proc.json, "test_reward", 0)
    probes = obj["data"]["probes"]
    assert probes["answer_kind"] == "label" and probes["labels"]["labels"] == ["0", "1", "2", "3"]
    ids = {p["probe"] for p in probes["by_probe"]}
    assert not any(i.startswith(("near_miss", "number_form")) for i in ids) and "label_other:1" in ids
    assert not any("math" in c.get("hint", "") for c in obj["checks"] if c["status"] != "pass")


# -- check_reward_distribution: one answer everywhere, and the majority class ----------------


def eval_run(folder, rows_per_example=4, examples=30, answer_of=None):
    """A classic vf-eval results.jsonl on the emotion labels (13/30 anger), every rollout answering answer_of(ex, k)."""
    golds = [NAMES[r["label"]] for r in emotion_rows(examples)]
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for ex, gold in enumerate(golds):
        for k in range(rows_per_example):
            said = answer_of(ex, k)
            lines.append(
                {
                    "example_id": ex,
                    "prompt": [{"role": "user", "content": f"text {ex}"}],
                    "completion": [{"role": "assistant", "content": f"Thinking.\n\\boxed{{{said}}}"}],
                    "answer": gold,
                    "reward": 1.0 if said == gold else 0.0,
                    "metrics": {"correct_label": 1.0 if said == gold else 0.0},
                    "correct_label": 1.0 if said == gold else 0.0,
                }
            )
    write_jsonl(folder / "results.jsonl", lines)
    return folder


def check(folder, *extra):
    r = run_script("check_reward_distribution", "--results", str(folder), *extra, "--json")
    return r.json, {c["id"]: c for c in r.json["checks"]}


def test_a_constant_answer_on_a_43_percent_majority_warns(tmp_path):
    obj, checks = check(eval_run(tmp_path / "run", answer_of=lambda ex, k: "anger"))
    assert checks["majority_class"]["status"] == "warn", checks.keys()
    assert "'anger'" in checks["majority_class"]["message"] and "0.43" in checks["majority_class"]["message"]
    assert checks["same_answers"]["status"] == "warn" and "30/30 groups" in checks["same_answers"]["message"]
    assert obj["next_steps"][0].startswith("the model answers 'anger' in 100% of rollouts")
    assert obj["data"]["answers"]["majority_share"] == pytest.approx(13 / 30, abs=1e-3)


def test_a_model_that_varies_raises_neither_warning(tmp_path):
    golds = [NAMES[r["label"]] for r in emotion_rows(30)]
    # right on 3 of 4 rollouts, a different wrong label on the 4th: a solve rate of 0.75, far from 0.43
    run = eval_run(
        tmp_path / "run", answer_of=lambda ex, k: golds[ex] if k else NAMES[(NAMES.index(golds[ex]) + 1) % 4]
    )
    obj, checks = check(run)
    assert "majority_class" not in checks and "same_answers" not in checks
    assert obj["data"]["answers"]["same_answer_groups"] == 0
    _, checks = check(run, "--majority-margin", "0.4")  # the margin is the Thresholds one, and an option
    assert checks["majority_class"]["status"] == "warn"
    # every rollout right: all agree, but that is a too-easy run (its own verdict), not one answer for every input
    _, checks = check(eval_run(tmp_path / "easy", answer_of=lambda ex, k: golds[ex]))
    assert "same_answers" not in checks and "majority_class" not in checks


def v1_trace(trace_id, prompt, content, agent, score):
    """One v1 trace: the prompt (not sampled), one sampled reply, and its reward."""
    nodes = [
        {"message": {"role": "user", "content": prompt}, "sampled": False, "token_ids": [1, 2]},
        {"message": {"role": "assistant", "content": content}, "sampled": True, "token_ids": [3]},
    ]
    rewards = {"correct_label": {"score": score, "weight": 1.0}}
    return {"id": trace_id, "agent": agent, "nodes": nodes, "rewards": rewards}


def v1_eval_run(folder, rows_per_example=4, examples=30, answer_of=None):
    """A v1 vf-eval traces.jsonl on the same labels: one episode per rollout, grouped by task key, gold in
    task.data.answer; each episode also holds a frozen judge's trace answering something else (never read)."""
    golds = [NAMES[r["label"]] for r in emotion_rows(examples)]
    folder.mkdir(parents=True, exist_ok=True)
    episodes = []
    for ex, gold in enumerate(golds):
        task = {"type": "Task", "key": f"task-{ex:03d}", "data": {"idx": ex, "prompt": f"text {ex}", "answer": gold}}
        for k in range(rows_per_example):
            said = answer_of(ex, k)
            policy = v1_trace(
                f"{ex}-{k}",
                f"text {ex}",
                f"Thinking.\n<answer>{said}</answer>",
                {"name": "policy"},
                1.0 * (said == gold),
            )
            judge = v1_trace(
                f"{ex}-{k}-j", "judge", f"\\boxed{{verdict {k}}}", {"name": "judge", "trainable": False}, 0.0
            )
            episodes.append({"id": f"ep-{ex}-{k}", "task": task, "ok": True, "traces": [policy, judge]})
    write_jsonl(folder / "traces.jsonl", episodes)
    return folder


@pytest.mark.parametrize("constant", [True, False])
def test_v1_traces_are_read_for_answers_too(tmp_path, constant):
    golds = [NAMES[r["label"]] for r in emotion_rows(30)]
    if constant:
        answer_of = lambda ex, k: "anger"  # noqa: E731
    else:  # right on 3 of 4 rollouts, a different wrong label on the 4th
        answer_of = lambda ex, k: golds[ex] if k else NAMES[(NAMES.index(golds[ex]) + 1) % 4]  # noqa: E731
    obj, checks = check(v1_eval_run(tmp_path / "run", answer_of=answer_of))
    answers = obj["data"]["answers"]
    assert answers["rollouts"] == 120 and answers["groups"] == 30, answers  # the judge's traces are not read
    assert answers["majority_class"] == "anger" and answers["majority_share"] == pytest.approx(13 / 30, abs=1e-3)
    if constant:
        assert checks["same_answers"]["status"] == "warn" and "30/30 groups" in checks["same_answers"]["message"]
        assert checks["majority_class"]["status"] == "warn"
    else:
        assert answers["same_answer_groups"] == 0
        assert "same_answers" not in checks and "majority_class" not in checks


def test_real_v1_traces_give_their_answers(real_data):
    from vlab.evals.answers import read_answers
    from vlab.evals.source import V1_TRACES, locate

    run = real_data / "verifiers-evals" / "v0.4.0-vf-eval--demo-taskset"
    source = locate(run)
    assert source.shape == V1_TRACES
    answers = read_answers(source)
    # 4 traces over 2 tasks, every completion "<answer>5</answer>"
    assert (answers.rollouts, answers.groups, answers.same_answer_groups) == (4, 2, 2)
    assert answers.top_answer == "5" and answers.top_answer_share == 1.0


def test_the_evaluation_guide_quotes_the_answer_thresholds_from_their_one_home():
    import re

    from conftest import SKILL_ROOT

    from vlab.evals.verdicts import Thresholds

    t = Thresholds()
    text = " ".join((SKILL_ROOT / "references" / "evaluation-guide.md").read_text().split())
    m = re.search(r"same answer in (\d+)% of groups or more", text)
    assert m and int(m.group(1)) / 100 == t.same_answer_groups
    m = re.search(r"a solve rate within ([0-9.]+) of the majority class's share", text)
    assert m and float(m.group(1)) == t.majority_margin


HAND_WRITTEN = """
import re

import verifiers as vf
from datasets import load_dataset

NAMES = ["anger", "joy", "optimism", "sadness"]


def load_environment(dataset_path: str = "train.jsonl") -> vf.Environment:
    dataset = load_dataset("json", data_files=dataset_path, split="train")
    dataset = dataset.map(lambda r: {"question": r["text"], "answer": NAMES[r["label"]]}, remove_columns=["text", "label"])

    def last_label(completion, answer, **kwargs) -> float:
        text = completion[-1]["content"] if isinstance(completion, list) else completion
        lines = [ln for ln in (text or "").splitlines() if ln.strip()]
        m = re.fullmatch(r"\\s*Label:\\s*(.+?)\\s*", lines[-1]) if lines else None
        return 1.0 if m and m.group(1).lower() == answer.lower() else 0.0

    system = "Classify the tweet's emotion. Labels: anger, joy, optimism, sadness. End with the line 'Label: <your answer>'"
    return vf.SingleTurnEnv(dataset=dataset, system_prompt=system, rubric=vf.Rubric(funcs=[last_label]))
"""


@pytest.mark.classic
def test_a_sound_hand_written_label_reward_passes(tmp_path):
    """A last-line regex reward (case-insensitive, whole line): no false alarm from the label probes."""
    env = tmp_path / "tweet_env.py"
    env.write_text(HAND_WRITTEN)
    folder = emotion_folder(tmp_path)
    proc = reward_run(str(env), folder / "train.jsonl")
    obj = assert_result(proc.json, "test_reward")
    checks = {c["id"]: c["status"] for c in obj["checks"]}
    assert proc.returncode == 0, failed_checks(obj)
    assert obj["data"]["probes"]["answer_kind"] == "label"
    assert checks["label_others"] == checks["label_hacks"] == checks["label_golds"] == "pass"
    assert checks["label_forms"] == "warn"  # 'anger.' is not read as anger: a warning, not a failure


# -- validate() that needs a runtime: run the way vf-validate --runtime.type subprocess runs it ------------

VALIDATE_IN_RUNTIME = '''    async def setup(self, trace, runtime) -> None:
        await runtime.write("labels.txt", "\\n".join(normalise(x) for x in self.data.labels).encode())

    async def validate(self, runtime) -> bool:
        """Checked by a program in the runtime, against the file setup wrote there."""
        import sys

        program = "import sys; sys.exit(0 if sys.argv[1] in open('labels.txt').read().split() else 3)"
        done = await runtime.run([sys.executable, "-c", program, normalise(self.data.answer)], {})
        return done.exit_code == 0
'''
TEMPLATE_VALIDATE = '''    async def validate(self, runtime) -> bool:
        """The reference label must be one of the allowed labels the prompt lists."""
        return normalise(self.data.answer) in {normalise(label) for label in self.data.labels}
'''


@pytest.mark.v1
@pytest.mark.parametrize("offered", ["names", "names_without_anger"])
def test_a_validate_that_needs_the_runtime_really_runs(tmp_path, offered):
    """setup writes a file in the runtime, validate runs a program there: accepted rows pass (exit 0);
    golds outside the offered labels are rejected by name (exit 1), never a 'needs a runtime' warning."""
    package, _ = scaffold(tmp_path, "v1")
    module = tmp_path / "emo_v1" / "emo_v1.py"
    text = module.read_text()
    assert TEMPLATE_VALIDATE in text
    module.write_text(text.replace(TEMPLATE_VALIDATE, VALIDATE_IN_RUNTIME))
    args = {"dataset_path": str(tmp_path / "emotion" / "train.jsonl")}
    if offered == "names_without_anger":
        args["labels"] = NAMES[1:]  # the anger rows' golds are offered nowhere
    proc = run_script(
        "test_reward", package, "--env-args", json.dumps(args), "--num-examples", "8", "--reach-seconds", "5", "--json"
    )
    obj = assert_result(proc.json)
    checks = {c["id"]: c for c in obj["checks"]}
    if offered == "names":
        assert proc.returncode == 0, failed_checks(obj)
        assert checks["validate"]["status"] == "pass" and "accepts all 8 checked rows" in checks["validate"]["message"]
        assert obj["data"]["validate"] == {"rows": 8, "rejected": [], "errors": 0}
    else:
        assert proc.returncode == 1
        anger = [i for i, row in enumerate(emotion_rows(8)) if row["label"] == 0]
        assert anger and obj["data"]["validate"]["rejected"] == anger and obj["data"]["validate"]["errors"] == 0
        assert checks["validate"]["status"] == "fail" and f"rejects {len(anger)}/8" in checks["validate"]["message"]


@pytest.mark.v1
def test_a_task_that_needs_a_container_is_a_warning_not_a_rejection(tmp_path):
    package, _ = scaffold(tmp_path, "v1")
    module = tmp_path / "emo_v1" / "emo_v1.py"
    text = module.read_text()
    module.write_text(text.replace(TEMPLATE_VALIDATE, "    NEEDS_CONTAINER = True\n\n" + TEMPLATE_VALIDATE))
    proc = run_script(
        "test_reward",
        package,
        "--env-args",
        json.dumps({"dataset_path": str(tmp_path / "emotion" / "train.jsonl")}),
        "--num-examples",
        "4",
        "--reach-seconds",
        "5",
        "--json",
    )
    obj = assert_result(proc.json)
    check = {c["id"]: c for c in obj["checks"]}["validate"]
    assert check["status"] == "warn" and "needs a container runtime" in check["message"]
    assert obj["data"]["validate"]["rejected"] == [] and obj["data"]["validate"]["errors"] == 4


# -- the environment's label names against the data's own label map (issue 38) ---------------------------

NAMED = 'LABEL_NAMES = ["anger", "joy", "optimism", "sadness"]'
SWAPPED = 'LABEL_NAMES = ["anger", "optimism", "joy", "sadness"]'  # joy and optimism swapped


@pytest.mark.parametrize(
    "api", [pytest.param("v1", marks=pytest.mark.v1), pytest.param("classic", marks=pytest.mark.classic)]
)
@pytest.mark.parametrize("swapped", [False, True], ids=["as_mapped", "two_swapped"])
def test_label_names_are_checked_against_the_mapping_beside_the_data(tmp_path, api, swapped):
    """new_env's LABEL_NAMES agree with mapping.txt: label_map passes (exit 0). Two names swapped in the module:
    every joy and optimism row trains on the other's label and no probe sees it; label_map fails naming the two
    labels, the share of the file's rows with a wrong gold and the LABEL_NAMES to write (exit 1)."""
    package, _ = scaffold(tmp_path, api)
    module = tmp_path / f"emo_{api}" / f"emo_{api}.py"
    if swapped:
        module.write_text(module.read_text().replace(NAMED, SWAPPED))
    proc = reward_run(package, tmp_path / "emotion" / "train.jsonl")
    obj = assert_result(proc.json, "test_reward", 1 if swapped else 0)
    checks = {c["id"]: c for c in obj["checks"]}
    if not swapped:
        assert checks["label_map"]["status"] == "pass", failed_checks(obj)
        assert "as mapping.txt beside the data does (0=anger, 1=joy, 2=optimism" in checks["label_map"]["message"]
        return
    assert set(failed_checks(obj)) == {"label_map"}, failed_checks(obj)  # every other check is blind to it
    message, hint = checks["label_map"]["message"], checks["label_map"]["hint"]
    assert "the environment's golds disagree with mapping.txt beside the data" in message
    assert (
        "'joy' and 'optimism' are swapped (id 1 is 'joy' in mapping.txt, the environment's gold for it is " in message
    )
    wrong = sum(1 for row in emotion_rows(60) if row["label"] in (1, 2))
    assert f"{wrong}/60 rows of train.jsonl ({wrong / 60:.0%}) have the wrong gold" in message, message
    assert f"set LABEL_NAMES in {module}" in hint and NAMED in hint, hint


@pytest.mark.v1
def test_bare_class_ids_next_to_a_mapping_warn(tmp_path):
    """LABEL_NAMES emptied while mapping.txt names the ids: the golds are codes; a warning naming the map's names."""
    package, _ = scaffold(tmp_path, "v1")
    module = tmp_path / "emo_v1" / "emo_v1.py"
    module.write_text(module.read_text().replace(NAMED, "LABEL_NAMES = None"))
    proc = reward_run(package, tmp_path / "emotion" / "train.jsonl")
    check = {c["id"]: c for c in assert_result(proc.json, "test_reward", 0)["checks"]}["label_map"]
    assert check["status"] == "warn" and "the golds are the bare class ids of train.jsonl's 'label'" in check["message"]
    assert "mapping.txt beside the data names them (0=anger, 1=joy, 2=optimism)" in check["message"]
    assert NAMED in check["hint"]


def label_rows(golds: list[str], texts: list[str], system: str):
    from vlab.env import Row

    return [
        Row(i, [{"role": "system", "content": system}, {"role": "user", "content": t}], g, t)
        for i, (g, t) in enumerate(zip(golds, texts))
    ]


def test_a_classlabel_the_golds_follow_against_a_mapping_that_disagrees(tmp_path):
    """Golds named by the Parquet file's ClassLabel, a mapping.txt beside it naming two ids the other way round:
    the data's own maps disagree, and the hint says so (not LABEL_NAMES)."""
    datasets = pytest.importorskip("datasets")
    from vlab.core.result import Result
    from vlab.kinds.label.label_map import check_label_map

    rows = emotion_rows(12)
    features = datasets.Features({"text": datasets.Value("string"), "label": datasets.ClassLabel(names=NAMES)})
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(tmp_path / "train.parquet"))
    (tmp_path / "mapping.txt").write_text("0 anger\n1 optimism\n2 joy\n3 sadness\n")
    scope = label_rows([NAMES[r["label"]] for r in rows], [r["text"] for r in rows], "Labels: anger, joy.")
    result = Result("test_reward")
    check_label_map(
        result,
        scope,
        {r.index: r.answer for r in scope},
        {"dataset_path": str(tmp_path / "train.parquet")},
        str(tmp_path / "nowhere"),
    )
    check = result.checks[0]
    assert check.id == "label_map" and check.status == "fail", check
    assert "'optimism' and 'joy' are swapped" in check.message and "rows of train.parquet" in check.message
    assert "the golds follow the ClassLabel names train.parquet stores for 'label'" in check.hint


# -- label_prompt names the labels a prompt leaves out ----------------------------------------------------

LABEL_LIST = "The allowed labels are: {labels}. Think briefly, then give exactly one of these labels"


@pytest.mark.v1
def test_a_prompt_naming_three_of_four_labels_names_the_fourth(tmp_path):
    """The prompt names anger, joy and sadness in prose: label_prompt fails naming optimism (exit 1)."""
    package, _ = scaffold(tmp_path, "v1")
    module = tmp_path / "emo_v1" / "emo_v1.py"
    module.write_text(
        module.read_text().replace(
            LABEL_LIST, "Say whether it shows anger, joy or sadness. Think briefly, then give exactly one label"
        )
    )
    proc = reward_run(package, tmp_path / "emotion" / "train.jsonl")
    failed = failed_checks(assert_result(proc.json, "test_reward", 1))
    assert (
        "4/4 prompts do not list the allowed labels (they name 'anger', 'joy', 'sadness' but leave out 'optimism')"
        in failed["label_prompt"]
    ), failed


@pytest.mark.v1
def test_a_label_list_without_one_class_names_it(tmp_path):
    """The labels argument leaves anger out: label_prompt names 'anger' and how many golds it is (exit 1)."""
    package, _ = scaffold(tmp_path, "v1")
    data = tmp_path / "emotion" / "train.jsonl"
    proc = run_script(
        "test_reward",
        package,
        "--env-args",
        json.dumps({"dataset_path": str(data), "labels": NAMES[1:]}),
        "--num-examples",
        "4",
        "--reach-seconds",
        "5",
        "--json",
    )
    failed = failed_checks(assert_result(proc.json, "test_reward", 1))
    assert (
        "4/4 prompts list labels but leave out 'anger' (the gold of 2 rows), so a model is never offered it"
        in failed["label_prompt"]
    ), failed
    assert "label_golds" in failed


def test_a_row_id_column_is_not_read_as_the_class_ids(tmp_path):
    """An integer id column beside the class column (named 'emotion'), four checked rows of four classes: the
    ids the golds follow are the class column's, and the correct mapping passes."""
    from vlab.core.result import Result
    from vlab.kinds.label.label_map import check_label_map

    cycle = [0, 1, 2, 3, 0, 0, 1, 2, 3, 0, 1, 3]
    rows = [{"id": i, "tweet": f"{TEXTS[c][i % 2]} #{i}", "emotion": c} for i, c in enumerate(cycle)]
    data = write_jsonl(tmp_path / "train.jsonl", rows)
    (tmp_path / "mapping.txt").write_text("0\tanger\n1\tjoy\n2\toptimism\n3\tsadness\n")
    scope = label_rows([NAMES[c] for c in cycle[:4]], [r["tweet"] for r in rows[:4]], "Labels: anger, joy.")
    result = Result("test_reward")
    check_label_map(result, scope, {r.index: r.answer for r in scope}, {"dataset_path": str(data)}, str(tmp_path))
    assert [(c.id, c.status) for c in result.checks] == [("label_map", "pass")], result.checks
