"""Window evaluation (``WindowExec`` / ``WindowGroupLimitExec``) against PySpark 4.3.

Each spec group below is one window specification (PARTITION BY / ORDER BY) with many window
functions over it.  Ember runs a ``Window`` logical plan built directly over the table (with
the frames Spark's analysis would give), on both runtimes and with batch sizes 2 and the
default; Spark runs the same functions as SQL.  The rows are compared by ``id``.  The data
has NULLs in the partition, order and value columns, ties, NaN, and dates / timestamps around
the 2024 DST changes of America/Los_Angeles (the session time zone of both engines here).
"""

from __future__ import annotations

import datetime as dt
import os
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest

from ember import types as T
from ember.dataframe import DataFrame
from ember.expressions.aggregates import lookup_aggregate
from ember.expressions.arithmetic import UnaryMinus
from ember.expressions.base import (
    Alias, AttributeReference, Expression, Literal, SortOrder,
)
from ember.expressions.intervals import IntervalLiteral
from ember.expressions.predicates import GreaterThan
from ember.expressions.windows import (
    CumeDist, CurrentRow, DenseRank, Lag, Lead, NthValue, NTile, PercentRank, Rank,
    RankingWindowFunction, RowNumber, SpecifiedWindowFrame, UnboundedFollowing,
    UnboundedPreceding, WindowExpression, WindowSpecDefinition, range_frame, rows_frame,
)
from ember.plans.logical.nodes import Project, Window, WindowGroupLimit
from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.compare import norm_value

TZ = "America/Los_Angeles"
INT = T.IntegerType()
DOUBLE = T.DoubleType()


def _rows() -> list[tuple]:
    rnd = random.Random(20)
    out = []
    base_d = [dt.date(2024, 3, 8) + dt.timedelta(days=i) for i in range(5)] + \
             [dt.date(2024, 10, 31) + dt.timedelta(days=i) for i in range(5)]
    base_ts = ["2024-03-09 02:30:00", "2024-03-10 01:30:00", "2024-03-10 03:30:00",
               "2024-03-11 02:30:00", "2024-03-11 03:00:00", "2024-11-02 01:30:00",
               "2024-11-03 01:30:00", "2024-11-03 00:30:00", "2024-11-04 01:15:00",
               "2024-04-10 03:30:00"]
    for i in range(40):
        p = None if i % 11 == 5 else rnd.choice([1, 2, 3])
        o = None if i % 7 == 3 else rnd.randint(0, 6)
        x = rnd.choice([None, 1.5, -2.0, 3.25, 4.0, 0.5, -0.0, 7.75])
        if i == 17:
            x = float("nan")
        dec = None if i % 9 == 4 else Decimal(rnd.randint(-300, 300)) / 100
        d = None if i % 13 == 6 else rnd.choice(base_d)
        ts = None if i % 12 == 7 else rnd.choice(base_ts)
        if i == 0:
            p, o, x, dec, d, ts = 1, 2, 1.5, Decimal("1.25"), base_d[0], base_ts[0]
        out.append((i, p, o, x, dec, d, ts))
    return out


def _lit(v: Any, kind: str) -> str:
    if v is None:
        return "NULL"
    if kind == "x":
        return "CAST('NaN' AS DOUBLE)" if v != v else f"{v!r}D"
    if kind == "dec":
        return f"CAST('{v}' AS DECIMAL(10,2))"
    if kind == "d":
        return f"DATE'{v.isoformat()}'"
    if kind == "ts":  # a string: cast in TABLE's projection (see there)
        return f"'{v}'"
    return str(v)


COLS = ("id", "p", "o", "x", "dec", "d", "ts")
# The timestamps are cast in a projection: Ember's inline tables (VALUES) read TIMESTAMP'...'
# literals and casts in UTC instead of the session time zone.
TABLE = ("SELECT id, p, o, x, dec, d, CAST(ts AS TIMESTAMP) AS ts, CAST(NULL AS DOUBLE) AS n "
         "FROM VALUES " + ", ".join(
    "(" + ", ".join(_lit(v, k) for v, k in zip(r, COLS)) + ")" for r in _rows())
    + f" AS t({', '.join(COLS)})")


# ---------------------------------------------------------------------------------------------
# Cases: (Spark SQL of the function, Ember builder, Ember frame, Spark frame text)


A = dict[str, AttributeReference]


@dataclass
class Case:
    spark: str
    build: Callable[[A], Expression]
    frame: SpecifiedWindowFrame | None = None
    spark_frame: str = ""


