"""Vectorized UTF-8 kernels for string functions whose pattern/position arguments are columns.

Arrow's ``utf8_*`` kernels take their pattern/position as a scalar option.  When those arguments
are columns, the string functions in :mod:`ember.expressions.strings` use these kernels instead:
each works on the raw bytes of ``large_string`` arrays with NumPy, never a Python loop per row.

Building blocks:

- :class:`Utf8` -- a string array's offsets and bytes plus its character index (the byte position
  of every character start, each row's first character number and character count).  UTF-8 is
  self-synchronising, so a byte match of a valid pattern is always character aligned.
- :func:`assemble` -- a ``large_string`` array concatenating byte ranges ("pieces") per row.
- :func:`find_matches` -- every (row, byte position) where a row's pattern occurs, found with one
  pass per pattern byte over the surviving candidates.

Semantics follow the Python reference implementations they replace (``str.find``/``str.strip``/
``str.replace`` on code points): results are NULL where any argument is NULL.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def _valid(arr: pa.Array) -> np.ndarray:
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def all_valid(arrays) -> np.ndarray:
    """Rows where none of ``arrays`` is NULL."""
    v = np.ones(len(arrays[0]), dtype=bool)
    for a in arrays:
        v &= _valid(a)
    return v


def ints(arr: pa.Array) -> np.ndarray:
    """An integer column as int64 (NULL -> 0; callers mask NULL rows)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.null_count:
        import pyarrow.compute as pc

        arr = pc.fill_null(arr, 0)
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.int64)


class Utf8:
    """Offsets, bytes and character index of a string array."""

    __slots__ = ("n", "offsets", "data", "valid", "char_pos", "first_char", "nchars", "_lead_cum")

    def __init__(self, arr: pa.Array) -> None:
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if arr.type != pa.large_string():
            arr = arr.cast(pa.large_string())
        n = len(arr)
        self.n = n
        self.valid = _valid(arr)
        bufs = arr.buffers()
        off = np.frombuffer(bufs[1], dtype=np.int64, count=arr.offset + n + 1)[arr.offset:]
        base, top = int(off[0]), int(off[-1])
        self.offsets = off - base
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and top > base \
            else np.zeros(0, np.uint8)
        self.data = data[base:top]
        lead = (self.data & 0xC0) != 0x80
        lead_cum = np.zeros(len(self.data) + 1, dtype=np.int64)
        np.cumsum(lead, out=lead_cum[1:])
        self._lead_cum = lead_cum
        self.char_pos = np.append(np.flatnonzero(lead), len(self.data)).astype(np.int64)
        self.first_char = lead_cum[self.offsets[:-1]]
        self.nchars = lead_cum[self.offsets[1:]] - self.first_char

    @property
    def starts(self) -> np.ndarray:
        return self.offsets[:-1]

    @property
    def ends(self) -> np.ndarray:
        return self.offsets[1:]

    def byte_at(self, rows: np.ndarray, chars: np.ndarray) -> np.ndarray:
        """Byte position of character ``chars`` (0-based, clipped to ``[0, nchars]``) of
        ``rows``."""
        c = np.clip(chars, 0, self.nchars[rows])
        pos = self.char_pos[np.minimum(self.first_char[rows] + c, len(self.char_pos) - 1)]
        return np.where(c >= self.nchars[rows], self.offsets[rows + 1], pos)

    def char_of_byte(self, pos: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """0-based character number (within its row) of byte position ``pos``."""
        return self._lead_cum[pos] - self.first_char[rows]

    def char_keys(self) -> np.ndarray:
        """One uint32 per character: its (up to 4) bytes packed, equal iff the characters are."""
        cp = self.char_pos[:-1]
        padded = np.concatenate([self.data, np.zeros(4, np.uint8)])
        b0 = padded[cp].astype(np.uint32)
        length = np.where(b0 < 0x80, 1, np.where(b0 >> 5 == 6, 2, np.where(b0 >> 4 == 14, 3, 4)))
        key = b0.copy()
        for k in (1, 2, 3):
            key |= np.where(length > k, padded[cp + k].astype(np.uint32) << (8 * k), 0) \
                .astype(np.uint32)
        return key

    def char_rows(self) -> np.ndarray:
        """The row of every character."""
        return np.repeat(np.arange(self.n, dtype=np.int64), self.nchars)


def assemble(buf: np.ndarray, rows: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
             n: int, valid: np.ndarray) -> pa.Array:
    """A ``large_string`` array of ``n`` rows: row ``i`` is the concatenation of the byte ranges
    ``buf[starts[j]:starts[j] + lengths[j]]`` of its pieces ``j`` (``rows`` sorted ascending,
    pieces of a row in order); NULL where not ``valid``."""
    lengths = np.asarray(lengths, dtype=np.int64)
    cum = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=cum[1:])
    first_piece = np.searchsorted(rows, np.arange(n + 1, dtype=np.int64), side="left")
    offsets = cum[first_piece]
    total = int(cum[-1])
    if total:
        idx = np.repeat(np.asarray(starts, dtype=np.int64) - cum[:-1], lengths)
        idx += np.arange(total, dtype=np.int64)
        out = buf[idx]
    else:
        out = np.zeros(0, np.uint8)
    validity = None if valid.all() else pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(
        pa.large_string(), n,
        [validity, pa.py_buffer(offsets.tobytes()), pa.py_buffer(out.tobytes())],
        null_count=-1 if validity is not None else 0,
    )


