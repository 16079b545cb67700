"""ANALYZE TABLE, the CBO estimators and automatic statistics.

Expected CBO numbers are PySpark 4.3's for a table ``tt(x double, y string)`` holding
``x = [1, 2, 3, 3, NULL]``, ``y = ['a', 'bb', 'c', 'c', NULL]`` after ``ANALYZE TABLE tt COMPUTE
STATISTICS FOR ALL COLUMNS`` with ``spark.sql.cbo.enabled=true`` (filters as Spark's optimizer
leaves them, e.g. ``isnotnull(x) AND (x > 1.0)``).
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.aggregates import AggregateExpression, Count
from ember.expressions.base import Alias, AttributeReference, Literal
from ember.expressions.predicates import (
    And,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    Or,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Aggregate, Filter, Join, LocalRelation, Project, Range
from ember.execution.auto_statistics import _gee_ndv
from ember.plans.logical.statistics import ColumnStat, plan_stats


@pytest.fixture()
def session():
    s = ember.Session()
    s.createDataFrame(pd.DataFrame({"x": [1.0, 2.0, 3.0, 3.0, None],
                                    "y": ["a", "bb", "c", "c", None]})).createOrReplaceTempView("tt")
    yield s


def leaf_of(s, name="tt"):
    return s.table(name)._qe.analyzed.find(lambda p: isinstance(p, LocalRelation))


def test_analyze_for_all_columns_and_visibility(session):
    leaf = leaf_of(session)
    before = plan_stats(leaf, session.sql_conf)
    session.sql("ANALYZE TABLE tt COMPUTE STATISTICS FOR ALL COLUMNS")
    # CBO and planStats off: only the size (as Spark's CatalogStatistics.toPlanStats).
    assert plan_stats(leaf, session.sql_conf).attribute_stats == {}
    assert plan_stats(leaf, session.sql_conf).size_in_bytes == before.size_in_bytes
    session.conf.set("spark.sql.cbo.planStats.enabled", "true")
    s = plan_stats(leaf, session.sql_conf)
    x, y = leaf.output
    assert s.row_count == 5 and s.size_in_bytes == 150
    assert s.attribute_stats[x.id] == ColumnStat(3, 1.0, 3.0, 1, 8, 8)
    assert s.attribute_stats[y.id] == ColumnStat(3, None, None, 1, 2, 2)


def test_analyze_columns_noscan_and_errors(session):
    session.sql("ANALYZE TABLE tt COMPUTE STATISTICS NOSCAN")
    session.sql("ANALYZE TABLE tt COMPUTE STATISTICS")
    session.sql("ANALYZE TABLE tt COMPUTE STATISTICS FOR COLUMNS X")
    session.conf.set("spark.sql.cbo.enabled", "true")
    leaf = leaf_of(session)
    s = plan_stats(leaf, session.sql_conf)
    assert s.row_count == 5 and set(s.attribute_stats) == {leaf.output[0].id}
    with pytest.raises(AnalysisError) as e:
        session.sql("ANALYZE TABLE nosuch COMPUTE STATISTICS")
    assert e.value.error_class == "TABLE_OR_VIEW_NOT_FOUND"
    with pytest.raises(AnalysisError) as e:
        session.sql("ANALYZE TABLE tt COMPUTE STATISTICS FOR COLUMNS nosuch")
    assert e.value.error_class == "COLUMN_NOT_FOUND"
    session.sql("CREATE TEMP VIEW q AS SELECT x + 1 AS z FROM tt WHERE x > 1")
    with pytest.raises(AnalysisError) as e:
        session.sql("ANALYZE TABLE q COMPUTE STATISTICS")
    assert e.value.error_class == "UNSUPPORTED_FEATURE.ANALYZE_VIEW"


def test_analyze_through_renaming_view(session):
    session.sql("CREATE TEMP VIEW v AS SELECT y AS name, x FROM tt")
    session.sql("ANALYZE TABLE v COMPUTE STATISTICS FOR COLUMNS name")
    session.conf.set("spark.sql.cbo.enabled", "true")
    leaf = leaf_of(session)
    assert plan_stats(leaf, session.sql_conf).attribute_stats[leaf.output[1].id].distinct_count == 3


@pytest.fixture()
def cbo(session):
    session.sql("ANALYZE TABLE tt COMPUTE STATISTICS FOR ALL COLUMNS")
    session.conf.set("spark.sql.cbo.enabled", "true")
    return session, leaf_of(session)


def rows_and_size(plan, s):
    st = plan_stats(plan, s.sql_conf)
    return st.row_count, st.size_in_bytes


def test_filter_estimation_equals_spark(cbo):
    s, leaf = cbo
    x, y = leaf.output
    notnull = IsNotNull(x)
    lit = lambda v: Literal(v, T.DOUBLE)  # noqa: E731
    cases = [
        (And(notnull, EqualTo(x, lit(2.0))), (2, 60)),
        (And(notnull, GreaterThan(x, lit(1.0))), (3, 90)),
        (In(x, (lit(1.0), lit(2.0))), (4, 120)),
        (IsNull(x), (1, 30)),
        (EqualTo(y, Literal("c", T.STRING)), (2, 60)),
        (Or(GreaterThan(x, lit(1.0)), EqualTo(y, Literal("c", T.STRING))), (4, 120)),
        (And(notnull, LessThan(x, lit(3.0))), (3, 90)),
        (And(notnull, GreaterThanOrEqual(x, lit(2.5))), (1, 30)),
        (And(notnull, GreaterThan(x, lit(5.0))), (0, 1)),
        (And(notnull, EqualTo(x, lit(7.0))), (0, 1)),
    ]
    for cond, want in cases:
        assert rows_and_size(Filter(cond, leaf), s) == want, cond.simple_string()
    f = Filter(And(notnull, EqualTo(x, lit(2.0))), leaf)
    st = plan_stats(f, s.sql_conf)
    assert st.attribute_stats[x.id] == ColumnStat(1, 2.0, 2.0, 0, 8, 8)
    assert st.attribute_stats[y.id].distinct_count == 2


def test_aggregate_project_join_estimation(cbo):
    s, leaf = cbo
    x, y = leaf.output
    cnt = Alias(AggregateExpression(Count((Literal(1, T.INT),))), "c")
    assert rows_and_size(Aggregate((y,), (y, cnt), leaf), s) == (4, 120)
    assert rows_and_size(Aggregate((x, y), (x, y, cnt), leaf), s) == (5, 190)
    assert rows_and_size(Aggregate((), (cnt,), leaf), s) == (1, 16)
    p = Project((Alias(x, "z"), y), leaf)
    st = plan_stats(p, s.sql_conf)
    assert (st.row_count, st.size_in_bytes) == (5, 150)
    assert st.attribute_stats[p.output[0].id].distinct_count == 3
    # Double keys: Spark's normalized keys defeat the estimate -> cartesian (16 rows, as Spark).
    other = leaf_of(s)
    l2 = Filter(IsNotNull(x), leaf)
    r2 = Filter(IsNotNull(other.output[0]), other)
    j = Join(l2, r2, JoinType.INNER, EqualTo(x, other.output[0]))
    assert rows_and_size(j, s) == (16, 832)


def test_integer_join_estimate():
    s = ember.Session({"spark.sql.cbo.enabled": "true"})
    a = Range(0, 100, 1, None, (AttributeReference("id", T.LONG, False),))
    b = Range(0, 10, 1, None, (AttributeReference("id", T.LONG, False),))
    j = Join(a, b, JoinType.INNER, EqualTo(a.output[0], b.output[0]))
    st = plan_stats(j, s.sql_conf)
    assert st.row_count == 100 * 10 // 100  # |L||R| / max(ndv)
    assert st.attribute_stats[a.output[0].id].max == 9  # intersected key range
    c = Range(500, 600, 1, None, (AttributeReference("id", T.LONG, False),))
    assert plan_stats(Join(a, c, JoinType.INNER, EqualTo(a.output[0], c.output[0])),
                      s.sql_conf).row_count == 0
    lo = Join(a, c, JoinType.LEFT_OUTER, EqualTo(a.output[0], c.output[0]))
    assert plan_stats(lo, s.sql_conf).row_count == 100
    fo = Join(a, b, JoinType.FULL_OUTER, EqualTo(a.output[0], b.output[0]))
    assert plan_stats(fo, s.sql_conf).row_count == 100 + 10 - 10
    semi = Join(a, b, JoinType.LEFT_SEMI, EqualTo(a.output[0], b.output[0]))
    assert plan_stats(semi, s.sql_conf).row_count == 100


def test_auto_stats_local_relation():
    s = ember.Session({"ember.cbo.autoStats.enabled": "true"})
    df = s.createDataFrame([(i % 7, f"s{i % 3}") for i in range(50)], ["k", "v"])
    leaf = df._qe.analyzed.find(lambda p: isinstance(p, LocalRelation))
    st = plan_stats(leaf, s.sql_conf)
    assert st.row_count == 50
    assert st.attribute_stats[leaf.output[0].id] == ColumnStat(7, 0, 6, 0, 8, 8)
    assert st.attribute_stats[leaf.output[1].id].distinct_count == 3
    off = plan_stats(leaf, ember.Session().sql_conf)
    assert off.row_count is None and not off.attribute_stats


def test_table_statistics_belong_to_their_session(tmp_path):
    """ANALYZE in one session is not seen by another over the same files (each session catalog
    keeps its own table statistics)."""
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": pa.array(list(range(100)), pa.int64())}), path)
    conf = {"spark.sql.cbo.enabled": "true"}
    a, b = ember.Session(conf), ember.Session(conf)
    a.read.parquet(str(path)).createOrReplaceTempView("t")
    b.read.parquet(str(path)).createOrReplaceTempView("t")
    a.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS")
    leaf_a = a.table("t")._qe.analyzed.find(lambda p: not p.children)
    leaf_b = b.table("t")._qe.analyzed.find(lambda p: not p.children)
    assert plan_stats(leaf_a, a.sql_conf).row_count == 100
    assert plan_stats(leaf_b, b.sql_conf).row_count is None


def test_auto_stats_parquet(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": pa.array([i % 10 for i in range(1000)], pa.int64()),
                             "u": pa.array(list(range(1000)), pa.int64())}), path)
    s = ember.Session({"ember.cbo.autoStats.enabled": "true"})
    leaf = s.read.parquet(str(path))._qe.analyzed.find(lambda p: not p.children)
    st = plan_stats(leaf, s.sql_conf)
    k, u = leaf.output
    assert st.row_count == 1000
    assert st.attribute_stats[k.id] == ColumnStat(10, 0, 9, 0, 8, 8)
    assert st.attribute_stats[u.id].distinct_count == 1000


def test_gee_estimate_from_sample():
    sample = pa.array(list(range(1000)) + [1, 2, 3])
    assert 9_000 <= _gee_ndv(sample, 100_000) <= 100_000
    assert _gee_ndv(pa.array([1, 1, 2, 2]), 1_000_000) == 2
