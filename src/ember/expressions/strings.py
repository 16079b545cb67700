"""String functions (``upper``, ``substring``, ``concat``, ``trim``, ``lpad`` ...).

Arguments are implicitly cast to string (``upper(1)`` is ``upper(cast(1 as string))``) and
positions/lengths to int, as Spark's ImplicitCastInputTypes does.  Kernels are Arrow's ``utf8_*``
functions when the pattern/position arguments are literals; otherwise vectorized NumPy kernels over
the UTF-8 bytes (:mod:`ember.expressions.utf8_kernels`).
"""

from __future__ import annotations

import base64
import binascii
import re
from decimal import ROUND_HALF_EVEN, Context, Decimal
from urllib.parse import quote_plus, unquote_plus

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ExecutionError, UnsupportedError
from ember.expressions import utf8_kernels as K
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


# ---------------------------------------------------------------------------------------------
# More string functions (Spark's InitCap, Left, Right, StringRepeat, Reverse, Ascii, Chr,
# Base64, UnBase64, BitLength, OctetLength, StringTranslate, SubstringIndex, StringSpace,
# Encode, Decode, QuoteString, FindInSet, Elt, Overlay).  Kernels work on whole arrays: Arrow's
# utf8 functions or NumPy over the UTF-8 bytes; codecs other than UTF-8 run once per *distinct*
# value.

BIN = T.BINARY


def _initcap(a, node, b):
    """Spark's ``toLowerCase().toTitleCase()``: every character lower case, the first one and
    each one after a space (only ``' '``) title case."""
    low = pc.utf8_lower(a[0]).cast(pa.large_string())
    up = pc.utf8_upper(low).cast(pa.large_string())
    lo, hi = K.Utf8(low), K.Utf8(up)
    if len(lo.data) == 0 or not np.array_equal(lo.nchars, hi.nchars):
        return pc.utf8_capitalize(low)
    pos = lo.char_pos[:-1]
    row = lo.char_rows()
    first = np.zeros(len(pos), dtype=bool)
    first[lo.first_char[lo.nchars > 0]] = True
    after_space = np.r_[False, lo.data[pos[:-1]] == 0x20] if len(pos) else first
    use_up = first | (after_space & ~first)
    lo_len = np.diff(lo.char_pos)
    hi_len = np.diff(hi.char_pos)
    shift = len(lo.data)
    buf = np.concatenate([lo.data, hi.data])
    starts = np.where(use_up, shift + hi.char_pos[:-1], pos)
    lengths = np.where(use_up, hi_len, lo_len)
    return K.assemble(buf, row, starts, lengths, lo.n, lo.valid)


_spec("initcap", _strs(1), lambda t: S, _initcap, expected='"STRING"')


def _left(a, node, b):
    s = K.Utf8(a[0])
    valid = K.all_valid(a)
    n = np.maximum(K.ints(a[1]), 0)
    rows = np.arange(s.n, dtype=np.int64)
    return K.slice_bytes(s, s.starts, s.byte_at(rows, n), valid)


def _right(a, node, b):
    s = K.Utf8(a[0])
    valid = K.all_valid(a)
    n = np.maximum(K.ints(a[1]), 0)
    rows = np.arange(s.n, dtype=np.int64)
    return K.slice_bytes(s, s.byte_at(rows, np.maximum(s.nchars - n, 0)), s.ends, valid)


_spec("left", lambda t: (S, I), lambda t: S, _left)
_spec("right", lambda t: (S, I), lambda t: S, _right)


def _repeat(a, node, b, fn: str = "repeat"):
    n = pc.max_element_wise(a[1].cast(pa.int64()), pa.scalar(0, pa.int64()),
                            skip_nulls=False)
    s = a[0].cast(pa.large_string())
    sizes = pc.multiply(pc.binary_length(s).fill_null(0), n.fill_null(0))
    _check_string_size(sizes.to_numpy(zero_copy_only=False), fn)
    return pc.binary_repeat(s, n)


