"""Sorting with Spark's ordering rules over order-preserving unsigned integer codes.

Spark orders NULLs per the sort order's NULLS FIRST/LAST, NaN above every other number (including
+Infinity) and ``-0.0`` equal to ``0.0``; equal keys keep their input order (the sort is stable).

Each key is expanded into *words*: NULL-free ``uint64`` arrays whose unsigned order is the key's
order, most significant first.

1. a NULL flag (0/1 chosen so NULLs come first or last, whatever the direction), only when the key
   has NULLs (NULL slots of the value words are filled with an in-range value);
2. the value: integers, dates, timestamps and booleans with the sign bit flipped; floats with the
   IEEE trick (negative: all bits inverted, positive: sign bit set) after ``-0.0 -> 0.0`` and every
   NaN made the canonical positive NaN (so NaN is greatest); decimals as their 128-bit unscaled
   value (high word signed, low word unsigned); strings and binaries as their bytes in big-endian
   8-byte chunks, zero padded, followed by the length (byte order = Spark's ``UTF8String`` order;
   each chunk re-coded as a mixed-radix number of its byte positions' ranges, so ``'cust#0042'``
   style keys cost a few bits per byte); other types by Arrow's dense rank.
   Struct keys are expanded field by field (a NULL struct is ranked by its own NULL flag first;
   fields ascending with NULLs first, flipped as a whole for DESC, as Spark compares structs).

DESC flips each word (``max - v``).  Sorting is a refinement: the first sort packs as many leading
word bits as fit into one ``uint64`` next to the row's position (range-narrowed: ``v - min``, so a
constant word costs nothing and a 10-bit key packs with others), sorts those keys with numpy's
(SIMD, GIL-releasing, chunk-parallel for large inputs) unstable sort -- the position bits make it
stable -- and reads the permutation from the low bits.  Rows still tied with another row are
re-sorted by the next word bits, packed behind their dense group number, and so on until no ties or
no words remain.  String chunks are computed lazily, only for rows still tied after the previous
chunks.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.errors import UnsupportedError
from ember.execution.kernels.batches import plain_array
from ember.expressions.aggregates.kernels import list_order_ranks

__all__ = ["sort_indices", "order_words"]

_U64 = np.uint64
_SIGN = _U64(1 << 63)
_PARALLEL_MIN_ROWS = 1 << 21
_CORES = max(1, min(8, os.cpu_count() or 1))
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()

Rows = np.ndarray | None  # row numbers to evaluate a word on (None: all rows)


@dataclass(frozen=True, slots=True)
class _Word:
    """One ``uint64`` ordering word of a key: ``values(rows)`` ascending codes, ``desc`` flips."""

    values: Callable[[Rows], np.ndarray]
    desc: bool
    signed: bool = False  # ``values`` are int64 (ordered as signed), else uint64


@dataclass(frozen=True, slots=True)
class _Low:
    """The low ``bits`` bits of ``word`` narrowed by ``lo``/``hi`` (the rest of a split word)."""

    word: _Word
    lo: np.uint64
    hi: np.uint64
    bits: int


def _dense(raw: np.ndarray) -> Callable[[Rows], np.ndarray]:
    return lambda rows: raw if rows is None else raw[rows]


def _fill(arr: pa.Array, value) -> pa.Array:
    return pc.fill_null(arr, value) if arr.null_count else arr


def _int_word(values: np.ndarray, desc: bool) -> _Word:
    """A word over signed integers (narrowed by their minimum, no sign flip needed)."""
    return _Word(_dense(values.astype(np.int64, copy=False)), desc, signed=True)


_NAN_CODE = _U64(0xFFF8000000000000)  # the canonical positive NaN's code: above +Infinity's


def _float_codes(arr: pa.Array) -> np.ndarray:
    """IEEE trick: negative floats get every bit inverted, others the sign bit set; ``-0.0`` is
    ``0.0`` first and every NaN gets the canonical NaN's code."""
    if pa.types.is_float16(arr.type):
        arr = arr.cast(pa.float32())
    x = _fill(arr, 0.0).to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
    u = (x + 0.0).view(_U64)  # a copy, -0.0 -> 0.0
    flip = (u.view(np.int64) >> 63).view(_U64)  # all ones for negatives
    flip |= _SIGN
    u ^= flip
    del flip
    nan = np.isnan(x)
    if nan.any():
        u[nan] = _NAN_CODE
    return u


