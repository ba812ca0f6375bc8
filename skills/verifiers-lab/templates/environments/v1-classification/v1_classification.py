"""Text classification as a verifiers v1 taskset.

Each row has a text and its label. The prompt lists the allowed labels; the model puts
exactly one of them in \\boxed{...}. The reward is 1.0 when that label equals the reference
label (case, spaces, punctuation around it and \\text{} ignored: \\boxed{\\text{joy}}, \\boxed{Joy.}
and \\boxed{joy} all give 'joy'), else 0.0; a metric records whether the boxed label was one of the
allowed ones. Labels stored as class indices are turned into names: a `ClassLabel` column's, or
LABEL_NAMES (below). `validate` checks every reference label is an allowed one, so `vf-validate`
catches a `labels` list that leaves a class out, or digit references next to named labels.

Written for verifiers >= 0.4 (`import verifiers.v1 as vf`): the module exports
exactly one Taskset subclass through `__all__`; there is no `load_environment`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import verifiers.v1 as vf

# Column mapping: the text to classify and its label.
# scripts/new_env.py fills these in from `inspect_dataset --json`.
# TEXT_COLUMN may be a list of columns, joined in order with a blank line.
TEXT_COLUMN = "text"
LABEL_COLUMN = "label"
# Names of integer class ids, in id order (0 -> LABEL_NAMES[0]): the prompt then offers the names and each
# reference answer is a name, never a code the model would have to guess. new_env fills it in from
# inspect_dataset (a mapping.txt / labels.txt / label_names.json beside the data, or --label-names a,b,c).
# None: labels are used as stored (a ClassLabel column's names are used either way).
LABEL_NAMES = None

# What the model is asked: the text alone never says what its labels mean. new_env writes the data's own words
# here (its name, its label column); say what the labels stand for, e.g. "Classify the stance the tweet takes
# towards climate change." The prompt shows no example label: a real one would pull answers towards its class.
TASK = "Classify the text."
SYSTEM_PROMPT_TEMPLATE = (
    "{task} The allowed labels are: {labels}. Think briefly, then give exactly one of these labels inside \\boxed{{}}."
)


def normalise(label: str | None) -> str:
    """The label as compared: \\text{Joy}, 'joy.' and ' JOY ' are all 'joy' (formatting, case, spaces and
    punctuation around the label ignored)."""
    text = _LATEX_TEXT.sub(r"\1", str(label or ""))
    return " ".join(text.split()).strip(_AROUND).casefold()


_LATEX_TEXT = re.compile(r"\\(?:text|textbf|textit|textrm|texttt|mathrm|mathbf|mbox)\s*\{([^{}]*)\}")
_AROUND = " .,;:!?\"'`*_()[]"


def label_name(value) -> str:
    """A stored label as text: an integer class id named by LABEL_NAMES, anything else as it is."""
    text = str(value).strip()
    if LABEL_NAMES and text.isdigit() and int(text) < len(LABEL_NAMES) and LABEL_NAMES[int(text)]:
        return LABEL_NAMES[int(text)]
    return text


# More distinct labels than this, most rows with their own, is no label space but answers (a short-answer task):
# the prompt would list every row's answer.
MAX_LABELS = 50


def allowed_labels(given: list[str] | None, stored: list[str]) -> list[str]:
    """The labels the prompt offers: those given, else LABEL_NAMES in id order, else every label in the rows
    (ValueError where those are no label space: more than MAX_LABELS, most rows with a label of their own)."""
    if given:
        return list(given)
    if LABEL_NAMES:
        return [name for name in LABEL_NAMES if name]
    labels = sorted(set(stored))
    if len(labels) > MAX_LABELS and len(labels) * 2 > len(stored):
        raise ValueError(
            f"{len(labels)} distinct labels in {len(stored)} rows: these are answers, not a label space, and the "
            "prompt would list every one of them; use the short-answer template (new_env --template v1-short-answer "
            "or classic-short-answer), or pass the labels"
        )
    return labels


def given_label(reply: str | None) -> str:
    """The label the reply gives: its last \\boxed{} answer, normalised ('' for none)."""
    return normalise(vf.extract_boxed_answer(reply or "", strict=True))


# The dataset's own id column, when it has one, is the task id (else the row's position).
ID_COLUMNS = ("id", "ID", "task_id", "Id", "uid")


def own_id(row: dict) -> str | None:
    """The row's own id: the first of ID_COLUMNS it has with a value; None when it has none."""
    return next((str(row[c]) for c in ID_COLUMNS if row.get(c) not in (None, "")), None)


def prompt_text(row: dict) -> str:
    """The prompt: TEXT_COLUMN, or its columns joined in order with a blank line."""
    columns = [TEXT_COLUMN] if isinstance(TEXT_COLUMN, str) else list(TEXT_COLUMN)
    return "\n\n".join(str(row[c]) for c in columns if row[c] is not None and str(row[c]).strip())


