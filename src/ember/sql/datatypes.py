"""sqlglot ``DataType`` nodes -> Ember :mod:`ember.types`.

>>> from ember.sql import parse_data_type
>>> parse_data_type("decimal(10, 2)")
decimal(10,2)
>>> parse_data_type("array<struct<a:int,b:string>>")
array<struct<a:int,b:string>>
"""

from __future__ import annotations

from sqlglot import exp

from ember import types as T
from ember.errors import ParseError

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
    _D.NULL: T.NULL,
}


def _int_param(p: exp.Expr) -> int:
    node = p.this if isinstance(p, exp.DataTypeParam) else p
    return int(node.name)


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
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind in (_D.DECIMAL, _D.BIGDECIMAL):
        params = [_int_param(p) for p in dt.expressions]
        return T.parse_type_name("decimal", tuple(params))
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
