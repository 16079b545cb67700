"""CSV values and functions: Spark's CSV type inference (``CSVInferSchema``, shared with the CSV
source's ``inferSchema``), one record parsed as univocity parses it, and the functions
``from_csv`` (Spark's ``CsvToStructs``), ``schema_of_csv`` (``SchemaOfCsv``) and ``to_csv``
(``StructsToCsv``, printed by the CSV writer's :class:`~ember.expressions.text_format.CsvGenerator`).

``from_csv`` parses each *distinct* text once (Python's :mod:`csv`, with ``sep``, ``quote`` and
``escape``), casts each field to its type with CAST's non-ANSI rules over the whole column and
takes the rows back (no whitespace trimmed): missing fields are NULL, extra ones ignored, a field that does not convert
NULL (``PERMISSIVE``) or an error (``FAILFAST``).
"""

from __future__ import annotations

import csv
import io

import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import AnalysisError, UnsupportedError
from ember.expressions.base import Expression
from ember.expressions.cast import cast_array
from ember.expressions.common import TypeCheckFailure, quoted_sql, sql_type
from ember.expressions.foldable import is_foldable
from ember.expressions.json_functions import (
    OptionsLiteral, SchemaLiteral, foldable_input, options_argument, reject_intervals, _distinct,
    _failfast,
)
from ember.expressions.misc import FunctionCall, FunctionSpec, ScalarFunction, register
from ember.expressions.text_format import CsvGenerator

__all__ = ["csv_value_types", "merge_csv_types", "parse_csv_record", "build_from_csv",
           "build_to_csv", "build_schema_of_csv"]


def _char(opts: dict[str, str], key: str, default: str) -> str | bool:
    v = opts.get(key, default)
    return False if v == "" else v


def parse_csv_record(text: str, opts: dict[str, str]) -> list[str | None]:
    """One record parsed with Python's csv module (``sep``, ``quote``, ``escape`` from the
    lower-cased ``opts``); empty fields are NULL."""
    quote = _char(opts, "quote", '"')
    escape = _char(opts, "escape", "\\")
    reader = csv.reader(io.StringIO(text), delimiter=opts.get("sep", opts.get("delimiter", ",")),
                        quotechar=quote or None, escapechar=escape or None, doublequote=False,
                        quoting=csv.QUOTE_MINIMAL if quote else csv.QUOTE_NONE)
    row = next(reader, [])
    return [v if v != "" else None for v in row]


# -- type inference (Spark's CSVInferSchema, vectorized over the distinct values) ------------

_INT_RE = r"^[+-]?[0-9]+$"
# java.lang.Double.parseDouble (surrounding whitespace, NaN/Infinity, a d/f suffix), or Spark's
# default nanValue/positiveInf/negativeInf.
_DOUBLE_RE = (r"^\s*[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?))\s*$"
              r"|^(Inf|-Inf)$")
_DATE_RE = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"


def csv_value_types(values: pa.Array) -> set[T.DataType]:
    """The set of Spark CSV types of the (distinct, non-null) string ``values``: int, bigint,
    decimal(p,0) (integers beyond bigint), double, date (``yyyy-MM-dd``), timestamp (what
    CAST accepts), boolean (``true``/``false`` in any case), string."""


    out: set[T.DataType] = set()
    rest = values
    is_int = pc.match_substring_regex(rest, _INT_RE)
    ints = rest.filter(is_int)
    if len(ints):
        digits = pc.utf8_ltrim(pc.utf8_ltrim(ints, "+-"), "0")
        prec = pc.max(pc.utf8_length(digits)).as_py() or 1
        if prec > 38:
            out.add(T.DOUBLE)
        else:
            dec = pc.cast(pc.utf8_ltrim(ints, "+"), pa.decimal128(38, 0))
            mm = pc.min_max(dec)
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
            if T.INT.min_value <= lo and hi <= T.INT.max_value:
                out.add(T.INT)
            elif T.LONG.min_value <= lo and hi <= T.LONG.max_value:
                out.add(T.LONG)
            else:
                out.add(T.DecimalType(max(prec, 20), 0))
    rest = rest.filter(pc.invert(is_int))
    for regex, dt in ((_DOUBLE_RE, T.DOUBLE), (_DATE_RE, T.DATE)):
        if not len(rest):
            return out
        m = pc.match_substring_regex(rest, regex)
        if dt is T.DATE:  # the pattern must also be a valid calendar date
            m = pc.and_(m, cast_array(rest, T.STRING, T.DATE, ansi=False).is_valid())
        if pc.any(m).as_py():
            out.add(dt)
        rest = rest.filter(pc.invert(m))
    if not len(rest):
        return out
    m = pc.match_substring_regex(rest, r"^(true|false)$", ignore_case=True)
    if pc.any(m).as_py():
        out.add(T.BOOLEAN)
    rest = rest.filter(pc.invert(m))
    if not len(rest):
        return out
    m = cast_array(rest, T.STRING, T.TIMESTAMP, ansi=False).is_valid()
    if pc.any(m).as_py():
        out.add(T.TIMESTAMP)
    if not pc.all(m).as_py():
        out.add(T.STRING)
    return out