# Data shipped inside the package travels with it: data/ beside this module (a checkout, pip install -e),
# v1_classification_data/ once installed from a wheel (pyproject.toml maps data/ there, so two packages never share one).
DATA_DIRS = (Path(__file__).resolve().parent / "data", Path(__file__).resolve().parent / "v1_classification_data")
NO_DATASET = (
    "no dataset named: set dataset_path (a .jsonl/.json/.csv/.parquet file; a relative path is also looked up "
    "in the package's data/ folder) or dataset_name (a Hub dataset). This environment never picks one for you."
)
_BUILDERS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet"}


def data_file(path: str) -> str:
    """A dataset file: the path as given (absolute, or relative to the current folder), else the
    same relative path in the package's data folder (data/train.jsonl and train.jsonl both name data/train.jsonl)."""
    given = Path(path).expanduser()
    if given.is_absolute() or given.exists():
        return str(given)
    inside = Path(*given.parts[1:]) if given.parts[:1] == ("data",) and len(given.parts) > 1 else given
    for folder in DATA_DIRS:
        if (folder / inside).is_file():
            return str(folder / inside)
    looked = ", ".join(str(p) for p in (Path.cwd() / given, *(folder / inside for folder in DATA_DIRS)))
    raise FileNotFoundError(f"dataset_path {path!r} not found (looked at {looked})")


def read_rows(config: V1ClassificationConfig) -> list[dict]:
    """Rows as {"prompt", "label"} of a local file if dataset_path is set (.jsonl/.json/.csv/.parquet, text
    ones also .gz; see data_file), else of the Hub dataset dataset_name. Neither is an error: no dataset is
    ever picked for the user."""
    from datasets import ClassLabel, load_dataset  # only needed when tasks are loaded

    if config.dataset_path:
        builder = _BUILDERS.get(Path(Path(config.dataset_path).name.lower().removesuffix(".gz")).suffix)
        if builder is None:
            raise ValueError(f"dataset_path must end in .jsonl, .json, .csv or .parquet (got {config.dataset_path!r})")
        dataset = load_dataset(builder, data_files=data_file(config.dataset_path), split="train")
    elif config.dataset_name:
        dataset = load_dataset(config.dataset_name, config.dataset_config, split=config.dataset_split)
    else:
        raise ValueError(NO_DATASET)
    columns = [TEXT_COLUMN] if isinstance(TEXT_COLUMN, str) else list(TEXT_COLUMN)
    missing = [c for c in (*columns, LABEL_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if config.num_examples > 0:
        dataset = dataset.select(range(min(config.num_examples, len(dataset))))
    feature = dataset.features[LABEL_COLUMN]
    to_name = feature.int2str if isinstance(feature, ClassLabel) else label_name
    return [{"id": own_id(row), "prompt": prompt_text(row), "label": to_name(row[LABEL_COLUMN])} for row in dataset]


class V1ClassificationData(vf.TaskData):
    answer: str
    """The reference label."""
    labels: list[str]
    """The allowed labels, in the order the prompt lists them."""


class V1ClassificationTask(vf.Task[V1ClassificationData]):
    @vf.reward(weight=1.0)
    async def correct_label(self, trace: vf.Trace) -> float:
        """1.0 when the boxed label equals the reference label."""
        given = given_label(trace.last_reply)
        return 1.0 if given and given == normalise(self.data.answer) else 0.0

    @vf.metric
    async def allowed_label(self, trace: vf.Trace) -> float:
        """Was the boxed label one of the allowed labels?"""
        return 1.0 if given_label(trace.last_reply) in {normalise(label) for label in self.data.labels} else 0.0

    async def validate(self, runtime) -> bool:
        """The reference label must be one of the allowed labels the prompt lists."""
        return normalise(self.data.answer) in {normalise(label) for label in self.data.labels}


class V1ClassificationConfig(vf.TasksetConfig):
    dataset_name: str | None = None
    dataset_config: str | None = None
    dataset_split: str = "train"
    dataset_path: str | None = None
    """A .jsonl/.json/.csv/.parquet file (text ones also .gz): a path, or a file in the package's data/ folder;
    wins over dataset_name. Name one of the two: there is no default dataset."""
    num_examples: int = -1
    labels: list[str] | None = None
    """The allowed labels, in the order the prompt lists them (default: LABEL_NAMES, else every label in the rows)."""


class V1ClassificationTaskset(vf.Taskset[V1ClassificationTask, V1ClassificationConfig]):
    def load(self) -> Iterator[V1ClassificationTask]:
        rows = read_rows(self.config)
        allowed = allowed_labels(self.config.labels, [row["label"] for row in rows])
        if len(allowed) < 2:
            raise ValueError(f"classification needs at least 2 labels, found {allowed}")
        system_prompt = SYSTEM_PROMPT_TEMPLATE.format(task=TASK, labels=", ".join(allowed))
        for i, row in enumerate(rows):
            yield V1ClassificationTask(
                V1ClassificationData(
                    id=row["id"] or str(i),
                    prompt=row["prompt"],
                    system_prompt=system_prompt,
                    answer=row["label"],
                    labels=allowed,
                ),
                self.config.task,
            )


__all__ = ["V1ClassificationTaskset"]
