"""Text classification as a classic verifiers environment.

Each row has a text and its label. The prompt lists the allowed labels; the
model puts exactly one of them in \\boxed{...}. The reward is 1.0 when that label
equals the reference label (case, spaces, punctuation around it and \\text{} ignored:
\\boxed{\\text{joy}}, \\boxed{Joy.} and \\boxed{joy} all give 'joy'), else 0.0. Labels stored
as class indices are turned into names: a `ClassLabel` column's, or LABEL_NAMES (below).

Written for verifiers 0.3.x (`import verifiers as vf`, `load_environment`).
"""

from __future__ import annotations

import re
from pathlib import Path

import verifiers as vf
from datasets import ClassLabel, Dataset, load_dataset

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


def prompt_text(row: dict) -> str:
    """The prompt: TEXT_COLUMN, or its columns joined in order with a blank line."""
    columns = [TEXT_COLUMN] if isinstance(TEXT_COLUMN, str) else list(TEXT_COLUMN)
    return "\n\n".join(str(row[c]) for c in columns if row[c] is not None and str(row[c]).strip())


# Data shipped inside the package travels with it: data/ beside this module (a checkout, pip install -e),
# classic_classification_data/ once installed from a wheel (pyproject.toml maps data/ there, so two packages never share one).
DATA_DIRS = (Path(__file__).resolve().parent / "data", Path(__file__).resolve().parent / "classic_classification_data")
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


def read_dataset(dataset_name: str | None, dataset_config: str | None, split: str, dataset_path: str | None) -> Dataset:
    """A local file if dataset_path is given (.jsonl/.json/.csv/.parquet, the text ones also .gz; see data_file),
    else the Hub dataset dataset_name. Neither is an error: no dataset is ever picked for the user."""
    if dataset_path:
        builder = _BUILDERS.get(Path(Path(dataset_path).name.lower().removesuffix(".gz")).suffix)
        if builder is None:
            raise ValueError(f"dataset_path must end in .jsonl, .json, .csv or .parquet (got {dataset_path!r})")
        return load_dataset(builder, data_files=data_file(dataset_path), split="train")
    if not dataset_name:
        raise ValueError(NO_DATASET)
    return load_dataset(dataset_name, dataset_config, split=split)


def to_rows(dataset: Dataset, num_examples: int) -> Dataset:
    columns = [TEXT_COLUMN] if isinstance(TEXT_COLUMN, str) else list(TEXT_COLUMN)
    missing = [c for c in (*columns, LABEL_COLUMN) if c not in dataset.column_names]
    if missing:
        raise ValueError(f"dataset has no column(s) {missing}; columns are {dataset.column_names}")
    if num_examples > 0:
        dataset = dataset.select(range(min(num_examples, len(dataset))))
    feature = dataset.features[LABEL_COLUMN]
    to_name = feature.int2str if isinstance(feature, ClassLabel) else label_name
    return dataset.map(
        lambda row: {"question": prompt_text(row), "answer": to_name(row[LABEL_COLUMN])},
        remove_columns=dataset.column_names,
    )


def load_environment(
    dataset_name: str | None = None,
    dataset_config: str | None = None,
    dataset_split: str = "train",
    eval_split: str | None = None,
    dataset_path: str | None = None,
    eval_path: str | None = None,
    num_examples: int = -1,
    num_eval_examples: int = -1,
    labels: list[str] | None = None,
) -> vf.Environment:
    """Build the environment. `labels` defaults to LABEL_NAMES, else every label seen in the training rows."""
    dataset = to_rows(read_dataset(dataset_name, dataset_config, dataset_split, dataset_path), num_examples)
    eval_dataset = None
    if eval_path or (eval_split and not dataset_path):
        eval_dataset = to_rows(
            read_dataset(dataset_name, dataset_config, eval_split or dataset_split, eval_path), num_eval_examples
        )
    allowed = allowed_labels(labels, list(dataset["answer"]))
    if len(allowed) < 2:
        raise ValueError(f"classification needs at least 2 labels, found {allowed}")
    system_prompt = SYSTEM_PROMPT_TEMPLATE.format(task=TASK, labels=", ".join(allowed))
    allowed_normalised = {normalise(label) for label in allowed}

    parser = vf.Parser(extract_fn=lambda text: vf.extract_boxed_answer(text, strict=True))

    def correct_label(completion, answer, parser) -> float:
        """1.0 when the boxed label equals the reference label."""
        given = normalise(parser.parse_answer(completion))
        return 1.0 if given and given == normalise(answer) else 0.0

    def allowed_label(completion, parser) -> float:
        """Format signal (weight 0): was the boxed label one of the allowed labels?"""
        return 1.0 if normalise(parser.parse_answer(completion)) in allowed_normalised else 0.0

    rubric = vf.Rubric(funcs=[correct_label, allowed_label], weights=[1.0, 0.0], parser=parser)
    return vf.SingleTurnEnv(
        dataset=dataset, eval_dataset=eval_dataset, system_prompt=system_prompt, parser=parser, rubric=rubric
    )
