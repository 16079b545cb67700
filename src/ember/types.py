"""SQL data types and their Arrow representation.

Ember's types mirror Spark's (``IntegerType`` prints as ``int``, ``DecimalType(10, 2)`` as
``decimal(10,2)``).  Each type maps to one Arrow type, the physical representation of its columns:

=============  ============================  ==============================================
Spark          Ember                         Arrow
=============  ============================  ==============================================
boolean        BooleanType                   bool
tinyint        ByteType                      int8
smallint       ShortType                     int16
int            IntegerType                   int32
bigint         LongType                      int64
float          FloatType                     float32
double         DoubleType                    float64
decimal(p,s)   DecimalType(p, s)             decimal128(p, s)
string         StringType                    large_string
binary         BinaryType                    large_binary
date           DateType                      date32
interval ...   YearMonthIntervalType(s, e)   int32 (months)
interval ...   DayTimeIntervalType(s, e)     duration[us] (microseconds)
timestamp      TimestampType                 timestamp[us, tz=UTC] (instant; shown in the
                                             session time zone)
timestamp_ntz  TimestampNTZType              timestamp[us] (wall-clock time, no zone)
interval       CalendarIntervalType          month_day_nano_interval (nanoseconds = micros x 1000)
void           NullType                      null
struct<...>    StructType                    struct
array<...>     ArrayType                     large_list
map<k,v>       MapType                       map (keys never null)
=============  ============================  ==============================================

Type coercion (ANSI wider types, decimal precision rules) lives in :mod:`ember.coercion`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa
from ember.errors import UnsupportedError, AnalysisError, ParseError


class DataType:
    """Base of all SQL types.  Instances are immutable and compare by value."""

    __slots__ = ()
    type_name: ClassVar[str] = "?"

    def simple_string(self) -> str:
        return self.type_name

    def simpleString(self) -> str:  # noqa: N802 - PySpark's spelling, for DataFrame.schema users
        return self.simple_string()

    def sql(self) -> str:
        """Spark's ``DataType.sql``: ``INT``, ``ARRAY<STRING>``, ``MAP<INT, STRING>``,
        ``STRUCT<a: INT, b: STRING>`` (field names keep their case)."""
        if isinstance(self, ArrayType):
            return f"ARRAY<{self.element_type.sql()}>"
        if isinstance(self, MapType):
            return f"MAP<{self.key_type.sql()}, {self.value_type.sql()}>"
        if isinstance(self, StructType):
            inner = ", ".join(f"{_quote_field(f.name)}: {f.data_type.sql()}" for f in self.fields)
            return f"STRUCT<{inner}>"
        return self.simple_string().upper()

    def __repr__(self) -> str:
        return type(self).__name__ + "()" if not isinstance(self, (DecimalType, StructType, ArrayType, MapType)) else self.simple_string()

    def __str__(self) -> str:
        return self.simple_string()

    def to_arrow(self) -> pa.DataType:
        raise NotImplementedError(type(self).__name__)

    # Broad categories used by coercion and by kernels.
    @property
    def is_numeric(self) -> bool:
        return isinstance(self, NumericType)

    @property
    def is_integral(self) -> bool:
        return isinstance(self, IntegralType)

    @property
    def is_fractional(self) -> bool:
        return isinstance(self, (FloatType, DoubleType, DecimalType))

    @property
    def is_datetime(self) -> bool:
        return isinstance(self, (DateType, TimestampType, TimestampNTZType))

    @property
    def is_orderable(self) -> bool:
        """Spark's ``RowOrdering.isOrderable``: a MAP anywhere inside makes a type unorderable."""
        if isinstance(self, (MapType, CalendarIntervalType)):
            return False
        if isinstance(self, ArrayType):
            return self.element_type.is_orderable
        return not isinstance(self, StructType) or all(
            f.data_type.is_orderable for f in getattr(self, "fields", ())
        )


