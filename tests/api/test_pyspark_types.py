"""PySpark's ``pyspark.sql.types`` accepted where Ember takes a schema or a type (issue 18,
item 7): ``createDataFrame(rows, pyspark StructType)`` named a column
``StructField('a', IntegerType(), True)``.  Schemas, nullability and rows are compared with
PySpark's for the same data and schema."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from pyspark.sql import types as PT

import ember
from ember import types as T
from ember.errors import EmberError
from ember.functions import col

SCHEMA = PT.StructType([
    PT.StructField("a", PT.IntegerType(), False),
    PT.StructField("b", PT.ByteType()),
    PT.StructField("s", PT.StringType()),
    PT.StructField("d", PT.DecimalType(10, 2)),
    PT.StructField("f", PT.FloatType()),
    PT.StructField("day", PT.DateType()),
    PT.StructField("ts", PT.TimestampType()),
    PT.StructField("arr", PT.ArrayType(PT.LongType(), containsNull=False)),
    PT.StructField("st", PT.StructType([PT.StructField("x", PT.ShortType()),
                                        PT.StructField("y", PT.ArrayType(PT.DoubleType()))])),
    PT.StructField("bin", PT.BinaryType()),
    PT.StructField("iv", PT.DayTimeIntervalType(PT.DayTimeIntervalType.DAY,
                                               PT.DayTimeIntervalType.SECOND)),
])
ROWS = [
    (1, 2, "x", Decimal("1.50"), 0.5, dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5),
     [1, 2], (3, [1.5, None]), b"\x01", dt.timedelta(days=1, seconds=2)),
    (2, None, None, None, None, None, None, [], None, None, None),
]


@pytest.fixture(scope="module")
def oracle():
    from tests.spark_session import get_spark

    return get_spark()


def _fields(schema) -> list[tuple[str, str, bool]]:
    return [(f.name, (f.dataType.simpleString() if hasattr(f.dataType, "simpleString")
                      else f.data_type.simple_string()), f.nullable) for f in schema.fields]


def test_create_dataframe_with_pyspark_struct_type(oracle):
    want = oracle.createDataFrame(ROWS, SCHEMA)
    got = ember.Session().createDataFrame(ROWS, SCHEMA)
    assert _fields(got.schema) == _fields(want.schema)
    assert [tuple(r) for r in got.collect()] == [tuple(r) for r in want.collect()]


def test_nested_conversion_keeps_nullability():
    t = T.from_pyspark(SCHEMA)
    assert isinstance(t, T.StructType) and t.fields[0].nullable is False
    assert t.fields[7].data_type == T.ArrayType(T.LONG, False)
    assert t.fields[7].data_type.contains_null is False
    assert t.fields[8].data_type == T.StructType((T.StructField("x", T.SHORT),
                                                  T.StructField("y", T.ArrayType(T.DOUBLE))))


def test_create_dataframe_with_a_pyspark_atomic_type(oracle):
    want = oracle.createDataFrame([1, 2], PT.LongType())
    got = ember.Session().createDataFrame([1, 2], PT.LongType())
    assert _fields(got.schema) == _fields(want.schema)
    assert [tuple(r) for r in got.collect()] == [tuple(r) for r in want.collect()]


def test_cast_to_a_pyspark_type(oracle):
    sql = "SELECT * FROM VALUES (1, '2.5') AS t(a, s)"
    from pyspark.sql import functions as F

    want = oracle.sql(sql).select(F.col("a").cast(PT.DecimalType(5, 1)),
                                  F.col("s").cast(PT.DoubleType()))
    df = ember.Session().sql(sql)
    got = df.select(col("a").cast(PT.DecimalType(5, 1)), col("s").cast(PT.DoubleType()))
    # names and types (Spark makes CAST(int AS decimal(5,1)) nullable, Ember does not: a
    # nullability difference of Cast, not of the type conversion tested here)
    assert [f[:2] for f in _fields(got.schema)] == [f[:2] for f in _fields(want.schema)]
    assert [tuple(r) for r in got.collect()] == [tuple(r) for r in want.collect()]


def test_reader_schema_as_pyspark_struct_type(oracle, tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("1,x\n2,y\n")
    schema = PT.StructType([PT.StructField("n", PT.LongType()),
                            PT.StructField("s", PT.StringType())])
    want = oracle.read.schema(schema).csv(str(path))
    got = ember.Session().read.schema(schema).csv(str(path))
    assert _fields(got.schema) == _fields(want.schema)
    assert sorted(tuple(r) for r in got.collect()) == sorted(tuple(r) for r in want.collect())


def test_timestamp_ntz_and_calendar_interval_map_to_embers():
    assert T.from_pyspark(PT.TimestampNTZType()) == T.TIMESTAMP_NTZ
    assert T.from_pyspark(PT.CalendarIntervalType()) == T.CALENDAR_INTERVAL


@pytest.mark.parametrize("pytype", [
    PT.CharType(3), PT.VariantType(),
    PT.StructType([PT.StructField("m", PT.ArrayType(PT.VariantType()))]),
])
def test_a_type_ember_lacks_is_refused_by_name(pytype):
    with pytest.raises(EmberError) as e:
        ember.Session().createDataFrame([], PT.StructType([PT.StructField("c", pytype)]))
    assert e.value.error_class == "UNSUPPORTED_DATATYPE"
    assert "variant" in str(e.value).lower() or type(pytype).__name__ in str(e.value)


def test_map_types_convert_with_their_nesting():
    pytype = PT.StructType([PT.StructField("m", PT.ArrayType(PT.MapType(PT.StringType(),
                                                                          PT.LongType())))])
    df = ember.Session().createDataFrame([(([{"a": 1}],),)],
                                         PT.StructType([PT.StructField("c", pytype)]))
    assert df.schema.simpleString() == "struct<c:struct<m:array<map<string,bigint>>>>"
    assert df.collect()[0].c.m == [{"a": 1}]
