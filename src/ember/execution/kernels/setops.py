"""DISTINCT, INTERSECT [ALL] and EXCEPT [ALL] over row codes from :mod:`.keys`.

All operate on int64 row codes in which equal codes mean "null-safe equal rows" and return row
indices (into the left input), in input order, so callers ``take`` the result.
"""

from __future__ import annotations

import numpy as np


def first_occurrences(codes: np.ndarray) -> np.ndarray:
    """Indices of the first row of each distinct code, in input order."""
    if len(codes) == 0:
        return np.zeros(0, dtype=np.int64)
    _, first = np.unique(codes, return_index=True)
    first.sort()
    return first.astype(np.int64, copy=False)


def occurrence_rank(codes: np.ndarray) -> np.ndarray:
    """For each row, how many earlier rows have the same code (0 for the first one)."""
    n = len(codes)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    boundary = np.ones(n, dtype=bool)
    boundary[1:] = sorted_codes[1:] != sorted_codes[:-1]
    group_start = np.maximum.accumulate(np.where(boundary, np.arange(n), 0))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - group_start
    return rank


def _counts_in(codes: np.ndarray, of: np.ndarray) -> np.ndarray:
    """For each element of ``codes``, how many times it occurs in ``of``."""
    if len(of) == 0:
        return np.zeros(len(codes), dtype=np.int64)
    uniq, cnt = np.unique(of, return_counts=True)
    pos = np.searchsorted(uniq, codes)
    pos_c = np.minimum(pos, len(uniq) - 1)
    found = uniq[pos_c] == codes
    return np.where(found, cnt[pos_c], 0)


def intersect_distinct(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    firsts = first_occurrences(left)
    return firsts[np.isin(left[firsts], right)]


def except_distinct(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    firsts = first_occurrences(left)
    return firsts[~np.isin(left[firsts], right)]


def intersect_all(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Each left row kept while its occurrence rank < min(count_left, count_right)."""
    keep = occurrence_rank(left) < _counts_in(left, right)
    return np.nonzero(keep)[0].astype(np.int64, copy=False)


def except_all(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Each code kept count_left - count_right times (the last copies, any copies are equal)."""
    keep = occurrence_rank(left) >= _counts_in(left, right)
    return np.nonzero(keep)[0].astype(np.int64, copy=False)