def _quote_field(name: str) -> str:
    """A struct field name as Spark's ``StructType.sql`` writes it (backquoted when needed)."""
    plain = name.replace("_", "a").isalnum() and not name[:1].isdigit()
    return name if plain else "`" + name.replace("`", "``") + "`"


class AtomicType(DataType):
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self).__name__)


class NumericType(AtomicType):
    __slots__ = ()


class IntegralType(NumericType):
    __slots__ = ()
    bits: ClassVar[int] = 0

    @property
    def min_value(self) -> int:
        return -(1 << (self.bits - 1))

    @property
    def max_value(self) -> int:
        return (1 << (self.bits - 1)) - 1


class NullType(AtomicType):
    __slots__ = ()
    type_name = "void"

    def to_arrow(self) -> pa.DataType:
        return pa.null()


class BooleanType(AtomicType):
    __slots__ = ()
    type_name = "boolean"

    def to_arrow(self) -> pa.DataType:
        return pa.bool_()


class ByteType(IntegralType):
    __slots__ = ()
    type_name = "tinyint"
    bits = 8

    def to_arrow(self) -> pa.DataType:
        return pa.int8()


class ShortType(IntegralType):
    __slots__ = ()
    type_name = "smallint"
    bits = 16

    def to_arrow(self) -> pa.DataType:
        return pa.int16()


class IntegerType(IntegralType):
    __slots__ = ()
    type_name = "int"
    bits = 32

    def to_arrow(self) -> pa.DataType:
        return pa.int32()


class LongType(IntegralType):
    __slots__ = ()
    type_name = "bigint"
    bits = 64

    def to_arrow(self) -> pa.DataType:
        return pa.int64()


class FloatType(NumericType):
    __slots__ = ()
    type_name = "float"

    def to_arrow(self) -> pa.DataType:
        return pa.float32()


class DoubleType(NumericType):
    __slots__ = ()
    type_name = "double"

    def to_arrow(self) -> pa.DataType:
        return pa.float64()


@dataclass(frozen=True, slots=True, repr=False)
class DecimalType(NumericType):
    precision: int = 10
    scale: int = 0

    MAX_PRECISION: ClassVar[int] = 38
    MAX_SCALE: ClassVar[int] = 38

    def __post_init__(self) -> None:
        if not (1 <= self.precision <= 38) or not (0 <= self.scale <= self.precision):
            raise AnalysisError(
                f"Decimal precision {self.precision} exceeds max precision 38"
                if self.precision > 38
                else f"Invalid decimal({self.precision},{self.scale})",
                error_class="DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"
                if self.precision > 38
                else "_LEGACY_ERROR_TEMP_1295",
            )

    def simple_string(self) -> str:
        return f"decimal({self.precision},{self.scale})"

    def to_arrow(self) -> pa.DataType:
        return pa.decimal128(self.precision, self.scale)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, DecimalType)
            and self.precision == other.precision
            and self.scale == other.scale
        )

    def __hash__(self) -> int:
        return hash(("decimal", self.precision, self.scale))


class StringType(AtomicType):
    __slots__ = ()
    type_name = "string"

    def to_arrow(self) -> pa.DataType:
        return pa.large_string()


class BinaryType(AtomicType):
    __slots__ = ()
    type_name = "binary"

    def to_arrow(self) -> pa.DataType:
        return pa.large_binary()


class DateType(AtomicType):
    __slots__ = ()
    type_name = "date"

    def to_arrow(self) -> pa.DataType:
        return pa.date32()


class TimestampType(AtomicType):
    __slots__ = ()
    type_name = "timestamp"

    def to_arrow(self) -> pa.DataType:
        return pa.timestamp("us", tz="UTC")


class TimestampNTZType(AtomicType):
    """Spark's ``TimestampNTZType``: a local date-time without a time zone (microseconds of the
    wall clock since 1970-01-01 00:00:00), never shifted by the session time zone."""
    __slots__ = ()
    type_name = "timestamp_ntz"

    def to_arrow(self) -> pa.DataType:
        return pa.timestamp("us")


