"""Vectorized row hashing for hash partitioning in the local runtime.

``hash_columns(arrays)`` gives one uint64 per row such that rows with equal keys (Spark's
equality: every NaN equal, ``-0.0 == 0.0``, NULL equal to NULL for placement purposes) get equal
hashes, *independently of the batch they are in* -- both sides of a shuffled join and every map
task of an exchange agree on where a key goes.  The function is Ember's own (Spark uses Murmur3;
which rows share a partition is not observable in results).

Per type: integers, dates, times and timestamps hash their value widened to int64; floats their
canonicalised float64 bits; decimals their unscaled words; strings and binaries a polynomial hash
of their bytes (computed for all rows at once with ``numpy.add.reduceat``); structs and lists
combine their children's hashes.  Each column hash is finished with the splitmix64 mixer.

``partition_ids(arrays, n)`` (the shuffle exchange's target of each row) takes a cheaper route:
each key column becomes one uint64 *word* per row -- integers, dates, times, timestamps and
durations their value widened to int64 (read straight from the Arrow buffer, so an ``int`` and a
``bigint`` key of equal value agree), booleans 0/1, floats their canonicalised float64 bits,
NULL a fixed word, every other type its :func:`hash_columns` column hash -- the words are folded
with a multiplicative (Fibonacci) hash, and the target is the high 32 bits scaled to
``[0, n)`` (a multiply and a shift instead of a 64-bit modulo).  Equal keys get equal targets, as
hash placement needs (both sides of a co-partitioned join go through this same function); the
targets are not Spark's Murmur3 ones, which nothing observes.  The grace partitioning of
spilling hash joins (``joins/spill.py``) uses :func:`hash_columns`, so its buckets stay
independent of the exchange's targets.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.errors import UnsupportedError
from ember.execution.kernels.batches import plain_array
from ember.execution.kernels.keys import canonicalize_floats

__all__ = ["hash_columns", "partition_ids"]

_NULL_HASH = np.uint64(0x2545F4914F6CDD1D)
_PRIME = np.uint64(0x100000001B3)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_POWERS = np.ones(1, dtype=np.uint64)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer (wrapping uint64 arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def _powers(n: int) -> np.ndarray:
    global _POWERS
    if len(_POWERS) < n:
        p = np.full(max(n, 2 * len(_POWERS)), _PRIME, dtype=np.uint64)
        p[0] = 1
        _POWERS = np.cumprod(p, dtype=np.uint64)  # wraps modulo 2**64
    return _POWERS[:n]


def _valid(arr: pa.Array) -> np.ndarray | None:
    if arr.null_count == 0:
        return None
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _bytes_hash(arr: pa.Array) -> np.ndarray:
    """Polynomial hash of each value's bytes (string/binary, 32- or 64-bit offsets)."""
    n = len(arr)
    if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type):
        off_type = np.int64
    else:
        off_type = np.int32
    bufs = arr.buffers()
    offs = np.frombuffer(bufs[1], dtype=off_type)[arr.offset: arr.offset + n + 1].astype(np.int64)
    lengths = np.diff(offs)
    out = np.zeros(n, dtype=np.uint64)
    total = int(offs[-1] - offs[0]) if n else 0
    if total:
        data = np.frombuffer(bufs[2], dtype=np.uint8)[offs[0]: offs[-1]].astype(np.uint64)
        starts = offs[:-1] - offs[0]
        pos = np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)
        contrib = (data + np.uint64(1)) * _powers(int(lengths.max()))[pos]
        nz = lengths > 0
        out[nz] = np.add.reduceat(contrib, starts[nz])
    return out ^ lengths.astype(np.uint64)