_spec("repeat", lambda t: (S, I), lambda t: S, _repeat)
_spec("space", lambda t: (I,), lambda t: S, lambda a, n, b: _repeat(
    [pa.repeat(pa.scalar(" ", pa.large_string()), len(a[0])), a[0]], n, b, "space"))
_spec("reverse", lambda t: (S,) if isinstance(t[0], (T.StringType, T.NullType)) or
      t[0].is_numeric or isinstance(t[0], (T.DateType, T.TimestampType)) else None,
      lambda t: S, lambda a, n, b: pc.utf8_reverse(a[0]), expected='("STRING" or "ARRAY")')


def _ascii(a, node, b):
    s = K.Utf8(a[0])
    padded = np.concatenate([s.data, np.zeros(4, np.uint8)]).astype(np.int64)
    st = s.starts
    b0 = padded[st]
    cp = np.where(b0 < 0x80, b0, np.where(
        b0 >> 5 == 6, ((b0 & 0x1F) << 6) | (padded[st + 1] & 0x3F), np.where(
            b0 >> 4 == 14, ((b0 & 0x0F) << 12) | ((padded[st + 1] & 0x3F) << 6)
            | (padded[st + 2] & 0x3F),
            ((b0 & 0x07) << 18) | ((padded[st + 1] & 0x3F) << 12)
            | ((padded[st + 2] & 0x3F) << 6) | (padded[st + 3] & 0x3F))))
    cp = np.where(s.nchars > 0, cp, 0)
    return pa.array(cp.astype(np.int32), mask=~s.valid)


_spec("ascii", _strs(1), lambda t: I, _ascii)


def _chr(a, node, b):
    """``chr(n)``: ``''`` for a negative ``n``, else the character ``n % 256`` (Latin-1)."""
    v = K.ints(a[0])
    valid = K.all_valid(a)
    code = (v & 0xFF)
    enc = np.zeros((len(v), 2), dtype=np.uint8)
    enc[:, 0] = np.where(code < 0x80, code, 0xC0 | (code >> 6))
    enc[:, 1] = 0x80 | (code & 0x3F)
    lengths = np.where(v < 0, 0, np.where(code < 0x80, 1, 2))
    rows = np.arange(len(v), dtype=np.int64)
    return K.assemble(enc.ravel(), rows, rows * 2, lengths, len(v), valid)


_spec("chr", lambda t: (T.LONG,), lambda t: S, _chr)


def _as_binary_input(types):
    t = types[0]
    if isinstance(t, (T.BinaryType, T.NullType)):
        return (None,) + (S,) * (len(types) - 1)
    if isinstance(t, T.StringType):
        return (BIN,) + (S,) * (len(types) - 1)
    return None


def _octets(arr: pa.Array) -> pa.Array:
    return pc.binary_length(arr).cast(pa.int32())


_spec("octet_length", lambda t: (None,) if isinstance(t[0], (T.BinaryType, T.NullType)) else
      (S,), lambda t: I, lambda a, n, b: _octets(a[0]), expected='("STRING" or "BINARY")')
_spec("bit_length", lambda t: (None,) if isinstance(t[0], (T.BinaryType, T.NullType)) else
      (S,), lambda t: I, lambda a, n, b: pc.multiply(_octets(a[0]), 8),
      expected='("STRING" or "BINARY")')

_B64 = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                     dtype=np.uint8)