def _decimal_words(arr: pa.Array, desc: bool, out: list) -> None:
    t = arr.type
    if t.byte_width != 16:
        ranks = pc.rank(_fill(arr, pa.scalar(0, t)), tiebreaker="dense")
        out.append(_Word(_dense(ranks.to_numpy().astype(_U64, copy=False)), desc))
        return
    arr = _fill(arr, pa.scalar(0, t))
    n, off = len(arr), arr.offset
    pairs = np.frombuffer(arr.buffers()[1], dtype=np.int64)[2 * off: 2 * (off + n)].reshape(n, 2)
    lo, hi = pairs[:, 0], pairs[:, 1]
    if t.precision <= 18:  # the value fits the low word
        out.append(_int_word(lo, desc))
        return
    out.append(_int_word(np.ascontiguousarray(hi), desc))
    out.append(_Word(_dense(np.ascontiguousarray(lo).view(_U64)), desc))


_BYTE_MASKS = np.array([0] + [((1 << (8 * k)) - 1) << (64 - 8 * k) for k in range(1, 8)]
                       + [(1 << 64) - 1], dtype=_U64)  # the top k bytes of a word, k = 0..8


def _binary_words(arr: pa.Array, desc: bool, out: list) -> None:
    """Big-endian 8-byte chunks (zero padded) then the length: the bytewise order.  A chunk is
    one gather of unaligned 8-byte windows over the (padded) data buffer, byte-swapped and masked
    to the string's length."""
    n, off = len(arr), arr.offset
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    bufs = arr.buffers()
    offs = np.frombuffer(bufs[1], dtype=np.int64 if large else np.int32)[off: off + n + 1]
    offs = offs.astype(np.int64)
    starts = offs[:-1].copy()
    lengths = np.diff(offs)
    if arr.null_count:  # NULL rows take the first non-NULL row's string: no wider ranges
        null = ~arr.is_valid().to_numpy(zero_copy_only=False)
        first = int(np.argmin(null))
        starts[null] = starts[first]
        lengths[null] = lengths[first] if not null[first] else 0
    max_len = int(lengths.max()) if n else 0
    lo = int(starts.min()) if n else 0
    hi = int(offs[-1]) if n else 0
    padded = np.zeros(max(hi - lo, 0) + 8, dtype=np.uint8)
    if hi > lo:
        padded[: hi - lo] = np.frombuffer(bufs[2], dtype=np.uint8)[lo:hi]
    starts = starts - lo
    windows = np.ndarray(shape=(len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))

    def chunk(j: int) -> Callable[[Rows], np.ndarray]:
        whole: list[np.ndarray] = []  # the chunk of every row, once many rows need it
        radix: list[tuple[int, int, int]] = []  # (byte, min, count) per varying byte position

        def values(rows: Rows) -> np.ndarray:
            if rows is not None and len(rows) > n // 4:
                if not whole:
                    whole.append(compute(None))
                return whole[0][rows]
            v = compute(rows)
            if rows is None:
                whole.append(v)
            return v

        def compute(rows: Rows) -> np.ndarray:
            s = starts if rows is None else starts[rows]
            v = windows[np.minimum(s + 8 * j, len(windows) - 1)] if j else windows[s]
            v.byteswap(inplace=True)
            rest = (lengths if rows is None else lengths[rows]) - 8 * j
            np.clip(rest, 0, 8, out=rest)
            v &= _BYTE_MASKS[rest]
            return mixed_radix(v)

        def mixed_radix(v: np.ndarray) -> np.ndarray:
            """Each byte position narrowed to its range, as digits of a mixed-radix number:
            the same order, far fewer bits for e.g. digits.  The ranges come from the first
            rows seen: later calls are on subsets of them (tied rows only shrink)."""
            b = v.view(np.uint8).reshape(-1, 8)
            if not radix:
                lo, hi = b.min(axis=0), b.max(axis=0)
                radix.extend((k, int(lo[k]), int(hi[k]) - int(lo[k]) + 1)
                             for k in range(7, -1, -1) if hi[k] > lo[k])  # most significant first
                radix.append((-1, 0, 0))  # computed
            out = np.zeros(len(v), dtype=_U64)
            for k, lo_k, count in radix[:-1]:
                out *= _U64(count)
                out += b[:, k]
                out -= _U64(lo_k)
            return out
        return values

    for j in range((max_len + 7) // 8):
        out.append(_Word(chunk(j), desc))
    out.append(_Word(_dense(lengths.astype(_U64)), desc))


def _expand_key(arr: pa.Array, ascending: bool, nulls_first: bool, out: list) -> None:
    arr = plain_array(arr)
    t = arr.type
    if pa.types.is_null(t):
        return
    desc = not ascending
    if arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        flag = valid if nulls_first else ~valid
        out.append(_Word(_dense(flag.astype(_U64)), False))
    if pa.types.is_struct(t):
        # flatten() makes every field NULL under a NULL struct, so NULL structs tie (stable).
        fields = arr.flatten() if arr.null_count else [arr.field(i) for i in range(t.num_fields)]
        for f in fields:
            _expand_key(f, ascending, ascending, out)
        return
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        # Spark's array order (element by element, a prefix first): dense ranks of the column,
        # comparable within one call, as every sort and merge step ranks its whole input
        out.append(_Word(_dense(list_order_ranks(arr).astype(_U64)), desc))
        return
    if pa.types.is_map(t):
        raise UnsupportedError(f"Sorting by values of type {t} is not supported yet")
    if pa.types.is_floating(t):
        out.append(_Word(_dense(_float_codes(arr)), desc))
    elif pa.types.is_boolean(t):
        v = _fill(arr, False).to_numpy(zero_copy_only=False).astype(_U64)
        out.append(_Word(_dense(v), desc))
    elif pa.types.is_unsigned_integer(t):
        v = _fill(arr, 0).to_numpy().astype(_U64, copy=False)
        out.append(_Word(_dense(v), desc))
    elif pa.types.is_integer(t):
        out.append(_int_word(_fill(arr, 0).to_numpy(), desc))
    elif pa.types.is_temporal(t) and t.bit_width in (32, 64) and not pa.types.is_interval(t):
        ints = arr.view(pa.int32() if t.bit_width == 32 else pa.int64())
        out.append(_int_word(_fill(ints, 0).to_numpy(), desc))
    elif pa.types.is_decimal(t):
        _decimal_words(arr, desc, out)
    elif (pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t)
          or pa.types.is_large_binary(t)):
        _binary_words(arr, desc, out)
    else:
        ranks = pc.rank(arr, tiebreaker="dense").to_numpy().astype(_U64, copy=False)
        out.append(_Word(_dense(ranks), desc))


