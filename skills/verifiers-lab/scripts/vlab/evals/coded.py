"""Float columns stored as codes into their distinct values (``CodedColumn``), numpy views of array
columns (``as_numpy``), and the keys-to-codes helpers: the storage of ``columns.Columns``."""

from __future__ import annotations

import itertools
import math
import struct
from array import array
from typing import Any

import numpy as np


def as_numpy(a: array | CodedColumn, dtype) -> np.ndarray:
    """A numpy view of an array column (an empty array of ``dtype`` for an empty column); a coded
    column's values, decoded (a new float64 array)."""
    if isinstance(a, CodedColumn):
        return a.decode()
    return np.frombuffer(a, dtype=dtype) if len(a) else np.zeros(0, dtype=dtype)


_FLOAT, _BITS = struct.Struct("<d"), struct.Struct("<q")


class CodedColumn:
    """A float column stored as codes into its distinct values (keyed by their bits, so -0.0 and each
    NaN stay what they were): 1 byte a row while at most 256 values are distinct, 2 bytes up to 65,536,
    and the plain 8-byte floats beyond. Scores and metrics are nearly always a few discrete values."""

    __slots__ = ("bits", "index", "codes")

    def __init__(self) -> None:
        self.bits: list[int] = []  # the distinct values' bit patterns, by code (None once plain)
        self.index: dict[int, int] = {}
        self.codes = array("B")

    def __len__(self) -> int:
        return len(self.codes)

    def __iter__(self):
        return iter(self.decode().tolist())

    @property
    def plain(self) -> bool:
        return self.codes.typecode == "d"

    def _widen(self) -> None:
        if len(self.bits) > 65536:
            self.codes = array("d", self.decode().tobytes())
            self.bits, self.index = [], {}
        elif len(self.bits) > 256 and self.codes.typecode == "B":
            self.codes = array("H", self.codes)

    def _lut(self, bits: np.ndarray) -> np.ndarray:
        """The codes of these distinct bit patterns, adding the new ones."""
        index = self.index
        out = np.empty(len(bits), dtype=np.int64)
        for i, b in enumerate(bits.tolist()):
            code = index.get(b)
            if code is None:
                code = index[b] = len(self.bits)
                self.bits.append(b)
            out[i] = code
        return out

    def extend_values(self, values: np.ndarray) -> None:
        """Append float64 values."""
        if not len(values):
            return
        if self.plain:
            self.codes.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
            return
        uniq, inverse = np.unique(np.ascontiguousarray(values, dtype=np.float64).view(np.int64), return_inverse=True)
        codes = self._lut(uniq)[inverse.reshape(-1)]
        self._widen()
        if self.plain:
            self.codes.frombytes(np.ascontiguousarray(values, dtype=np.float64).tobytes())
            return
        self.codes.frombytes(codes.astype(self._dtype()).tobytes())

    def extend(self, values) -> None:
        self.extend_values(np.asarray(values, dtype=np.float64) if not isinstance(values, np.ndarray) else values)

    def append(self, value: float) -> None:
        if self.plain:
            self.codes.append(value)
            return
        bits = _BITS.unpack(_FLOAT.pack(value))[0]
        code = self.index.get(bits)
        if code is None:
            code = self.index[bits] = len(self.bits)
            self.bits.append(bits)
            self._widen()
            if self.plain:
                self.codes.append(value)
                return
        self.codes.append(code)

    def fill_nan(self, m: int) -> None:
        self.extend_values(np.full(m, math.nan))

    def extend_column(self, other: CodedColumn) -> None:
        if other.plain or self.plain:
            self.extend_values(other.decode())
            return
        lut = self._lut(np.array(other.bits, dtype=np.int64))
        self._widen()
        if self.plain:
            self.extend_values(other.decode())
            return
        self.codes.frombytes(lut[other._view()].astype(self._dtype()).tobytes())

    def decode(self) -> np.ndarray:
        """The values as a new float64 array."""
        if not len(self.codes):
            return np.zeros(0, dtype=np.float64)
        if self.plain:
            return np.frombuffer(self.codes, dtype=np.float64).copy()
        return self._table()[self._view()]

    def head(self, m: int) -> np.ndarray:
        """The first ``m`` values, decoded."""
        if not len(self.codes):
            return np.zeros(0, dtype=np.float64)
        if self.plain:
            return np.frombuffer(self.codes, dtype=np.float64)[:m].copy()
        return self._table()[self._view()[:m]]

    def decode_range(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start`` to ``stop``, decoded."""
        if self.plain:
            return np.frombuffer(self.codes, dtype=np.float64)[start:stop].copy()
        return self._table()[self._view()[start:stop]] if stop > start else np.zeros(0, dtype=np.float64)

    def keep(self, mask: np.ndarray) -> None:
        """Keep only the rows where ``mask`` is true (the distinct values stay known)."""
        view = np.frombuffer(self.codes, dtype=np.float64) if self.plain else self._view()
        self.codes = array(self.codes.typecode, view[mask].tobytes())

    def _dtype(self):
        return np.uint8 if self.codes.typecode == "B" else np.uint16

    def _view(self) -> np.ndarray:
        return np.frombuffer(self.codes, dtype=self._dtype()) if len(self.codes) else np.zeros(0, self._dtype())

    def _table(self) -> np.ndarray:
        return np.array(self.bits, dtype=np.int64).view(np.float64)

    @classmethod
    def nans(cls, m: int) -> CodedColumn:
        col = cls()
        col.fill_nan(m)
        return col


def hashes_of(codes: dict[Any, int], known: np.ndarray, hash_keys) -> np.ndarray:
    """The sampling hashes of every key of ``codes`` by code: ``known`` for the first, new ones (codes are given
    in insertion order) hashed by ``hash_keys``."""
    if len(codes) <= known.size:
        return known
    return np.concatenate([known, hash_keys(list(itertools.islice(codes, known.size, None)))])


def recode(col: array, codes: dict[Any, int]) -> tuple[array, dict[Any, int], np.ndarray]:
    """Codes of the held rows renumbered 0..k-1 in their first order (-1 stays: no prompt); the keys still held,
    and which old codes were."""
    values = np.frombuffer(col, dtype=np.dtype(col.typecode)).astype(np.int64)
    used = np.zeros(len(codes), dtype=bool)
    used[values[values >= 0]] = True
    remap = np.cumsum(used) - 1
    new = np.where(values >= 0, remap[np.maximum(values, 0)], -1)
    kept_codes = {key: int(remap[code]) for key, code in codes.items() if used[code]}
    return array(col.typecode, new.astype(np.dtype(col.typecode)).tobytes()), kept_codes, used


def codes(codes: dict[Any, int], keys: list) -> list[int]:
    """Each key's code, new keys coded in first-seen order (``setdefault`` row by row, but one look a distinct key)."""
    new = [key for key in dict.fromkeys(keys) if key not in codes]
    if new:
        codes.update(zip(new, range(len(codes), len(codes) + len(new))))
    return list(map(codes.__getitem__, keys))


def extend_named(cols: dict[str, CodedColumn], columns: dict[str, list], n0: int, m: int) -> None:
    """Append a batch's ``m`` rows of named columns (NaN for a column the batch lacks; a new one NaN before)."""
    for name, col in cols.items():
        values = columns.get(name)
        if values is not None:
            col.extend(values)
        else:
            col.fill_nan(m)
    for name, values in columns.items():
        if name not in cols:
            col = cols[name] = CodedColumn.nans(n0)
            col.extend(values)


def append_named(cols: dict[str, CodedColumn], values: dict[str, float], n: int) -> None:
    for name, col in cols.items():
        col.append(values.get(name, math.nan))
    if len(values) > len(cols) or any(name not in cols for name in values):
        for name, value in values.items():
            if name not in cols:
                col = cols[name] = CodedColumn.nans(n)
                col.append(value)