def slice_bytes(s: Utf8, lo: np.ndarray, hi: np.ndarray, valid: np.ndarray) -> pa.Array:
    """Row ``i`` = bytes ``[lo[i], hi[i])`` of ``s`` (empty when ``hi <= lo``)."""
    rows = np.arange(s.n, dtype=np.int64)
    return assemble(s.data, rows, lo, np.maximum(hi - lo, 0), s.n, valid)


def find_matches(s: Utf8, p: Utf8, rows_ok: np.ndarray,
                 lo: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All ``(row, byte position)`` where row's pattern ``p`` (non-empty) occurs in ``s`` at or
    after byte ``lo[row]``, ascending; only rows where ``rows_ok``."""
    plen = np.diff(p.offsets)
    rows_ok = rows_ok & (plen > 0)
    first = s.starts if lo is None else np.maximum(lo, s.starts)
    span = np.where(rows_ok, np.maximum(s.ends - plen - first + 1, 0), 0)
    total = int(span.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rows = np.repeat(np.arange(s.n, dtype=np.int64), span)
    cum = np.zeros(s.n + 1, dtype=np.int64)
    np.cumsum(span, out=cum[1:])
    pos = np.arange(total, dtype=np.int64) - np.repeat(cum[:-1] - first, span)
    # One pass per pattern byte over the surviving candidates (they thin out fast).
    for k in range(int(plen[rows_ok].max())):
        live = plen[rows] > k
        ok = ~live | (s.data[np.where(live, pos + k, 0)] ==
                      p.data[np.where(live, p.starts[rows] + k, 0)])
        if not ok.all():
            rows, pos = rows[ok], pos[ok]
        if len(rows) == 0:
            break
    return rows, pos


def first_match(s: Utf8, p: Utf8, rows_ok: np.ndarray,
                lo: np.ndarray | None = None) -> np.ndarray:
    """Per row, the byte position of the first match at or after ``lo`` (-1 if none)."""
    rows, pos = find_matches(s, p, rows_ok, lo)
    out = np.full(s.n, -1, dtype=np.int64)
    if len(rows):
        head = np.r_[True, rows[1:] != rows[:-1]]
        out[rows[head]] = pos[head]
    return out


def greedy_non_overlapping(rows: np.ndarray, pos: np.ndarray, plen: np.ndarray) -> np.ndarray:
    """Mask of the matches ``str.replace`` uses: left to right, skipping any match overlapping
    the previous one taken (``plen`` per match)."""
    k = len(rows)
    if k == 0:
        return np.zeros(0, dtype=bool)
    same = np.r_[False, rows[1:] == rows[:-1]]
    overlaps = same & (np.r_[0, pos[:-1] + plen[:-1]] > pos)
    if not overlaps.any():
        return np.ones(k, dtype=bool)
    # A match not overlapping its predecessor overlaps no earlier one: always taken.  Inside a
    # run of overlapping matches, follow the "next match at or after my end" chain, one step
    # per iteration for all runs at once.
    sel = ~overlaps
    key = rows * (1 << 40) + pos
    nxt = np.searchsorted(key, rows * (1 << 40) + pos + plen, side="left")
    cur = np.flatnonzero(~overlaps & np.r_[overlaps[1:], False])
    while len(cur):
        n = nxt[cur]
        keep = n < k
        n = n[keep]
        n = n[overlaps[n] & (rows[n] == rows[cur[keep]])]
        sel[n] = True
        cur = n
    return sel


def match_at(s: Utf8, p: Utf8, rows_ok: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Per row: whether pattern ``p`` occurs in ``s`` exactly at byte ``at`` (an empty pattern
    matches anywhere inside the string)."""
    plen = np.diff(p.offsets)
    res = rows_ok & (at >= s.starts) & (at + plen <= s.ends)
    rows = np.flatnonzero(res & (plen > 0))
    if len(rows) == 0:
        return res
    for k in range(int(plen[rows].max())):
        live = plen[rows] > k
        eq = ~live | (s.data[np.where(live, at[rows] + k, 0)] ==
                      p.data[np.where(live, p.starts[rows] + k, 0)])
        res[rows[~eq]] = False
        rows = rows[eq]
        if len(rows) == 0:
            break
    return res
