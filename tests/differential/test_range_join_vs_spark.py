"""Range joins (Ember's RangeJoin, where Spark plans BroadcastNestedLoopJoin / CartesianProduct)
against PySpark: point in interval, interval overlap, a band over different columns, doubles with
NaN, dates and a residual conjunct, for every join type and both build sides, over generated rows
with NULLs, duplicates, inverted intervals and empty sides spread over several partitions.

All the joins are branches of one UNION ALL query (one Spark round trip), run on PySpark and on
Ember (both runtimes); the rows must be equal as multisets, and Ember's plan must hold one
RangeJoin per branch (so the test cannot pass on the nested loop path).
``EMBER_RANGE_JOIN_SWEEP=1`` adds larger tables and more seeds.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.conformance.ember_adapter import RUNTIMES, new_session
from tests.differential.compare import sql_outcome

SWEEP = os.environ.get("EMBER_RANGE_JOIN_SWEEP") == "1"


def _points(n: int, seed: int) -> str:
    """Points: x (NULL every 11th row), y = x + a small width (some below x), a double with NaN,
    a date; duplicates from the modulo."""
    return (
        f"(SELECT id AS aid, x, x + ((id * 7 + {seed}) % 9) - 2 AS y, "
        "CASE WHEN id % 17 = 3 THEN double('NaN') WHEN id % 13 = 5 THEN NULL "
        "ELSE x / 4.0D END AS d, date_add(DATE'2020-01-01', CAST(x AS INT)) AS dt "
        f"FROM (SELECT id, CASE WHEN id % 11 = 0 THEN NULL ELSE (id * 37 + {seed}) % 101 END "
        f"AS x FROM range(0, {n}, 1, 3)))")


def _intervals(n: int, seed: int) -> str:
    """Intervals [lo, hi] (NULL bounds, inverted ones), double and date bounds."""
    return (
        "(SELECT id AS bid, lo, hi, lo / 4.0D - 0.5D AS dlo, "
        "CASE WHEN id % 7 = 2 THEN double('NaN') ELSE hi / 4.0D END AS dhi, "
        "date_add(DATE'2020-01-01', CAST(lo AS INT)) AS dtlo, "
        "date_add(DATE'2020-01-01', CAST(hi AS INT)) AS dthi "
        f"FROM (SELECT id, CASE WHEN id % 9 = 0 THEN NULL ELSE (id * 53 + {seed}) % 97 END AS lo,"
        f" CASE WHEN id % 13 = 4 THEN NULL ELSE (id * 53 + {seed}) % 97 + (id * 5) % 15 - 3 END "
        f"AS hi FROM range(0, {n}, 1, 2)))")


CONDITIONS = {
    "point": "a.x BETWEEN b.lo AND b.hi",
    "overlap": "a.x <= b.hi AND b.lo <= a.y",
    "band_columns": "a.x >= b.lo - 3 AND a.y < b.hi + 3",
    "double_nan": "a.d > b.dlo AND a.d <= b.dhi",
    "dates": "a.dt BETWEEN b.dtlo AND b.dthi",
    "residual": "a.x BETWEEN b.lo AND b.hi AND a.aid % 3 <> b.bid % 2",
}


def _branches(a: str, b: str) -> list[str]:
    """Every join type for the point in interval; inner and full outer for the other conditions
    (all join types for all of them in the sweep)."""
    out = []
    for name, cond in CONDITIONS.items():
        every = SWEEP or name == "point"
        for jt in ("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN") if every else ("JOIN",
                                                                                  "FULL JOIN"):
            out.append(f"SELECT '{name} {jt}' AS tag, a.aid, b.bid FROM {a} a {jt} {b} b "
                       f"ON {cond}")
        for jt in ("LEFT SEMI JOIN", "LEFT ANTI JOIN") if every else ():
            out.append(f"SELECT '{name} {jt}' AS tag, a.aid, CAST(NULL AS BIGINT) AS bid "
                       f"FROM {a} a {jt} {b} b ON {cond}")
    # build-left global paths: the broadcast side is the preserved / existence side
    cond = CONDITIONS["overlap"]
    for jt in ("LEFT JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN"):
        cols = "b.bid, a.aid" if jt == "LEFT JOIN" else "b.bid, CAST(NULL AS BIGINT)"
        out.append(f"SELECT /*+ BROADCAST(b) */ 'build left {jt}' AS tag, {cols} "
                   f"FROM {b} b {jt} {a} a ON {cond}")
    # empty sides (a filter the optimizer cannot fold away)
    cond = CONDITIONS["point"]
    empty_b = f"(SELECT * FROM {b} WHERE bid < 0)"
    empty_a = f"(SELECT * FROM {a} WHERE aid < 0)"
    out.append(f"SELECT 'empty right' AS tag, a.aid, b.bid FROM {a} a LEFT JOIN {empty_b} b "
               f"ON {cond}")
    out.append(f"SELECT 'empty left' AS tag, a.aid, b.bid FROM {empty_a} a FULL JOIN {b} b "
               f"ON {cond}")
    out.append(f"SELECT 'empty anti' AS tag, a.aid, CAST(NULL AS BIGINT) FROM {a} a "
               f"LEFT ANTI JOIN {empty_b} b ON {cond}")
    return out


#: the branches the Spark runtime runs (outside the sweep): its tasks run the local operator, so
#: a streamed join and the two global paths (unmatched build rows, build-left semi) cover what
#: it adds
SPARK_RUNTIME_TAGS = ("point JOIN", "point FULL JOIN", "build left LEFT SEMI JOIN")


def _query(n_points: int, n_intervals: int, seed: int, tags: tuple[str, ...] = ("",)
           ) -> tuple[str, int]:
    """The UNION ALL of the branches whose tag starts with one of ``tags``, and their number."""
    branches = [b for b in _branches("pa", "ib") if b.split("'")[1].startswith(tags)]
    return (f"WITH pa AS {_points(n_points, seed)}, ib AS {_intervals(n_intervals, seed)} "
            + " UNION ALL ".join(branches), len(branches))


CASES = [(200, 40, 0)] + ([(2000, 300, 1), (600, 600, 2), (50, 3000, 3)] if SWEEP else [])


@pytest.fixture(scope="module")
def spark_rows(spark: Any) -> dict[tuple[int, int, int], Any]:
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try:
        return {case: sql_outcome(spark.sql, _query(*case)[0], is_spark=True) for case in CASES}
    finally:
        spark.conf.unset("spark.sql.adaptive.enabled")


@pytest.mark.differential
@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
def test_range_joins_match_spark(spark_rows: dict, case: tuple[int, int, int],
                                 runtime: str) -> None:
    tags = SPARK_RUNTIME_TAGS if runtime == "spark" and not SWEEP else ("",)
    sql, branches = _query(*case, tags=tags)
    session = new_session(runtime=runtime)
    df = session.sql(sql)
    plan = df._qe.executed_plan.tree_string()
    assert plan.count("RangeJoin [") == branches, plan
    expected = spark_rows[case]
    assert isinstance(expected, dict), expected
    expected = {**expected, "rows": [r for r in expected["rows"] if r[0].startswith(tags)]}
    assert len(expected["rows"]) > 300  # matches, padding and empty sides all occur
    actual = sql_outcome(lambda _: df, sql, is_spark=False)
    assert actual == expected
