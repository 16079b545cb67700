"""ResolveTimeZone: casts and date/time functions use spark.sql.session.timeZone.

Expected values are PySpark 4.3's with spark.sql.session.timeZone=America/Los_Angeles (collect()
returns naive datetimes in the Python process's zone, UTC on the machines that ran it)."""

from __future__ import annotations

import datetime as dt
import os

import pytest

import ember
from ember.expressions.cast import Cast
from ember.expressions.misc import ScalarFunction

QUERY = (
    "select ts, cast(ts as bigint) as e, date_format(ts, 'yyyy-MM-dd HH:mm') as f, hour(ts) as h, "
    "cast(s as timestamp) as c, to_date(s) as td, cast(ts as date) as dd, "
    "cast(ts as string) as cs, to_timestamp(s) as tt from t"
)


@pytest.fixture()
def la_session(tmp_path, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")  # collect() renders in the process's zone, as PySpark does
    path = tmp_path / "t.csv"
    path.write_text("id,ts,s\n1,2020-01-01 10:00:00,2020-06-01 23:30:00\n")
    s = ember.Session()
    s.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    s.read.csv(str(path), header=True, inferSchema=True).createOrReplaceTempView("t")
    return s


def test_values_follow_the_session_time_zone(la_session):
    row = tuple(la_session.sql(QUERY).collect()[0])
    assert row == (
        dt.datetime(2020, 1, 1, 18, 0), 1577901600, "2020-01-01 10:00", 10,
        dt.datetime(2020, 6, 2, 6, 30), dt.date(2020, 6, 1), dt.date(2020, 1, 1),
        "2020-01-01 10:00:00", dt.datetime(2020, 6, 2, 6, 30),
    )


def test_analyzed_plan_carries_the_zone(la_session):
    plan = la_session.sql(QUERY)._qe.analyzed
    zones = set()
    for p in [plan, *plan.collect(lambda n: n)]:
        for e in p.expressions():
            e.foreach(lambda x: zones.add(x.time_zone) if isinstance(x, Cast) else None)
            e.foreach(lambda x: zones.add(x.options[0])
                      if isinstance(x, ScalarFunction) and x.spec.time_zone_aware else None)
    assert zones == {"America/Los_Angeles"}


def test_local_time_zone_name_from_env(monkeypatch):
    from ember.dataframe import python_local_time_zone

    monkeypatch.setenv("TZ", ":Europe/Paris")
    assert python_local_time_zone() == "Europe/Paris"
    monkeypatch.delenv("TZ")
    assert python_local_time_zone()  # /etc/localtime or UTC
    assert "TZ" not in os.environ
