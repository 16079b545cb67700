"""String functions (``upper``, ``substring``, ``concat``, ``trim``, ``lpad`` ...).

Arguments are implicitly cast to string (``upper(1)`` is ``upper(cast(1 as string))``) and
positions/lengths to int, as Spark's ImplicitCastInputTypes does.  Kernels are Arrow's ``utf8_*``
functions when the pattern/position arguments are literals; otherwise vectorized NumPy kernels over
the UTF-8 bytes (:mod:`ember.expressions.utf8_kernels`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions import utf8_kernels as K
from ember.errors import ExecutionError
from ember.expressions.base import Literal
from ember.expressions.misc import FunctionSpec, ScalarFunction, register

S, I, B = T.STRING, T.INT, T.BOOLEAN


def _lit(node: ScalarFunction, i: int):
    a = node.arguments[i]
    return (True, a.value) if isinstance(a, Literal) else (False, None)


def _strs(n: int):
    return lambda types: (S,) * n


def _spec(key, inputs, result, kernel, **kw):
    return register(FunctionSpec(key, inputs, result, kernel, **kw))


_spec("upper", _strs(1), lambda t: S, lambda a, n, b: pc.utf8_upper(a[0]), expected='"STRING"')
_spec("lower", _strs(1), lambda t: S, lambda a, n, b: pc.utf8_lower(a[0]), expected='"STRING"')
_spec("length", _strs(1), lambda t: I, lambda a, n, b: pc.utf8_length(a[0]).cast(pa.int32()))


def _substring(a, node, b):
    okp, pos = _lit(node, 1)
    okl, length = _lit(node, 2) if len(node.arguments) > 2 else (True, 2147483647)
    if okp and okl and pos is not None and length is not None and pos >= 0:
        start = max(pos - 1, 0)
        if length <= 0:
            return pc.if_else(pc.is_valid(a[0]), pa.scalar("", a[0].type), a[0])
        return pc.utf8_slice_codeunits(a[0], start, start + length)
    return _substring_columns(a)


def _substring_columns(a):
    """``substring`` with column position/length: UTF8String.substringSQL, vectorized."""
    s = K.Utf8(a[0])
    valid = K.all_valid(a)
    pos = K.ints(a[1])
    length = K.ints(a[2]) if len(a) > 2 else np.full(s.n, 2147483647, dtype=np.int64)
    n = s.nchars
    start = np.where(pos > 0, pos - 1, np.where(pos < 0, n + pos, 0))
    end = np.clip(start + length, 0, n)
    start = np.maximum(start, 0)
    end = np.maximum(end, start)
    rows = np.arange(s.n, dtype=np.int64)
    return K.slice_bytes(s, s.byte_at(rows, start), s.byte_at(rows, end), valid)


_spec("substring", lambda t: (S, I, I)[: len(t)], lambda t: S, _substring)


def _concat(a, node, b):
    if len(a) == 1:
        return a[0]
    return pc.binary_join_element_wise(*[x.cast(pa.large_string()) for x in a],
                                       pa.scalar("", pa.large_string()))


_spec("concat", lambda t: (S,) * len(t), lambda t: S, _concat)


def _concat_ws(a, node, b):
    sep, rest = a[0], a[1:]
    if not rest:
        return pc.if_else(pc.is_valid(sep), pa.scalar("", sep.type), sep)
    # Not binary_join_element_wise(null_handling="skip"): pyarrow drops the rows where every
    # value is NULL.  Build per-row lists of the non-NULL values instead and join them.
    n, k = len(sep), len(rest)
    cols = [x.cast(pa.large_string()) for x in rest]
    order = (np.arange(n, dtype=np.int64)[:, None] + np.arange(k, dtype=np.int64) * n).ravel()
    values = pc.take(pa.concat_arrays(cols), pa.array(order))
    keep = pc.is_valid(values)
    counts = keep.to_numpy(zero_copy_only=False).reshape(n, k).sum(axis=1)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    lists = pa.ListArray.from_arrays(pa.array(offsets), values.filter(keep))
    return pc.binary_join(lists, sep.cast(pa.large_string()))


_spec("concat_ws", lambda t: (S,) * len(t), lambda t: S, _concat_ws, null_intolerant=False)


def _trim(fn):
    def k(a, node, b):
        if len(a) == 1:
            return fn(a[0], characters=" ")
        ok, chars = _lit(node, 1)
        if ok and chars is not None:
            return fn(a[0], characters=chars)
        side = {pc.utf8_trim: (True, True), pc.utf8_ltrim: (True, False),
                pc.utf8_rtrim: (False, True)}[fn]
        return _trim_columns(a, *side)
    return k


_spec("trim", lambda t: (S,) * len(t), lambda t: S, _trim(pc.utf8_trim))
_spec("ltrim", lambda t: (S,) * len(t), lambda t: S, _trim(pc.utf8_ltrim))
_spec("rtrim", lambda t: (S,) * len(t), lambda t: S, _trim(pc.utf8_rtrim))


def _pad(left: bool):
    def k(a, node, b):
        okn, n = _lit(node, 1)
        okp, p = _lit(node, 2) if len(a) > 2 else (True, " ")
        if okn and okp and n is not None and p is not None and len(p) == 1 and n > 0:
            # at most n one-character pads, each up to 4 bytes
            _check_string_size(np.array([n * len(p.encode())]), "lpad" if left else "rpad")
            cut = pc.utf8_slice_codeunits(a[0], 0, n)
            fn = pc.utf8_lpad if left else pc.utf8_rpad
            return fn(cut, width=n, padding=p)
        pad = a[2] if len(a) > 2 else pa.repeat(pa.scalar(" ", pa.large_string()), len(a[0]))
        return _pad_columns(a[0], a[1], pad, left)
    return k


_spec("lpad", lambda t: (S, I, S)[: len(t)], lambda t: S, _pad(True))
_spec("rpad", lambda t: (S, I, S)[: len(t)], lambda t: S, _pad(False))


def _replace(a, node, b):
    oks, search = _lit(node, 1)
    okr, rep = _lit(node, 2) if len(a) > 2 else (True, "")
    if oks and okr and search is not None and rep is not None:
        if search == "":
            return a[0]
        return pc.replace_substring(a[0], pattern=search, replacement=rep)
    rep_arr = a[2] if len(a) > 2 else pa.repeat(pa.scalar("", pa.large_string()), len(a[0]))
    return _replace_columns(a[0], a[1], rep_arr)


_spec("replace", lambda t: (S,) * len(t), lambda t: S, _replace)


def _instr(a, node, b):
    ok, sub = _lit(node, 1)
    if ok and sub is not None:
        return pc.add(pc.find_substring(a[0], pattern=sub), 1).cast(pa.int32())
    return _find_columns(a[0], a[1], None)


_spec("instr", _strs(2), lambda t: I, _instr)


def _locate(a, node, b):
    """``locate(substr, str[, pos])``: 1-based, 0 when not found or ``pos < 1``.  A NULL ``pos``
    gives 0 whatever the other arguments (Spark's StringLocate); otherwise NULL in, NULL out."""
    n = len(a[0])
    arrays = a if len(a) > 2 else a + [pa.repeat(pa.scalar(1, pa.int32()), n)]
    arrays = [pa.nulls(n, t) if pa.types.is_null(x.type) else x
              for x, t in zip(arrays, (pa.string(), pa.string(), pa.int32()))]
    ok, sub = _lit(node, 0)
    okp, pos = _lit(node, 2) if len(a) > 2 else (True, 1)
    if okp and pos is None:
        return pa.repeat(pa.scalar(0, pa.int32()), n)
    if ok and okp and sub is not None and pos == 1:
        return pc.add(pc.find_substring(arrays[1], pattern=sub), 1).cast(pa.int32())
    out = _find_columns(arrays[1], arrays[0], arrays[2])
    # Spark: an empty substr is found at 1 for any pos >= 1 (UTF8String.indexOf returns 0)
    empty = pc.and_(pc.equal(pc.binary_length(arrays[0]), 0),
                    pc.greater_equal(arrays[2].cast(pa.int64()), 1))
    fix = pc.and_(pc.fill_null(empty, False), pc.is_valid(out))
    out = pc.if_else(fix, pa.scalar(1, out.type), out)
    return pc.if_else(pc.is_null(arrays[2]), pa.scalar(0, pa.int32()), out)


_spec("locate", lambda t: (S, S, I)[: len(t)], lambda t: I, _locate, null_intolerant=False)


def _predicate(fn, py):
    def k(a, node, b):
        ok, pat = _lit(node, 1)
        if ok and pat is not None:
            return fn(a[0], pattern=pat)
        return _match_columns(a[0], a[1], py)
    return k


_spec("startswith", _strs(2), lambda t: B, _predicate(pc.starts_with, str.startswith))
_spec("endswith", _strs(2), lambda t: B, _predicate(pc.ends_with, str.endswith))
_spec("contains", _strs(2), lambda t: B, _predicate(pc.match_substring, str.__contains__))

#: name -> (spec key, display name or None for the name as called, min args, max args)
STRING_FUNCTIONS: dict[str, tuple[str, int, int]] = {
    "upper": ("upper", 1, 1), "ucase": ("upper", 1, 1), "lower": ("lower", 1, 1),
    "lcase": ("lower", 1, 1), "length": ("length", 1, 1), "char_length": ("length", 1, 1),
    "character_length": ("length", 1, 1), "len": ("length", 1, 1),
    "substring": ("substring", 2, 3), "substr": ("substring", 2, 3),
    "concat": ("concat", 0, 1 << 20), "concat_ws": ("concat_ws", 1, 1 << 20),
    "trim": ("trim", 1, 2), "ltrim": ("ltrim", 1, 2), "rtrim": ("rtrim", 1, 2),
    "lpad": ("lpad", 2, 3), "rpad": ("rpad", 2, 3), "replace": ("replace", 2, 3),
    "instr": ("instr", 2, 2), "locate": ("locate", 2, 3), "position": ("locate", 2, 3),
    "startswith": ("startswith", 2, 2), "endswith": ("endswith", 2, 2),
    "contains": ("contains", 2, 2),
}


# ---------------------------------------------------------------------------------------------
# Column-argument kernels (pattern/position/length given per row): vectorized over the UTF-8
# bytes by ember.expressions.utf8_kernels; NULL where any argument is NULL.


def _find_columns(s_arr, p_arr, start_arr) -> pa.Array:
    """1-based character position of the first ``p`` in ``s`` at or after character
    ``start`` (1-based; ``None``: 1), 0 when absent or ``start < 1`` (Python ``str.find``)."""
    s, p = K.Utf8(s_arr), K.Utf8(p_arr)
    valid = K.all_valid([s_arr, p_arr] + ([start_arr] if start_arr is not None else []))
    rows = np.arange(s.n, dtype=np.int64)
    if start_arr is None:
        c0 = np.zeros(s.n, dtype=np.int64)
        ok = valid.copy()
    else:
        pos = K.ints(start_arr)
        ok = valid & (pos >= 1)
        c0 = np.maximum(pos - 1, 0)
    ok &= c0 <= s.nchars
    hit = K.first_match(s, p, ok, s.byte_at(rows, c0))
    res = np.where(hit >= 0, s.char_of_byte(np.maximum(hit, 0), rows) + 1, 0)
    res = np.where(ok & (np.diff(p.offsets) == 0), c0 + 1, res)
    res = np.where(ok, res, 0).astype(np.int32)
    return pa.array(res, type=pa.int32(), mask=None if valid.all() else ~valid)


def _match_columns(s_arr, p_arr, py) -> pa.Array:
    """``startswith``/``endswith``/``contains`` with a column pattern."""
    s, p = K.Utf8(s_arr), K.Utf8(p_arr)
    valid = K.all_valid([s_arr, p_arr])
    if py is str.__contains__:
        res = valid & ((K.first_match(s, p, valid) >= 0) | (np.diff(p.offsets) == 0))
    else:
        at = s.starts if py is str.startswith else s.ends - np.diff(p.offsets)
        res = K.match_at(s, p, valid, at)
    return pa.array(res, type=pa.bool_(), mask=None if valid.all() else ~valid)


def _trim_columns(a, left: bool, right: bool) -> pa.Array:
    """``trim``/``ltrim``/``rtrim(s, chars)``: strip the characters of ``chars`` (a set)."""
    s, c = K.Utf8(a[0]), K.Utf8(a[1])
    valid = K.all_valid(a)
    srow = s.char_rows()
    skey = s.char_keys().astype(np.int64) | (srow << 32)
    ckey = c.char_keys().astype(np.int64) | (c.char_rows() << 32)
    kept = np.flatnonzero(~np.isin(skey, ckey))  # global character numbers
    kr = srow[kept]
    lo = s.nchars.copy()  # local character numbers; rows with nothing kept become ""
    hi = s.nchars.copy()
    if len(kept):
        change = kr[1:] != kr[:-1]
        head, tail = np.r_[True, change], np.r_[change, True]
        lo[kr[head]] = kept[head] - s.first_char[kr[head]]
        hi[kr[tail]] = kept[tail] + 1 - s.first_char[kr[tail]]
    none_kept = np.ones(s.n, dtype=bool)
    none_kept[kr] = False
    start = np.where(none_kept, 0, lo if left else 0)
    stop = np.where(none_kept, 0, hi if right else s.nchars)
    rows = np.arange(s.n, dtype=np.int64)
    return K.slice_bytes(s, s.byte_at(rows, start), s.byte_at(rows, stop), valid)


#: Spark's largest byte array (``ByteArrayMethods.MAX_ROUNDED_ARRAY_LENGTH``): no string value
#: can be longer, in bytes.
MAX_STRING_BYTES = 2**31 - 1 - 15


def _check_string_size(row_bytes: np.ndarray, fn: str) -> None:
    """Refuse, before allocating, a result string longer than Spark can hold (Spark fails
    with an OutOfMemoryError in ``UTF8String.lpad``; Ember with its BufferHolder's class)."""
    if len(row_bytes) and int(row_bytes.max()) > MAX_STRING_BYTES:
        needed = int(row_bytes.max())
        raise ExecutionError(
            f"Cannot grow BufferHolder by size {needed} because the size after growing exceeds "
            f"size limitation {MAX_STRING_BYTES} (the result of {fn}).",
            error_class="_LEGACY_ERROR_TEMP_3199",
            parameters={"neededSize": str(needed), "arrayMax": str(MAX_STRING_BYTES)})


def _pad_columns(s_arr, n_arr, p_arr, left: bool) -> pa.Array:
    """``lpad``/``rpad(s, n, pad)``: cut to ``n`` characters or fill with ``pad`` repeated
    (nothing when ``pad`` is empty); ``n <= 0`` gives ``''``."""
    s, p = K.Utf8(s_arr), K.Utf8(p_arr)
    valid = K.all_valid([s_arr, n_arr, p_arr])
    rows = np.arange(s.n, dtype=np.int64)
    target = np.where(valid, np.maximum(K.ints(n_arr), 0), 0)
    keep = np.minimum(s.nchars, target)
    plen = p.nchars
    fill = np.where(plen > 0, target - keep, 0)
    q = fill // np.maximum(plen, 1)
    r = fill % np.maximum(plen, 1)
    _check_string_size(q * (p.ends - p.starts) + 4 * r + (s.ends - s.starts),
                       "lpad" if left else "rpad")
    cnt = q + 2  # q whole copies of pad, one partial copy, the (cut) string
    total = int(cnt.sum())
    prow = np.repeat(rows, cnt)
    cum = np.cumsum(cnt)
    j = np.arange(total, dtype=np.int64) - np.repeat(cum - cnt, cnt)
    qr = q[prow]
    if left:
        is_s, is_partial = j == qr + 1, j == qr
    else:
        is_s, is_partial = j == 0, j == qr + 1
    shift = len(s.data)
    buf = np.concatenate([s.data, p.data])
    s_len = s.byte_at(rows, keep) - s.starts
    p_full = p.ends - p.starts
    p_part = p.byte_at(rows, r) - p.starts
    starts = np.where(is_s, s.starts[prow], shift + p.starts[prow])
    lengths = np.where(is_s, s_len[prow], np.where(is_partial, p_part[prow], p_full[prow]))
    return K.assemble(buf, prow, starts, lengths, s.n, valid)


def _replace_columns(s_arr, x_arr, r_arr) -> pa.Array:
    """``replace(s, search, rep)``: every non-overlapping ``search`` (left to right) replaced by
    ``rep``; an empty ``search`` leaves ``s`` unchanged (Python ``str.replace``)."""
    s, x, r = K.Utf8(s_arr), K.Utf8(x_arr), K.Utf8(r_arr)
    valid = K.all_valid([s_arr, x_arr, r_arr])
    xlen = np.diff(x.offsets)
    mrow, mpos = K.find_matches(s, x, valid)
    sel = K.greedy_non_overlapping(mrow, mpos, xlen[mrow])
    mrow, mpos = mrow[sel], mpos[sel]
    mend = mpos + xlen[mrow]
    same = np.r_[False, mrow[1:] == mrow[:-1]]
    gap_start = np.where(same, np.r_[0, mend[:-1]], s.starts[mrow])
    gap_len = mpos - gap_start
    shift = len(s.data)
    buf = np.concatenate([s.data, r.data])
    rep_start = shift + r.starts[mrow]
    rep_len = r.ends[mrow] - r.starts[mrow]
    tail_start = s.starts.copy()
    if len(mrow):
        last = np.r_[mrow[1:] != mrow[:-1], True]
        tail_start[mrow[last]] = mend[last]
    tail_len = np.where(valid, s.ends - tail_start, 0)
    prow = np.concatenate([np.repeat(mrow, 2), np.arange(s.n, dtype=np.int64)])
    starts = np.concatenate([np.stack([gap_start, rep_start], axis=1).ravel(), tail_start])
    lengths = np.concatenate([np.stack([gap_len, rep_len], axis=1).ravel(), tail_len])
    order = np.argsort(prow, kind="stable")
    return K.assemble(buf, prow[order], starts[order], lengths[order], s.n, valid)
