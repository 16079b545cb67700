"""Vectorized row hashing for hash partitioning in the local runtime.

``hash_columns(arrays)`` gives one uint64 per row such that rows with equal keys (Spark's
equality: every NaN equal, ``-0.0 == 0.0``, NULL equal to NULL for placement purposes) get equal
hashes, *independently of the batch they are in* -- both sides of a shuffled join and every map
task of an exchange agree on where a key goes.  The function is Ember's own (Spark uses Murmur3;
which rows share a partition is not observable in results).

Per type: integers, dates, times and timestamps hash their value widened to int64; floats their
canonicalised float64 bits; decimals their unscaled words; structs and lists combine their
children's hashes.  Strings and binaries (32- or 64-bit offsets alike) are hashed *a word at a
time*: starting from the value's length, each round folds the next 8 bytes of every value still
that long -- one little-endian word assembled from two aligned uint64 reads of the data buffer
(zero-copy when Arrow's buffer is 8-byte aligned and padded, else a padded copy), bytes past the
value's end zeroed -- with ``h = (h ^ w) * K; h ^= h >> 29``.  Rows are processed in chunks of
about 256 KiB of string data (kept in the L2 cache across rounds); within a chunk the rows are
ordered by word count so each round works on a prefix (or, when nearly all have the same count,
all rows go through every round with a masked update).  The result depends only on the bytes:
not on the batch, slice offset, chunking or alignment.  Each column hash is finished with the
splitmix64 mixer.  ``WORD_HASH = False`` switches back to the old byte-by-byte polynomial hash
(for same-process A/B measurements only; hashes are never persisted across processes).

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
_K1 = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio (Fibonacci hashing)
_K2 = np.uint64(0xC2B2AE3D27D4EB4F)
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


#: Bytes of string data hashed per chunk of rows: a chunk's data and per-row state stay in the
#: L2 cache across the rounds of :func:`_fold_words`.
_CHUNK_BYTES = 1 << 18
_CHUNK_ROWS = (1 << 10, 1 << 14)  # (min, max) rows per chunk
_SEED = np.uint64(0x243F6A8885A308D3)
_ROUND_SHIFT = np.uint64(29)
_SIXTY_FOUR = np.uint64(64)
_TAIL_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
#: Module switch for same-process A/B measurements: False hashes byte by byte (the old path).
WORD_HASH = True


def _string_layout(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(words, starts, lengths)`` of a string/binary array: ``words`` is uint64 data aligned
    so that every value's bytes ``[starts[i], starts[i] + lengths[i])`` (byte positions in
    ``words``) can be read a word at a time, with at least one readable word past each value's
    last byte.  Zero-copy when Arrow's data buffer is 8-byte aligned and padded (the usual case);
    else the values' bytes are copied into a zero-padded array."""
    n = len(arr)
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    bufs = arr.buffers()
    offs = np.frombuffer(bufs[1], dtype=np.int64 if large else np.int32,
                         count=arr.offset + n + 1)[arr.offset:]
    starts = offs[:-1].astype(np.int64)
    lengths = np.diff(offs).astype(np.int64, copy=False)
    lo, hi = int(offs[0]), int(offs[-1])
    data = bufs[2]
    need = 8 * (((hi - 1) >> 3) + 2) if hi > lo else 0
    if data is not None and data.address % 8 == 0 and data.size >= need:
        words = np.frombuffer(data, dtype=np.uint64, count=need // 8)
    else:
        words = np.zeros((hi - lo + 7) // 8 + 2, dtype=np.uint64)
        if hi > lo:
            words.view(np.uint8)[: hi - lo] = np.frombuffer(data, dtype=np.uint8, count=hi)[lo:]
            starts -= lo
    return words, starts, lengths


def _fold_words(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                out: np.ndarray) -> None:
    """Fold each value's bytes into ``out`` (its initial state, updated in place) 8 bytes per
    round: round ``r`` of a value reads its bytes ``8r .. 8r+7`` as one little-endian word
    (zero past its end) -- two aligned words of ``words`` shifted together -- and sets
    ``h = (h ^ w) * K; h ^= h >> 29`` (a bijection of ``h`` for a fixed word and of the word for
    a fixed ``h``).  A value of ``L`` bytes takes exactly ``ceil(L / 8)`` rounds.

    When nearly every row has the same number of words, all rows go through every round and
    rows already finished keep their state (a masked update); otherwise the rows are ordered
    by decreasing word count (a radix argsort), so the rows of round ``r`` are a prefix and each
    round works on slices."""
    n = len(lengths)
    nw = (lengths + 7) >> 3
    maxw = int(nw.max())
    if maxw == 0:
        return
    # ends[k]: rows of k words (their last word is read in round k - 1); gt[r]: rows of > r words.
    ends = np.bincount(nw, minlength=maxw + 1)
    gt = n - np.cumsum(ends)
    if 2 * (maxw * n - int(gt[:maxw].sum())) <= n:  # idle row-rounds: under half a round
        _fold_masked(words, starts, lengths, nw, ends, gt, out)
        return
    order = np.argsort(-nw.astype(np.int16) if maxw < 1 << 15 else -nw, kind="stable")
    sel = order[: int(gt[0])]  # rows with at least one word, longest first
    st = starts[sel]
    q = st >> 3
    rshift = ((st & 7) << 3).astype(np.uint64)
    lshift = _SIXTY_FOUR - rshift  # 64 when aligned: numpy shifts by >= 64 give 0
    lens = lengths[sel]
    h = out[sel]
    prev = words[q]
    for r in range(maxw):
        k, done = int(gt[r]), int(gt[r + 1])  # rows [done, k) read their last word now
        qk = q[:k]
        qk += 1
        nxt = words[qk]
        w = prev[:k] >> rshift[:k]
        w |= nxt << lshift[:k]
        if done < k:
            w[done:] &= _TAIL_MASKS[lens[done:k] - 8 * r]
        x = h[:k]
        x ^= w
        x *= _K1
        x ^= x >> _ROUND_SHIFT
        prev = nxt
    out[sel] = h


def _fold_masked(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray, nw: np.ndarray,
                 ends: np.ndarray, gt: np.ndarray, out: np.ndarray) -> None:
    """:func:`_fold_words` with every row in every round (finished rows keep their state)."""
    n = len(lengths)
    maxw = len(ends) - 1
    q = starts >> 3
    rshift = ((starts & 7) << 3).astype(np.uint64)
    lshift = _SIXTY_FOUR - rshift
    last = len(words) - 1
    h = out
    prev = words[q]
    for r in range(maxw):
        active = int(gt[r])
        q += 1
        if active < n:  # finished rows read on (their words are discarded): stay in bounds
            np.minimum(q, last, out=q)
        nxt = words[q]
        w = prev >> rshift
        w |= nxt << lshift
        if active < n or ends[r + 1]:  # zero the bytes past each value's end
            w &= _TAIL_MASKS[np.clip(lengths - 8 * r, 0, 8)]
        x = h ^ w
        x *= _K1
        x ^= x >> _ROUND_SHIFT
        if active == n:
            h[:] = x
        else:
            np.copyto(h, x, where=nw > r)
        prev = nxt


#: Values of more than this many words (256 bytes) are hashed by :func:`_long_values_hash`
#: (a Python round per word would be slow for few long values).
_FOLD_MAX_WORDS = 32
_LONG_BLOCK_WORDS = 1 << 18
_LONG_SEED = np.uint64(0x13198A2E03707344)


def _bytes_hash(arr: pa.Array) -> np.ndarray:
    """Hash of each value's bytes (string/binary, 32- or 64-bit offsets): a function of the
    bytes alone (not of the batch, offset or chunking), unmixed (callers finish it with
    :func:`_mix`).  Values up to ``_FOLD_MAX_WORDS`` words are folded a word at a time
    (:func:`_fold_words`) over chunks of rows whose data fits the L2 cache, the state starting
    from the value's length; longer values go through :func:`_long_values_hash`."""
    if not WORD_HASH:
        return _bytes_hash_bytewise(arr)
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    words, starts, lengths = _string_layout(arr)
    h = lengths.astype(np.uint64) + _SEED
    long_rows = np.flatnonzero(lengths > 8 * _FOLD_MAX_WORDS)
    if len(long_rows):
        h[long_rows] = _long_values_hash(words, starts[long_rows], lengths[long_rows])
        lengths = lengths.copy()
        lengths[long_rows] = 0  # not folded below
    total = int(lengths.sum())
    if total == 0:
        return h
    step = int(np.clip(n * _CHUNK_BYTES // total, *_CHUNK_ROWS))
    for c in range(0, n, step):
        _fold_words(words, starts[c: c + step], lengths[c: c + step], h[c: c + step])
    return h


def _long_values_hash(words: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Hash of values longer than ``_FOLD_MAX_WORDS`` words: the wrapping sum over the value's
    words ``w_j`` of ``mix(w_j ^ (j * K2 + 1))`` (word ``j`` salted by its position, then the
    splitmix64 finalizer), folded into a state seeded by the length.  Every word of every such
    value is handled in flat numpy passes (blocks of ``_LONG_BLOCK_WORDS`` words), with no
    Python round per word."""
    nw = (lengths + 7) >> 3
    bounds = np.zeros(len(nw) + 1, dtype=np.int64)
    np.cumsum(nw, out=bounds[1:])
    acc = np.zeros(len(nw), dtype=np.uint64)
    for b in range(0, int(bounds[-1]), _LONG_BLOCK_WORDS):
        g = np.arange(b, min(b + _LONG_BLOCK_WORDS, int(bounds[-1])), dtype=np.int64)
        row = np.searchsorted(bounds, g, side="right") - 1
        j = g - bounds[row]
        pos = starts[row] + 8 * j
        q = pos >> 3
        rshift = ((pos & 7) << 3).astype(np.uint64)
        w = words[q] >> rshift
        w |= words[q + 1] << (_SIXTY_FOUR - rshift)
        w &= _TAIL_MASKS[np.minimum(lengths[row] - 8 * j, 8)]
        w ^= j.astype(np.uint64) * _K2 + np.uint64(1)
        contrib = _mix(w)
        seg = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
        acc[row[seg]] += np.add.reduceat(contrib, seg)
    h = (lengths.astype(np.uint64) + _LONG_SEED) ^ acc
    h *= _K1
    h ^= h >> _ROUND_SHIFT
    return h


def _bytes_hash_bytewise(arr: pa.Array) -> np.ndarray:
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
