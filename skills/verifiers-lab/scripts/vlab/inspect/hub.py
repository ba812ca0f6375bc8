"""Sample a Hugging Face Hub dataset: bounded time, streaming, clear verdicts.

"unreachable" (network, timeout, offline without a cached copy) is an external
failure, exit 4; "no such dataset / config / split" is bad input, exit 2; a
gated dataset without a token is a missing prerequisite, exit 3. Several
configs and none chosen: list them and stop, never pick one silently.
"""

from __future__ import annotations

import itertools
import os
import re
import threading
from collections.abc import Callable
from typing import Any

from vlab.core.files import looks_local
from vlab.core.hfhub import NETWORK_ERRORS, switched_on
from vlab.core.result import ExternalError, PrerequisiteError, UsageError
from vlab.inspect.sample import Sample

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[A-Za-z0-9][\w.\-]*)?$")


def looks_like_hub_id(source: str) -> bool:
    """owner/name or name, and nothing written like a local path (``core.files.looks_local``: an existing path, a
    data file suffix, more than one ``/``, a first segment that is a folder here), so a mistyped local path is
    named as missing (exit 2), never looked up on the Hub."""
    return bool(HUB_ID.match(source)) and not looks_local(source)


def offline() -> bool:
    return switched_on("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


def bounded(fn: Callable[[], Any], timeout: float, what: str) -> Any:
    """Run ``fn`` with a deadline; a daemon thread so a hung request cannot hold the process at exit."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as err:  # re-raised in the caller's thread
            box["error"] = err

    thread = threading.Thread(target=target, name=f"hub:{what}", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise ExternalError(
            f"Hugging Face Hub unreachable: {what} took longer than {timeout:g}s",
            hint="check the network (or HF_ENDPOINT), raise --timeout, or use a local copy",
        )
    if "error" in box:
        raise box["error"]
    return box.get("value")


# -- the calls (thin, so tests can replace them) ---------------------------------------


def _dataset_info(repo_id: str, timeout: float) -> Any:
    from huggingface_hub import HfApi

    return HfApi().dataset_info(repo_id, timeout=timeout)


def _config_names(repo_id: str) -> list[str]:
    import datasets

    return list(datasets.get_dataset_config_names(repo_id))


def _split_names(repo_id: str, config: str | None) -> list[str]:
    import datasets

    return list(datasets.get_dataset_split_names(repo_id, config))


def _first_rows(
    repo_id: str, config: str | None, split: str, n: int, streaming: bool
) -> tuple[list[dict], Any, int | None]:
    """(rows, features, total rows if known). Streaming reads only the first rows;
    offline, the cached copy is memory-mapped and only ``n`` rows are materialised."""
    import datasets

    if streaming:
        # An IterableDataset imports torch (seconds) only to share an epoch counter with
        # DataLoader workers; reading a few rows needs none of that.
        torch_available, datasets.config.TORCH_AVAILABLE = datasets.config.TORCH_AVAILABLE, False
        try:
            ds = datasets.load_dataset(repo_id, config, split=split, streaming=True)
            return [dict(r) for r in itertools.islice(ds, n)], ds.features, None
        finally:
            datasets.config.TORCH_AVAILABLE = torch_available
    ds = datasets.load_dataset(repo_id, config, split=split)
    return ds.select(range(min(n, len(ds)))).to_list(), ds.features, len(ds)


# -- the flow ---------------------------------------------------------------------------


def read_hub(
    repo_id: str, n: int, config: str | None = None, split: str | None = None, timeout: float = 30.0
) -> Sample:
    # huggingface_hub reads these at import: make every request give up within the deadline.
    os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", str(max(1, int(timeout))))
    os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", str(max(1, int(timeout))))
    is_offline = offline()
    notes = []
    try:
        if is_offline:
            notes.append("offline (HF_HUB_OFFLINE/HF_DATASETS_OFFLINE): read from the local cache")
        else:
            bounded(lambda: _dataset_info(repo_id, timeout), timeout, f"looking up {repo_id}")
        configs = bounded(lambda: _config_names(repo_id), timeout, f"listing the configs of {repo_id}")
        config = choose_config(repo_id, configs, config)
        splits = bounded(lambda: _split_names(repo_id, config), timeout, f"listing the splits of {repo_id}")
        split = _choose_split(repo_id, splits, split)
        rows, features, total = bounded(
            lambda: _first_rows(repo_id, config, split, n, not is_offline),
            timeout,
            f"reading the first {n} rows of {repo_id}",
        )
    except Exception as err:
        raise classify(err, repo_id, is_offline) from None
    sample = Sample(
        repo_id,
        "hub",
        rows,
        list(features) if features else _columns(rows),
        features=features,
        total_rows=total,
        units_read=len(rows),
        loader={"hub": repo_id, "config": config, "split": split},
        splits={name: [] for name in splits},
        splits_from="the Hub's split list",
    )
    sample.notes.extend(notes + [f"config {config!r}" if config else "default config", f"split {split!r}"])
    if not rows:
        raise UsageError(f"{repo_id} (split {split!r}) has no rows")
    return sample


def _columns(rows: list[dict]) -> list[str]:
    return list(dict.fromkeys(k for r in rows for k in r))


def choose_config(repo_id: str, configs: list[str], config: str | None) -> str | None:
    if config:
        if configs and config not in configs:
            raise UsageError(
                f"{repo_id} has no config {config!r}; configs: {', '.join(configs)}",
                hint="pass --config with one of them",
            )
        return config
    if len(configs) > 1:
        raise UsageError(
            f"{repo_id} has {len(configs)} configs and none was chosen: {', '.join(configs)}",
            hint=f"pass --config {configs[0]} (or another); the tool never picks one silently",
        )
    return configs[0] if configs else None


def _choose_split(repo_id: str, splits: list[str], split: str | None) -> str:
    if split:
        if splits and split not in splits:
            raise UsageError(
                f"{repo_id} has no split {split!r}; splits: {', '.join(splits)}", hint="pass --split with one of them"
            )
        return split
    if "train" in splits or not splits:
        return "train"
    if len(splits) == 1:
        return splits[0]
    raise UsageError(
        f"{repo_id} has several splits ({', '.join(splits)}) and no --split was given",
        hint=f"pass --split {splits[0]} (or another)",
    )


def classify(err: BaseException, repo_id: str, is_offline: bool) -> Exception:
    """Turn a hub / datasets exception into the right ToolError."""
    if isinstance(err, (UsageError, ExternalError, PrerequisiteError)):
        return err
    names = {c.__name__ for c in type(err).__mro__}
    text = str(err).split("\n")[0][:300]
    status = getattr(getattr(err, "response", None), "status_code", None)
    if "GatedRepoError" in names or status in (401, 403) and "RepositoryNotFoundError" not in names:
        return PrerequisiteError(
            f"{repo_id} is gated or private: {text}",
            hint="accept its terms on huggingface.co and set HF_TOKEN (or run `hf auth login`)",
        )
    if is_offline and (names & NETWORK_ERRORS or "DatasetNotFoundError" in names or "FileNotFoundError" in names):
        return ExternalError(
            f"{repo_id} is not in the local cache and hub access is off (HF_HUB_OFFLINE/HF_DATASETS_OFFLINE)",
            hint="unset HF_HUB_OFFLINE and HF_DATASETS_OFFLINE, or download the dataset first",
        )
    if (
        names
        & {
            "RepositoryNotFoundError",
            "DatasetNotFoundError",
            "HFValidationError",
            "DataFilesNotFoundError",
            "RevisionNotFoundError",
        }
        or status == 404
    ):
        return UsageError(
            f"no such dataset on the Hugging Face Hub: {repo_id} ({text})",
            hint="check the id (owner/name) on huggingface.co, or pass a local path",
        )
    if names & NETWORK_ERRORS or (status is not None and status >= 500):
        return ExternalError(
            f"Hugging Face Hub unreachable while reading {repo_id}: {text}",
            hint="check the network (or HF_ENDPOINT) and retry; --timeout bounds the wait",
        )
    if isinstance(err, ValueError) and re.search(r"config|split", text, re.I):
        return UsageError(f"{repo_id}: {text}", hint="check --config and --split")
    return ExternalError(
        f"reading {repo_id} from the hub failed: {type(err).__name__}: {text}", hint="re-run with --debug for details"
    )