def merge_csv_types(types: set[T.DataType]) -> T.DataType:
    """Spark's ``CSVInferSchema.compatibleType`` folded over a column's value types."""
    if not types:
        return T.STRING  # a column of only NULLs
    if len(types) == 1:
        return next(iter(types))
    if all(isinstance(t, (T.IntegerType, T.LongType, T.DecimalType, T.DoubleType))
           for t in types):
        if T.DOUBLE in types:
            return T.DOUBLE
        decs = [t.precision for t in types if isinstance(t, T.DecimalType)]
        if decs:
            return T.DecimalType(max(decs + [20 if T.LONG in types else 10]), 0)
        return T.LONG
    if types == {T.DATE, T.TIMESTAMP}:
        return T.TIMESTAMP
    return T.STRING


# -- from_csv -----------------------------------------------------------------------------------


def _from_csv(a, node, b):
    schema: T.StructType = node.arguments[1].schema
    opts = node.arguments[2].option_map
    failfast = opts.get("mode", "PERMISSIVE").upper() == "FAILFAST"
    tz = node.options[0] if node.options else "UTC"
    texts, index = _distinct(a[0])
    width = len(schema.fields)
    records = [(parse_csv_record(t, opts) + [None] * width)[:width] for t in texts]
    fields, bad = [], pa.array([False] * len(texts))
    for i, f in enumerate(schema.fields):
        raw = pa.array([r[i] for r in records], pa.large_string())
        if isinstance(f.data_type, T.StringType):
            col = raw
        else:
            col = cast_array(raw, T.STRING, f.data_type, ansi=False, time_zone=tz)
            # Spark's converters do not trim (CAST does): ' 1 ' is not an INT here
            padded = pc.not_equal(pc.utf8_trim_whitespace(raw), raw)
            col = pc.if_else(padded, pa.scalar(None, col.type), col)
            bad = pc.or_(bad, pc.and_(raw.is_valid(), col.is_null()))
        fields.append(col.cast(f.data_type.to_arrow()))
    if failfast and pc.any(bad).as_py():
        raise _failfast("[" + ",".join("null" if not v.is_valid else str(v) for v in (
            fld[int(pc.index(bad, True).as_py())] for fld in fields)) + "]")
    out_type = node.data_type.to_arrow()
    structs = pa.StructArray.from_arrays(fields, fields=list(out_type)) if texts else \
        pa.array([], out_type)
    return structs.take(index)


def _struct_schema(e: Expression) -> SchemaLiteral:
    if isinstance(e, SchemaLiteral):
        if not isinstance(e.schema, T.StructType):
            raise AnalysisError(
                f'The input schema "{e.text}" is not a valid schema string. The input expression '
                f'should be evaluated to struct type, but got {sql_type(e.schema)}.',
                error_class="INVALID_SCHEMA.NON_STRUCT_TYPE",
                parameters={"inputSchema": f'"{e.text}"', "dataType": sql_type(e.schema)})
        return e
    if isinstance(e, FunctionCall) and isinstance(e.replacement, ScalarFunction) and \
            e.replacement.key == "schema_of_csv" and is_foldable(e.replacement.arguments[0]):
        return SchemaLiteral(_inferred(e.replacement), e.sql())
    raise AnalysisError(
        f"The input schema {quoted_sql(e)} is not a valid schema string. The input expression "
        "must be string literal and not null.", error_class="INVALID_SCHEMA.NON_STRING_LITERAL",
        parameters={"inputSchema": quoted_sql(e)})


