"""The console sink (ember.streaming.sinks.console): Spark's batch header and show() table."""

from __future__ import annotations

import io

import pyarrow as pa
import pytest

import ember
from ember.errors import AnalysisError
from ember.readers import _schema_of
from ember.streaming.sinks.console import ConsoleSink
from ember.streaming.sources.file import FileStreamSource

CSV = ("1,hello world this is a long string value,2024-01-02 03:04:05\n"
       "2,,2024-01-02 03:04:06\n3,c,\n")

# Printed by PySpark 4.3 for readStream.schema("a int, b string, t timestamp").csv(dir) with
# writeStream.format("console") (first: default options; second: numRows=2, truncate=false),
# trigger(availableNow=True), captured from the driver's stdout.
SPARK_DEFAULT = """-------------------------------------------
Batch: 0
-------------------------------------------
+---+--------------------+-------------------+
|  a|                   b|                  t|
+---+--------------------+-------------------+
|  1|hello world this ...|2024-01-02 03:04:05|
|  2|                NULL|2024-01-02 03:04:06|
|  3|                   c|               NULL|
+---+--------------------+-------------------+

"""
SPARK_TWO_ROWS = """-------------------------------------------
Batch: 0
-------------------------------------------
+---+---------------------------------------+-------------------+
|a  |b                                      |t                  |
+---+---------------------------------------+-------------------+
|1  |hello world this is a long string value|2024-01-02 03:04:05|
|2  |NULL                                   |2024-01-02 03:04:06|
+---+---------------------------------------+-------------------+
only showing top 2 rows
"""


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("console_in")
    (d / "x.csv").write_text(CSV)
    session = ember.Session()
    src = FileStreamSource(session, _schema_of("a int, b string, t timestamp"), {}, str(d),
                           fmt="csv")
    return session, src.get_batch(None, src.latest_offset()), str(d)


def printed(session, options, batch_id, table) -> str:
    buf = io.StringIO()
    ConsoleSink(session, options, None, out=buf).add_batch(batch_id, table)
    return buf.getvalue()


def test_matches_spark_console_output(data):
    session, table, _ = data
    assert printed(session, {}, 0, table) == SPARK_DEFAULT
    assert printed(session, {"numRows": "2", "truncate": "false"}, 0, table) == SPARK_TWO_ROWS


def test_table_matches_live_spark_show(spark, data):
    session, table, d = data
    sdf = spark.read.schema("a int, b string, t timestamp").csv(d)
    for num_rows, truncate in ((20, True), (1, False), (2, True)):
        expected = sdf._jdf.showString(num_rows, 20 if truncate else 0, False)
        text = ConsoleSink(session, {"numRows": str(num_rows), "truncate": str(truncate)},
                           None).text(7, table)
        header = "-------------------------------------------\nBatch: 7\n" \
                 "-------------------------------------------\n"
        assert text == header + expected


def test_batches_print_once_and_empty_batches_print_a_table(data):
    session, table, _ = data
    buf = io.StringIO()
    sink = ConsoleSink(session, {}, None, out=buf)
    sink.add_batch(0, table.slice(0, 0))
    sink.add_batch(0, table)  # already printed: skipped
    sink.add_batch(1, table.slice(2, 1))
    out = buf.getvalue()
    assert out.count("Batch: ") == 2
    assert "Batch: 0\n-------------------------------------------\n+---+---+---+\n|  a|  b|  t|\n" \
           "+---+---+---+\n+---+---+---+\n" in out
    assert "|  3|  c|NULL|" in out


def test_bad_options(data):
    session, _, _ = data
    with pytest.raises(AnalysisError):
        ConsoleSink(session, {"truncate": "maybe"}, None)
    with pytest.raises(AnalysisError):
        ConsoleSink(session, {"numRows": "x"}, None)


def test_timestamps_in_session_time_zone():
    session = ember.Session({"spark.sql.session.timeZone": "America/New_York"})
    t = pa.table({"t": pa.array([0], pa.timestamp("us", tz="UTC"))})
    assert "|1969-12-31 19:00:00|" in printed(session, {}, 0, t)


def test_console_query_end_to_end(data, capsys):
    session, _, d = data
    df = session.readStream.schema("a int, b string, t timestamp").csv(d)
    q = df.writeStream.format("console").option("numRows", 2).option("truncate", "false") \
        .trigger(availableNow=True).start()
    q.awaitTermination()
    assert capsys.readouterr().out == SPARK_TWO_ROWS
