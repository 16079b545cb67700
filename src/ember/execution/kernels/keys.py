"""Encoding of key columns into dense int64 codes.

Joins, DISTINCT and the set operations compare rows by value.  Rather than hashing rows one at a
time, the key columns of all rows involved (e.g. both join sides) are encoded *jointly* into
int64 codes, so that two rows have the same code iff their keys are equal under Spark's rules:

- floating point values are canonicalised first: every NaN equals every other NaN and ``-0.0``
  equals ``0.0`` (Spark's NormalizeFloatingNumbers);
- struct values compare field by field, NULL fields being equal to each other;
- with ``nulls_equal=False`` (``=`` join keys) a row with a NULL in any key column gets code -1
  and never matches anything; with ``nulls_equal=True`` (``<=>``, DISTINCT, INTERSECT, EXCEPT)
  NULL is one more value.

Codes are dense-ish: each column is dictionary-encoded (hash based, via ``pyarrow.compute``), then
columns are combined as mixed-radix numbers, re-densified with ``numpy.unique`` whenever the radix
product would overflow int64.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.errors import UnsupportedError
from ember.execution.kernels.batches import make_batch, plain_array

_MAX_CARD = 1 << 62


def is_encodable(t: pa.DataType) -> bool:
    """Whether :func:`encode_columns` supports columns of Arrow type ``t``."""
    if pa.types.is_struct(t):
        return all(is_encodable(f.type) for f in t)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return is_encodable(t.value_type)
    if pa.types.is_map(t):
        return False
    if pa.types.is_dictionary(t):
        return is_encodable(t.value_type)
    return True


def canonicalize_floats(arr: pa.Array) -> pa.Array:
    """``arr`` with every NaN replaced by one canonical NaN and ``-0.0`` by ``0.0``
    (non-float arrays are returned unchanged)."""
    t = arr.type
    if not pa.types.is_floating(t):
        return arr
    # x + 0.0 turns -0.0 into 0.0 and keeps everything else (incl. NaN, inf) as is.
    out = pc.add(arr, pa.scalar(0.0, type=t))
    nan = pc.is_nan(out)
    if pc.any(nan).as_py():
        out = pc.if_else(nan, pa.scalar(float("nan"), type=t), out)
    return out


def _densify(codes: np.ndarray) -> tuple[np.ndarray, int]:
    uniq, inv = np.unique(codes, return_inverse=True)
    return inv.astype(np.int64, copy=False).reshape(-1), len(uniq)


def _column_codes(arr: pa.Array) -> tuple[np.ndarray, int]:
    """Codes in ``[0, n)`` for the values of one column, -1 for NULL; returns ``(codes, n)``."""
    arr = plain_array(arr)
    t = arr.type
    length = len(arr)
    if pa.types.is_null(t):
        return np.full(length, -1, dtype=np.int64), 0
    if pa.types.is_struct(t):
        # Fields compare with NULL == NULL inside a struct; only a NULL struct itself is NULL.
        fields = [arr.field(i) for i in range(t.num_fields)]
        if fields:
            codes, n = encode_arrays(fields, nulls_equal=True)
        else:
            codes, n = np.zeros(length, dtype=np.int64), 1
        if arr.null_count:
            valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
            codes = np.where(valid, codes, -1)
        return codes, n
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _list_codes(arr)
    if not is_encodable(t):
        raise UnsupportedError(f"Comparing values of type {t} by equality is not supported yet")
    if pa.types.is_integer(t):
        small = _small_range_codes(arr)
        if small is not None:
            return small
    if pa.types.is_floating(t):
        arr = canonicalize_floats(arr)
    enc = pc.dictionary_encode(arr, null_encoding="mask")
    idx = enc.indices
    if idx.null_count:
        idx = pc.fill_null(idx, -1)
    return idx.to_numpy(zero_copy_only=False).astype(np.int64, copy=False), len(enc.dictionary)


def _small_range_codes(arr: pa.Array) -> tuple[np.ndarray, int] | None:
    """Integer columns whose values span a range of at most ``4 * len`` values are coded as
    ``value - min`` directly (no hashing); ``None`` for other columns."""
    length = len(arr)
    if length == 0 or arr.null_count == length:
        return None
    mm = pc.min_max(arr)
    lo, hi = mm["min"].as_py(), mm["max"].as_py()
    if hi - lo >= max(4 * length, 1 << 16):
        return None
    v = (arr if arr.null_count == 0 else pc.fill_null(arr, lo)).to_numpy(zero_copy_only=False)
    codes = (v - v.dtype.type(lo)).astype(np.int64, copy=False)  # own type: no overflow
    if arr.null_count:
        codes[~np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)] = -1
    return codes, hi - lo + 1


def _list_codes(arr: pa.Array) -> tuple[np.ndarray, int]:
    """Arrays compare element-wise (NULL elements equal each other): encode the elements, then
    dictionary-encode each list's sequence of element codes viewed as a binary string."""
    length = len(arr)
    lengths = pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False)
    offsets = np.zeros(length + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    values = arr.flatten()
    if len(values):
        elem, _ = encode_arrays([values], nulls_equal=True)
    else:
        elem = np.zeros(0, dtype=np.int64)
    data = np.ascontiguousarray(elem, dtype=np.int64)
    blobs = pa.Array.from_buffers(
        pa.large_binary(), length,
        [None, pa.py_buffer(offsets * 8), pa.py_buffer(data.tobytes())],
    )
    enc = pc.dictionary_encode(blobs)
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    if arr.null_count:
        valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        codes = np.where(valid, codes, -1)
    return codes, len(enc.dictionary)


def encode_arrays(arrays: Sequence[pa.Array], *, nulls_equal: bool) -> tuple[np.ndarray, int]:
    """Jointly encode equally long key columns into one int64 code per row.

    Returns ``(codes, cardinality_bound)``: equal codes <=> equal keys; with ``nulls_equal=False``
    rows with any NULL key get -1.
    """
    if not arrays:
        raise ValueError("encode_arrays needs at least one column")
    combined: np.ndarray | None = None
    card = 1
    any_null: np.ndarray | None = None
    for a in arrays:
        c, n = _column_codes(a)
        # Only a NULL (at the top level) gets a negative code.
        has_null = a.null_count > 0 or pa.types.is_null(a.type)
        if nulls_equal:
            if has_null:
                c = np.where(c < 0, n, c)
            n += 1
        elif has_null:
            neg = c < 0
            any_null = neg if any_null is None else any_null | neg
            c = np.where(neg, 0, c)
        n = max(n, 1)
        if combined is None:
            combined, card = c, n  # the first column: no combining needed
            continue
        if card * n >= _MAX_CARD:
            combined, card = _densify(combined)
        combined = combined * n + c
        card *= n
    assert combined is not None
    if any_null is not None and any_null.any():
        combined[any_null] = -1
    return combined, card


def unify_types(left: pa.Array, right: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Cast two arrays to one Arrow type (the analyzer normally already did; this is a guard)."""
    if left.type == right.type:
        return left, right
    try:
        return left, right.cast(left.type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return left.cast(right.type), right


def encode_sides(
    left_cols: Sequence[pa.Array],
    right_cols: Sequence[pa.Array],
    null_safe: Sequence[bool] | bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Encode the key columns of two relations jointly: ``(left_codes, right_codes)``.

    ``null_safe[i]`` says whether key ``i`` compares with ``<=>`` (NULL equals NULL) or ``=``
    (a NULL makes the row's code -1, matching nothing).
    """
    if isinstance(null_safe, bool):
        null_safe = [null_safe] * len(left_cols)
    n_left = len(left_cols[0]) if left_cols else 0
    strict: list[pa.Array] = []
    safe: list[pa.Array] = []
    for lc, rc, ns in zip(left_cols, right_cols, null_safe):
        if isinstance(lc, pa.ChunkedArray):
            lc = lc.combine_chunks()
        if isinstance(rc, pa.ChunkedArray):
            rc = rc.combine_chunks()
        lc, rc = unify_types(lc, rc)
        (safe if ns else strict).append(pa.concat_arrays([lc, rc]))
    parts: list[np.ndarray] = []
    cards: list[int] = []
    if strict:
        c, n = encode_arrays(strict, nulls_equal=False)
        parts.append(c)
        cards.append(n)
    if safe:
        c, n = encode_arrays(safe, nulls_equal=True)
        parts.append(c)
        cards.append(n)
    if len(parts) == 1:
        codes = parts[0]
    else:
        strict_codes, safe_codes = parts
        if cards[0] * cards[1] >= _MAX_CARD:
            safe_codes, cards[1] = _densify(safe_codes)
            if cards[0] * cards[1] >= _MAX_CARD:
                nn = strict_codes >= 0
                dense, cards[0] = _densify(strict_codes[nn])
                strict_codes = strict_codes.copy()
                strict_codes[nn] = dense
        codes = np.where(strict_codes < 0, -1, strict_codes * cards[1] + safe_codes)
    return codes[:n_left], codes[n_left:]


def normalize_float_columns(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with its float columns' -0.0 as 0.0 and one NaN: Spark de-duplicates through an
    aggregate over normalised keys (NormalizeFloatingNumbers), so DISTINCT/INTERSECT/EXCEPT
    output the normalised values."""
    if not any(pa.types.is_floating(f.type) for f in batch.schema):
        return batch
    cols = [canonicalize_floats(c) for c in batch.columns]
    return make_batch(cols, batch.schema, batch.num_rows)