def _i(v: int) -> Literal:
    return Literal(v, INT)


def _agg(name: str, *cols: str, ignore_nulls: bool = False,
         filt: Callable[[A], Expression] | None = None) -> Callable[[A], Expression]:
    def build(a: A) -> Expression:
        args = tuple(a[c] if isinstance(c, str) and c in a else _i(1) for c in cols)
        e = lookup_aggregate(name, args, ignore_nulls=ignore_nulls,
                             filter=filt(a) if filt else None)
        assert e is not None
        return e
    return build


def rows(lo: Any, hi: Any) -> tuple[SpecifiedWindowFrame, str]:
    f = rows_frame(_bound(lo), _bound(hi))
    return f, f.sql()


def rng(lo: Any, hi: Any) -> tuple[SpecifiedWindowFrame, str]:
    f = range_frame(_bound(lo), _bound(hi))
    return f, f.sql()


def _bound(b: Any) -> Expression:
    if b == "UP":
        return UnboundedPreceding()
    if b == "UF":
        return UnboundedFollowing()
    if b == 0:
        return CurrentRow()
    if isinstance(b, Expression):
        return b
    if isinstance(b, Decimal):
        lit = Literal(abs(b), T.DecimalType(10, 2))
        return UnaryMinus(lit) if b < 0 else lit
    return UnaryMinus(_i(-b)) if b < 0 else _i(b)


def framed(spark: str, build: Callable[[A], Expression],
           fr: tuple[SpecifiedWindowFrame, str]) -> Case:
    return Case(spark, build, fr[0], fr[1])


AGGS = [("sum(x)", _agg("sum", "x")), ("count(x)", _agg("count", "x")),
        ("count(1)", _agg("count", "1")), ("avg(dec)", _agg("avg", "dec")),
        ("min(x)", _agg("min", "x")), ("max(dec)", _agg("max", "dec")),
        ("sum(dec)", _agg("sum", "dec"))]

ROW_FRAMES = [rows("UP", 0), rows(-2, 1), rows(0, "UF"), rows(3, 5), rows(-5, -3), rows("UP", "UF"),
              rows(-1, "UF"), rows("UP", -1)]

# Deterministic order (id breaks ties): every function.
DETERMINISTIC = [
    Case("row_number()", lambda a: RowNumber()),
    Case("ntile(3)", lambda a: NTile(_i(3))),
    Case("ntile(50)", lambda a: NTile(_i(50))),
    Case("lag(x)", lambda a: Lag(a["x"], _i(1), Literal(None, DOUBLE))),
    Case("lag(x, 2, -1.0D)", lambda a: Lag(a["x"], _i(2), Literal(-1.0, DOUBLE))),
    Case("lead(x, 1) IGNORE NULLS", lambda a: Lead(a["x"], _i(1), Literal(None, DOUBLE), True)),
    Case("lag(x, 2, 9.0D) IGNORE NULLS", lambda a: Lag(a["x"], _i(2), Literal(9.0, DOUBLE), True)),
    Case("lead(dec, 3)", lambda a: Lead(a["dec"], _i(3), Literal(None, T.DecimalType(10, 2)))),
    Case("lag(x, 0)", lambda a: Lag(a["x"], _i(0), Literal(None, DOUBLE))),
    Case("lead(x, 0, 5.0D) IGNORE NULLS", lambda a: Lead(a["x"], _i(0), Literal(5.0, DOUBLE), True)),
    Case("lead(x, -1) IGNORE NULLS", lambda a: Lead(a["x"], _i(-1), Literal(None, DOUBLE), True)),
    Case("nth_value(x, 2)", lambda a: NthValue(a["x"], _i(2))),
    framed("nth_value(x, 2) IGNORE NULLS", lambda a: NthValue(a["x"], _i(2), True), rows(-1, 2)),
    framed("nth_value(x, 3)", lambda a: NthValue(a["x"], _i(3)), rows("UP", "UF")),
    framed("first_value(x)", _agg("first_value", "x"), rows(-2, 0)),
    framed("first_value(x) IGNORE NULLS", _agg("first_value", "x", ignore_nulls=True),
           rows(1, 3)),
    framed("last_value(x) IGNORE NULLS", _agg("last_value", "x", ignore_nulls=True),
           rows("UP", 0)),
    framed("last(x)", _agg("last", "x"), rows(0, "UF")),
    framed("sum(x) FILTER (WHERE o > 2)",
           _agg("sum", "x", filt=lambda a: GreaterThan(a["o"], _i(2))), rows(-3, 0)),
    framed("first(x) FILTER (WHERE o > 2)",
           _agg("first", "x", filt=lambda a: GreaterThan(a["o"], _i(2))), rows(-3, 1)),
    # an all-NULL column: every frame is all NULL
    framed("sum(n)", _agg("sum", "n"), rows(-1, 1)),
    framed("avg(n)", _agg("avg", "n"), rows("UP", 0)),
    framed("count(n)", _agg("count", "n"), rows("UP", "UF")),
    framed("first_value(n) IGNORE NULLS", _agg("first_value", "n", ignore_nulls=True),
           rows("UP", 0)),
    Case("lag(n, 1, 0.0D) IGNORE NULLS", lambda a: Lag(a["n"], _i(1), Literal(0.0, DOUBLE), True)),
    framed("nth_value(n, 1) IGNORE NULLS", lambda a: NthValue(a["n"], _i(1), True), rows(-2, 2)),
] + [framed(s, b, f) for s, b in AGGS for f in ROW_FRAMES]

