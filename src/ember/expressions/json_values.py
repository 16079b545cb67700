"""JSON values as Spark's Jackson-based code reads them, shared by the JSON file source
(``ember.execution.json_source``) and the JSON functions (``from_json``, ``schema_of_json``,
``json_tuple`` ...): :class:`JsonOptions` (Spark's ``JSONOptions``), parsing of one record's
first value keeping each number's token kind and text, type inference
(``JsonInferSchema.inferField`` / ``compatibleType`` / ``canonicalizeType``) and the conversion of
a parsed value to a column type (``JacksonParser``'s converters, with partial results).
"""

from __future__ import annotations

import decimal
import json
import math
import re
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from ember import types as T
from ember.coercion import decimal_for_integral, find_tightest_common_type
from ember.expressions.cast import cast_array
from ember.expressions.datetime import parse_with_pattern

__all__ = ["JsonOptions", "JsonInt", "JsonFloat", "parse_first", "dump_json", "WS", "Malformed",
           "infer_value", "compatible_type", "canonical_type", "BadValue", "value_converter"]


class JsonOptions:
    """The JSON options of a relation (Spark's ``JSONOptions``), from its lower-cased options."""

    def __init__(self, opts: dict[str, str], default_corrupt: str = "_corrupt_record") -> None:
        def flag(k: str) -> bool:
            return opts.get(k.lower(), "false").strip().lower() == "true"

        self.primitives_as_string = flag("primitivesAsString")
        self.prefers_decimal = flag("prefersDecimal")
        self.infer_timestamp = flag("inferTimestamp")
        self.multi_line = flag("multiLine")
        self.drop_field_if_all_null = flag("dropFieldIfAllNull")
        self.mode = opts.get("mode", "PERMISSIVE").upper()
        if self.mode not in ("PERMISSIVE", "DROPMALFORMED", "FAILFAST"):
            self.mode = "PERMISSIVE"  # Spark's ParseMode.fromString falls back likewise
        self.corrupt = opts.get("columnnameofcorruptrecord", default_corrupt)
        self.allow_single_quotes = opts.get("allowsinglequotes", "true").strip().lower() \
            == "true"
        #: ``dateFormat`` / ``timestampFormat``: Spark's patterns (None: CAST's parsing)
        self.date_format = opts.get("dateformat")
        self.timestamp_format = opts.get("timestampformat")

    @property
    def default_inference(self) -> bool:
        return not (self.primitives_as_string or self.prefers_decimal or self.infer_timestamp)


# -- JSON values with their token kind ---------------------------------------------------------


class JsonInt(str):
    """A JSON integer token (its text)."""


class JsonFloat(str):
    """A JSON floating-point token (its text; also NaN / Infinity)."""


_VALUE_DECODER = json.JSONDecoder(parse_int=JsonInt, parse_float=JsonFloat, parse_constant=JsonFloat,
                                  object_pairs_hook=dict)


def parse_first(text: str, allow_single_quotes: bool = False) -> Any:
    """The first JSON value of ``text`` (Jackson's parser, as Spark uses it, reads one value
    from a record and ignores what follows it: ``{"a": 1}{"a": 2}`` is the row ``a = 1``);
    with ``allow_single_quotes`` (Jackson's ``ALLOW_SINGLE_QUOTES``, on in Spark by default)
    ``'...'`` strings and names too."""
    start = WS.match(text, 0).end()
    try:
        return _VALUE_DECODER.raw_decode(text, start)[0]
    except ValueError:
        if not allow_single_quotes or "'" not in text:
            raise
    return _VALUE_DECODER.raw_decode(_double_quoted(text), start)[0]


def _double_quoted(text: str) -> str:
    """``text`` with its single-quoted JSON strings written with double quotes (a ``"`` inside
    one escaped, ``\\'`` unescaped)."""
    out: list[str] = []
    quote = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is None:
            if ch in "'\"":
                quote = ch
                out.append('"')
            else:
                out.append(ch)
        elif ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append(nxt if quote == "'" and nxt == "'" else ch + nxt)
            i += 1
        elif ch == quote:
            quote = None
            out.append('"')
        else:
            out.append('\\"' if ch == '"' else ch)
        i += 1
    return "".join(out)