class CalendarIntervalType(AtomicType):
    """Spark's ``CalendarIntervalType`` (``interval``): months, days and microseconds, kept
    apart (``make_interval``, ``CAST(s AS INTERVAL)``).  Not comparable or orderable."""
    __slots__ = ()
    type_name = "interval"

    def to_arrow(self) -> pa.DataType:
        return pa.month_day_nano_interval()


@dataclass(frozen=True, slots=True)
class StructField:
    name: str
    data_type: DataType
    nullable: bool = True

    @property
    def dataType(self) -> DataType:  # noqa: N802 - PySpark's spelling
        return self.data_type


@dataclass(frozen=True, slots=True, repr=False)
class StructType(DataType):
    fields: tuple[StructField, ...] = ()

    def simple_string(self) -> str:
        inner = ",".join(f"{f.name}:{f.data_type.simple_string()}" for f in self.fields)
        return f"struct<{inner}>"

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def fieldNames(self) -> list[str]:  # noqa: N802 - PySpark's spelling
        return [f.name for f in self.fields]

    def to_arrow(self) -> pa.DataType:
        return pa.struct(self._arrow_fields())

    def to_arrow_schema(self) -> pa.Schema:
        """The Arrow schema of rows of this type: one column per field."""
        return pa.schema(self._arrow_fields())

    def _arrow_fields(self) -> list[pa.Field]:
        return [pa.field(f.name, f.data_type.to_arrow(), nullable=f.nullable) for f in self.fields]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructType) and self.fields == other.fields

    def __hash__(self) -> int:
        return hash(("struct", self.fields))


@dataclass(frozen=True, slots=True, repr=False)
class ArrayType(DataType):
    element_type: DataType
    contains_null: bool = True

    def simple_string(self) -> str:
        return f"array<{self.element_type.simple_string()}>"

    def to_arrow(self) -> pa.DataType:
        return pa.large_list(self.element_type.to_arrow())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ArrayType) and self.element_type == other.element_type

    def __hash__(self) -> int:
        return hash(("array", self.element_type))


@dataclass(frozen=True, slots=True, repr=False)
class MapType(DataType):
    """Spark's ``MapType(keyType, valueType, valueContainsNull)`` over Arrow's map arrays (a list
    of key/value structs; keys are never NULL)."""

    key_type: DataType
    value_type: DataType
    value_contains_null: bool = True

    def simple_string(self) -> str:
        return f"map<{self.key_type.simple_string()},{self.value_type.simple_string()}>"

    def to_arrow(self) -> pa.DataType:
        # ``map()`` is ``map<void,void>``, always empty: Arrow allows no null-typed map key (a
        # key field must be non-nullable, a null-typed field nullable), so int8 stands in
        key = pa.int8() if isinstance(self.key_type, NullType) else self.key_type.to_arrow()
        return pa.map_(pa.field("key", key, nullable=False),
                       pa.field("value", self.value_type.to_arrow()))

    @property
    def keyType(self) -> DataType:  # noqa: N802 - PySpark's spelling
        return self.key_type

    @property
    def valueType(self) -> DataType:  # noqa: N802 - PySpark's spelling
        return self.value_type

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, MapType) and self.key_type == other.key_type
                and self.value_type == other.value_type)

    def __hash__(self) -> int:
        return hash(("map", self.key_type, self.value_type))


# ANSI interval types (see ember.expressions.intervals): year-month intervals are int32 months,
# day-time intervals duration[us] (microseconds, as Spark stores them).
_YM_FIELDS = ("year", "month")
_DT_FIELDS = ("day", "hour", "minute", "second")


@dataclass(frozen=True, slots=True, repr=False)
class YearMonthIntervalType(DataType):
    """Spark's ``YearMonthIntervalType(startField, endField)``: 0 = YEAR, 1 = MONTH."""

    start_field: int = 0
    end_field: int = 1

    def simple_string(self) -> str:
        s, e = _YM_FIELDS[self.start_field], _YM_FIELDS[self.end_field]
        return f"interval {s}" if s == e else f"interval {s} to {e}"

    def to_arrow(self) -> pa.DataType:
        return pa.int32()  # months, as Spark stores them

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, YearMonthIntervalType) and self.start_field == other.start_field
                and self.end_field == other.end_field)

    def __hash__(self) -> int:
        return hash(("ym_interval", self.start_field, self.end_field))


