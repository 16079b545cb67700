"""Regular-expression functions: ``rlike``/``regexp_like``/``regexp`` (SQL ``a RLIKE p``,
``a REGEXP p``), ``regexp_extract(s, p[, idx])``, ``regexp_replace(s, p, r[, pos])`` and
``ilike(s, p[, escape])``.

Spark uses ``java.util.regex``; Ember runs the pattern on RE2 through Arrow
(``match_substring_regex``, ``extract_regex``, ``replace_substring_regex``), after
:func:`translate` rewrote the Java syntax RE2 reads differently:

- ``.`` excludes every Java line terminator (``\\n``, ``\\r``, U+0085, U+2028, U+2029), not only
  ``\\n`` (unless the pattern sets ``(?s)``);
- ``\\s``/``\\S`` include ``\\x0B`` (Java's ``[ \\t\\n\\x0B\\f\\r]``);
- POSIX classes ``\\p{Alpha}``, ``\\p{Digit}``, ``\\p{Upper}`` ... become explicit ASCII ranges,
  ``\\p{IsL}``/``\\p{IsLatin}`` RE2's ``\\p{L}``/``\\p{Latin}``;
- ``\\uhhhh`` -> ``\\x{hhhh}``, ``\\e`` -> ``\\x1B``, ``\\0ooo`` octal, ``\\Q...\\E`` quoted;
- named groups ``(?<n>...)`` -> ``(?P<n>...)``;
- replacement strings: ``$n``/``${name}`` group references and ``\\x`` escapes (Java's
  ``Matcher.appendReplacement``) -> RE2's ``\\n``.

Patterns RE2 cannot run (look-around, back-references, possessive quantifiers, atomic groups) and
``regexp_replace`` patterns that can match the empty string (RE2 and Java differ on an empty match
right after a non-empty one: Java ``regexp_replace('aaa', 'a*', 'X')`` is ``XX``) fall back to
Python's ``re`` (ASCII mode, as Java's default), one call per *distinct* input value.

Known differences kept: ``$`` (without ``(?m)``) does not match before a final line terminator
(Java's does); ``(?i)`` folds Unicode case (Java's default folds ASCII only); Java's character
class unions/intersections (``[a-z&&[^e]]``) are not supported.  An invalid pattern raises
``INVALID_PARAMETER_VALUE.PATTERN`` when the function runs, as Spark does.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import ExecutionError, UnsupportedError
from ember.expressions.base import Literal
from ember.expressions.common import TypeCheckFailure, to_mask
from ember.expressions.misc import FunctionSpec, ScalarFunction, register, nullable_from_arguments

__all__ = ["translate", "Translated", "REGEX_FUNCTIONS", "java_replacement"]

S, I, B = T.STRING, T.INT, T.BOOLEAN

_LINE_TERMS_RE2 = r"[^\n\r\x{85}\x{2028}\x{2029}]"
_LINE_TERMS_PY = "[^\\n\\r\\x85\\u2028\\u2029]"
_SPACE = r"\t\n\x0B\f\r "
_POSIX = {
    "Lower": "a-z", "Upper": "A-Z", "ASCII": r"\x00-\x7F", "Alpha": "a-zA-Z", "Digit": "0-9",
    "Alnum": "a-zA-Z0-9", "Punct": r"!-/:-@\[-`{-~", "Graph": "!-~", "Print": " -~",
    "Blank": r" \t", "Cntrl": r"\x00-\x1F\x7F", "XDigit": "0-9a-fA-F", "Space": _SPACE,
}


@dataclass(frozen=True)
class Translated:
    """A Java pattern for RE2 (``re2``; None when RE2 cannot express it) and for Python's ``re``
    (``py``; None when it cannot either), its number of capturing groups and group names (in
    order; None for unnamed).  ``re2_named`` names every group ``g0`` (whole match), ``g1`` ...
    for ``extract_regex``."""

    re2: str | None
    py: str | None
    re2_named: str | None
    groups: int
    names: tuple[str | None, ...]


@functools.lru_cache(maxsize=1024)
def translate(pattern: str) -> Translated:
    """Java regex syntax -> RE2 and Python ``re`` syntax (see the module docstring).

    >>> translate(r"(?<y>\\d{4})-\\p{Digit}+.").re2
    '(?P<y>\\\\d{4})-[0-9]+[^\\\\n\\\\r\\\\x{85}\\\\x{2028}\\\\x{2029}]'
    """
    dotall = re.search(r"\(\?[a-zA-Z]*s[a-zA-Z-]*[):]", pattern) is not None
    r2: list[str] = []
    py: list[str] = []
    named: list[str] = []
    names: list[str | None] = []
    ok2 = okpy = True
    depth = 0  # inside a character class
    i, n = 0, len(pattern)

    def emit(a: str, b: str | None = None, c: str | None = None) -> None:
        r2.append(a)
        py.append(a if b is None else b)
        named.append(a if c is None else c)

    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            c = pattern[i + 1]
            i += 2
            if c == "Q":
                end = pattern.find("\\E", i)
                lit = pattern[i:] if end < 0 else pattern[i:end]
                i = n if end < 0 else end + 2
                q = "".join("\\" + x if not x.isalnum() and x != " " and ord(x) < 128 else x
                            for x in lit)
                emit(q)
            elif c in "sS":
                if depth:
                    emit(_SPACE if c == "s" else "\\S")
                else:
                    emit(f"[{'^' if c == 'S' else ''}{_SPACE}]")
            elif c == "z":
                emit("\\z", "\\Z")
            elif c == "Z":
                emit("\\z", "\\Z")
            elif c == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", pattern[i:i + 4]):
                h = pattern[i:i + 4]
                i += 4
                emit(f"\\x{{{h}}}", f"\\u{h}")
            elif c == "x" and i < n and pattern[i] == "{":
                end = pattern.find("}", i)
                h = pattern[i + 1:end] if end > 0 else ""
                i = end + 1 if end > 0 else n
                emit(f"\\x{{{h}}}", f"\\U{int(h or '0', 16):08x}")
            elif c == "e":
                emit("\\x1B")
            elif c == "0":
                m = re.match(r"[0-3]?[0-7]{1,2}", pattern[i:])
                digits = m.group(0) if m else "0"
                i += len(m.group(0)) if m else 0
                emit(f"\\x{{{int(digits, 8):x}}}", f"\\x{int(digits, 8):02x}")
            elif c in "pP":
                if i < n and pattern[i] == "{":
                    end = pattern.find("}", i)
                    name = pattern[i + 1:end] if end > 0 else ""
                    i = end + 1 if end > 0 else n
                else:
                    name = pattern[i:i + 1]
                    i += 1
                rng = _POSIX.get(name)
                if rng is not None and not (depth and c == "P"):
                    neg = "^" if c == "P" else ""
                    emit(rng if depth else f"[{neg}{rng}]")
                else:
                    uname = name[2:] if name.startswith("Is") else name
                    emit(f"\\{c}{{{uname}}}")
                    okpy = False
            elif c.isdigit() or c in "kGhHvVRX":
                ok2 = False  # back-references and Java-only escapes
                if c == "k":
                    m = re.match(r"<(\w+)>", pattern[i:])
                    if m:
                        i += len(m.group(0))
                        emit("", f"(?P={m.group(1)})")
                        continue
                emit(f"\\{c}")
                if not c.isdigit():
                    okpy = False
            else:
                emit("\\" + c)
            continue
        if depth:
            if ch == "[":
                depth += 1
                ok2 = okpy = False  # Java class union
            elif ch == "]":
                depth -= 1
            elif ch == "&" and pattern.startswith("&&", i):
                ok2 = okpy = False
            emit(ch)
            i += 1
            continue
        if ch == "[":
            depth = 1
            j = i + 1
            start = "["
            if j < n and pattern[j] == "^":
                start += "^"
                j += 1
            if j < n and pattern[j] == "]":  # a leading ']' is literal
                start += "\\]"
                j += 1
            emit(start)
            i = j
            continue
        if ch == "(":
            if pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i):
                end = pattern.find(">", i)
                name = pattern[i + 3:end]
                names.append(name)
                emit(f"(?P<{name}>", None, f"(?P<g{len(names)}>")
                i = end + 1
                continue
            if pattern.startswith("(?", i):
                if pattern.startswith(("(?=", "(?!", "(?<=", "(?<!", "(?>"), i):
                    ok2 = False
                emit("(?")
                i += 2
                continue
            names.append(None)
            emit("(", None, f"(?P<g{len(names)}>")
            i += 1
            continue
        if ch == "." and not dotall:
            emit(_LINE_TERMS_RE2, _LINE_TERMS_PY)
            i += 1
            continue
        if ch == "+" and i > 0 and pattern[i - 1] in "*+?}" and (i < 2 or pattern[i - 2] != "\\"):
            ok2 = False  # possessive quantifier
        emit(ch)
        i += 1
    re2 = "".join(r2) if ok2 else None
    return Translated(re2, "".join(py) if okpy else None,
                      f"(?P<g0>{''.join(named)})" if ok2 else None, len(names), tuple(names))


def _invalid_pattern(fn: str, pattern: str) -> ExecutionError:
    return ExecutionError(
        f"The value of parameter(s) `regexp` in `{fn}` is invalid: '{pattern}'.",
        error_class="INVALID_PARAMETER_VALUE.PATTERN",
        parameters={"parameter": "`regexp`", "functionName": f"`{fn}`", "value": f"'{pattern}'"})


@functools.lru_cache(maxsize=1024)
def _compiled(fn: str, pattern: str) -> tuple[Translated, bool, re.Pattern | None]:
    """(translation, RE2 usable, Python regex or None); raises for an invalid pattern."""
    tr = translate(pattern)
    use_re2 = False
    if tr.re2 is not None:
        try:
            pc.match_substring_regex(pa.array([""], pa.string()), tr.re2)
            use_re2 = True
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            use_re2 = False
    rx = None
    if tr.py is not None:
        try:
            rx = re.compile(tr.py, re.ASCII)
        except re.error:
            rx = None
    if not use_re2 and rx is None:
        if tr.re2 is None and tr.py is None:
            raise UnsupportedError(f"Java regex feature not supported by Ember: '{pattern}'",
                                   error_class="UNSUPPORTED_FEATURE")
        raise _invalid_pattern(fn, pattern)
    return tr, use_re2, rx


def _per_distinct(values: pa.Array, fn, out_type: pa.DataType) -> pa.Array:
    """``fn(value)`` once per distinct non-NULL value of ``values`` (the Python slow path)."""
    uniq = pc.unique(values.drop_null())
    results = pa.array([fn(v) for v in uniq.to_pylist()], type=out_type)
    return pc.take(results, pc.index_in(values, value_set=uniq))


def _by_pattern(s: pa.Array, p: pa.Array, run, out_type: pa.DataType) -> pa.Array:
    """A column pattern: ``run(strings, pattern)`` once per distinct pattern; NULL where the
    string or the pattern is NULL."""
    out = pa.nulls(len(s), out_type)
    for pat in pc.unique(p.drop_null()).to_pylist():
        rows = pc.fill_null(pc.equal(p, pat), False)
        sub = run(s.filter(rows), pat)
        idx = np.flatnonzero(to_mask(rows))
        out = pc.replace_with_mask(out, rows, sub.cast(out_type)) if len(idx) else out
    return out


def _distinct_keys(cols: list[pa.Array]) -> list[tuple]:
    """The distinct rows (all values non-NULL) of parallel arrays."""
    names = [f"k{i}" for i in range(len(cols))]
    tbl = pa.table(dict(zip(names, cols))).drop_null()
    groups = tbl.group_by(names).aggregate([])
    return list(zip(*(groups.column(nm).to_pylist() for nm in names)))


def _rows_equal(cols: list[pa.Array], key: tuple) -> pa.Array:
    m = None
    for c, k in zip(cols, key):
        e = pc.equal(c, pa.scalar(k, c.type))
        m = e if m is None else pc.and_(m, e)
    return pc.fill_null(m, False)


def _pattern_arg(node: ScalarFunction, arrays: list[pa.Array], i: int):
    a = node.arguments[i]
    return (True, a.value) if isinstance(a, Literal) else (False, arrays[i])


# -- rlike -----------------------------------------------------------------------------------


def _rlike_one(fn: str):
    def run(s: pa.Array, pattern: str) -> pa.Array:
        tr, use_re2, rx = _compiled(fn, pattern)
        if use_re2:
            return pc.match_substring_regex(s, tr.re2)
        return _per_distinct(s, lambda v: rx.search(v) is not None, pa.bool_())
    return run


def _rlike(arrays, node, batch):
    fn = node.fn_name.lower()
    ok, pat = _pattern_arg(node, arrays, 1)
    run = _rlike_one(fn)
    if ok and pat is None:
        return pa.nulls(len(arrays[0]), pa.bool_())
    return run(arrays[0], pat) if ok else _by_pattern(arrays[0], pat, run, pa.bool_())


# -- regexp_extract --------------------------------------------------------------------------


def _group_index_error(groups: int, idx: int) -> ExecutionError:
    return ExecutionError(
        f"The value of parameter(s) `idx` in `regexp_extract` is invalid: Expects group index "
        f"between 0 and {groups}, but got {idx}.",
        error_class="INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX",
        parameters={"parameter": "`idx`", "functionName": "`regexp_extract`",
                    "groupCount": str(groups), "groupIndex": str(idx)})


def _extract_one(s: pa.Array, pattern: str, idx: int) -> pa.Array:
    tr, use_re2, rx = _compiled("regexp_extract", pattern)
    if not 0 <= idx <= tr.groups:
        # Spark checks the index only once a row matches
        if pc.any(_rlike_one("regexp_extract")(s, pattern)).as_py():
            raise _group_index_error(tr.groups, idx)
        return pc.if_else(pc.is_valid(s), pa.scalar("", pa.string()), pa.scalar(None, pa.string()))
    if use_re2:
        parts = pc.extract_regex(s, tr.re2_named)
        got = pc.struct_field(parts, [idx])
        # no match -> ''; a group that did not take part -> '' (Arrow gives '' already)
        return pc.if_else(pc.is_valid(s), pc.fill_null(got, ""), pa.scalar(None, got.type))

    def one(v: str) -> str:
        m = rx.search(v)
        return (m.group(idx) or "") if m else ""
    return _per_distinct(s, one, pa.string())


def _regexp_extract(arrays, node, batch):
    s = arrays[0]
    okp, pat = _pattern_arg(node, arrays, 1)
    oki, idx = _pattern_arg(node, arrays, 2)
    if okp and oki:
        if pat is None or idx is None:
            return pa.nulls(len(s), pa.string())
        return _extract_one(s, pat, idx)
    out = pa.nulls(len(s), pa.string())
    p_arr = pat if not okp else pa.repeat(pa.scalar(pat, pa.string()), len(s))
    i_arr = idx if not oki else pa.repeat(pa.scalar(idx, pa.int64()), len(s))
    cols = [p_arr.cast(pa.string()), i_arr.cast(pa.int64())]
    for key in _distinct_keys(cols):
        rows = _rows_equal(cols, key)
        out = pc.replace_with_mask(out, rows, _extract_one(s.filter(rows), key[0], key[1])
                                   .cast(pa.string()))
    return out


# -- regexp_replace --------------------------------------------------------------------------


def java_replacement(rep: str, names: tuple[str | None, ...], groups: int) -> tuple[str, str]:
    """Java's replacement syntax (``$1``, ``${name}``, ``\\$``) as an RE2 rewrite string
    (``\\1``) and a Python ``re.sub`` template (``\\g<1>``)."""
    r2: list[str] = []
    py: list[str] = []
    i, n = 0, len(rep)
    while i < n:
        c = rep[i]
        if c == "\\" and i + 1 < n:
            lit = rep[i + 1]
            r2.append("\\\\" if lit == "\\" else lit)
            py.append("\\\\" if lit == "\\" else lit)
            i += 2
            continue
        if c == "$" and i + 1 < n:
            if rep[i + 1] == "{":
                end = rep.find("}", i)
                name = rep[i + 2:end]
                g = names.index(name) + 1 if name in names else None
                if g is None:
                    raise ExecutionError(f"No group with name {{{name}}}",
                                         error_class="INVALID_PARAMETER_VALUE.PATTERN")
                r2.append(f"\\{g}" if g <= 9 else "")
                py.append(f"\\g<{g}>")
                i = end + 1
                continue
            if rep[i + 1].isdigit():
                g = int(rep[i + 1])
                j = i + 2
                # Java takes more digits while the group number stays valid
                while j < n and rep[j].isdigit() and g * 10 + int(rep[j]) <= groups:
                    g = g * 10 + int(rep[j])
                    j += 1
                if g > groups:
                    raise ExecutionError(f"No group {g}",
                                         error_class="INVALID_PARAMETER_VALUE.PATTERN")
                r2.append(f"\\{g}" if g <= 9 else "\x00")
                py.append(f"\\g<{g}>")
                i = j
                continue
        r2.append("\\\\" if c == "\\" else c)
        py.append("\\\\" if c == "\\" else c)
        i += 1
    re2 = "".join(r2)
    return ("\x00" if "\x00" in re2 else re2), "".join(py)


def _replace_one(s: pa.Array, pattern: str, rep: str) -> pa.Array:
    tr, use_re2, rx = _compiled("regexp_replace", pattern)
    try:
        r2, rpy = java_replacement(rep, tr.names, tr.groups)
    except ExecutionError:
        hits = _rlike_one("regexp_replace")(s, pattern)
        if not pc.any(hits).as_py():
            return s  # Java only reads the replacement for a match
        src = s.filter(pc.fill_null(hits, False))[0].as_py()
        raise ExecutionError(
            f'Could not perform regexp_replace for source = "{src}", pattern = "{pattern}", '
            f'replacement = "{rep}" and position = 1.', error_class="INVALID_REGEXP_REPLACE",
            parameters={"source": src, "pattern": pattern, "replacement": rep,
                        "position": "1"}) from None
    # RE2 and Java differ on an empty match right after a non-empty one: use Python's re then
    empty = rx is not None and rx.search("") is not None
    if use_re2 and r2 != "\x00" and not empty:
        return pc.replace_substring_regex(s, tr.re2, r2)
    if rx is not None:
        return _per_distinct(s, lambda v: rx.sub(rpy, v), pa.string())
    return pc.replace_substring_regex(s, tr.re2, r2)  # RE2 only: best effort


def _regexp_replace(arrays, node, batch):
    s = arrays[0]
    lits = [_pattern_arg(node, arrays, i) for i in (1, 2, 3)]
    if all(ok for ok, _ in lits):
        pat, rep, pos = (v for _, v in lits)
        if pos == 1 and pat is not None and rep is not None:
            return _replace_one(s, pat, rep)
        if pat is None or rep is None or pos is None:
            return pa.nulls(len(s), pa.string())
        pos_arr = pa.repeat(pa.scalar(pos, pa.int64()), len(s))
        return _replace_from(s, pa.repeat(pa.scalar(pat, pa.string()), len(s)),
                             pa.repeat(pa.scalar(rep, pa.string()), len(s)), pos_arr)
    return _replace_from(s, arrays[1], arrays[2], arrays[3])


def _replace_from(s, p_arr, r_arr, pos_arr) -> pa.Array:
    """Column pattern/replacement/position: once per distinct (pattern, replacement, position);
    the characters before ``pos`` are kept (Java's ``Matcher.region``)."""
    n = len(s)
    out = pa.nulls(n, pa.string())
    cols = [p_arr.cast(pa.string()), r_arr.cast(pa.string()), pos_arr.cast(pa.int64())]
    for pat, rep, pos in _distinct_keys(cols):
        rows = _rows_equal(cols, (pat, rep, pos))
        sub = s.filter(rows).cast(pa.string())
        start = max(pos - 1, 0)
        head = pc.utf8_slice_codeunits(sub, 0, start)
        tail = pc.utf8_slice_codeunits(sub, start)
        replaced = _replace_one(tail, pat, rep)
        res = pc.binary_join_element_wise(head, replaced, "")
        # a position past the end leaves the string unchanged
        res = pc.if_else(pc.greater(pc.utf8_length(sub), start), res, sub)
        out = pc.replace_with_mask(out, rows, res.cast(pa.string()))
    return out


def _check_position(node: ScalarFunction) -> str | None:
    if len(node.arguments) < 4:
        return None
    pos = node.arguments[3]
    if isinstance(pos, Literal) and isinstance(pos.value, int) and pos.value <= 0:
        return TypeCheckFailure(
            "The position must be between (0, 2147483647] (current value = "
            f"{pos.value}).", "VALUE_OUT_OF_RANGE",
            {"exprName": "position", "valueRange": "(0, 2147483647]",
             "currentValue": str(pos.value)})
    return None


register(FunctionSpec("rlike", lambda t: (S, S), lambda t: B, _rlike, may_fail=True,
                      expected='"STRING"'))
def _int_arg(t: T.DataType) -> T.DataType | None:
    return None if t.is_integral else I


register(FunctionSpec("regexp_extract", lambda t: (S, S, _int_arg(t[2])), lambda t: S,
                      _regexp_extract, may_fail=True))
register(FunctionSpec("regexp_replace", lambda t: (S, S, S, _int_arg(t[3])), lambda t: S,
                      _regexp_replace, may_fail=True, check=_check_position))

#: name -> (spec key, display name ('' = as called), min args, max args)
REGEX_FUNCTIONS: dict[str, tuple[str, str, int, int]] = {
    "rlike": ("rlike", "RLIKE", 2, 2),
    "regexp_like": ("rlike", "REGEXP_LIKE", 2, 2),
    "regexp": ("rlike", "REGEXP", 2, 2),
}


# -- regexp_count, regexp_substr, regexp_instr (Spark's RegExpCount, RegExpSubStr, RegExpInStr) --


def _literal_pattern(node: ScalarFunction):
    """(translation, RE2 usable, Python regex) of the literal pattern, None for NULL."""
    p = node.arguments[1]
    if not isinstance(p, Literal):
        raise UnsupportedError(f"{node.fn_name} with a non-literal pattern")
    return None if p.value is None else _compiled(node.fn_name, p.value)


def _regexp_count(arrays, node, batch):
    """Non-overlapping matches of the pattern (Java's ``Matcher.find`` loop)."""
    compiled, s = _literal_pattern(node), arrays[0]
    if compiled is None:
        return pa.nulls(len(s), pa.int32())
    tr, use_re2, rx = compiled
    if use_re2 and not pc.any(pc.match_substring_regex(pa.array([""]), tr.re2)).as_py():
        return pc.count_substring_regex(s, tr.re2).cast(pa.int32())
    if rx is None:
        raise UnsupportedError(f"regexp_count with the pattern '{node.arguments[1].value}'")
    return _per_distinct(s, lambda v: sum(1 for _ in rx.finditer(v)), pa.int32())


def _regexp_substr(arrays, node, batch):
    """The first match, NULL when there is none (an empty match is NULL too)."""
    compiled, s = _literal_pattern(node), arrays[0]
    if compiled is None:
        return pa.nulls(len(s), pa.string())
    tr, use_re2, rx = compiled
    if use_re2:
        got = pc.struct_field(pc.extract_regex(s, tr.re2_named), [0])
    else:
        got = _per_distinct(s, lambda v: (m.group(0) if (m := rx.search(v)) else None),
                            pa.string())
    return pc.if_else(pc.fill_null(pc.not_equal(got, ""), False), got,
                      pa.scalar(None, pa.string()))


def _regexp_instr(arrays, node, batch):
    """1-based character position of the first match (0 when none)."""
    compiled, s = _literal_pattern(node), arrays[0]
    if compiled is None:
        return pa.nulls(len(s), pa.int32())
    rx = compiled[2]
    if rx is None:
        raise UnsupportedError(f"regexp_instr with the pattern '{node.arguments[1].value}'")
    return _per_distinct(s, lambda v: (m.start() + 1 if (m := rx.search(v)) else 0), pa.int32())


register(FunctionSpec("regexp_count", lambda t: (S, S), lambda t: I, _regexp_count,
                      may_fail=True))
register(FunctionSpec("regexp_substr", lambda t: (S, S), lambda t: S, _regexp_substr,
                      may_fail=True))
register(FunctionSpec("regexp_instr", lambda t: (S, S, I)[: len(t)], lambda t: I,
                      _regexp_instr, may_fail=True))
REGEX_FUNCTIONS.update({
    "regexp_count": ("regexp_count", "regexp_count", 2, 2),
    "regexp_substr": ("regexp_substr", "regexp_substr", 2, 2),
})


# -- regexp_extract_all (Spark's RegExpExtractAll) -------------------------------------------


def _extract_all_one(s: pa.Array, pattern: str, idx: int) -> pa.Array:
    tr, _, rx = _compiled("regexp_extract_all", pattern)
    if not 0 <= idx <= tr.groups and pc.any(pc.is_valid(s)).as_py():
        raise ExecutionError(
            f"The value of parameter(s) `idx` in `regexp_extract_all` is invalid: Expects group "
            f"index between 0 and {tr.groups}, but got {idx}.",
            error_class="INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX",
            parameters={"parameter": "`idx`", "functionName": "`regexp_extract_all`",
                        "groupCount": str(tr.groups), "groupIndex": str(idx)})
    if rx is None:
        raise UnsupportedError(f"Java regex feature not supported by Ember: '{pattern}'",
                               error_class="UNSUPPORTED_FEATURE")
    return _per_distinct(s, lambda v: [m.group(idx) or "" for m in rx.finditer(v)],
                         pa.large_list(pa.large_string()))


def _regexp_extract_all(arrays, node, batch):
    s = arrays[0]
    okp, pat = _pattern_arg(node, arrays, 1)
    oki, idx = _pattern_arg(node, arrays, 2)
    if not (okp and oki):
        raise UnsupportedError("regexp_extract_all with a column pattern or index is not "
                               "supported", error_class="UNSUPPORTED_FEATURE")
    if pat is None or idx is None:
        return pa.nulls(len(s), pa.large_list(pa.large_string()))
    return _extract_all_one(s, pat, idx)


register(FunctionSpec("regexp_extract_all", lambda t: (S, S, _int_arg(t[2])),
                      lambda t: T.ArrayType(S), _regexp_extract_all, may_fail=True,
                      nullable=nullable_from_arguments))
