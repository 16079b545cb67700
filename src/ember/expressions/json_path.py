"""``get_json_object(json, path)`` and ``json_array_length(json)`` (Spark's GetJsonObject and
LengthOfJsonArray): the JSON text is parsed once per *distinct* value (dictionary encoding) with
:mod:`json`, numbers kept as written.

A path is ``$`` followed by ``.name``, ``['name']``, ``[n]`` or ``[*]`` steps; a wildcard
collects its matches (one match unwrapped, several as a JSON array).  The result is the matched
string without quotes, or the value as compact JSON (``{"a":1}``); NULL for invalid JSON, an
invalid path or no match.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import UnsupportedError
from ember.formatting import java_double_str
from ember.expressions.base import Literal
from ember.expressions.misc import FunctionSpec, register

__all__ = ["JSON_FUNCTIONS"]


class _Number(str):
    """A JSON number kept as its text."""


def _loads(text: str) -> Any:
    return json.loads(text, strict=False, parse_float=_Number, parse_int=_Number,
                      parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


def _number_text(v: _Number) -> str:
    """A number as Jackson copies it: integers as written, fractions and exponents through a
    double (Java's ``Double.toString``: ``2.50`` is ``2.5``, ``1e300`` is ``1.0E300``)."""
    if re.fullmatch(r"-?\d+", v):
        return str(v)
    return java_double_str(float(v))


def _string_text(v: str, escape: bool = True) -> str:
    """A JSON string as Jackson writes it: characters beyond the BMP as escaped surrogates
    (not in the array a wildcard path builds, which Spark writes through another generator)."""
    out = json.dumps(v, ensure_ascii=False)
    if escape and any(ord(c) > 0xFFFF for c in v):
        out = "".join(_surrogates(c) if ord(c) > 0xFFFF else c for c in out)
    return out


def _surrogates(c: str) -> str:
    cp = ord(c) - 0x10000
    return f"\\u{0xD800 + (cp >> 10):04X}\\u{0xDC00 + (cp & 0x3FF):04X}"


def _dumps(v: Any, escape: bool = True) -> str:
    if isinstance(v, _Number):
        return _number_text(v)
    if isinstance(v, str):
        return _string_text(v, escape)
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, list):
        return "[" + ",".join(_dumps(x, escape) for x in v) + "]"
    return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{_dumps(x, escape)}"
                          for k, x in v.items()) + "}"


_STEP = re.compile(r"\.([^.\[\]]+)|\['([^']*)'\]|\[(\d+)\]|\[\*\]|\.\*")


def _parse_path(path: str) -> list[Any] | None:
    if not path.startswith("$"):
        return None
    steps: list[Any] = []
    i = 1
    while i < len(path):
        m = _STEP.match(path, i)
        if m is None:
            return None
        if m.group(1) is not None:
            steps.append(("key", m.group(1)))
        elif m.group(2) is not None:
            steps.append(("key", m.group(2)))
        elif m.group(3) is not None:
            steps.append(("index", int(m.group(3))))
        else:
            steps.append(("all", None))
        i = m.end()
    return steps


_MISSING = object()


def _walk(v: Any, steps: list[Any]) -> Any:
    for k, (kind, arg) in enumerate(steps):
        if kind == "key":
            if not isinstance(v, dict) or arg not in v:
                return _MISSING
            v = v[arg]
        elif kind == "index":
            if not isinstance(v, list) or arg >= len(v):
                return _MISSING
            v = v[arg]
        else:
            items = v if isinstance(v, list) else (list(v.values()) if isinstance(v, dict)
                                                   else None)
            if items is None:
                return _MISSING
            got = [r for r in (_walk(x, steps[k + 1:]) for x in items) if r is not _MISSING]
            if not got:
                return _MISSING
            return got[0] if len(got) == 1 else got
    return v


def _get_json_object(a, node, b):
    path = node.arguments[1]
    js = a[0].cast(pa.string())
    if not isinstance(path, Literal):
        raise UnsupportedError("get_json_object with a non-literal path")
    steps = _parse_path(path.value) if path.value is not None else None
    if steps is None:
        return pa.nulls(len(js), pa.string())

    wild = any(kind == "all" for kind, _ in steps)

    def one(text: str) -> str | None:
        try:
            v = _walk(_loads(text), steps)
        except ValueError:
            return None
        if v is _MISSING or v is None:
            return None
        return v if isinstance(v, str) and not isinstance(v, _Number) else _dumps(v, not wild)
    enc = pc.dictionary_encode(js)
    values = [one(t) for t in enc.dictionary.to_pylist()]
    return pc.take(pa.array(values, pa.string()), enc.indices)


def _json_array_length(a, node, b):
    def one(text: str) -> int | None:
        try:
            v = _loads(text)
        except ValueError:
            return None
        return len(v) if isinstance(v, list) else None
    enc = pc.dictionary_encode(a[0].cast(pa.string()))
    values = [one(t) for t in enc.dictionary.to_pylist()]
    return pc.take(pa.array(values, pa.int32()), enc.indices)


register(FunctionSpec("get_json_object", lambda t: (T.STRING, T.STRING), lambda t: T.STRING,
                      _get_json_object))
register(FunctionSpec("json_array_length", lambda t: (T.STRING,), lambda t: T.INT,
                      _json_array_length))

#: name -> (spec key, display name, min args, max args)
JSON_FUNCTIONS: dict[str, tuple[str, str, int, int]] = {
    "get_json_object": ("get_json_object", "get_json_object", 2, 2),
    "json_array_length": ("json_array_length", "json_array_length", 1, 1),
}