def _bits(x: int) -> int:
    return int(x).bit_length()


def _narrow(word: _Word, raw: np.ndarray, lo: np.uint64, hi: np.uint64) -> np.ndarray:
    """``raw - lo`` (ascending) or ``hi - raw`` (descending), as uint64."""
    if word.signed:
        raw = raw.view(_U64)
    return (hi - raw) if word.desc else (raw - lo)


def _materialize(item: _Word | _Low, rows: Rows) -> tuple[np.ndarray, int, _Word | _Low | None]:
    """Narrowed ascending codes of ``item`` on ``rows``, their bit width and a splitter."""
    if isinstance(item, _Low):
        v = _narrow(item.word, item.word.values(rows), item.lo, item.hi)
        if item.bits < 64:
            v &= _U64((1 << item.bits) - 1)
        return v, item.bits, item
    raw = item.values(rows)
    lo, hi = raw.min(), raw.max()
    width = _bits(int(hi) - int(lo))
    if item.signed:  # the same numbers as unsigned (two's complement): differences wrap right
        lo, hi = np.array([lo, hi], dtype=np.int64).view(_U64)
    return _narrow(item, raw, lo, hi), width, _Low(item, lo, hi, 0)


def _pool_get() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_CORES, thread_name_prefix="ember-sort")
        return _pool


