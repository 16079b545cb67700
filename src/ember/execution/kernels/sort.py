"""Sorting with Spark's ordering rules, on top of ``pyarrow.compute.sort_indices``.

Spark orders NULLs per the sort order's NULLS FIRST/LAST, NaN above every other number (including
+Infinity) and ``-0.0`` equal to ``0.0``.  Arrow places NaN together with NULLs, so each key is
expanded into up to three NULL-free columns sorted lexicographically:

1. a NULL rank (0/1 chosen so NULLs come first or last, whatever the direction),
2. for floating point keys, a NaN rank sorted in the key's direction (NaN is the greatest value),
3. the value itself, with -0.0 canonicalised to 0.0 and NULL/NaN filled (ties are broken by the
   previous columns anyway).

Struct keys are expanded field by field (a NULL struct is ranked by its own NULL rank first).
``sort_indices`` is stable, so equal keys keep their input order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.errors import UnsupportedError


def _expand_key(
    arr: pa.Array, ascending: bool, nulls_first: bool, out: list[tuple[pa.Array, str]]
) -> None:
    direction = "ascending" if ascending else "descending"
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.cast(t.value_type)
        t = arr.type
    if pa.types.is_null(t):
        return
    if arr.null_count:
        is_null = arr.is_null()
        # rank 0 sorts first (ascending on the rank column).
        rank = pc.cast(pc.invert(is_null) if nulls_first else is_null, pa.int8())
        out.append((rank, "ascending"))
    if pa.types.is_struct(t):
        for i in range(t.num_fields):
            # Spark compares struct fields ascending with NULLs first inside a struct, flipped as a
            # whole for DESC.
            _expand_key(arr.field(i), ascending, ascending, out)
        return
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        raise UnsupportedError(f"Sorting by values of type {t} is not supported yet")
    if pa.types.is_floating(t):
        nan = pc.fill_null(pc.is_nan(arr), False)
        if pc.any(nan).as_py():
            out.append((pc.cast(nan, pa.int8()), direction))
            arr = pc.if_else(nan, pa.scalar(0.0, type=t), arr)
        arr = pc.add(arr, pa.scalar(0.0, type=t))  # -0.0 -> 0.0
    out.append((arr, direction))


def sort_indices(
    keys: Sequence[pa.Array], ascending: Sequence[bool], nulls_first: Sequence[bool]
) -> np.ndarray:
    """Stable permutation (int64 numpy array) ordering rows by ``keys`` with Spark's rules."""
    cols: list[tuple[pa.Array, str]] = []
    for k, asc, nf in zip(keys, ascending, nulls_first):
        _expand_key(k, asc, nf, cols)
    if not keys:
        return np.zeros(0, dtype=np.int64)
    n = len(keys[0])
    if not cols:
        return np.arange(n, dtype=np.int64)
    names = [f"k{i}" for i in range(len(cols))]
    table = pa.table([c for c, _ in cols], names=names)
    idx = pc.sort_indices(
        table, sort_keys=[(name, d) for name, (_, d) in zip(names, cols)]
    )
    return idx.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