def _base64(a, node, b):
    """RFC 4648 base64 without line breaks (Spark 4's Base64), vectorized over the bytes."""
    s = K.Utf8(a[0].cast(pa.large_binary()).view(pa.large_string()))
    length = s.ends - s.starts
    groups = (length + 2) // 3
    out_len = groups * 4
    total_groups = int(groups.sum())
    grow = np.repeat(np.arange(s.n, dtype=np.int64), groups)
    gstart = np.repeat(np.cumsum(groups) - groups, groups)
    gi = np.arange(total_groups, dtype=np.int64) - gstart
    src = s.starts[grow] + gi * 3
    end = s.ends[grow]
    data = np.concatenate([s.data, np.zeros(3, np.uint8)]).astype(np.uint32)
    b0 = data[src]
    b1 = np.where(src + 1 < end, data[np.minimum(src + 1, len(data) - 1)], 0)
    b2 = np.where(src + 2 < end, data[np.minimum(src + 2, len(data) - 1)], 0)
    word = (b0 << 16) | (b1 << 8) | b2
    chars = np.stack([_B64[(word >> 18) & 63], _B64[(word >> 12) & 63],
                      _B64[(word >> 6) & 63], _B64[word & 63]], axis=1)
    rem = end - src
    chars[rem == 1, 2] = ord("=")
    chars[rem <= 2, 3] = ord("=")
    offsets = np.zeros(s.n + 1, dtype=np.int64)
    np.cumsum(out_len, out=offsets[1:])
    validity = None if s.valid.all() else pa.array(s.valid).buffers()[1]
    return pa.Array.from_buffers(pa.large_string(), s.n, [
        validity, pa.py_buffer(offsets.tobytes()), pa.py_buffer(chars.ravel().tobytes())])


_spec("base64", _as_binary_input, lambda t: S, _base64, expected='"BINARY"')


def _per_distinct(arr: pa.Array, fn, out_type: pa.DataType) -> pa.Array:
    """``fn`` applied once per distinct non-NULL value of ``arr`` (dictionary encoding), for
    conversions Arrow has no kernel for (charsets, base64 decoding)."""
    enc = pc.dictionary_encode(arr).combine_chunks() if isinstance(
        arr, pa.ChunkedArray) else pc.dictionary_encode(arr)
    values = [fn(v) for v in enc.dictionary.to_pylist()]
    return pc.take(pa.array(values, type=out_type), enc.indices)


def _unbase64(a, node, b):
    def dec(v: str) -> bytes | None:
        try:
            return base64.b64decode(v.replace("\r", "").replace("\n", ""), validate=True)
        except (binascii.Error, ValueError):
            raise ExecutionError(
                f"The input of `{node.fn_name}` can't be decoded as base64.",
                error_class="CONVERSION_INVALID_INPUT") from None
    return _per_distinct(a[0].cast(pa.string()), dec, pa.binary())


_spec("unbase64", _strs(1), lambda t: BIN, _unbase64, may_fail=True)

_CHARSETS = {"us-ascii": "ascii", "iso-8859-1": "latin-1", "utf-8": "utf-8",
             "utf-16be": "utf-16-be", "utf-16le": "utf-16-le", "utf-16": "utf-16",
             "utf-32": "utf-32-be"}


def _charset(node, i: int) -> str:
    ok, cs = _lit(node, i)
    name = _CHARSETS.get(str(cs).lower()) if ok and cs is not None else None
    if name is None:
        raise ExecutionError(
            f"The value of parameter(s) `charset` in `{node.fn_name}` is invalid: expects one of "
            f"the charsets 'US-ASCII', 'ISO-8859-1', 'UTF-8', 'UTF-16BE', 'UTF-16LE', 'UTF-16', "
            f"'UTF-32', but got {cs}.",
            error_class="INVALID_PARAMETER_VALUE.CHARSET",
            parameters={"parameter": "`charset`", "functionName": f"`{node.fn_name}`",
                        "charset": str(cs)})
    return name


def _coding_error(node, charset: str) -> ExecutionError:
    return ExecutionError(
        f"The value of parameter(s) `{'str' if node.key == 'encode' else 'bin'}` in "
        f"`{node.fn_name}` is invalid: the input cannot be {node.key}d with {charset}.",
        error_class="MALFORMED_CHARACTER_CODING",
        parameters={"function": f"`{node.fn_name}`", "charset": charset})