def _column_hash(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    arr = plain_array(arr)
    t = arr.type
    n = len(arr)
    if pa.types.is_null(t):
        return np.full(n, _NULL_HASH, dtype=np.uint64)
    valid = _valid(arr)
    if pa.types.is_boolean(t):
        h = np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False)).astype(np.uint64)
    elif (pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_time(t)
          or pa.types.is_timestamp(t) or pa.types.is_duration(t)):
        if not pa.types.is_integer(t):
            width = 64 if t.bit_width == 64 else 32
            arr = arr.view(pa.int64() if width == 64 else pa.int32())
        v = arr.fill_null(0) if valid is not None else arr
        h = np.asarray(v.to_numpy(zero_copy_only=False)).astype(np.int64).view(np.uint64)
    elif pa.types.is_floating(t):
        v = canonicalize_floats(arr.cast(pa.float64()))
        if valid is not None:
            v = v.fill_null(0.0)
        h = np.asarray(v.to_numpy(zero_copy_only=False), dtype=np.float64).view(np.uint64)
    elif pa.types.is_decimal(t) or pa.types.is_fixed_size_binary(t):
        width = t.byte_width
        raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8)[
            arr.offset * width: (arr.offset + n) * width]
        if width % 8 == 0:
            words = raw.view(np.uint64).reshape(n, width // 8)
        else:
            words = raw.astype(np.uint64).reshape(n, width)
        h = np.zeros(n, dtype=np.uint64)
        for j in range(words.shape[1]):
            h = _mix(h * _PRIME + words[:, j])
    elif (pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t)
          or pa.types.is_large_binary(t)):
        h = _bytes_hash(arr)
    elif pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        target = pa.large_string() if pa.types.is_string_view(t) else pa.large_binary()
        return _column_hash(arr.cast(target))
    elif pa.types.is_struct(t):
        h = np.full(n, np.uint64(t.num_fields), dtype=np.uint64)
        for i in range(t.num_fields):
            h = _mix(h * _PRIME + _column_hash(arr.field(i)))
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        flat = pc.list_flatten(arr)
        parents = np.asarray(pc.list_parent_indices(arr).to_numpy(zero_copy_only=False),
                             dtype=np.int64)
        lengths = np.asarray(pc.fill_null(pc.list_value_length(arr), 0)
                             .to_numpy(zero_copy_only=False), dtype=np.int64)
        h = lengths.astype(np.uint64)
        if len(flat):
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            pos = np.arange(len(flat), dtype=np.int64) - starts[parents]
            elem = _mix(_column_hash(flat) ^ (pos.astype(np.uint64) * _M1))
            np.add.at(h, parents, elem)
    else:
        raise UnsupportedError(f"Hash partitioning by values of type {t} is not supported yet")
    h = _mix(h)
    if valid is not None:
        h = np.where(valid, h, _NULL_HASH)
    return h


def hash_columns(arrays: Sequence[pa.Array]) -> np.ndarray:
    """One uint64 hash per row of the key columns ``arrays`` (see module docstring)."""
    if not arrays:
        raise ValueError("hash_columns needs at least one column")
    h: np.ndarray | None = None
    for a in arrays:
        c = _column_hash(a)
        h = c if h is None else _mix(h * _PRIME + c)
    assert h is not None
    return h


_K1 = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio (Fibonacci hashing)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)
_SHIFT32 = np.uint64(32)
_INT_WORDS = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def _fixed_values(arr: pa.Array, dtype) -> np.ndarray:
    """The value buffer of a fixed-width array as numpy (zero-copy; NULL slots hold junk)."""
    n = len(arr)
    return np.frombuffer(arr.buffers()[1], dtype=dtype)[arr.offset: arr.offset + n]


def fixed_width_words(arr: pa.Array) -> np.ndarray | None:
    """One uint64 per row of a fixed-width column (integers, dates, times, timestamps,
    durations, floats after canonicalization, booleans), equal exactly for equal values; NULL
    slots hold junk; None for other types.  May be a read-only view of ``arr``'s buffer."""
    arr = plain_array(arr)
    t = arr.type
    if (pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_time(t)
            or pa.types.is_timestamp(t) or pa.types.is_duration(t)):
        v = _fixed_values(arr, _INT_WORDS[t.bit_width])
        if pa.types.is_unsigned_integer(t):
            v = v.view(np.dtype(v.dtype.str.replace("i", "u")))
        return v.astype(np.int64, copy=False).view(np.uint64)
    if pa.types.is_floating(t):
        v = canonicalize_floats(arr.cast(pa.float64()))
        return _fixed_values(v, np.float64).view(np.uint64)
    if pa.types.is_boolean(t):
        v = pc.fill_null(arr, False) if arr.null_count else arr
        return np.asarray(v.to_numpy(zero_copy_only=False)).astype(np.uint64)
    return None


def _column_word(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """One uint64 per row, equal for equal values of the column (see the module docstring);
    may be a read-only view of ``arr``'s buffer."""
    arr = plain_array(arr)
    w = fixed_width_words(arr)
    if w is None:
        return _column_hash(arr)
    valid = _valid(arr)
    if valid is not None:
        w = np.where(valid, w, _NULL_HASH)
    return w


def partition_ids(arrays: Sequence[pa.Array], num_partitions: int) -> np.ndarray:
    """Target partition (int64 in ``[0, num_partitions)``) of each row (see the module
    docstring: equal keys, under Spark's equality, get equal targets in every batch)."""
    if not arrays:
        raise ValueError("partition_ids needs at least one column")
    n = len(arrays[0])
    if num_partitions == 1:
        return np.zeros(n, dtype=np.int64)
    h: np.ndarray | None = None
    for a in arrays:
        w = _column_word(a)
        if h is None:
            h = w * _K1  # a new array: the words may be read-only buffer views
        else:
            h ^= w
            h *= _K1
    assert h is not None
    h ^= h >> _SHIFT32
    h *= _K2
    h >>= _SHIFT32
    h *= np.uint64(num_partitions)  # < 2**32 * num_partitions: no overflow below 2**32 targets
    h >>= _SHIFT32
    return h.view(np.int64)
