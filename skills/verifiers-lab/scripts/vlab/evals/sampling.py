"""Which examples stay in memory when a results file holds more rollouts than ``Columns``' row budget.

An example is kept when the low ``shift`` bits of a hash of its prompt (or id) are zero: every rollout of a kept
example is kept (its group's figures stay exact), a rate of 1 in 2**shift, and raising the shift keeps
a subset of what was kept, so parts read in separate processes agree. A row whose prompt the reader
fingerprints (``fields.prompt_key``; every shape but verifiers 0.3's, whose ids are sound) hashes by it, so that a
prompt's rollouts stay together also where the ids do not identify prompts (Python salts that hash per process:
two runs of such a file may keep different examples); one without by its id
(an integer by value through splitmix64, any other by its text through blake2b), one with neither by its row
key. ``Sample`` says in the JSON what was kept and which figures it gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

DEFAULT_ROW_BUDGET = 1_000_000  # ~60 MB of columns (about 60 bytes a rollout at the analysis' peak)
MAX_SHIFT = 62
_MASK64 = (1 << 64) - 1


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser over uint64 values (wrapping arithmetic): well-spread low bits."""
    x = x.astype(np.uint64, copy=True)
    x += np.uint64(0x9E3779B97F4A7C15)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


def int_hashes(ids: np.ndarray) -> np.ndarray:
    """The hashes of integer ids (int32 or int64 values, read as their 64-bit two's complement)."""
    return mix64(ids.astype(np.int64, copy=False).view(np.uint64))


def key_hashes(keys: list[Any]) -> np.ndarray:
    """The hashes of interned ids: an integer as ``int_hashes`` hashes it, anything else by its text."""
    from hashlib import blake2b  # only for ids that are not integers (OpenSSL's import costs every run otherwise)

    out = np.empty(len(keys), dtype=np.uint64)
    ints = [i for i, k in enumerate(keys) if type(k) is int]
    if ints:
        out[ints] = mix64(np.array([keys[i] & _MASK64 for i in ints], dtype=np.uint64))
    for i, k in enumerate(keys):
        if type(k) is not int:
            text = k if isinstance(k, str) else repr(k)
            digest = blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
            out[i] = int.from_bytes(digest, "little")
    return out


def kept(hashes: np.ndarray, shift: int) -> np.ndarray:
    """The rows whose example is kept at a rate of 1 in 2**shift."""
    if shift <= 0:
        return np.ones(hashes.size, dtype=bool)
    return (hashes & np.uint64((1 << shift) - 1)) == 0


def settle_shift(hashes: np.ndarray, shift: int, target: int) -> tuple[int, np.ndarray, bool]:
    """The smallest shift (from ``shift``) that keeps at most ``target`` rows, its mask, and whether rows had to be
    cut: when a few examples hold more than ``target`` rows a higher shift keeps nothing, so the first ``target``
    rows of the last non-empty sample are kept instead."""
    mask = kept(hashes, shift)
    while np.count_nonzero(mask) > target and shift < MAX_SHIFT:
        higher = kept(hashes, shift + 1)
        if not higher.any():
            break
        shift, mask = shift + 1, higher
    cut = int(np.count_nonzero(mask)) > target
    if cut:
        mask &= np.cumsum(mask) <= target
    return shift, mask, cut


@dataclass(frozen=True)
class Sample:
    """What the group figures were computed from when the file held more rollouts than the row budget."""

    row_budget: int
    rollouts: int  # every rollout read
    rollouts_kept: int
    examples_kept: int
    shift: int
    cut: bool  # a few examples held more rollouts than the budget: the first rows of the sample were kept

    def to_data(self) -> dict[str, Any]:
        return {
            "why": f"more rollouts than --max-rollouts-in-memory ({self.row_budget:,}): the group figures come from "
            "a sample of whole examples",
            "rollouts_read": self.rollouts,
            "rollouts_kept": self.rollouts_kept,
            "examples_kept": self.examples_kept,
            "rate": f"1/{1 << self.shift}",
            "chosen_by": "a hash of the prompt (without one: of the example id; without either: of the row); "
            "every rollout of a kept prompt"
            + ("; then the first rollouts, as a few examples hold most rows" if self.cut else ""),
            "exact_over_every_rollout": [
                "counts, but examples and duplicate_rows: estimated, rollouts_read x their number per kept rollout",
                "count, mean, std, min, max, binary and share_nonzero of reward and of each function",
                "solve_rate",
                "generation_failed_share",
                "reward_without_failed",
                "empty_completion_reward",
            ],
            "from_the_sample": [
                "quantiles, histogram counts and distinct_values",
                "weights (when inferred)",
                "groups",
                "pass_rate_per_example",
                "recommendations",
            ],
        }