def _encode(a, node, b):
    cs = _charset(node, 1)
    if cs == "utf-8":
        return a[0].cast(pa.large_string()).cast(pa.large_binary())
    if cs == "utf-16":  # Java writes a big-endian byte-order mark
        return _per_distinct(a[0].cast(pa.string()),
                             lambda v: b"\xfe\xff" + v.encode("utf-16-be"), pa.binary())

    def enc(v: str) -> bytes:
        try:
            return v.encode(cs)
        except UnicodeEncodeError:
            raise _coding_error(node, cs) from None
    return _per_distinct(a[0].cast(pa.string()), enc, pa.binary())


def _decode_charset(a, node, b):
    cs = _charset(node, 1)
    if cs == "utf-8":
        out = a[0].cast(pa.large_binary())
        if pc.all(pc.utf8_is_valid(out.view(pa.large_string())) if hasattr(
                pc, "utf8_is_valid") else pa.scalar(True)).as_py() is not False:
            try:
                return out.cast(pa.large_string())
            except pa.ArrowInvalid:
                pass
        return _per_distinct(out.cast(pa.binary()), lambda v: v.decode(
            "utf-8", errors="replace"), pa.string())

    def dec(v: bytes) -> str:
        try:
            return v.decode(cs)
        except UnicodeDecodeError:
            raise _coding_error(node, cs) from None
    return _per_distinct(a[0].cast(pa.binary()), dec, pa.string())


_spec("encode", lambda t: (S, S), lambda t: BIN, _encode, may_fail=True)
_spec("decode", lambda t: (BIN, S) if not isinstance(t[0], T.StringType) else (BIN, S),
      lambda t: S, _decode_charset, may_fail=True)


def _translate(a, node, b):
    """Spark's StringTranslate: each character of ``from`` maps to the character of ``to`` at
    its position (the first occurrence wins), or is deleted when ``to`` is shorter."""
    okf, frm = _lit(node, 1)
    okt, to = _lit(node, 2)
    if not (okf and okt) or frm is None or to is None:
        raise UnsupportedError("translate with a non-literal `from` or `to` argument")
    mapping: dict[str, str] = {}
    for i, ch in enumerate(frm):
        mapping.setdefault(ch, to[i] if i < len(to) else "")
    if not mapping:
        return a[0]
    s = K.Utf8(a[0])
    keys = s.char_keys()
    src = np.array([K.Utf8(pa.array([c], pa.large_string())).char_keys()[0]
                    for c in mapping], dtype=np.uint32)
    rep_text = "".join(mapping.values())
    rep_bytes = np.frombuffer(rep_text.encode("utf-8"), dtype=np.uint8)
    rep_len = np.array([len(v.encode("utf-8")) for v in mapping.values()], dtype=np.int64)
    rep_start = np.concatenate([[0], np.cumsum(rep_len)[:-1]]).astype(np.int64)
    order = np.argsort(src)
    idx = np.searchsorted(src[order], keys)
    idx = np.minimum(idx, len(src) - 1)
    hit = src[order][idx] == keys
    which = order[idx]
    pos = s.char_pos[:-1]
    clen = np.diff(s.char_pos)
    shift = len(s.data)
    buf = np.concatenate([s.data, rep_bytes])
    starts = np.where(hit, shift + rep_start[which], pos)
    lengths = np.where(hit, rep_len[which], clen)
    return K.assemble(buf, s.char_rows(), starts, lengths, s.n, s.valid)


_spec("translate", _strs(3), lambda t: S, _translate)


