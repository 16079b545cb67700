"""sqlglot ``DataType`` nodes -> Ember :mod:`ember.types`.

>>> from ember.sql import parse_data_type
>>> parse_data_type("decimal(10, 2)")
decimal(10,2)
>>> parse_data_type("array<struct<a:int,b:string>>")
array<struct<a:int,b:string>>
"""

from __future__ import annotations

from contextvars import ContextVar

from sqlglot import exp

from ember import types as T
from ember.errors import Origin, ParseError

__all__ = ["convert_data_type"]

_D = exp.DataType.Type

_SIMPLE: dict[object, T.DataType] = {
    _D.BOOLEAN: T.BOOLEAN,
    _D.TINYINT: T.BYTE,
    _D.SMALLINT: T.SHORT,
    _D.INT: T.INT,
    _D.BIGINT: T.LONG,
    _D.FLOAT: T.FLOAT,
    _D.DOUBLE: T.DOUBLE,
    _D.TEXT: T.STRING,
    _D.VARCHAR: T.STRING,
    _D.CHAR: T.STRING,
    _D.NVARCHAR: T.STRING,
    _D.NCHAR: T.STRING,
    _D.BINARY: T.BINARY,
    _D.VARBINARY: T.BINARY,
    _D.DATE: T.DATE,
    _D.TIMESTAMP: T.TIMESTAMP,
    _D.TIMESTAMPTZ: T.TIMESTAMP,
    _D.TIMESTAMPLTZ: T.TIMESTAMP,
    _D.TIMESTAMPNTZ: T.TIMESTAMP_NTZ,
    _D.INTERVAL: T.CALENDAR_INTERVAL,
    _D.NULL: T.NULL,
}

#: ``spark.sql.timestampType`` is TIMESTAMP_NTZ while a statement is parsed (set by the
#: session, as Spark's parser reads ``SQLConf.get.timestampType``): the type name ``TIMESTAMP``
#: (casts, DDL) and ``TIMESTAMP '...'`` literals then mean TIMESTAMP_NTZ.
TIMESTAMP_IS_NTZ: ContextVar[bool] = ContextVar("ember_timestamp_is_ntz", default=False)


def _int_param(p: exp.Expr) -> int:
    """A type parameter that must be an integer literal (``DECIMAL(10, 2)``); anything else is
    a syntax error at that token, as in Spark's grammar (``DECIMAL(ARR)``, ``DECIMAL(1.5)``)."""
    node = p.this if isinstance(p, exp.DataTypeParam) else p
    if isinstance(node, exp.Literal) and not node.is_string and node.name.isdigit():
        return int(node.name)
    near = node.sql(dialect="spark") if isinstance(node, exp.Expr) else str(node)
    meta = node.meta if isinstance(node, exp.Expr) else {}
    origin = (Origin(meta["line"], max(meta["col"] - len(near), 0))
              if "line" in meta and "col" in meta else None)
    raise ParseError(f"Syntax error at or near '{near}'.", error_class="PARSE_SYNTAX_ERROR",
                     parameters={"error": f"'{near}'", "hint": ""}, origin=origin)


def _decimal_type(params: list[int]) -> T.DataType:
    """``DECIMAL(p, s)``: Spark's parser refuses a scale above the precision with
    ``DECIMAL_SCALE_EXCEEDS_PRECISION`` (``DecimalType`` checks the precision itself)."""
    if len(params) == 2 and params[1] > params[0] and params[0] <= 38:
        raise ParseError(
            f"Decimal scale ({params[1]}) cannot be greater than precision ({params[0]}).",
            error_class="DECIMAL_SCALE_EXCEEDS_PRECISION",
            parameters={"scale": str(params[1]), "precision": str(params[0])})
    return T.parse_type_name("decimal", tuple(params))


def _interval_type(node: exp.Interval) -> T.DataType:
    """``INTERVAL DAY TO SECOND`` / ``INTERVAL HOUR`` / ``INTERVAL YEAR TO MONTH``."""
    unit = node.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        start, end = unit.this.name.upper(), unit.expression.name.upper()
    elif unit is not None:
        start = end = unit.name.upper()
    else:
        start, end = "DAY", "SECOND"
    for fields, cls in ((("YEAR", "MONTH"), T.YearMonthIntervalType),
                        (("DAY", "HOUR", "MINUTE", "SECOND"), T.DayTimeIntervalType)):
        if start in fields and end in fields and fields.index(start) <= fields.index(end):
            return cls(fields.index(start), fields.index(end))
    raise ParseError(f"Unsupported data type \"INTERVAL {start} TO {end}\".",
                     error_class="UNSUPPORTED_DATATYPE",
                     parameters={"typeName": f'"INTERVAL {start} TO {end}"'})


def convert_data_type(dt: exp.DataType) -> T.DataType:
    """The Ember type for a parsed sqlglot type (raises ``UNSUPPORTED_DATATYPE`` otherwise)."""
    kind = dt.this
    if isinstance(kind, exp.Interval):
        return _interval_type(kind)
    if kind in (_D.TIMESTAMP, _D.TIMESTAMPTZ) and TIMESTAMP_IS_NTZ.get():
        return T.TIMESTAMP_NTZ
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind in (_D.DECIMAL, _D.BIGDECIMAL):
        return _decimal_type([_int_param(p) for p in dt.expressions])
    if kind == _D.ARRAY:
        return T.ArrayType(convert_data_type(dt.expressions[0]))
    if kind == _D.MAP:
        return T.MapType(convert_data_type(dt.expressions[0]), convert_data_type(dt.expressions[1]))
    if kind == _D.STRUCT:
        fields = []
        for f in dt.expressions:
            # each field is ColumnDef(this=Identifier, kind=DataType)
            fields.append(T.StructField(f.name, convert_data_type(f.args["kind"])))
        return T.StructType(tuple(fields))
    if kind == _D.USERDEFINED:
        return T.parse_type_name(dt.args.get("kind") or dt.name)
    name = dt.sql(dialect="spark")
    raise ParseError(
        f"Unsupported data type \"{name}\".",
        error_class="UNSUPPORTED_DATATYPE",
        parameters={"typeName": f'"{name.upper()}"'},
    )