def _sort_u64(keys: np.ndarray) -> np.ndarray:
    """``keys`` (all distinct) sorted; large inputs as chunks sorted on threads, then merged."""
    n = len(keys)
    if n < _PARALLEL_MIN_ROWS or _CORES < 2:
        keys.sort()
        return keys
    parts = np.array_split(keys, _CORES)
    list(_pool_get().map(np.ndarray.sort, parts))  # in place, GIL released
    keys.sort(kind="stable")  # timsort merges the sorted runs
    return keys


def order_words(words: Sequence[_Word], n: int) -> np.ndarray:
    """The stable permutation ordering ``n`` rows by ``words`` (most significant first)."""
    if n < 2 or not words:
        return np.arange(n, dtype=np.int64)
    queue: deque[_Word | _Low] = deque(words)
    perm: np.ndarray | None = None  # None: the identity (nothing sorted yet)
    positions: np.ndarray | None = None  # positions (in ``perm``) of rows still tied; None: all
    group: np.ndarray | None = None  # dense group number of those rows (None: one group)
    while queue:
        m = n if positions is None else len(positions)
        rows = None if perm is None else (perm if positions is None else perm[positions])
        pos_bits = _bits(m - 1)
        group_bits = 0 if group is None else _bits(int(group[-1]))
        budget = 64 - pos_bits - group_bits
        if budget < 1:
            assert perm is not None
            return _lexsort_rest(perm, positions, group, queue)
        key = None
        used = 0
        while queue and used < budget:
            item = queue.popleft()
            v, bits, split = _materialize(item, rows)
            if bits == 0:
                continue
            room = budget - used
            if bits > room:
                v >>= _U64(bits - room)
                assert split is not None
                queue.appendleft(_Low(split.word, split.lo, split.hi, bits - room))
                bits = room
            if key is None:
                key = v
            else:
                key <<= _U64(bits)
                key |= v
            used += bits
        if key is None:
            break
        key <<= _U64(pos_bits)
        if group is not None:
            group <<= _U64(used + pos_bits)
            key |= group
        key |= np.arange(m, dtype=_U64)
        key = _sort_u64(key)
        tied = None
        if queue:  # rows whose key bits equal a neighbour's are still tied
            diff = key[1:] ^ key[:-1]
            same = diff >= _U64(1 << pos_bits)
            np.logical_not(same, out=same)  # equal to the next row
            tied = np.zeros(m, dtype=bool)
            tied[:-1] = same
            tied[1:] |= same
            starts = np.empty(m, dtype=bool)  # first row of each group of equal keys
            starts[0] = True
            np.logical_not(same, out=starts[1:])
            del diff
        key &= _U64((1 << pos_bits) - 1)
        local = key.view(np.int64)
        if perm is None:
            perm = local
        elif positions is None:
            perm = perm[local]
        else:
            perm[positions] = rows[local]
        if tied is None:
            break
        idx = np.flatnonzero(tied)
        if not len(idx):
            break
        g = np.cumsum(starts)[idx]
        group = np.zeros(len(idx), dtype=_U64)
        np.cumsum(g[1:] != g[:-1], out=group[1:])
        positions = idx if positions is None else positions[idx]
    return np.arange(n, dtype=np.int64) if perm is None else perm


def _lexsort_rest(perm: np.ndarray, positions: np.ndarray | None, group: np.ndarray | None,
                  queue: deque) -> np.ndarray:
    """Huge inputs whose group and position numbers leave no room in a word: lexsort the tied
    rows by the remaining words (stable)."""
    rows = perm if positions is None else perm[positions]
    cols = [_materialize(item, rows)[0] for item in queue]
    if group is not None:
        cols.insert(0, group)
    order = np.lexsort(tuple(reversed(cols)))
    if positions is None:
        return rows[order]
    perm[positions] = rows[order]
    return perm


def sort_indices(
    keys: Sequence[pa.Array], ascending: Sequence[bool], nulls_first: Sequence[bool]
) -> np.ndarray:
    """Stable permutation (int64 numpy array) ordering rows by ``keys`` with Spark's rules."""
    if not keys:
        return np.zeros(0, dtype=np.int64)
    words: list[_Word] = []
    for k, asc, nf in zip(keys, ascending, nulls_first):
        _expand_key(k, asc, nf, words)
    return order_words(words, len(keys[0]))