def _substring_index(a, node, b):
    """Spark's SubstringIndex: the text before the ``count``-th ``delim`` (from the right for a
    negative ``count``), the whole string when there are fewer; ``''`` for ``count = 0`` or an
    empty ``delim``."""
    s, d = K.Utf8(a[0]), K.Utf8(a[1])
    valid = K.all_valid(a)
    cnt = K.ints(a[2])
    dlen = np.diff(d.offsets)
    mrow, mpos = K.find_matches(s, d, valid)
    sel = K.greedy_non_overlapping(mrow, mpos, dlen[mrow])
    mrow, mpos = mrow[sel], mpos[sel]
    per_row = np.bincount(mrow, minlength=s.n)
    first = np.cumsum(per_row) - per_row
    lo, hi = s.starts.copy(), s.ends.copy()
    pos_rows = np.flatnonzero(valid & (cnt > 0) & (per_row >= cnt))
    hi[pos_rows] = mpos[first[pos_rows] + cnt[pos_rows] - 1]
    neg_rows = np.flatnonzero(valid & (cnt < 0) & (per_row >= -cnt))
    k = first[neg_rows] + per_row[neg_rows] + cnt[neg_rows]
    lo[neg_rows] = mpos[k] + dlen[neg_rows]
    empty = (cnt == 0) | (dlen == 0)
    hi = np.where(empty, lo, hi)
    return K.slice_bytes(s, lo, hi, valid)


_spec("substring_index", lambda t: (S, S, I), lambda t: S, _substring_index)


def _quote(a, node, b):
    inner = pc.replace_substring(a[0].cast(pa.large_string()), pattern="'", replacement="\\'")
    return pc.binary_join_element_wise(pa.scalar("'", pa.large_string()), inner,
                                       pa.scalar("'", pa.large_string()),
                                       pa.scalar("", pa.large_string()))


_spec("quote", _strs(1), lambda t: S, _quote)


def _find_in_set(a, node, b):
    """1-based position of ``s`` in the comma-separated ``list`` (0 when absent or when ``s``
    has a comma)."""
    s_arr, l_arr = a[0].cast(pa.large_string()), a[1].cast(pa.large_string())
    n = len(s_arr)
    valid = K.all_valid([s_arr, l_arr])
    parts = pc.split_pattern(l_arr, pattern=",")
    flat = pc.list_flatten(parts)
    rows = pc.list_parent_indices(parts).to_numpy(zero_copy_only=False)
    offsets = parts.offsets.to_numpy(zero_copy_only=False)
    local = np.arange(len(flat), dtype=np.int64) - offsets[:-1][rows] + 1 if len(flat) else \
        np.zeros(0, np.int64)
    eq = pc.fill_null(pc.equal(flat, pc.take(s_arr, pa.array(rows, pa.int64()))), False) \
        .to_numpy(zero_copy_only=False)
    out = np.zeros(n, dtype=np.int64)
    hit_rows, hit_pos = rows[eq], local[eq]
    out[hit_rows[::-1]] = hit_pos[::-1]  # the first match wins
    has_comma = pc.fill_null(pc.match_substring(s_arr, ","), False).to_numpy(
        zero_copy_only=False)
    out = np.where(has_comma, 0, out)
    return pa.array(out.astype(np.int32), mask=~valid)


_spec("find_in_set", _strs(2), lambda t: I, _find_in_set)


def _elt(a, node, b):
    """``elt(n, s1, s2, ...)``: the ``n``-th string; out of range: NULL, or with ANSI on
    ``INVALID_ARRAY_INDEX`` (Spark's Elt)."""
    idx = a[0]
    k = len(a) - 1
    n = len(idx)
    iv = K.ints(idx)
    ivalid = K.all_valid([idx])
    bad = ivalid & ((iv < 1) | (iv > k))
    if node.ansi and bad.any():
        v = int(iv[np.flatnonzero(bad)[0]])
        raise ExecutionError(
            f"The index {v} is out of bounds. The array has {k} elements. Use the SQL function "
            "`get()` to tolerate accessing element at invalid index and return NULL instead.",
            error_class="INVALID_ARRAY_INDEX",
            parameters={"indexValue": str(v), "arraySize": str(k), "ansiConfig":
                        '"spark.sql.ansi.enabled"'})
    ok = ivalid & ~bad
    cols = [x.cast(pa.large_string()) for x in a[1:]]
    stacked = pa.concat_arrays(cols)
    take = np.where(ok, (np.clip(iv, 1, k) - 1) * n + np.arange(n), 0)
    out = pc.take(stacked, pa.array(take, pa.int64()))
    return pc.if_else(pa.array(ok), out, pa.scalar(None, pa.large_string()))