# Order with ties: functions whose result does not depend on the order among peers.
PEERS = [
    Case("rank()", lambda a: Rank((a["o"],))),
    Case("dense_rank()", lambda a: DenseRank((a["o"],))),
    Case("percent_rank()", lambda a: PercentRank((a["o"],))),
    Case("cume_dist()", lambda a: CumeDist()),
] + [framed(s, b, f) for s, b in AGGS
     for f in [rng("UP", 0), rng(-1, 2), rng(0, 0), rng(0, "UF"), rng("UP", 1), rng(2, 3),
               rng(-3, -1)]] + [Case("sum(x)", _agg("sum", "x"))]

#: Without ORDER BY the rows' order within a partition is arbitrary: order-insensitive only.
WHOLE = [Case(s, b) for s, b in AGGS]


def _ts_bound(n: int, unit: str) -> Expression:
    lit = IntervalLiteral(abs(n), unit, unit)
    return UnaryMinus(lit) if n < 0 else lit


def _interval_frame(lo: tuple[int, str] | Any, hi: tuple[int, str] | Any
                    ) -> tuple[SpecifiedWindowFrame, str]:
    def b(x: Any) -> Expression:
        return _ts_bound(*x) if isinstance(x, tuple) else _bound(x)
    f = range_frame(b(lo), b(hi))
    return f, f.sql()


TIMESTAMP_FRAMES = [_interval_frame((-1, "DAY"), 0), _interval_frame(0, (1, "DAY")),
                    _interval_frame((-2, "HOUR"), (2, "HOUR")),
                    _interval_frame((-1, "MONTH"), 0), _interval_frame("UP", (-1, "DAY")),
                    _interval_frame((23, "HOUR"), (25, "HOUR"))]
DATE_FRAMES = [rng(-1, 0), rng(0, 2), _interval_frame((-1, "MONTH"), (1, "MONTH")),
               _interval_frame("UP", (-1, "MONTH"))]

#: name -> (partition columns, order [(column, ascending, nulls_first)], cases)
SPECS: dict[str, tuple[list[str], list[tuple[str, bool, bool | None]], list[Case]]] = {
    "deterministic": (["p"], [("o", True, None), ("id", True, None)], DETERMINISTIC),
    "peers": (["p"], [("o", True, None)], PEERS),
    "peers_desc_no_partition": ([], [("o", False, None)], PEERS),
    "whole_partition": (["p"], [], WHOLE),
    "no_partition_no_order": ([], [], WHOLE),
    "date_key": (["p"], [("d", True, None)],
                 [framed("sum(x)", _agg("sum", "x"), f) for f in DATE_FRAMES]
                 + [framed("count(1)", _agg("count", "1"), f) for f in DATE_FRAMES]),
    "timestamp_key": (["p"], [("ts", True, None)],
                      [framed("count(1)", _agg("count", "1"), f) for f in TIMESTAMP_FRAMES]),
    "timestamp_key_desc": ([], [("ts", False, None)],
                           [framed("count(1)", _agg("count", "1"), f)
                            for f in TIMESTAMP_FRAMES]),
    "decimal_key_desc_nulls_first": (
        ["p"], [("dec", False, True)],
        [framed("count(1)", _agg("count", "1"), rng(Decimal("-0.50"), Decimal("1.00"))),
         framed("sum(x)", _agg("sum", "x"), rng(0, Decimal("2.00")))]),
    "double_key_nulls_last": (
        ["p"], [("x", True, False)],
        [framed("count(1)", _agg("count", "1"), rng(-1, 1)),
         framed("max(o)", _agg("max", "o"), rng("UP", -1))]),
}


