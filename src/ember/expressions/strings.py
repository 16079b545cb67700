"""String functions (``upper``, ``substring``, ``concat``, ``trim``, ``lpad`` ...).

Arguments are implicitly cast to string (``upper(1)`` is ``upper(cast(1 as string))``) and
positions/lengths to int, as Spark's ImplicitCastInputTypes does.  Kernels are Arrow's ``utf8_*``
functions when the pattern/position arguments are literals; otherwise a documented slow path
evaluates row by row.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.base import Literal
from ember.expressions.misc import FunctionSpec, ScalarFunction, register

S, I, B = T.STRING, T.INT, T.BOOLEAN


def _lit(node: ScalarFunction, i: int):
    a = node.arguments[i]
    return (True, a.value) if isinstance(a, Literal) else (False, None)


def rowwise(fn, arrays: list[pa.Array], out_type: pa.DataType) -> pa.Array:
    """Slow path: ``fn`` applied per row (NULL if any argument is NULL)."""
    cols = [a.to_pylist() for a in arrays]
    out = [None if any(v is None for v in row) else fn(*row) for row in zip(*cols)]
    return pa.array(out, type=out_type)


def _strs(n: int):
    return lambda types: (S,) * n


def _spec(key, inputs, result, kernel, **kw):
    return register(FunctionSpec(key, inputs, result, kernel, **kw))


_spec("upper", _strs(1), lambda t: S, lambda a, n, b: pc.utf8_upper(a[0]), expected='"STRING"')
_spec("lower", _strs(1), lambda t: S, lambda a, n, b: pc.utf8_lower(a[0]), expected='"STRING"')
_spec("length", _strs(1), lambda t: I, lambda a, n, b: pc.utf8_length(a[0]).cast(pa.int32()))


def _substring_py(s: str, pos: int, length: int) -> str:
    # UTF8String.substringSQL
    n = len(s)
    start = pos - 1 if pos > 0 else (n + pos if pos < 0 else 0)
    end = start + length if length < (1 << 40) else 1 << 40
    start = max(start, 0)
    end = max(min(end, n), 0)
    return s[start:end] if start < end else ""


def _substring(a, node, b):
    okp, pos = _lit(node, 1)
    okl, length = _lit(node, 2) if len(node.arguments) > 2 else (True, 2147483647)
    if okp and okl and pos is not None and length is not None and pos >= 0:
        start = max(pos - 1, 0)
        if length <= 0:
            return pc.if_else(pc.is_valid(a[0]), pa.scalar("", a[0].type), a[0])
        return pc.utf8_slice_codeunits(a[0], start, start + length)
    arrays = a if len(a) > 2 else a + [pa.repeat(pa.scalar(2147483647, pa.int32()), len(a[0]))]
    return rowwise(_substring_py, arrays, pa.large_string())


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
    return pc.binary_join_element_wise(*[x.cast(pa.large_string()) for x in rest],
                                       sep.cast(pa.large_string()), null_handling="skip")


_spec("concat_ws", lambda t: (S,) * len(t), lambda t: S, _concat_ws, null_intolerant=False)


def _trim(fn):
    def k(a, node, b):
        if len(a) == 1:
            return fn(a[0], characters=" ")
        ok, chars = _lit(node, 1)
        if ok and chars is not None:
            return fn(a[0], characters=chars)
        py = {pc.utf8_trim: str.strip, pc.utf8_ltrim: str.lstrip, pc.utf8_rtrim: str.rstrip}[fn]
        return rowwise(lambda s, c: py(s, c), a, pa.large_string())
    return k


_spec("trim", lambda t: (S,) * len(t), lambda t: S, _trim(pc.utf8_trim))
_spec("ltrim", lambda t: (S,) * len(t), lambda t: S, _trim(pc.utf8_ltrim))
_spec("rtrim", lambda t: (S,) * len(t), lambda t: S, _trim(pc.utf8_rtrim))


def _pad(left: bool):
    def py(s: str, n: int, p: str) -> str:
        if n <= 0:
            return ""
        if len(s) >= n:
            return s[:n]
        if not p:
            return s
        fill = (p * (n // len(p) + 1))[: n - len(s)]
        return fill + s if left else s + fill

    def k(a, node, b):
        okn, n = _lit(node, 1)
        okp, p = _lit(node, 2) if len(a) > 2 else (True, " ")
        if okn and okp and n is not None and p is not None and len(p) == 1 and n > 0:
            cut = pc.utf8_slice_codeunits(a[0], 0, n)
            fn = pc.utf8_lpad if left else pc.utf8_rpad
            return fn(cut, width=n, padding=p)
        arrays = a if len(a) > 2 else a + [pa.repeat(pa.scalar(" ", pa.large_string()), len(a[0]))]
        return rowwise(py, arrays, pa.large_string())
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
    arrays = a if len(a) > 2 else a + [pa.repeat(pa.scalar("", pa.large_string()), len(a[0]))]
    return rowwise(lambda s, x, r: s.replace(x, r) if x else s, arrays, pa.large_string())


_spec("replace", lambda t: (S,) * len(t), lambda t: S, _replace)


def _instr(a, node, b):
    ok, sub = _lit(node, 1)
    if ok and sub is not None:
        return pc.add(pc.find_substring(a[0], pattern=sub), 1).cast(pa.int32())
    return rowwise(lambda s, x: s.find(x) + 1, a, pa.int32())


_spec("instr", _strs(2), lambda t: I, _instr)


def _locate(a, node, b):
    # locate(substr, str[, pos]) -- 1-based, 0 when not found or pos < 1
    def py(sub: str, s: str, pos: int) -> int:
        if pos < 1:
            return 0
        return s.find(sub, pos - 1) + 1
    arrays = a if len(a) > 2 else a + [pa.repeat(pa.scalar(1, pa.int32()), len(a[0]))]
    ok, sub = _lit(node, 0)
    okp, pos = _lit(node, 2) if len(a) > 2 else (True, 1)
    if ok and okp and sub is not None and pos == 1:
        return pc.add(pc.find_substring(a[1], pattern=sub), 1).cast(pa.int32())
    return rowwise(py, arrays, pa.int32())


_spec("locate", lambda t: (S, S, I)[: len(t)], lambda t: I, _locate)


def _predicate(fn, py):
    def k(a, node, b):
        ok, pat = _lit(node, 1)
        if ok and pat is not None:
            return fn(a[0], pattern=pat)
        return rowwise(py, a, pa.bool_())
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
