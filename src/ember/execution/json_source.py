"""JSON sources (Spark's ``JsonFileFormat``): JSON Lines files (or, with ``multiLine``, one JSON
value per file), schema inference as Spark's ``JsonInferSchema`` and conversion to the relation's
types as Spark's ``JacksonParser``.

Options (case-insensitive names, Spark's ``JSONOptions``): ``primitivesAsString`` (every scalar
inferred as a string), ``prefersDecimal`` (floating-point numbers inferred as decimals when they
fit), ``inferTimestamp`` (strings that parse as timestamps inferred as timestamps; off by
default, as in Spark), ``multiLine``, ``mode`` (``PERMISSIVE`` / ``DROPMALFORMED`` /
``FAILFAST``), ``columnNameOfCorruptRecord`` (``spark.sql.columnNameOfCorruptRecord``,
``_corrupt_record``) and ``dropFieldIfAllNull``.

Inference follows ``JsonInferSchema``: integers are ``bigint`` (``decimal(p,0)`` beyond it, then
``double``), other numbers ``double``, objects structs with their fields sorted by name, arrays
arrays of the merged element type; conflicting types merge by ``compatibleType`` (numbers widen,
structs merge field by field, anything else becomes ``string``); NULL-only fields become
``string`` and empty structs are dropped. A line that is not a JSON object (or an array of
objects, each a row) is a malformed record: under ``PERMISSIVE`` it adds the corrupt-record
column, under ``DROPMALFORMED`` it is skipped, under ``FAILFAST`` inference fails.

Reading converts each value to its column's type as ``JacksonParser`` does: a value that does not
convert (``1.5`` for a ``bigint``, ``"x"`` for a ``boolean``) makes the record malformed, the
field NULL and the other fields kept (Spark's partial results); a string column receives a
number's or a nested value's JSON text.

Vectorized path: a file is parsed by ``pyarrow.json`` (inference with Arrow's own type inference
mapped onto Spark's, reading with the relation's schema as Arrow's explicit schema); only a file
that path cannot take with Spark's semantics (malformed lines, type conflicts, integers beyond
``bigint``, ``multiLine``, the non-default inference options) is parsed line by line with Python's
``json`` module, which implements the rules above in full.

As Jackson under Spark, a record's first JSON value is read and anything after it on the line
ignored, and single-quoted strings and names are accepted (``allowSingleQuotes``, on by
default).  Dates and timestamps are parsed with the ``dateFormat`` / ``timestampFormat``
patterns when given (also for ``inferTimestamp``), else with CAST's rules.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from ember import types as T
from ember.errors import AnalysisError, ExecutionError
from ember.expressions.cast import cast_array
from ember.expressions.datetime import parse_with_pattern
from ember.expressions.json_values import (
    WS, BadValue, JsonOptions, Malformed, canonical_type, compatible_type, infer_value,
    parse_first, value_converter,
)

__all__ = ["infer_json_schema", "read_json", "check_corrupt_column", "compatible_type",
           "JsonOptions"]




_DECODER = json.JSONDecoder()


def _raw_field(text: str, name: str) -> str | None:
    """The text of the top-level field ``name`` of the JSON object ``text`` as written (Spark
    reads a nested value into a string column as its input text), or None."""
    try:
        pos = WS.match(text, 0).end()
        if text[pos] != "{":
            return None
        pos += 1
        while True:
            pos = WS.match(text, pos).end()
            key, pos = _DECODER.raw_decode(text, pos)
            pos = WS.match(text, pos).end() + 1  # past ':'
            start = WS.match(text, pos).end()
            _value, pos = _DECODER.raw_decode(text, start)
            if key == name:
                return text[start:pos]
            pos = WS.match(text, pos).end()
            if text[pos] != ",":
                return None
            pos += 1
    except (ValueError, IndexError):
        return None



def _records(text: str, multi_line: bool, allow_single_quotes: bool = True
             ) -> list[tuple[str, Any]]:
    """(record text, parsed value or a ``Malformed``) of each non-blank record of ``text``."""
    if multi_line:
        chunks = [text] if text.strip() else []
    else:
        chunks = [ln for ln in text.split("\n") if ln.strip()]
    out = []
    for c in chunks:
        c = c[:-1] if c.endswith("\r") else c
        try:
            out.append((c, parse_first(c, allow_single_quotes)))
        except ValueError as e:
            out.append((c, Malformed(str(e))))
    return out



def _corrupt_struct(o: JsonOptions) -> T.StructType:
    return T.StructType((T.StructField(o.corrupt, T.STRING),))


def _failfast_inference(o: JsonOptions) -> ExecutionError:
    return ExecutionError(
        "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in "
        f"record parsing: {o.corrupt}.\nParse Mode: FAILFAST. To process malformed records as "
        "null result, try setting the option 'mode' as 'PERMISSIVE'.",
        error_class="MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION",
        parameters={"badRecord": o.corrupt, "failFastMode": "FAILFAST"})


def _root_type(v: Any, o: JsonOptions) -> T.DataType | None:
    """The type a record contributes to the root (``compatibleRootType``): a struct, the
    corrupt-record struct, or None (skipped)."""
    if isinstance(v, Malformed):
        t = None
    else:
        try:
            t = infer_value(v, o)
        except Malformed:
            t = None
        if isinstance(t, T.ArrayType):
            t = t.element_type
            if isinstance(t, T.NullType):
                return None  # an empty array: no row
        if not isinstance(t, T.StructType):
            t = None
    if t is None:
        if o.mode == "FAILFAST":
            raise _failfast_inference(o)
        return _corrupt_struct(o) if o.mode == "PERMISSIVE" else None
    return t


def _python_file_type(path: str, o: JsonOptions) -> T.DataType:
    t: T.DataType = T.NullType()
    for _text, v in _records(_read_text(path), o.multi_line, o.allow_single_quotes):
        r = _root_type(v, o)
        if r is not None:
            t = compatible_type(t, r)
    return t


def _arrow_type(t: pa.DataType) -> T.DataType | None:
    """Spark's inferred type of a column Arrow inferred, or None when Arrow's inference cannot
    be mapped exactly (the file is then inferred line by line)."""
    if pa.types.is_null(t):
        return T.NullType()
    if pa.types.is_boolean(t):
        return T.BOOLEAN
    if pa.types.is_int64(t):
        return T.LONG
    if pa.types.is_float64(t):
        return T.DOUBLE
    if pa.types.is_string(t) or pa.types.is_timestamp(t):  # Arrow infers ISO strings as times
        return T.STRING
    if pa.types.is_struct(t):
        fields = []
        for f in sorted(t, key=lambda f: f.name):
            ft = _arrow_type(f.type)
            if ft is None:
                return None
            fields.append(T.StructField(f.name, ft))
        return T.StructType(tuple(fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        e = _arrow_type(t.value_type)
        return None if e is None else T.ArrayType(e)
    return None


def _big_integers(col: pa.ChunkedArray | pa.Array) -> bool:
    """Whether a float64 column Arrow inferred may hold integers beyond ``bigint`` (Arrow reads
    them as doubles; Spark infers ``decimal(p,0)``)."""
    if pa.types.is_float64(col.type):
        big = pc.greater_equal(pc.abs(col), float(1 << 63))
        return bool(pc.any(big).as_py())
    if pa.types.is_struct(col.type):
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        return any(_big_integers(arr.field(i)) for i in range(arr.type.num_fields))
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        return _big_integers(arr.flatten())
    return False


def _read_text(path: str) -> str:
    with open(path, "rb") as f:
        return f.read().decode("utf-8", errors="replace")


_RECORD = re.compile(rb"[^\s][^\n]*")


def _arrow_table(source: bytes, schema: pa.Schema | None = None) -> pa.Table | None:
    """``source`` (the bytes of some lines) parsed by ``pyarrow.json`` (with ``schema`` as the
    explicit schema, other fields ignored), or None when Arrow rejects it or reads another
    number of rows than there are records (Arrow reads ``{"a": 1}{"a": 2}`` as two rows;
    Spark reads the first value of a line)."""
    parse = pajson.ParseOptions(explicit_schema=schema,
                                unexpected_field_behavior="ignore" if schema is not None
                                else "infer")
    try:
        table = pajson.read_json(io.BytesIO(source), parse_options=parse,
                                 read_options=pajson.ReadOptions(block_size=1 << 24))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    if table.num_rows != sum(1 for _ in _RECORD.finditer(source)):
        return None
    return table


def _file_type(path: str, o: JsonOptions) -> T.DataType:
    if o.default_inference and not o.multi_line:
        with open(path, "rb") as f:
            table = _arrow_table(f.read())
        if table is not None and not any(_big_integers(c) for c in table.columns):
            t = _arrow_type(pa.struct(list(table.schema)))
            if t is not None:
                return t if table.num_rows else T.NullType()
    return _python_file_type(path, o)


def infer_json_schema(paths: Sequence[str], opts: dict[str, str],
                      default_corrupt: str = "_corrupt_record") -> list[tuple[str, T.DataType]]:
    """Spark's inferred schema of the JSON files ``paths`` (``JsonInferSchema.infer``)."""
    o = JsonOptions(opts, default_corrupt)
    t: T.DataType = T.NullType()
    for p in paths:
        t = compatible_type(t, _file_type(p, o))
    c = canonical_type(t, o) if isinstance(t, T.StructType) else None
    if not isinstance(c, T.StructType):
        return []
    return [(f.name, f.data_type) for f in c.fields]