def _order_sql(order: list[tuple[str, bool, bool | None]]) -> str:
    if not order:
        return ""
    items = []
    for c, asc, nf in order:
        s = f"{c} {'ASC' if asc else 'DESC'}"
        if nf is not None:
            s += " NULLS FIRST" if nf else " NULLS LAST"
        items.append(s)
    return "ORDER BY " + ", ".join(items)


def spark_sql(name: str) -> str:
    part, order, cases = SPECS[name]
    head = (f"PARTITION BY {', '.join(part)} " if part else "") + _order_sql(order)
    cols = ", ".join(f"{c.spark} OVER ({head} {c.spark_frame}) AS c{i}"
                     for i, c in enumerate(cases))
    return f"SELECT id, {cols} FROM ({TABLE})"


def ember_plan(name: str, table: DataFrame) -> Project:
    part, order, cases = SPECS[name]
    child = table.plan
    a = {x.name: x for x in child.output}
    pspec = tuple(a[c] for c in part)
    ospec = tuple(SortOrder(a[c], asc, nf) for c, asc, nf in order)
    exprs = []
    for i, c in enumerate(cases):
        fn = c.build(a)
        if c.frame is not None:
            frame = c.frame
        elif isinstance(fn, (RankingWindowFunction, Lag, Lead)):
            frame = fn.frame
        elif ospec:
            frame = range_frame(UnboundedPreceding(), CurrentRow())
        else:
            frame = rows_frame(UnboundedPreceding(), UnboundedFollowing())
        exprs.append(Alias(WindowExpression(fn, WindowSpecDefinition(pspec, ospec, frame)),
                           f"c{i}"))
    w = Window(tuple(exprs), pspec, ospec, child)
    return Project((a["id"], *w.output[len(child.output):]), w)


@pytest.fixture(scope="module")
def spark_results(spark: Any) -> dict[str, dict[int, tuple]]:
    old = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", TZ)
    try:
        return {name: {r[0]: norm_value(tuple(r)) for r in spark.sql(spark_sql(name)).collect()}
                for name in SPECS}
    finally:
        spark.conf.set("spark.sql.session.timeZone", old)


def _ember(name: str, runtime: str, batch_size: str | None) -> dict[int, tuple]:
    conf = {"spark.sql.session.timeZone": TZ}
    if batch_size:
        conf["ember.execution.batchSize"] = batch_size
    session = new_session(conf, runtime)
    df = DataFrame(session, ember_plan(name, session.sql(TABLE)))
    return {r[0]: norm_value(tuple(r)) for r in df.collect()}


#: The Spark runtime runs a sample of the specs unless EMBER_WINDOW_SWEEP=1 (it is slower and
#: runs the same operators inside Spark tasks).
SPARK_RUNTIME_SPECS = (list(SPECS) if os.environ.get("EMBER_WINDOW_SWEEP") == "1"
                       else ["deterministic", "peers", "timestamp_key"])


@pytest.mark.parametrize("name,runtime,batch_size",
                         [(n, "local", b) for n in SPECS for b in ("2", None)]
                         + [(n, "spark", "3") for n in SPARK_RUNTIME_SPECS])
def test_windows_match_spark(name: str, runtime: str, batch_size: str | None,
                             spark_results: dict[str, dict[int, tuple]]) -> None:
    assert runtime in RUNTIMES
    expected = spark_results[name]
    got = _ember(name, runtime, batch_size)
    assert got.keys() == expected.keys()
    cases = SPECS[name][2]
    bad = [(i, f"{cases[j].spark} {cases[j].spark_frame}", expected[i][j + 1], got[i][j + 1])
           for i in expected for j in range(len(cases)) if expected[i][j + 1] != got[i][j + 1]]
    assert not bad, bad[:10]


# ---------------------------------------------------------------------------------------------
# WindowGroupLimit: the rows whose rank-like function is at most the limit


LIMITS = [("row_number()", lambda a: RowNumber(), ["p"], [("o", True, None), ("id", True, None)], 2),
          ("rank()", lambda a: Rank((a["o"],)), ["p"], [("o", False, None)], 2),
          ("dense_rank()", lambda a: DenseRank((a["o"],)), [], [("o", True, None)], 3),
          ("rank()", lambda a: Rank((a["x"],)), ["p"], [("x", True, False)], 1)]


