"""What a reader hands back: the first rows of a dataset plus what it learned on the way."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT_SAMPLE = 300
# A JSON Lines row (or a CSV field) larger than this is reported, not read: one
# enormous line must not cost memory proportional to the file.
MAX_LINE_BYTES = 16 * 1024 * 1024
# Malformed rows are tolerated (reported) up to this share of the rows read.
MAX_MALFORMED_SHARE = 0.10
MAX_MALFORMED_LISTED = 10


@dataclass
class Problem:
    """A row that could not be read: where and why."""

    where: str  # "line 12", "row 40", "record 3"
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"where": self.where, "reason": self.reason}


@dataclass
class Sample:
    """The first rows of a dataset, read without loading the whole of it."""

    source: str
    kind: str  # jsonl | json | csv | tsv | parquet | arrow | save_to_disk | hub | folder | problem_folders
    rows: list[dict[str, Any]]
    columns: list[str]
    # datasets.Features when the source declares them (parquet written by datasets,
    # save_to_disk folders, hub datasets); None otherwise.
    features: Any = None
    total_rows: int | None = None  # when known without reading everything
    bytes_total: int | None = None
    units_read: int = 0  # lines / rows / records looked at to fill the sample
    problems: list[Problem] = field(default_factory=list)
    problem_count: int = 0
    # How to load the same data with `datasets` in a generated environment.
    loader: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # A folder of split files (train.jsonl, val.jsonl, test.jsonl): split -> its files; the loader reads one.
    splits: dict[str, list[str]] = field(default_factory=dict)
    splits_from: str = ""  # where the split list came from: file names, README.md configs, the Hub

    def add_problem(self, where: str, reason: str) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_MALFORMED_LISTED:
            self.problems.append(Problem(where, reason))

    @property
    def problem_share(self) -> float:
        return self.problem_count / self.units_read if self.units_read else 0.0