def dump_json(v: Any) -> str:
    """A value's JSON text as Jackson's generator writes it (compact; numbers as written)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (JsonInt, JsonFloat)):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(dump_json(x) for x in v) + "]"
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + dump_json(x)
                          for k, x in v.items()) + "}"


WS = re.compile(r"[ \t\n\r]*")


class Malformed(Exception):
    pass


# -- inference (JsonInferSchema) -----------------------------------------------------------------

_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _decimal_type(d: decimal.Decimal) -> T.DataType:
    """Spark's type of a BigDecimal: ``decimal(max(precision, scale), scale)``, or ``double``
    when that exceeds 38 digits."""
    sign, digits, exp = d.as_tuple()
    scale = -exp if isinstance(exp, int) else 0
    prec = len(digits)
    if scale < 0:  # 1E+3: Spark's BigDecimal has negative scale -> disallowed; as a long-ish
        prec, scale = prec - scale, 0
    p = max(prec, scale)
    if p > 38:
        return T.DOUBLE
    return T.DecimalType(max(p, 1), scale)


def infer_value(v: Any, o: JsonOptions) -> T.DataType:
    if v is None:
        return T.NullType()
    if isinstance(v, bool):
        return T.STRING if o.primitives_as_string else T.BOOLEAN
    if isinstance(v, JsonInt):
        if o.primitives_as_string:
            return T.STRING
        n = int(v)
        if _LONG_MIN <= n <= _LONG_MAX:
            return T.LONG
        return _decimal_type(decimal.Decimal(v))
    if isinstance(v, JsonFloat):
        if o.primitives_as_string:
            return T.STRING
        if o.prefers_decimal:
            d = decimal.Decimal(v)
            if not d.is_finite():
                raise Malformed(v)
            return _decimal_type(d)
        return T.DOUBLE
    if isinstance(v, str):
        if o.prefers_decimal:
            try:
                d = decimal.Decimal(v)
                if d.is_finite() and v.strip() == v:
                    return _decimal_type(d)
            except decimal.InvalidOperation:
                pass
        if o.infer_timestamp and _is_timestamp(v, o.timestamp_format):
            return T.TIMESTAMP
        return T.STRING
    if isinstance(v, list):
        t: T.DataType = T.NullType()
        for x in v:
            t = compatible_type(t, infer_value(x, o))
        return T.ArrayType(t)
    fields = sorted(((k, infer_value(x, o)) for k, x in v.items()), key=lambda f: f[0])
    return T.StructType(tuple(T.StructField(k, t) for k, t in fields))


def _is_timestamp(s: str, pattern: str | None) -> bool:
    if pattern is not None:
        return parse_with_pattern(pa.array([s], pa.string()), pattern, False, "UTC")[0].is_valid
    a = cast_array(pa.array([s], pa.large_string()), T.STRING, T.TIMESTAMP, ansi=False)
    return a.is_valid()[0].as_py() and any(c in s for c in "T :")


def compatible_type(t1: T.DataType, t2: T.DataType) -> T.DataType:
    """Spark's ``JsonInferSchema.compatibleType``: the tightest common type, else decimals
    widened (``double`` beyond 38 digits, or with a double), structs merged field by field,
    arrays by element, and ``string`` for anything else."""
    t = find_tightest_common_type(t1, t2, legacy=True)
    if t is not None:
        return t
    if isinstance(t1, T.DecimalType) or isinstance(t2, T.DecimalType):
        if isinstance(t1, T.DoubleType) or isinstance(t2, T.DoubleType):
            return T.DOUBLE
        if all(isinstance(x, T.DecimalType) or x.is_integral for x in (t1, t2)):
            d1, d2 = decimal_for_integral(t1), decimal_for_integral(t2)
            scale = max(d1.scale, d2.scale)
            rng = max(d1.precision - d1.scale, d2.precision - d2.scale)
            return T.DOUBLE if rng + scale > 38 else T.DecimalType(rng + scale, scale)
    if isinstance(t1, T.StructType) and isinstance(t2, T.StructType):
        merged: dict[str, T.DataType] = {f.name: f.data_type for f in t1.fields}
        for f in t2.fields:
            merged[f.name] = compatible_type(merged[f.name], f.data_type) \
                if f.name in merged else f.data_type
        return T.StructType(tuple(T.StructField(k, merged[k]) for k in sorted(merged)))
    if isinstance(t1, T.ArrayType) and isinstance(t2, T.ArrayType):
        return T.ArrayType(compatible_type(t1.element_type, t2.element_type))
    return T.STRING


def canonical_type(t: T.DataType, o: JsonOptions) -> T.DataType | None:
    """Spark's ``canonicalizeType``: NULL -> string (None with ``dropFieldIfAllNull``), empty
    structs dropped."""
    if isinstance(t, T.NullType):
        return None if o.drop_field_if_all_null else T.STRING
    if isinstance(t, T.ArrayType):
        e = canonical_type(t.element_type, o)
        return None if e is None else T.ArrayType(e)
    if isinstance(t, T.StructType):
        fields = []
        for f in t.fields:
            c = canonical_type(f.data_type, o)
            if c is not None:
                fields.append(T.StructField(f.name, c))
        return T.StructType(tuple(fields)) if fields else None
    return t

class BadValue(Exception):
    """A value that does not convert to its field's type."""