@pytest.mark.parametrize("k", range(len(LIMITS)))
@pytest.mark.parametrize("runtime,batch_size", [("local", "2"), ("local", None),
                                                ("spark", None)])
def test_window_group_limit(k: int, runtime: str, batch_size: str | None, spark: Any) -> None:
    fn_sql, build, part, order, limit = LIMITS[k]
    head = (f"PARTITION BY {', '.join(part)} " if part else "") + _order_sql(order)
    q = f"SELECT id FROM (SELECT id, {fn_sql} OVER ({head}) AS r FROM ({TABLE})) WHERE r <= {limit}"
    expected = sorted(r[0] for r in spark.sql(q).collect())
    conf = {"ember.execution.batchSize": batch_size} if batch_size else {}
    session = new_session(conf, runtime)
    child = session.sql(TABLE).plan
    a = {x.name: x for x in child.output}
    plan = WindowGroupLimit(tuple(a[c] for c in part),
                            tuple(SortOrder(a[c], asc, nf) for c, asc, nf in order),
                            build(a), limit, child)
    got = sorted(r[0] for r in DataFrame(session, Project((a["id"],), plan)).collect())
    assert got == expected


# ---------------------------------------------------------------------------------------------
# Planning: the exchanges and sorts Spark 4.3 plans (PySpark's EXPLAIN of the same queries)


def _shape(tree: str) -> list[str]:
    """Plan lines without expression ids, plan ids and the window expressions' text."""
    out = []
    for line in tree.splitlines():
        line = re.sub(r"#\d+L?", "", line)
        line = re.sub(r", \[plan_id=\d+\]", "", line)
        line = re.sub(r"Window \[.* AS \w+\]", "Window [...]", line)
        out.append(re.sub(r"^\*\(\d+\) ", "", line.strip(" +-:")))  # Spark's codegen stage
    return out


def test_planning_shapes() -> None:
    session = new_session({"spark.sql.shuffle.partitions": "4"})
    child = session.sql(TABLE).plan
    a = {x.name: x for x in child.output}
    spec = WindowSpecDefinition((a["p"],), (SortOrder(a["o"]),), rows_frame(UnboundedPreceding(),
                                                                           CurrentRow()))
    w = Window((Alias(WindowExpression(RowNumber(), spec), "rn"),), (a["p"],),
               (SortOrder(a["o"]),), child)
    df = DataFrame(session, w)
    shape = _shape(df._qe.executed_plan.tree_string())
    assert shape[:3] == ["Window [...], [p], [o ASC NULLS FIRST]",
                         "Sort [p ASC NULLS FIRST, o ASC NULLS FIRST], false, 0",
                         "Exchange hashpartitioning(p, 4), ENSURE_REQUIREMENTS"]
    g = WindowGroupLimit((), (SortOrder(a["o"]),), Rank((a["o"],)), 2, child)
    shape = _shape(DataFrame(session, g)._qe.executed_plan.tree_string())
    assert shape[:5] == ["WindowGroupLimit [o ASC NULLS FIRST], rank(o), 2, Final",
                         "Sort [o ASC NULLS FIRST], false, 0",
                         "Exchange SinglePartition, ENSURE_REQUIREMENTS",
                         "WindowGroupLimit [o ASC NULLS FIRST], rank(o), 2, Partial",
                         "Sort [o ASC NULLS FIRST], false, 0"]


# ---------------------------------------------------------------------------------------------
# SQL end to end (parser, analysis, InferWindowGroupLimit, planning, both runtimes)