@dataclass(frozen=True, slots=True, repr=False)
class DayTimeIntervalType(DataType):
    """Spark's ``DayTimeIntervalType(startField, endField)``: 0 = DAY ... 3 = SECOND."""

    start_field: int = 0
    end_field: int = 3

    def simple_string(self) -> str:
        s, e = _DT_FIELDS[self.start_field], _DT_FIELDS[self.end_field]
        return f"interval {s}" if s == e else f"interval {s} to {e}"

    def to_arrow(self) -> pa.DataType:
        return pa.duration("us")

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DayTimeIntervalType) and self.start_field == other.start_field
                and self.end_field == other.end_field)

    def __hash__(self) -> int:
        return hash(("dt_interval", self.start_field, self.end_field))


# Singletons: types without parameters are compared by class, so these are just conveniences.
NULL = NullType()
BOOLEAN = BooleanType()
BYTE = ByteType()
SHORT = ShortType()
INT = IntegerType()
LONG = LongType()
FLOAT = FloatType()
DOUBLE = DoubleType()
STRING = StringType()
BINARY = BinaryType()
DATE = DateType()
TIMESTAMP = TimestampType()
TIMESTAMP_NTZ = TimestampNTZType()
CALENDAR_INTERVAL = CalendarIntervalType()

INTEGRAL_TYPES: tuple[IntegralType, ...] = (BYTE, SHORT, INT, LONG)

_BY_NAME: dict[str, DataType] = {
    "boolean": BOOLEAN,
    "bool": BOOLEAN,
    "tinyint": BYTE,
    "byte": BYTE,
    "smallint": SHORT,
    "short": SHORT,
    "int": INT,
    "integer": INT,
    "bigint": LONG,
    "long": LONG,
    "float": FLOAT,
    "real": FLOAT,
    "double": DOUBLE,
    "string": STRING,
    "varchar": STRING,
    "char": STRING,
    "text": STRING,
    "binary": BINARY,
    "date": DATE,
    "timestamp": TIMESTAMP,
    "timestamp_ltz": TIMESTAMP,
    "timestamp_ntz": TIMESTAMP_NTZ,
    "void": NULL,
    "null": NULL,
}


def parse_type_name(name: str, params: tuple[int, ...] = ()) -> DataType:
    """The type for a SQL type name such as ``'bigint'`` or ``('decimal', (10, 2))``."""
    n = name.lower().strip()
    if n in ("decimal", "dec", "numeric"):
        if len(params) == 0:
            return DecimalType(10, 0)
        if len(params) == 1:
            return DecimalType(params[0], 0)
        return DecimalType(params[0], params[1])
    if n in _BY_NAME:
        return _BY_NAME[n]

    raise ParseError(
        f"Unsupported data type {name!r}.",
        error_class="UNSUPPORTED_DATATYPE",
        parameters={"typeName": f'"{name.upper()}"'},
    )