def _elt_inputs(types):
    if len(types) < 2:
        return None
    t0 = types[0]
    if not (t0.is_integral or isinstance(t0, (T.NullType, T.StringType))):
        return None
    return (I,) + (S,) * (len(types) - 1)


_spec("elt", _elt_inputs, lambda t: S, _elt, null_intolerant=False, ansi_aware=True,
      may_fail=True)


def _overlay(a, node, b):
    """Spark's Overlay: ``s`` with ``len`` characters from ``pos`` replaced by ``r`` (``len``
    -1: the length of ``r``)."""
    s, r = K.Utf8(a[0]), K.Utf8(a[1])
    valid = K.all_valid(a)
    pos = K.ints(a[2])
    ln = K.ints(a[3]) if len(a) > 3 else np.full(s.n, -1, dtype=np.int64)
    ln = np.where(ln < 0, r.nchars, ln)
    rows = np.arange(s.n, dtype=np.int64)
    head_end = s.byte_at(rows, np.maximum(pos - 1, 0))
    # the tail is ``substring(s, pos + len)``: a position below 1 counts from the end
    tail = pos + ln
    tail_start = s.byte_at(rows, np.where(tail > 0, tail - 1, np.where(
        tail < 0, np.maximum(s.nchars + tail, 0), 0)))
    shift = len(s.data)
    buf = np.concatenate([s.data, r.data])
    prow = np.repeat(rows, 3)
    starts = np.stack([s.starts, shift + r.starts, tail_start], axis=1).ravel()
    lengths = np.stack([head_end - s.starts, r.ends - r.starts, s.ends - tail_start],
                       axis=1).ravel()
    return K.assemble(buf, prow, starts, np.maximum(lengths, 0), s.n, valid)


_spec("overlay", lambda t: (S, S, I, I)[: len(t)], lambda t: S, _overlay)

STRING_FUNCTIONS.update({
    "initcap": ("initcap", 1, 1), "left": ("left", 2, 2), "right": ("right", 2, 2),
    "repeat": ("repeat", 2, 2), "space": ("space", 1, 1), "reverse": ("reverse", 1, 1),
    "ascii": ("ascii", 1, 1), "chr": ("chr", 1, 1), "char": ("chr", 1, 1),
    "octet_length": ("octet_length", 1, 1), "bit_length": ("bit_length", 1, 1),
    "base64": ("base64", 1, 1), "unbase64": ("unbase64", 1, 1),
    "encode": ("encode", 2, 2), "translate": ("translate", 3, 3),
    "substring_index": ("substring_index", 3, 3), "quote": ("quote", 1, 1),
    "find_in_set": ("find_in_set", 2, 2), "elt": ("elt", 2, 1 << 20),
    "btrim": ("trim", 1, 2),
})


def _split_part(a, node, b):
    """Spark's SplitPart: the ``n``-th piece of ``s`` split on ``delim`` (from the end for a
    negative ``n``), ``''`` when out of range; ``n = 0`` raises ``INVALID_INDEX_OF_ZERO``."""
    okd, delim = _lit(node, 1)
    s_arr = a[0].cast(pa.large_string())
    n = len(s_arr)
    idx = K.ints(a[2])
    valid = K.all_valid(a)
    if (valid & (idx == 0)).any():
        raise ExecutionError("The index 0 is invalid. An index shall be either < 0 or > 0 (the "
                             "first element has index 1).", error_class="INVALID_INDEX_OF_ZERO")
    if not okd:
        raise UnsupportedError("split_part with a non-literal delimiter")
    if delim is None:
        return pa.nulls(n, pa.large_string())
    if delim == "":
        parts = pa.ListArray.from_arrays(pa.array(np.arange(n + 1, dtype=np.int32)),
                                         pc.fill_null(s_arr, ""))
    else:
        parts = pc.split_pattern(pc.fill_null(s_arr, ""), pattern=delim)
    counts = pc.list_value_length(parts).to_numpy(zero_copy_only=False).astype(np.int64)
    offsets = parts.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    pos = np.where(idx > 0, idx - 1, counts + idx)
    ok = valid & (pos >= 0) & (pos < counts)
    flat = pc.list_flatten(parts).cast(pa.large_string())
    take = np.where(ok, offsets[:-1] + np.where(ok, pos, 0), 0)
    got = pc.take(flat, pa.array(take, pa.int64())) if len(flat) else pa.nulls(n, flat.type)
    out = pc.if_else(pa.array(ok), got, pa.scalar("", pa.large_string()))
    return pc.if_else(pa.array(valid), out, pa.scalar(None, pa.large_string()))