SQL = [
    "SELECT id, row_number() OVER (PARTITION BY p ORDER BY o, id) rn, "
    "sum(x) OVER (PARTITION BY p ORDER BY o) s, lag(dec, 2) OVER (ORDER BY id) l FROM t",
    "SELECT * FROM (SELECT id, p, rank() OVER (PARTITION BY p ORDER BY o DESC) r FROM t) "
    "WHERE r <= 2",
    "SELECT id, dense_rank() OVER (ORDER BY o) d FROM t QUALIFY d < 3",
    "SELECT id FROM (SELECT id, row_number() OVER (ORDER BY x DESC NULLS LAST, id) rn FROM t) "
    "WHERE rn = 3",
    "SELECT p, sum(o) so, rank() OVER (ORDER BY sum(o) DESC) r, avg(sum(o)) OVER () a FROM t "
    "GROUP BY p",
    "SELECT id, count(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL 1 DAY PRECEDING AND CURRENT "
    "ROW) c, sum(x) OVER (PARTITION BY p ORDER BY d RANGE BETWEEN INTERVAL '1' MONTH PRECEDING "
    "AND CURRENT ROW) s FROM t",
    "SELECT id, first_value(x) IGNORE NULLS OVER w f, last_value(x) IGNORE NULLS OVER w l, "
    "nth_value(x, 2) OVER w n FROM t "
    "WINDOW w AS (PARTITION BY p ORDER BY id ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING)",
    "SELECT id, cume_dist() OVER (PARTITION BY p ORDER BY dec) c, "
    "percent_rank() OVER (PARTITION BY p ORDER BY dec) pr, "
    "ntile(4) OVER (PARTITION BY p ORDER BY dec, id) n FROM t",
    "SELECT id, max(x) OVER (PARTITION BY p ORDER BY o ROWS BETWEEN UNBOUNDED PRECEDING AND "
    "1 PRECEDING) m FROM t WHERE o IS NOT NULL",
    "SELECT id, sum(x) OVER (PARTITION BY p ORDER BY o) s FROM t WHERE id < 0",
]


@pytest.fixture(scope="module")
def spark_sql_results(spark: Any) -> dict[str, Any]:
    from tests.differential.compare import sql_outcome

    old = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", TZ)
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW t AS {TABLE}")
    try:
        return {q: sql_outcome(spark.sql, q, is_spark=True) for q in SQL}
    finally:
        spark.conf.set("spark.sql.session.timeZone", old)


@pytest.mark.parametrize("runtime,batch_size,budget", [
    ("local", "2", None), ("local", None, None), ("spark", None, None),
    # a budget smaller than one window partition: it spills (window_spilled)
    ("local", "4", "2k")])
def test_sql_windows_match_spark(runtime: str, batch_size: str | None, budget: str | None,
                                 spark_sql_results: dict[str, Any]) -> None:
    from tests.differential.compare import sql_outcome

    conf = {"spark.sql.session.timeZone": TZ}
    if batch_size:
        conf["ember.execution.batchSize"] = batch_size
    if budget:
        conf["ember.execution.memoryBudget"] = budget
    session = new_session(conf, runtime)
    session.sql(f"CREATE OR REPLACE TEMPORARY VIEW t AS {TABLE}")
    for q in SQL:
        assert repr(sql_outcome(session.sql, q, is_spark=False)) == repr(spark_sql_results[q]), q


def _window_lines(tree: str) -> list[str]:
    keep = ("Window ", "WindowGroupLimit ", "Sort ", "Exchange ")
    return [x for x in _shape(tree) if x.startswith(keep)]


@pytest.mark.parametrize("q", [SQL[0], SQL[1], SQL[2], SQL[4]])
def test_explain_matches_spark(q: str, spark: Any) -> None:
    """The window operators, sorts and exchanges of the physical plan are Spark's (AQE off)."""
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW t AS {TABLE}")
    old = spark.conf.get("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        expected = spark.sql(q)._jdf.queryExecution().executedPlan().toString()
    finally:
        spark.conf.set("spark.sql.adaptive.enabled", old)
    session = new_session({"spark.sql.shuffle.partitions":
                           spark.conf.get("spark.sql.shuffle.partitions")})
    session.sql(f"CREATE OR REPLACE TEMPORARY VIEW t AS {TABLE}")
    got = session.sql(q)._qe.executed_plan.tree_string()
    assert _window_lines(got) == _window_lines(expected)


def test_running_double_sums_are_bit_exact(spark: Any) -> None:
    """Spark adds a running frame's doubles in row order: Ember's running sum / avg give the
    same bits (values of very different magnitudes make any other association differ)."""
    rnd = random.Random(7)
    vals = ", ".join(
        f"({i}, {rnd.randint(0, 3)}, "
        f"{'NULL' if i % 9 == 4 else repr(rnd.uniform(-1, 1) * 10.0 ** rnd.randint(-6, 9)) + 'D'})"
        for i in range(120))
    q = (f"SELECT id, sum(x) OVER (PARTITION BY p ORDER BY id) s, "
         f"avg(x) OVER (PARTITION BY p ORDER BY id ROWS UNBOUNDED PRECEDING) a, "
         f"sum(x) OVER (PARTITION BY p) w FROM VALUES {vals} AS v(id, p, x)")
    expected = sorted(tuple(r) for r in spark.sql(q).collect())
    for runtime in RUNTIMES:
        got = sorted(tuple(r) for r in new_session({}, runtime).sql(q).collect())
        assert got == expected, runtime