# -- reading (JacksonParser) ------------------------------------------------------------------



def _text_typed(t: T.DataType) -> bool:
    return isinstance(t, (T.DateType, T.TimestampType))


def _arrow_read_type(t: T.DataType) -> pa.DataType:
    """The Arrow type the readers produce for a column of type ``t`` before the final cast."""
    return pa.large_string() if _text_typed(t) else t.to_arrow()


def _python_read(data: bytes, fields: list[tuple[str, T.DataType]], o: JsonOptions
                 ) -> tuple[list[pa.Array], pa.Array, pa.Array]:
    """Columns of ``fields`` read line by line, with the boolean ``bad`` flags and the corrupt
    records' text."""
    failed = [False]
    convs = [(n, value_converter(t, failed)) for n, t in fields]
    as_text = {n for n, t in fields if isinstance(t, T.StringType)}
    rows: list[list[Any]] = []
    bad: list[bool] = []
    texts: list[str | None] = []
    for text, v in _records(data.decode("utf-8", errors="replace"), o.multi_line,
                            o.allow_single_quotes):
        recs = v if isinstance(v, list) else [v]
        if isinstance(v, list) and not v:
            continue
        if isinstance(v, Malformed) or not all(isinstance(r, dict) for r in recs):
            rows.append([None] * len(convs))
            bad.append(True)
            texts.append(text)
            continue
        for r in recs:
            row = []
            failed[0] = False
            for n, c in convs:
                x = r.get(n)
                if x is None:
                    row.append(None)
                    continue
                if n in as_text and isinstance(x, (dict, list)) and r is v:
                    raw = _raw_field(text, n)
                    if raw is not None:
                        row.append(raw)
                        continue
                try:
                    row.append(c(x))
                except BadValue:
                    row.append(None)
                    failed[0] = True
            rows.append(row)
            bad.append(failed[0])
            texts.append(text if failed[0] else None)
    cols = [pa.array([r[i] for r in rows], _arrow_read_type(t)) for i, (_, t) in enumerate(fields)]
    return cols, pa.array(bad, pa.bool_()), pa.array(texts, pa.large_string())