_spec("split_part", lambda t: (S, S, I), lambda t: S, _split_part, may_fail=True)


def _levenshtein(a, node, b):
    """Edit distance over characters, one NumPy step per pair of character positions (all rows
    at once); with a threshold, -1 when the distance exceeds it."""
    x, y = K.Utf8(a[0]), K.Utf8(a[1])
    valid = K.all_valid(a)
    n = x.n
    lx, ly = int(x.nchars.max(initial=0)), int(y.nchars.max(initial=0))
    gx = np.full((n, lx), -1, dtype=np.int64)
    gy = np.full((n, ly), -2, dtype=np.int64)
    if lx:
        gx[x.char_rows(), np.arange(len(x.char_pos) - 1) - x.first_char[x.char_rows()]] = \
            x.char_keys()
    if ly:
        gy[y.char_rows(), np.arange(len(y.char_pos) - 1) - y.first_char[y.char_rows()]] = \
            y.char_keys()
    dist = _levenshtein_at(gx, gy, x.nchars, y.nchars)
    if len(a) > 2:
        thr = K.ints(a[2])
        dist = np.where(dist > thr, -1, dist)
    return pa.array(dist.astype(np.int32), mask=~valid)


def _levenshtein_at(gx, gy, nx, ny):
    """The DP table read at each row's own lengths (characters past a row's end never match
    and are not counted)."""
    n, lx = gx.shape
    ly = gy.shape[1]
    out = np.where(nx == 0, ny, 0)
    prev = np.tile(np.arange(ly + 1, dtype=np.int64), (n, 1))
    for i in range(lx):
        cur = np.empty_like(prev)
        cur[:, 0] = i + 1
        for j in range(ly):
            cost = (gx[:, i] != gy[:, j]).astype(np.int64)
            cur[:, j + 1] = np.minimum(np.minimum(prev[:, j + 1] + 1, cur[:, j] + 1),
                                       prev[:, j] + cost)
        prev = cur
        done = nx == i + 1
        out = np.where(done, prev[np.arange(n), ny], out)
    return out


_spec("levenshtein", lambda t: (S, S, I)[: len(t)], lambda t: I, _levenshtein)

_SOUNDEX = np.frombuffer(b"01230127022455012623017202", dtype=np.uint8)


