"""Runtime join filters of the local runtime (``ember.runtime.local.runtime_filters``): a broadcast
hash join's build keys prune the stream side's Parquet row groups and rows.  Results equal those of
a run with the filters off, for the join types and plan shapes where they apply and where they must
not (outer sides kept, anti joins, a scan read twice, NULL keys, an empty build side, key sets
taken as a range or as an IN list), and row groups are skipped where the build keys allow it
(counted in the scan's metrics)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import ember
from ember.physical.nodes import FileSourceScanExec
from ember.planning import plan_query
from ember.runtime.local import LocalRuntime
from ember.runtime.local import runtime_filters as rf

N = 4000
ROW_GROUP = 250  # 16 row groups, each holding a range of fact.k (the file is in k order)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("runtimefilters")
    fact = pa.table({
        "k": pa.array([None if x % 97 == 0 else x // 10 for x in range(N)], pa.int64()),
        "j": pa.array([x % 37 for x in range(N)], pa.int32()),
        "v": pa.array([x * 3 % 1001 for x in range(N)], pa.int64()),
        "s": pa.array([f"s{x % 13}" for x in range(N)], pa.string()),
    })
    pq.write_table(fact, d / "fact.parquet", row_group_size=ROW_GROUP)
    dim = pa.table({
        "dk": pa.array(list(range(0, 400)) + [None], pa.int64()),
        "grp": pa.array([x % 50 for x in range(400)] + [7], pa.int64()),
        "name": pa.array([f"n{x}" for x in range(401)], pa.string()),
    })
    pq.write_table(dim, d / "dim.parquet")
    small = pa.table({"sj": pa.array([3, 5, 30], pa.int32()), "tag": ["a", "b", "c"]})
    pq.write_table(small, d / "small.parquet")
    return d


def _session(d) -> ember.Session:
    s = ember.Session()
    for t in ("fact", "dim", "small"):
        s.sql(f"CREATE TEMP VIEW {t} USING parquet OPTIONS (path '{d / f'{t}.parquet'}')")
    return s


def _run(s: ember.Session, q: str) -> tuple[list, int]:
    plan = plan_query(s.sql(q)._qe.optimized, s.sql_conf)
    rt = LocalRuntime(s.sql_conf, parallelism=2)
    got = rt.collect(plan)
    skipped = sum(m.as_dict().get("runtime_filtered_row_groups", 0)
                  for node, m in rt.metrics.items() if isinstance(node, FileSourceScanExec))
    cols = [c.to_pylist() for c in got.columns]
    return sorted((tuple(repr(v) for v in r) for r in zip(*cols))), skipped


#: (query, whether row groups must be skipped)
CASES = [
    # a contiguous range of build keys: row groups outside it skipped
    ("SELECT f.k, f.v, d.name FROM fact f JOIN dim d ON f.k = d.dk WHERE d.grp = 3", True),
    ("SELECT f.k, count(*) FROM fact f JOIN dim d ON f.k = d.dk WHERE d.dk BETWEEN 20 AND 45 "
     "GROUP BY f.k", True),
    # sparse build keys: an IN list on the rows as well
    ("SELECT f.k, f.s FROM fact f JOIN dim d ON f.k = d.dk WHERE d.dk IN (3, 77, 78, 250)", True),
    # two filters on one scan, through another broadcast join's stream side
    ("SELECT f.k, f.j, d.name, m.tag FROM fact f JOIN dim d ON f.k = d.dk "
     "JOIN small m ON f.j = m.sj WHERE d.dk < 60", True),
    # left semi join (the stream side's unmatched rows never come out)
    ("SELECT f.k, f.v FROM fact f WHERE f.k IN (SELECT dk FROM dim WHERE grp = 11)", True),
    # the stream side is kept whole: no filter may apply
    ("SELECT f.k, d.name FROM fact f LEFT JOIN dim d ON f.k = d.dk AND d.grp = 3", False),
    ("SELECT f.k, f.v FROM fact f WHERE f.k NOT IN (SELECT dk FROM dim WHERE grp = 11 "
     "AND dk IS NOT NULL)", False),
    ("SELECT f.k FROM fact f WHERE NOT EXISTS (SELECT 1 FROM dim d WHERE d.dk = f.k AND "
     "d.grp = 4)", False),
    # an empty build side: no row can match
    ("SELECT f.k FROM fact f JOIN dim d ON f.k = d.dk WHERE d.grp = 1000", True),
    # every build key: nothing to skip, same rows
    ("SELECT count(*), sum(f.v) FROM fact f JOIN dim d ON f.k = d.dk", False),
    # the fact table read twice (a self-join of filtered sides) and a union
    ("SELECT a.k, b.v FROM fact a JOIN fact b ON a.k = b.k JOIN dim d ON a.k = d.dk "
     "WHERE d.grp = 5", None),
    ("SELECT k FROM (SELECT f.k FROM fact f JOIN dim d ON f.k = d.dk WHERE d.grp = 2 "
     "UNION ALL SELECT k FROM fact WHERE v < 10)", None),
    # a key computed above the scan is not a scan column: no filter
    ("SELECT f.k FROM (SELECT k + 1 AS k FROM fact) f JOIN dim d ON f.k = d.dk "
     "WHERE d.grp = 3", False),
]


@pytest.mark.parametrize("q,prunes", CASES)
def test_same_rows_as_without_filters(data, monkeypatch, q, prunes):
    s = _session(data)
    on, skipped = _run(s, q)
    monkeypatch.setattr(rf, "ENABLED", False)
    off, none = _run(s, q)
    assert none == 0
    assert on == off
    if prunes is not None:
        assert (skipped > 0) == prunes, skipped


def test_shuffled_joins_and_cache(data, monkeypatch):
    """Scans also read by a shared-scan cache (two scans of one file in one run) keep their
    rows when one of them skips row groups."""
    s = _session(data)
    q = ("SELECT f.k, g.v FROM fact f JOIN dim d ON f.k = d.dk JOIN fact g ON g.j = f.j "
         "WHERE d.grp = 9")
    on, _ = _run(s, q)
    monkeypatch.setattr(rf, "ENABLED", False)
    off, _ = _run(s, q)
    assert on == off