def _nullable_schema(t: T.StructType) -> T.StructType:
    return T.StructType(tuple(T.StructField(f.name, f.data_type, True) for f in t.fields))


register(FunctionSpec(
    "from_csv", lambda t: (T.STRING, None, None) if isinstance(t[0], (T.StringType, T.NullType))
    else None, lambda t: T.NULL, _from_csv, may_fail=True, expected='"STRING"',
    node_result=lambda node: _nullable_schema(node.arguments[1].schema), time_zone_aware=True,
    nullable=lambda node: node.arguments[0].nullable))


def build_from_csv(name: str, a: tuple[Expression, ...]) -> Expression:
    """``from_csv(csv, schema[, options])``, shown as ``from_csv(csv)``."""
    opts = options_argument(a[2] if len(a) > 2 else None)
    schema = _struct_schema(a[1])
    reject_intervals(name, schema.schema)
    impl = ScalarFunction(name, (a[0], schema, opts), "from_csv")
    return FunctionCall.of(name, a[:1], impl)


# -- schema_of_csv ------------------------------------------------------------------------------


def _inferred(node: ScalarFunction) -> T.StructType:
    """The struct ``schema_of_csv`` infers for its (foldable) argument: ``_c0``, ``_c1`` ..."""
    text = node.arguments[0].eval(pa.RecordBatch.from_pydict({"_": [0]}))
    text = text.as_py() if isinstance(text, pa.Scalar) else text[0].as_py()
    record = parse_csv_record(text or "", node.arguments[1].option_map)
    return T.StructType(tuple(
        T.StructField(f"_c{i}", merge_csv_types(csv_value_types(pa.array(
            [] if v is None else [v], pa.large_string())))) for i, v in enumerate(record)))


def _schema_of_csv(a, node, b):
    return pa.repeat(pa.scalar(_inferred(node).sql(), pa.large_string()), b.num_rows)


register(FunctionSpec(
    "schema_of_csv", lambda t: (T.STRING, None) if isinstance(t[0], (T.StringType, T.NullType))
    else None, lambda t: T.STRING, _schema_of_csv, null_intolerant=False, expected='"STRING"',
    check=foldable_input("csv"), nullable=lambda node: False))


def build_schema_of_csv(name: str, a: tuple[Expression, ...]) -> Expression:
    opts = options_argument(a[1] if len(a) > 1 else None)
    return FunctionCall.of(name, a[:1], ScalarFunction(name, (a[0], opts), "schema_of_csv"))


# -- to_csv -------------------------------------------------------------------------------------


def _to_csv(a, node, b):
    st = node.arguments[0].data_type
    arr = a[0]
    tz = node.options[0] if node.options else "UTC"
    gen = CsvGenerator(node.arguments[1].option_map, tz)
    cols = [pc.struct_field(arr, [i]) for i in range(len(st.fields))]
    out = gen.record(cols, [f.data_type for f in st.fields], len(arr))
    return pc.if_else(pc.is_valid(arr), out, pa.scalar(None, pa.large_string()))


def _to_csv_check(node: ScalarFunction) -> TypeCheckFailure | None:
    t = node.arguments[0].data_type
    if isinstance(t, T.StructType):
        if any(isinstance(f.data_type, (T.ArrayType, T.MapType, T.StructType)) for f in t.fields):
            # Spark prints such fields in a form of its own ("[1, 2,]" for array(1, 2, NULL))
            raise UnsupportedError("to_csv of a struct with ARRAY, MAP or STRUCT fields",
                                   error_class="UNSUPPORTED_FEATURE")
        return None
    return TypeCheckFailure(f"The input of `to_csv` can't be {sql_type(t)} type data.",
                            "UNSUPPORTED_INPUT_TYPE",
                            {"functionName": "`to_csv`", "dataType": sql_type(t)})


register(FunctionSpec("to_csv", lambda t: (None, None), lambda t: T.STRING, _to_csv,
                      check=_to_csv_check, time_zone_aware=True))


def build_to_csv(name: str, a: tuple[Expression, ...]) -> Expression:
    opts: OptionsLiteral = options_argument(a[1] if len(a) > 1 else None)
    t = a[0].data_type if a[0].resolved else T.NULL
    reject_intervals(name, t)
    return FunctionCall.of(name, a[:1], ScalarFunction(name, (a[0], opts), "to_csv"))
