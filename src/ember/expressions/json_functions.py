"""JSON functions over columns: ``from_json`` (Spark's ``JsonToStructs``), ``to_json``
(``StructsToJson``), ``schema_of_json`` (``SchemaOfJson``), ``json_object_keys``
(``JsonObjectKeys``) and the generator ``json_tuple`` (``JsonTuple``).

Parsing, inference and conversion are the JSON source's (:mod:`ember.expressions.json_values`),
generation the JSON writer's (:class:`ember.expressions.text_format.JsonGenerator`).  A column's
text is parsed once per *distinct* value (dictionary encoding); the converted values are built
into one Arrow array and taken back to the rows, so the per-value Python work is only the
parsing of each distinct JSON text.

The schema of ``from_json`` is a DDL string (the SQL front end and ``ember.functions`` parse it
into a :class:`SchemaLiteral`) or ``schema_of_json`` of a literal.  ``from_json`` modes: under
``PERMISSIVE`` a malformed record gives a struct of NULLs (a NULL for an ARRAY or MAP schema),
a value that does not convert its field NULL with the other fields kept, and the corrupt-record
field (``columnNameOfCorruptRecord``) when the schema has one the record's text; ``FAILFAST``
raises ``MALFORMED_RECORD_IN_PARSING``; ``DROPMALFORMED`` is rejected (``PARSE_MODE_UNSUPPORTED``).

``to_json`` takes ``timestampFormat``, ``dateFormat`` and ``ignoreNullFields`` (default true,
Spark's ``spark.sql.jsonGenerator.ignoreNullFields`` default).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import AnalysisError, ExecutionError, UnsupportedError
from ember.expressions import json_path as JP
from ember.expressions.base import Expression, LeafExpression, Literal
from ember.expressions.cast import cast_array
from ember.expressions.common import TypeCheckFailure, quoted_sql, sql_type, to_array
from ember.expressions.datetime import parse_with_pattern
from ember.expressions.foldable import is_foldable
from ember.expressions.generators import Generator
from ember.expressions.json_values import (
    BadValue, JsonOptions, Malformed, canonical_type, infer_value, parse_first, value_converter,
)
from ember.expressions.misc import FunctionCall, FunctionSpec, ScalarFunction, register
from ember.expressions.text_format import JsonGenerator
from ember.trees import node

__all__ = ["SchemaLiteral", "OptionsLiteral", "JsonTuple", "build_from_json", "build_to_json",
           "build_schema_of_json", "options_argument", "foldable_input", "reject_intervals"]


class _ConstantArgument(LeafExpression):
    """An argument read once at analysis (a schema, an options map): never NULL, kept as it is
    by constant folding (which would lose the parsed value), shown as ``text``."""

    __slots__ = ()

    @property
    def nullable(self) -> bool:
        return False

    @property
    def foldable(self) -> bool:
        return False

    def eval(self, batch: pa.RecordBatch) -> Any:
        return pa.scalar(self.text, pa.large_string())  # type: ignore[attr-defined]

    def simple_string(self) -> str:
        return self.text  # type: ignore[attr-defined]


@node
class SchemaLiteral(_ConstantArgument):
    """A schema argument given as a DDL string (``'a INT, b STRING'``), parsed by the front end:
    ``schema`` is the type, ``text`` the string as written (shown as a string literal)."""

    schema: T.DataType
    text: str

    @property
    def data_type(self) -> T.DataType:
        return T.STRING

    def sql(self) -> str:
        return "'" + self.text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@node
class OptionsLiteral(_ConstantArgument):
    """The options map of a JSON/CSV function (``map('mode', 'FAILFAST')``), read once at
    analysis: ``options`` are its (lower-cased key, value) pairs, ``text`` its SQL."""

    options: tuple[tuple[str, str], ...]
    text: str

    @property
    def data_type(self) -> T.DataType:
        return T.MapType(T.STRING, T.STRING)

    def sql(self) -> str:
        return self.text

    @property
    def option_map(self) -> dict[str, str]:
        return dict(self.options)


def options_argument(e: Expression | None) -> OptionsLiteral:
    """The options argument as an :class:`OptionsLiteral` (Spark's ``ExprUtils.convertToMapData``:
    a foldable ``map`` of strings, else ``INVALID_OPTIONS``)."""
    if e is None:
        return OptionsLiteral((), "map()")
    if isinstance(e, OptionsLiteral):
        return e
    if not isinstance(e.data_type, T.MapType) or e.__class__.__name__ != "CreateMap":
        raise AnalysisError("Must use the `map()` function for options.",
                            error_class="INVALID_OPTIONS.NON_MAP_FUNCTION")
    dt = e.data_type
    if not (isinstance(dt.key_type, T.StringType) and isinstance(dt.value_type, T.StringType)):
        raise AnalysisError(
            "A type of keys and values in `map()` must be string, but got "
            f"{sql_type(dt)}.", error_class="INVALID_OPTIONS.NON_STRING_TYPE",
            parameters={"mapType": sql_type(dt)})
    m = to_array(e.eval(pa.RecordBatch.from_pydict({"_": [0]})), 1)[0].as_py() or []
    return OptionsLiteral(tuple((str(k).lower(), "" if v is None else str(v)) for k, v in m),
                          e.sql())


def _distinct(arr: pa.Array) -> tuple[list[Any], pa.Array]:
    """The distinct strings of ``arr`` (Python values) and each row's index into them (NULL for
    a NULL row)."""
    enc = pc.dictionary_encode(arr.cast(pa.large_string()))
    return enc.dictionary.to_pylist(), enc.indices


# -- from_json ----------------------------------------------------------------------------------


def _nullable_with(t: T.DataType, leaf) -> T.DataType:
    """``t`` nullable at every level (Spark's ``asNullable``), each non-nested type through
    ``leaf``."""
    if isinstance(t, T.StructType):
        return T.StructType(tuple(T.StructField(f.name, _nullable_with(f.data_type, leaf), True)
                                  for f in t.fields))
    if isinstance(t, T.ArrayType):
        return T.ArrayType(_nullable_with(t.element_type, leaf), True)
    if isinstance(t, T.MapType):
        return T.MapType(t.key_type, _nullable_with(t.value_type, leaf), True)
    return leaf(t)


def _text_leaves(t: T.DataType) -> T.DataType:
    """``t`` with DATE / TIMESTAMP replaced by STRING: they are read as text and cast after."""
    return _nullable_with(t, lambda x: T.STRING if isinstance(x, (T.DateType, T.TimestampType))
                          else x)


def _has_datetime(t: T.DataType) -> bool:
    return _text_leaves(t) != _nullable_with(t, lambda x: x)


def _typed(arr: pa.Array, t: T.DataType, o: JsonOptions, tz: str) -> tuple[pa.Array, pa.Array]:
    """``arr`` (read with :func:`_text_leaves`) cast to ``t``, and per row whether a date or
    timestamp text failed to convert."""
    n = len(arr)
    no_fail = pa.array(np.zeros(n, bool))
    if isinstance(t, (T.DateType, T.TimestampType)):
        pattern = o.date_format if isinstance(t, T.DateType) else o.timestamp_format
        typed = (cast_array(arr, T.STRING, t, ansi=False, time_zone=tz) if pattern is None
                 else parse_with_pattern(arr, pattern, isinstance(t, T.DateType), tz))
        return typed, pc.and_(arr.is_valid(), typed.is_null())
    if not _has_datetime(t):
        return arr, no_fail
    if isinstance(t, T.StructType):
        fields, failed = [], no_fail
        for i, f in enumerate(t.fields):
            v, bad = _typed(pc.struct_field(arr, [i]), f.data_type, o, tz)
            fields.append(v)
            failed = pc.or_(failed, bad)
        out = pa.StructArray.from_arrays(fields, fields=list(t.to_arrow()),
                                         mask=pc.is_null(arr))
        return out, failed
    if isinstance(t, (T.ArrayType, T.MapType)):
        starts = np.repeat(np.arange(n), np.diff(arr.offsets.to_numpy(zero_copy_only=False)))
        if isinstance(t, T.ArrayType):
            v, bad = _typed(arr.values, t.element_type, o, tz)
            out = type(arr).from_arrays(arr.offsets, v, type=t.to_arrow(),
                                        mask=pc.is_null(arr))
        else:
            v, bad = _typed(arr.items, t.value_type, o, tz)
            out = pa.MapArray.from_arrays(arr.offsets, arr.keys, v, type=t.to_arrow(),
                                          mask=pc.is_null(arr))
        failed = np.zeros(n, bool)
        bad_np = bad.to_numpy(zero_copy_only=False)
        failed[starts[bad_np]] = True
        return out, pa.array(failed)
    return arr, no_fail


def _bad_record_text(value: Any) -> str:
    """A partial result as Spark prints the row in ``MALFORMED_RECORD_IN_PARSING``."""
    if isinstance(value, dict):
        return "[" + ",".join("null" if v is None else str(v) for v in value.values()) + "]"
    return "[null]"


def _failfast(bad: str) -> ExecutionError:
    return ExecutionError(
        f"Malformed records are detected in record parsing: {bad}.\nParse Mode: FAILFAST. To process malformed records as null "
        "result, try setting the option 'mode' as 'PERMISSIVE'.",
        error_class="MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION",
        parameters={"badRecord": bad, "failFastMode": "FAILFAST"})


def _from_json(a, node, b):
    schema: T.DataType = node.arguments[1].schema
    o = JsonOptions(node.arguments[2].option_map)
    tz = node.options[0] if node.options else "UTC"
    read_type = _text_leaves(schema)
    failed = [False]
    conv = value_converter(read_type, failed)
    corrupt = None
    if isinstance(schema, T.StructType):
        corrupt = next((f.name for f in schema.fields if f.name == o.corrupt
                        and isinstance(f.data_type, T.StringType)), None)
    array_of_structs = isinstance(schema, T.ArrayType) and isinstance(schema.element_type,
                                                                       T.StructType)
    texts, index = _distinct(a[0])
    values, bad = [], []
    for text in texts:
        failed[0] = False
        try:
            v = parse_first(text, o.allow_single_quotes) if text.strip() else None
            if isinstance(v, dict) and array_of_structs:  # one object: an array of one
                v = [v]
            out = None if v is None else conv(v)
        except (ValueError, BadValue, Malformed):
            v = out = None
            failed[0] = True
        if text.strip() == "" and not isinstance(schema, T.StructType):
            failed[0] = False
        if failed[0] and o.mode == "FAILFAST":
            raise _failfast(_bad_record_text(out))
        if isinstance(schema, T.StructType):
            if out is None and text.strip():
                out = {f.name: None for f in schema.fields}
            if corrupt is not None and out is not None:
                out[corrupt] = text if failed[0] else None
        values.append(out)
        bad.append(failed[0])
    distinct = pa.array(values, read_type.to_arrow())
    typed, dt_failed = _typed(distinct, schema, o, tz)
    if pc.any(dt_failed).as_py():
        if o.mode == "FAILFAST":
            raise _failfast("[null]")
        if corrupt is not None:
            ci = [f.name for f in schema.fields].index(corrupt)
            fields = [pc.struct_field(typed, [i]) for i in range(len(schema.fields))]
            fields[ci] = pc.if_else(dt_failed, pa.array(texts, pa.large_string()), fields[ci])
            typed = pa.StructArray.from_arrays(fields, fields=list(schema.to_arrow()),
                                               mask=pc.is_null(typed))
    return typed.take(index)


def _from_json_result(node: ScalarFunction) -> T.DataType:
    return _nullable_with(node.arguments[1].schema, lambda x: x)


register(FunctionSpec(
    "from_json", lambda t: (T.STRING, None, None) if isinstance(t[0], (T.StringType, T.NullType))
    else None, lambda t: T.NULL, _from_json, may_fail=True, null_intolerant=False,
    expected='"STRING"', node_result=_from_json_result, time_zone_aware=True))


def reject_intervals(fn: str, t: T.DataType) -> None:
    """INTERVAL fields (read from or written as their text) are not supported yet: a clear
    ``UNSUPPORTED_FEATURE`` instead of a wrong value."""
    if isinstance(t, (T.StructType, T.ArrayType, T.MapType)):
        kids = [f.data_type for f in t.fields] if isinstance(t, T.StructType) else \
            [t.element_type] if isinstance(t, T.ArrayType) else [t.key_type, t.value_type]
        for k in kids:
            reject_intervals(fn, k)
    elif "interval" in t.simple_string():
        raise UnsupportedError(f"{fn} with an INTERVAL field", error_class="UNSUPPORTED_FEATURE")


def _schema_argument(e: Expression) -> SchemaLiteral:
    if isinstance(e, SchemaLiteral):
        return e
    if isinstance(e, ScalarFunction) and e.key == "schema_of_json" \
            and is_foldable(e.arguments[0]):
        return SchemaLiteral(_inferred(e), e.sql())
    if isinstance(e, FunctionCall):
        return _schema_argument(e.replacement)
    raise AnalysisError(
        f"The input schema {quoted_sql(e)} is not a valid schema string. The input expression "
        "must be string literal and not null.", error_class="INVALID_SCHEMA.NON_STRING_LITERAL",
        parameters={"inputSchema": quoted_sql(e)})


def build_from_json(name: str, a: tuple[Expression, ...]) -> Expression:
    """``from_json(json, schema[, options])``, shown as Spark shows it: ``from_json(json)``."""
    opts = options_argument(a[2] if len(a) > 2 else None)
    mode = opts.option_map.get("mode", "PERMISSIVE").upper()
    if mode not in ("PERMISSIVE", "FAILFAST"):
        raise AnalysisError(
            f"The function `from_json` doesn't support the {mode} mode. Acceptable modes are "
            "PERMISSIVE and FAILFAST.", error_class="PARSE_MODE_UNSUPPORTED",
            parameters={"funcName": "`from_json`", "mode": mode})
    schema = _schema_argument(a[1])
    reject_intervals(name, schema.schema)
    impl = ScalarFunction(name, (a[0], schema, opts), "from_json")
    return FunctionCall.of(name, a[:1], impl)


# -- to_json ------------------------------------------------------------------------------------


def _to_json(a, node, b):
    opts = node.arguments[1].option_map
    tz = node.options[0] if node.options else "UTC"
    ignore = opts.get("ignorenullfields", "true").strip().lower() == "true"
    return JsonGenerator(opts, tz, ignore).value(a[0], node.arguments[0].data_type)


def _to_json_check(node: ScalarFunction) -> TypeCheckFailure | None:
    t = node.arguments[0].data_type
    if isinstance(t, (T.StructType, T.ArrayType, T.MapType)):
        return None
    return TypeCheckFailure(
        f'Input schema {sql_type(t)} must be a struct, an array, a map or a variant.',
        "INVALID_JSON_SCHEMA", {"schema": sql_type(t)})


register(FunctionSpec("to_json", lambda t: (None, None), lambda t: T.STRING, _to_json,
                      check=_to_json_check, time_zone_aware=True))


def build_to_json(name: str, a: tuple[Expression, ...]) -> Expression:
    """``to_json(value[, options])``, shown as ``to_json(value)``."""
    opts = options_argument(a[1] if len(a) > 1 else None)
    reject_intervals(name, _type_or_null(a[0]))
    return FunctionCall.of(name, a[:1], ScalarFunction(name, (a[0], opts), "to_json"))


def _type_or_null(e: Expression) -> T.DataType:
    try:
        return e.data_type
    except Exception:  # noqa: BLE001 - not resolved yet: nothing to check
        return T.NULL


# -- schema_of_json -----------------------------------------------------------------------------


def _inferred(node: ScalarFunction) -> T.DataType:
    """The type ``schema_of_json`` infers for its (foldable) argument."""
    value = to_array(node.arguments[0].eval(pa.RecordBatch.from_pydict({"_": [0]})), 1)[0]
    text = value.as_py()
    o = JsonOptions(node.arguments[1].option_map)
    try:
        v = parse_first(text, o.allow_single_quotes) if text is not None else None
        t = canonical_type(infer_value(v, o), o) if v is not None else None
    except (ValueError, Malformed):
        t = None
    if t is None:
        raise ExecutionError(
            "Malformed records are detected in schema inference. Parse Mode: FAILFAST.",
            error_class="MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION",
            parameters={"badRecord": str(text), "failFastMode": "FAILFAST"})
    return t


def _schema_of_json(a, node, b):
    return pa.repeat(pa.scalar(_inferred(node).sql(), pa.large_string()), b.num_rows)


def foldable_input(name: str):
    """A :attr:`FunctionSpec.check`: the first argument must be foldable (``schema_of_json`` /
    ``schema_of_csv``: ``NON_FOLDABLE_INPUT``)."""
    def check(node: ScalarFunction) -> TypeCheckFailure | None:
        e = node.arguments[0]
        if not is_foldable(e):
            return TypeCheckFailure(
                f'the input `{name}` should be a foldable "STRING" expression; however, got '
                f'{quoted_sql(e)}.', "NON_FOLDABLE_INPUT",
                {"inputName": f"`{name}`", "inputType": '"STRING"', "inputExpr": quoted_sql(e)})
        return None
    return check


register(FunctionSpec(
    "schema_of_json", lambda t: (T.STRING, None) if isinstance(t[0], (T.StringType, T.NullType))
    else None, lambda t: T.STRING, _schema_of_json, null_intolerant=False, may_fail=True,
    expected='"STRING"', check=foldable_input("json"), nullable=lambda node: False))


def build_schema_of_json(name: str, a: tuple[Expression, ...]) -> Expression:
    opts = options_argument(a[1] if len(a) > 1 else None)
    return FunctionCall.of(name, a[:1], ScalarFunction(name, (a[0], opts), "schema_of_json"))


# -- json_object_keys ---------------------------------------------------------------------------


_PAIRS = json.JSONDecoder(object_pairs_hook=lambda pairs: _Pairs(pairs))


class _Pairs(list):
    """A JSON object's (name, value) pairs in order, duplicates kept."""


def _object_pairs(text: str) -> list[str] | None:
    """The top-level names of the JSON object ``text`` (its first value, as Jackson reads it),
    or None when it is not an object."""
    try:
        v = _PAIRS.raw_decode(text, len(text) - len(text.lstrip()))[0]
    except ValueError:
        return None
    return [k for k, _ in v] if isinstance(v, _Pairs) else None


def _json_object_keys(a, node, b):
    texts, index = _distinct(a[0])
    keys = pa.array([_object_pairs(t) for t in texts], pa.large_list(pa.large_string()))
    return keys.take(index)


register(FunctionSpec("json_object_keys", lambda t: (T.STRING,), lambda t: T.ArrayType(T.STRING),
                      _json_object_keys, expected='"STRING"'))


# -- json_tuple ---------------------------------------------------------------------------------


_FIRST_VALUE = json.JSONDecoder(strict=False, parse_float=JP._Number, parse_int=JP._Number)


def _json_object(text: str) -> dict | None:
    """The first JSON value of ``text`` (numbers kept as written, as ``get_json_object`` reads
    them) when it is an object."""
    try:
        v = _FIRST_VALUE.raw_decode(text, len(text) - len(text.lstrip()))[0]
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


def _field_text(obj: dict | None, name: str | None) -> str | None:
    """A field's value as ``json_tuple`` returns it: strings unquoted, other values as Jackson
    copies them (Spark's ``JsonTuple``, the same copy as ``get_json_object``)."""
    if obj is None or name is None:
        return None
    v = obj.get(name)
    if v is None:
        return None
    return v if type(v) is str else JP._dumps(v)


@node
class JsonTuple(Generator):
    """``json_tuple(json, f1, ..., fn)`` (Spark's ``JsonTuple``): one row of ``c0`` ... ``cn-1``
    strings per input row, each the top-level field's value (NULL when missing, for a NULL or
    malformed JSON, or a NULL field name)."""

    arguments: tuple[Expression, ...]
    fn_name = "json_tuple"

    @property
    def children(self) -> tuple[Expression, ...]:
        return self.arguments

    def check_input_types(self) -> str | None:
        if len(self.arguments) < 2:
            return TypeCheckFailure(
                f"The `json_tuple` requires > 1 parameters but the actual number is "
                f"{len(self.arguments)}.", "WRONG_NUM_ARGS")
        if not all(isinstance(e.data_type, T.StringType) for e in self.arguments):
            return TypeCheckFailure("all arguments of the function `json_tuple` must be strings.",
                                    "NON_STRING_TYPE", {"funcName": "`json_tuple`"})
        return None

    @property
    def element_schema(self) -> tuple[T.StructField, ...]:
        return tuple(T.StructField(f"c{i}", T.STRING, True)
                     for i in range(len(self.arguments) - 1))

    def generate(self, batch: pa.RecordBatch) -> tuple[np.ndarray, list[pa.Array]]:
        n = batch.num_rows
        texts, index = _distinct(to_array(self.arguments[0].eval(batch), n))
        parsed = [_json_object(t) for t in texts]
        idx = pc.fill_null(index, 0).to_numpy(zero_copy_only=False) if len(texts) else \
            np.zeros(n, np.int64)
        valid_json = index.is_valid().to_numpy(zero_copy_only=False)
        cols = []
        for e in self.arguments[1:]:
            if isinstance(e, Literal):  # one name: looked up once per distinct text
                per_text = pa.array([_field_text(p, e.value) for p in parsed], pa.large_string())
            else:  # looked up once per distinct (text, name)
                names, name_index = _distinct(to_array(e.eval(batch), n))
                ni = pc.fill_null(name_index, len(names)).to_numpy(zero_copy_only=False)
                pair, inverse = np.unique(idx * (len(names) + 1) + ni, return_inverse=True)
                per_pair = [_field_text(parsed[k // (len(names) + 1)] if texts else None,
                                        names[k % (len(names) + 1)]
                                        if k % (len(names) + 1) < len(names) else None)
                            for k in pair.tolist()]
                per_text, idx_e = pa.array(per_pair, pa.large_string()), inverse.reshape(-1)
                cols.append(pc.if_else(pa.array(valid_json), per_text.take(pa.array(idx_e)),
                                       pa.scalar(None, pa.large_string())))
                continue
            col = per_text.take(pa.array(idx)) if len(texts) else pa.nulls(n, pa.large_string())
            cols.append(pc.if_else(pa.array(valid_json), col,
                                   pa.scalar(None, pa.large_string())))
        return np.arange(n), cols

    def sql(self) -> str:
        return f"json_tuple({', '.join(e.sql() for e in self.arguments)})"