def _arrow_read(data: bytes, fields: list[tuple[str, T.DataType]]) -> list[pa.Array] | None:
    """Columns of ``fields`` read by ``pyarrow.json`` with them as the explicit schema, or None
    when Arrow cannot read the file so (a value that does not convert, a malformed line ...)."""
    if not fields or not data.strip():
        return None
    schema = pa.schema([pa.field(n, _list_types(_arrow_read_type(t))) for n, t in fields])
    table = _arrow_table(data, schema)
    if table is None:
        return None
    return [table.column(i).combine_chunks().cast(_arrow_read_type(t))
            for i, (_, t) in enumerate(fields)]


def _list_types(t: pa.DataType) -> pa.DataType:
    """``t`` with ``list`` for ``large_list`` (``pyarrow.json`` converts to the former only)."""
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        return pa.list_(_list_types(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _list_types(f.type)) for f in t])
    return t


def read_json(path: str, attrs: Sequence[Any], opts: dict[str, str], time_zone: str,
              default_corrupt: str = "_corrupt_record", data: bytes | None = None) -> pa.Table:
    """The file ``path`` (or ``data``, some of its lines) read as the columns ``attrs`` (the
    relation's data columns), with ``mode`` and the corrupt-record column applied."""
    o = JsonOptions(opts, default_corrupt)
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    corrupt_pos = next((i for i, a in enumerate(attrs)
                        if a.name == o.corrupt and isinstance(a.data_type, T.StringType)), None)
    fields = [(a.name, a.data_type) for i, a in enumerate(attrs) if i != corrupt_pos]
    cols = None if o.multi_line else _arrow_read(data, fields)
    if cols is not None:
        n = len(cols[0])
        bad = texts = None
    else:
        cols, bad, texts = _python_read(data, fields, o)
        n = len(bad)
    out, k = [], 0
    for i, a in enumerate(attrs):
        if i == corrupt_pos:
            out.append(texts if texts is not None else pa.nulls(n, pa.large_string()))
            continue
        col = cols[k]
        k += 1
        if _text_typed(a.data_type):
            pattern = o.date_format if isinstance(a.data_type, T.DateType) \
                else o.timestamp_format
            typed = (cast_array(col, T.STRING, a.data_type, ansi=False, time_zone=time_zone)
                     if pattern is None else parse_with_pattern(
                         col, pattern, isinstance(a.data_type, T.DateType), time_zone))
            failed = pc.and_(col.is_valid(), typed.is_null())
            if pc.any(failed).as_py():
                if bad is None:  # Arrow read it: every other value converted
                    bad = pa.nulls(n, pa.bool_()).fill_null(False)
                    texts = pa.nulls(n, pa.large_string())
                bad = pc.or_(bad, failed)
            col = typed
        out.append(col)
    if bad is not None and pc.any(bad).as_py():
        if o.mode == "FAILFAST":
            raise ExecutionError(
                f"Encountered error while reading file {path}. "
                "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected "
                "in record parsing. Parse Mode: FAILFAST. To process malformed records as null "
                "result, try setting the option 'mode' as 'PERMISSIVE'.",
                error_class="FAILED_READ_FILE.NO_HINT", parameters={"path": path})
        if o.mode == "DROPMALFORMED":
            keep = pc.invert(bad)
            out = [c.filter(keep) for c in out]
            n = len(out[0]) if out else int(pc.sum(keep.cast(pa.int64())).as_py() or 0)
    if not out:
        return pa.table({"_": pa.nulls(n)}).drop(["_"])
    return pa.Table.from_arrays(out, names=[f"c{i}" for i in range(len(out))])


def check_corrupt_column(attrs: Sequence[Any], opts: dict[str, str],
                         default_corrupt: str = "_corrupt_record") -> None:
    """Spark's ``ExprUtils.verifyColumnNameOfCorruptRecord``: the corrupt-record column of a
    user schema must be a nullable string."""
    o = JsonOptions(opts, default_corrupt)
    for a in attrs:
        if a.name == o.corrupt and not isinstance(a.data_type, T.StringType):
            raise AnalysisError(
                "The field for corrupt records must be string type and nullable",
                error_class="INVALID_CORRUPT_RECORD_TYPE",
                parameters={"columnName": f"`{o.corrupt}`", "actualType": a.data_type.sql()
                            if hasattr(a.data_type, "sql") else a.data_type.simple_string()})