_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "+Infinity": math.inf, "-Infinity": -math.inf,
            "INF": math.inf, "+INF": math.inf, "-INF": -math.inf}


def value_converter(t: T.DataType, failed: list[bool]) -> Callable[[Any], Any]:
    """A function from a parsed JSON value (never None) to the Python value of type ``t``;
    raises ``BadValue`` when it does not convert.  A struct's field that does not convert is NULL
    and sets ``failed[0]`` (Spark's partial results)."""
    if isinstance(t, T.StringType):
        return lambda v: v if type(v) is str else dump_json(v)
    if isinstance(t, T.BooleanType):
        def conv_bool(v):
            if isinstance(v, bool):
                return v
            raise BadValue
        return conv_bool
    if isinstance(t, (T.LongType, T.IntegerType, T.ShortType, T.ByteType)):
        lo, hi = t.min_value, t.max_value

        def conv_int(v):
            if isinstance(v, JsonInt):
                n = int(v)
                if lo <= n <= hi:
                    return n
            raise BadValue
        return conv_int
    if isinstance(t, (T.DoubleType, T.FloatType)):
        def conv_float(v):
            if isinstance(v, (JsonInt, JsonFloat)):
                return _SPECIAL[v] if v in _SPECIAL else float(v)
            if type(v) is str and v in _SPECIAL:
                return _SPECIAL[v]
            raise BadValue
        return conv_float
    if isinstance(t, T.DecimalType):
        q = decimal.Decimal(1).scaleb(-t.scale)

        def conv_dec(v):
            if isinstance(v, (JsonInt, JsonFloat)) or (type(v) is str and v):
                try:
                    d = decimal.Decimal(v).quantize(q, rounding=decimal.ROUND_HALF_UP,
                                                    context=decimal.Context(prec=80))
                except (decimal.InvalidOperation, ValueError):
                    raise BadValue from None
                if d.is_finite() and len(d.as_tuple().digits) <= t.precision:
                    return d
            raise BadValue
        return conv_dec
    if isinstance(t, T.StructType):
        convs = [(f.name, value_converter(f.data_type, failed)) for f in t.fields]

        def conv_struct(v):
            if not isinstance(v, dict):
                raise BadValue
            out = {}
            for n, c in convs:
                x = v.get(n)
                try:
                    out[n] = None if x is None else c(x)
                except BadValue:
                    out[n] = None
                    failed[0] = True
            return out
        return conv_struct
    if isinstance(t, T.MapType):
        # a JSON object as a map: its names are the keys (Spark's JacksonParser), Arrow takes
        # (key, value) pairs
        ck, cv = value_converter(t.key_type, failed), value_converter(t.value_type, failed)

        def conv_map(v):
            if not isinstance(v, dict):
                raise BadValue
            return [(ck(k), None if x is None else cv(x)) for k, x in v.items()]
        return conv_map
    if isinstance(t, T.ArrayType):
        ce = value_converter(t.element_type, failed)

        def conv_array(v):
            if not isinstance(v, list):
                raise BadValue
            return [None if x is None else ce(x) for x in v]
        return conv_array
    if isinstance(t, (T.DateType, T.TimestampType)):
        # read as text, converted by CAST afterwards (``_text_typed``)
        def conv_text(v):
            if type(v) is str:
                return v
            raise BadValue
        return conv_text
    return lambda v: dump_json(v)