def from_arrow(t: pa.DataType) -> DataType:
    """The SQL type of an Arrow type (used when data enters Ember)."""
    if pa.types.is_null(t):
        return NULL
    if pa.types.is_boolean(t):
        return BOOLEAN
    if pa.types.is_int8(t):
        return BYTE
    if pa.types.is_int16(t) or pa.types.is_uint8(t):
        return SHORT
    if pa.types.is_int32(t) or pa.types.is_uint16(t):
        return INT
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return LONG
    if pa.types.is_uint64(t):
        return DecimalType(20, 0)
    if pa.types.is_float16(t) or pa.types.is_float32(t):
        return FLOAT
    if pa.types.is_float64(t):
        return DOUBLE
    if pa.types.is_decimal(t):
        return DecimalType(t.precision, t.scale)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return STRING
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return BINARY
    if pa.types.is_date(t):
        return DATE
    if pa.types.is_timestamp(t):
        return TIMESTAMP if t.tz is not None else TIMESTAMP_NTZ
    if pa.types.is_interval(t):
        return CALENDAR_INTERVAL
    if pa.types.is_duration(t):
        return DayTimeIntervalType(0, 3)  # PySpark's DayTimeIntervalType() for timedelta
    if pa.types.is_struct(t):
        return StructType(
            tuple(StructField(f.name, from_arrow(f.type), f.nullable) for f in t)
        )
    if pa.types.is_map(t):
        return MapType(from_arrow(t.key_type), from_arrow(t.item_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return ArrayType(from_arrow(t.value_type))
    if pa.types.is_dictionary(t):
        return from_arrow(t.value_type)

    raise UnsupportedError(f"Arrow type {t} has no Ember SQL type")


_PYSPARK_ATOMIC = {
    "NullType": NULL, "BooleanType": BOOLEAN, "ByteType": BYTE, "ShortType": SHORT,
    "IntegerType": INT, "LongType": LONG, "FloatType": FLOAT, "DoubleType": DOUBLE,
    "BinaryType": BINARY, "DateType": DATE, "TimestampType": TIMESTAMP,
    "TimestampNTZType": TIMESTAMP_NTZ, "CalendarIntervalType": CALENDAR_INTERVAL,
}


def is_pyspark_type(t: Any) -> bool:
    """True for an instance of PySpark's ``pyspark.sql.types.DataType`` (PySpark not imported)."""
    return any(c.__module__ == "pyspark.sql.types" and c.__name__ == "DataType"
               for c in type(t).__mro__)


def from_pyspark(t: Any) -> DataType:
    """The Ember type of a PySpark ``pyspark.sql.types`` type, nested types included
    (``StructType`` keeps names and nullability, ``ArrayType`` its ``containsNull``).  A type
    Ember does not have (``VariantType``, ``CharType``, a
    collated string, a UDT ...) raises ``UNSUPPORTED_DATATYPE`` naming it."""
    name = type(t).__name__
    if name in _PYSPARK_ATOMIC:
        return _PYSPARK_ATOMIC[name]
    if name == "StringType" and getattr(t, "collation", "UTF8_BINARY") == "UTF8_BINARY":
        return STRING
    if name == "DecimalType":
        return DecimalType(t.precision, t.scale)
    if name == "StructType":
        return StructType(tuple(StructField(f.name, from_pyspark(f.dataType), f.nullable)
                                for f in t.fields))
    if name == "ArrayType":
        return ArrayType(from_pyspark(t.elementType), t.containsNull)
    if name == "MapType":
        return MapType(from_pyspark(t.keyType), from_pyspark(t.valueType), t.valueContainsNull)
    if name == "YearMonthIntervalType":
        return YearMonthIntervalType(t.startField, t.endField)
    if name == "DayTimeIntervalType":
        return DayTimeIntervalType(t.startField, t.endField)

    type_name = t.simpleString() if hasattr(t, "simpleString") else name
    raise UnsupportedError(
        f"The PySpark type {type_name} ({name}) has no Ember type: Ember supports the atomic "
        "types, decimals, intervals, arrays, maps and structs.",
        error_class="UNSUPPORTED_DATATYPE", parameters={"typeName": f'"{type_name.upper()}"'})


def as_ember_type(t: Any) -> Any:
    """``t`` converted to Ember's type when it is a PySpark type, else ``t`` unchanged."""
    return from_pyspark(t) if is_pyspark_type(t) else t


def arrow_schema(names: list[str] | tuple[str, ...], types: list[DataType] | tuple[DataType, ...],
                 nullables: list[bool] | tuple[bool, ...] | None = None) -> pa.Schema:
    """An Arrow schema for columns with these names and SQL types."""
    if nullables is None:
        nullables = [True] * len(names)
    return pa.schema(
        [pa.field(n, t.to_arrow(), nullable=nl) for n, t, nl in zip(names, types, nullables)]
    )