def _soundex(a, node, b):
    """Spark's ``UTF8String.soundex`` over the bytes: a first byte that is not an ASCII letter
    returns the string unchanged."""
    s = K.Utf8(a[0])
    n = s.n
    data = np.concatenate([s.data, np.zeros(1, np.uint8)])
    length = s.ends - s.starts
    first = np.where(length > 0, data[np.minimum(s.starts, len(data) - 1)], 0).astype(np.int64)
    first = np.where((first >= 97) & (first <= 122), first - 32, first)
    letter = (first >= 65) & (first <= 90) & (length > 0)
    sx = np.full((n, 4), ord("0"), dtype=np.uint8)
    sx[:, 0] = np.where(letter, first, 0)
    sxi = np.ones(n, dtype=np.int64)
    last = np.where(letter, _SOUNDEX[np.clip(first - 65, 0, 25)], 0).astype(np.int64)
    active = letter.copy()
    for k in range(1, int(length.max(initial=0))):
        live = active & (length > k)
        if not live.any():
            break
        ch = data[np.where(live, s.starts + k, 0)].astype(np.int64)
        ch = np.where((ch >= 97) & (ch <= 122), ch - 32, ch)
        is_letter = (ch >= 65) & (ch <= 90)
        code = _SOUNDEX[np.clip(ch - 65, 0, 25)].astype(np.int64)
        not_letter = live & ~is_letter
        last = np.where(not_letter, ord("0"), last)
        step = live & is_letter & (code != ord("7"))
        emit = step & (code != ord("0")) & (code != last)
        rows = np.flatnonzero(emit)
        sx[rows, sxi[rows]] = code[rows]
        sxi = sxi + emit
        last = np.where(step, code, last)
        active &= sxi <= 3
    rows = np.arange(n, dtype=np.int64)
    coded = K.assemble(sx.ravel(), rows, rows * 4, np.full(n, 4), n, s.valid)
    return pc.if_else(pa.array(letter), coded, a[0].cast(pa.large_string()))


_spec("soundex", _strs(1), lambda t: S, _soundex)


def _url_encode(a, node, b):
    """Java's ``URLEncoder.encode(s, UTF-8)``: space as ``+``, ``. - * _`` and alphanumerics
    kept (once per distinct value)."""
    return _per_distinct(a[0].cast(pa.string()),
                         lambda v: quote_plus(v, safe="*").replace("~", "%7E"), pa.string())


def _url_decode(a, node, b):
    bad = re.compile(r"%(?![0-9a-fA-F]{2})")

    def dec(v: str) -> str | None:
        if bad.search(v):
            if node.key == "try_url_decode":
                return None
            raise ExecutionError(
                f"Cannot decode url : {v}.", error_class="CANNOT_DECODE_URL",
                parameters={"url": v})
        return unquote_plus(v, errors="strict")
    return _per_distinct(a[0].cast(pa.string()), dec, pa.string())


_spec("url_encode", _strs(1), lambda t: S, _url_encode)
_spec("url_decode", _strs(1), lambda t: S, _url_decode, may_fail=True)
_spec("try_url_decode", _strs(1), lambda t: S, _url_decode)

STRING_FUNCTIONS.update({
    "split_part": ("split_part", 3, 3), "levenshtein": ("levenshtein", 2, 3),
    "soundex": ("soundex", 1, 1), "url_encode": ("url_encode", 1, 1),
    "url_decode": ("url_decode", 1, 1), "try_url_decode": ("try_url_decode", 1, 1),
})


def _format_number(a, node, b):
    """Spark's FormatNumber with an INT literal ``d``: ``#,###,##0.00`` (``d`` decimals,
    HALF_EVEN on the value's shortest decimal, as ``DecimalFormat``), NULL for ``d < 0``; once
    per distinct value."""
    okd, digits = _lit(node, 1)
    if not okd:
        raise UnsupportedError("format_number with a non-literal number of decimals")
    x = a[0]
    if digits is None or not isinstance(digits, int) or digits < 0:
        return pa.nulls(len(x), pa.string())
    step = Decimal(1).scaleb(-digits)

    def fmt(v) -> str:
        if isinstance(v, float):
            if v != v:
                return "NaN"
            if v in (float("inf"), float("-inf")):
                return "-\u221e" if v < 0 else "\u221e"
            v = Decimal(repr(v))
        q = Decimal(v).quantize(step, rounding=ROUND_HALF_EVEN, context=Context(prec=400))
        return f"{q:,.{digits}f}"
    return _per_distinct(x, fmt, pa.string())


def _format_number_inputs(types):
    t = types[0]
    if not (t.is_numeric or isinstance(t, T.NullType)):
        return None
    return (None, I)


_spec("format_number", _format_number_inputs, lambda t: S, _format_number,
      expected='"NUMERIC"')
STRING_FUNCTIONS["format_number"] = ("format_number", 2, 2)
