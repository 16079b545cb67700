"""Join-ordering quality: sum of intermediate join result sizes per query, for three orders.

Not a test.  Run: ``/work/venv/bin/python bench/join_order.py [--tpch DIR] [--sf 0.01]
[--star N] [--exhaustive-max 10]``.

For every inner-join block of a query (what ``extract_inner_joins`` collects from the plan after
the pre-optimization rewrites: subqueries -> joins, ConstantFolding, BooleanSimplification,
PushDownPredicates):

- ``spark``: Spark's default order -- ReorderJoin (greedy, FROM order);
- ``ember``: ReorderJoin then CostBasedJoinReorder with CBO on; statistics gathered
  automatically -- exact row counts and NDVs of each join input, computed on the (small) data
  (``--stats plan_stats`` uses ``ember.plans.logical.statistics.plan_stats`` instead);
- ``best``: exhaustive search over all bushy, cartesian-free trees (DP over connected item
  subsets), feasible up to ``--exhaustive-max`` items.

The cost of a tree is the sum, over its joins except the block's root, of the *actual* row count
of that join (the row count of joining an item set does not depend on the order, so each
subset's count is computed once by executing it; disconnected subsets are the product of their
components).  The final join's size is the same for every order and is not counted.

Queries: TPC-H (``bench/tpch/queries``, data from ``bench/tpch/datagen.py``) and a generated
star/snowflake set of 4 to 16 tables with random FROM order and dimension filters.  Also prints
the planning time of CostBasedJoinReorder (best of 3) and a SUMMARY line (mean / geomean of
ember/best, queries where Ember is worse than Spark's default).  ``spark-cbo`` is Spark's own
CostBasedJoinReorder (its DP, plain ``spark.sql.cbo.*``) on the same statistics; ``ember`` sets
``ember.cbo.joinReorder.enhanced`` (implied by automatic statistics).  Results: bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ember.conf import SQLConf  # noqa: E402
from ember.optimizer.rules import star_schema  # noqa: E402
from ember.optimizer.rules.cost_based_join_reorder import CostBasedJoinReorder  # noqa: E402
from ember.optimizer.rules.reorder_join import ReorderJoin, create_ordered_join  # noqa: E402
from ember.plans.logical.join_type import JoinType  # noqa: E402
from ember.plans.logical.nodes import Join, LogicalPlan, Project  # noqa: E402
from ember.planning import plan_query  # noqa: E402
from ember.runtime.local import LocalRuntime  # noqa: E402

RUN_CONF = SQLConf({"ember.execution.progress.enabled": "false"})


def collect(plan: LogicalPlan) -> pa.Table:
    """The rows of ``plan``, planned and run on the local runtime."""
    with LocalRuntime(RUN_CONF) as rt:
        return rt.collect(plan_query(plan, RUN_CONF))
CBO = SQLConf({"spark.sql.cbo.enabled": "true", "spark.sql.cbo.joinReorder.enabled": "true",
               "ember.cbo.joinReorder.enhanced": "true"})
#: Spark's own CostBasedJoinReorder (the DP, nothing above the threshold), same statistics.
SPARK_CBO = SQLConf({"spark.sql.cbo.enabled": "true",
                     "spark.sql.cbo.joinReorder.enabled": "true",
                     "ember.cbo.joinReorder.enhanced": "false"})


# -- statistics --------------------------------------------------------------------------------

class _ColStat:
    __slots__ = ("distinct_count", "null_count", "avg_len", "max_len", "min", "max")

    def __init__(self, ndv: int, nulls: int) -> None:
        self.distinct_count, self.null_count = ndv, nulls
        self.avg_len = self.max_len = self.min = self.max = None


class _Stats:
    __slots__ = ("size_in_bytes", "row_count", "attribute_stats")

    def __init__(self, size: int, rows: int, attrs: dict) -> None:
        self.size_in_bytes, self.row_count, self.attribute_stats = size, rows, attrs


_STATS: dict[int, tuple[LogicalPlan, _Stats]] = {}


def exact_stats(plan: LogicalPlan, conf: SQLConf) -> _Stats:
    """Exact row count and per-column NDV of ``plan`` (what automatic statistics gather)."""
    hit = _STATS.get(id(plan))
    if hit is not None and hit[0] is plan:
        return hit[1]
    t = collect(plan)
    st = _Stats(max(1, t.nbytes), t.num_rows,
                {a.id: _ColStat(pc.count_distinct(c).as_py(), c.null_count)
                 for a, c in zip(plan.output, t.columns)})
    _STATS[id(plan)] = (plan, st)
    return st


# -- measuring a block -------------------------------------------------------------------------

class Block:
    """An inner-join block: its items, conjuncts and the actual row count of item subsets."""

    def __init__(self, items: list[LogicalPlan], conds: list) -> None:
        self.items, self.conds = items, conds
        self.n = len(items)
        owner = {}
        for i, it in enumerate(items):
            for a in it.output:
                owner.setdefault(a.id, i)
        self.cmask = []
        for c in conds:
            m = 0
            for r in c.references:
                m |= 1 << owner.get(r, 0)
            self.cmask.append(m)
        self.adj = [0] * self.n
        for m in self.cmask:
            bits = [i for i in range(self.n) if m >> i & 1]
            for i in bits:
                for j in bits:
                    if i != j:
                        self.adj[i] |= 1 << j
        self._count: dict[int, int] = {}

    def components(self, mask: int) -> list[int]:
        out, rest = [], mask
        while rest:
            start = rest & -rest
            comp, frontier = start, start
            while frontier:
                b = frontier & -frontier
                frontier &= frontier - 1
                i = b.bit_length() - 1
                new = self.adj[i] & mask & ~comp
                comp |= new
                frontier |= new
            out.append(comp)
            rest &= ~comp
        return out

    def count(self, mask: int) -> int:
        if mask in self._count:
            return self._count[mask]
        comps = self.components(mask)
        if len(comps) > 1:
            r = 1
            for c in comps:
                r *= self.count(c)
        else:
            idx = [i for i in range(self.n) if mask >> i & 1]
            if len(idx) == 1:
                r = exact_stats(self.items[idx[0]], CBO).row_count
            else:
                conds = [c for c, m in zip(self.conds, self.cmask) if m & mask == m and m]
                plan = create_ordered_join([(self.items[i], JoinType.INNER) for i in idx], conds)
                r = collect(plan).num_rows
        self._count[mask] = r
        return r

    def mask_of(self, plan: LogicalPlan) -> int:
        m = 0
        stack = [plan]
        while stack:
            p = stack.pop()
            hit = [i for i, it in enumerate(self.items) if it is p]
            if hit:
                m |= 1 << hit[0]
                continue
            stack.extend(p.children)
        return m

    def cost_of(self, plan: LogicalPlan) -> int:
        """Sum of actual sizes of the joins of ``plan`` that cover part of this block."""
        full = (1 << self.n) - 1
        total = 0
        for j in plan.collect(lambda p: p if isinstance(p, Join) else None):
            m = self.mask_of(j)
            if m and m != full and bin(m).count("1") > 1 and m & full == m:
                total += self.count(m)
        return total

    def best(self) -> int:
        """Exhaustive: min over bushy cartesian-free trees of the sum of intermediate sizes."""
        full = (1 << self.n) - 1
        best: dict[int, int] = {1 << i: 0 for i in range(self.n)}
        order = sorted(range(1, full + 1), key=lambda m: bin(m).count("1"))
        for m in order:
            if m in best or len(self.components(m)) != 1:
                continue
            b = None
            sub = (m - 1) & m
            while sub:
                other = m ^ sub
                if sub < other and sub in best and other in best and \
                        any(self.adj[i] & other for i in range(self.n) if sub >> i & 1):
                    c = best[sub] + best[other]
                    c += self.count(sub) if sub & (sub - 1) else 0
                    c += self.count(other) if other & (other - 1) else 0
                    if b is None or c < b:
                        b = c
                sub = (sub - 1) & m
            if b is not None:
                best[m] = b
        return best.get(full, -1)


def _is_join_node(p: LogicalPlan) -> bool:
    from ember.plans.logical.nodes import Filter

    if isinstance(p, Join):
        return (isinstance(p.join_type, JoinType) and p.join_type.is_inner_like
                and p.hint.is_empty)
    if isinstance(p, Filter):
        return _is_join_node(p.child)
    if isinstance(p, Project):
        from ember.expressions.base import AttributeReference

        return all(isinstance(e, AttributeReference) for e in p.project_list) and \
            _is_join_node(p.child)
    return False


def _extract(p: LogicalPlan, items: list, conds: list) -> None:
    from ember.expressions.base import split_conjuncts
    from ember.plans.logical.nodes import Filter

    if _is_join_node(p):
        if isinstance(p, Join):
            _extract(p.left, items, conds)
            _extract(p.right, items, conds)
            conds.extend(c for c in split_conjuncts(p.condition) if c not in conds)
        else:
            _extract(p.children[0], items, conds)
            if isinstance(p, Filter):
                conds.extend(c for c in split_conjuncts(p.condition) if c not in conds)
    else:
        items.append(p)


def blocks_of(plan: LogicalPlan) -> list[Block]:
    """Every maximal tree of Inner/Cross joins (with Filters and column-only Projects) of more
    than two items, whatever the conditions."""
    out: list[Block] = []

    def visit(p: LogicalPlan) -> None:
        if isinstance(p, Join) and _is_join_node(p):
            items: list = []
            conds: list = []
            _extract(p, items, conds)
            if len(items) > 2:
                out.append(Block(items, conds))
            for it in items:
                visit(it)
            return
        for c in p.children:
            visit(c)

    visit(plan)
    return out


def _rows_of(plan: LogicalPlan):
    t = collect(plan)
    return sorted(map(tuple, t.to_pylist()), key=repr)


def measure(name: str, pre: LogicalPlan, exhaustive_max: int, check: bool = False) -> tuple | None:
    blocks = blocks_of(pre)
    if not blocks:
        return None
    s_plan = ReorderJoin()(pre, SQLConf())
    e_plan = CostBasedJoinReorder()(ReorderJoin()(pre, CBO), CBO)  # gathers statistics
    r_plan = ReorderJoin()(pre, CBO)
    t_plan = float("inf")
    for _ in range(3):  # planning time of CostBasedJoinReorder alone, best of 3
        t0 = time.perf_counter()
        e_plan = CostBasedJoinReorder()(r_plan, CBO)
        t_plan = min(t_plan, time.perf_counter() - t0)
    c_plan = CostBasedJoinReorder()(ReorderJoin()(pre, SPARK_CBO), SPARK_CBO)
    spark = sum(b.cost_of(s_plan) for b in blocks)
    ember = sum(b.cost_of(e_plan) for b in blocks)
    spark_cbo = sum(b.cost_of(c_plan) for b in blocks)
    feasible = all(b.n <= exhaustive_max for b in blocks)
    best = sum(b.best() for b in blocks) if feasible else None
    if check and _rows_of(e_plan) != _rows_of(s_plan):
        raise AssertionError(f"{name}: the reordered plan returns different rows")
    return name, max(b.n for b in blocks), spark, ember, best, t_plan, spark_cbo


# -- query sets --------------------------------------------------------------------------------

def _pre_optimized(session, sql: str) -> LogicalPlan:
    from ember.optimizer.rule_executor import Batch, FixedPoint, RuleExecutor
    from ember.optimizer.rules.boolean_simplification import BooleanSimplification
    from ember.optimizer.rules.push_down_predicates import PushDownPredicates
    from ember.optimizer.rules.rewrite_subquery import rewrite_subqueries
    from ember.query_execution import QueryExecution

    from ember.optimizer.rules.constant_folding import ConstantFolding

    analyzed = QueryExecution(session, session.sql(sql)._plan).analyzed
    folded = ConstantFolding()(rewrite_subqueries(analyzed), SQLConf())
    return RuleExecutor([Batch("BooleanSimplification", FixedPoint(100), (BooleanSimplification(),)),
                         Batch("PushDownPredicates", FixedPoint(100), (PushDownPredicates(),))]
                        ).execute(folded, SQLConf())


def tpch_queries(session, data_dir: str, sf: float):
    from bench.tpch import datagen

    d = Path(data_dir)
    if not (d / "lineitem.parquet").exists():
        datagen.generate(d, sf=sf)
    import pyarrow.parquet as pq

    for t in datagen.TABLES:
        session.createDataFrame(pq.read_table(d / f"{t}.parquet")).createOrReplaceTempView(t)
    for q in sorted(datagen.QUERY_DIR.glob("q*.sql")):
        yield f"tpch-{q.stem}", _pre_optimized(session, q.read_text())


def star_queries(session, n_queries: int, seed: int = 7, fact_rows: int = 20000):
    """Generated star / snowflake joins of 4 to 16 tables (fact + dims + sub-dims)."""
    rng = np.random.default_rng(seed)
    pyrng = random.Random(seed)
    n_dims_max = 10
    dims = []
    for i in range(n_dims_max):
        rows = int(rng.integers(20, 400))
        dims.append(rows)
        sub_rows = max(5, rows // 8)
        session.createDataFrame(pa.table({
            f"d{i}_id": np.arange(rows), f"d{i}_attr": rng.integers(0, 100, rows),
            f"d{i}_sub": rng.integers(0, sub_rows, rows)})).createOrReplaceTempView(f"d{i}")
        session.createDataFrame(pa.table({
            f"s{i}_id": np.arange(sub_rows), f"s{i}_attr": rng.integers(0, 100, sub_rows)})
        ).createOrReplaceTempView(f"s{i}")
    session.createDataFrame(pa.table(
        {f"f_d{i}": rng.integers(0, dims[i], fact_rows) for i in range(n_dims_max)}
        | {"f_val": rng.integers(0, 1000, fact_rows)})).createOrReplaceTempView("fact")
    for q in range(n_queries):
        n_tables = 4 + (q * 12) // max(1, n_queries - 1)  # 4 .. 16
        n_dims = min(n_dims_max, max(2, (n_tables - 1 + 1) // 2 + 1))
        n_subs = n_tables - 1 - n_dims
        while n_subs < 0:
            n_dims -= 1
            n_subs += 1
        dim_ids = pyrng.sample(range(n_dims_max), n_dims)
        sub_ids = pyrng.sample(dim_ids, min(n_subs, len(dim_ids)))
        tables = ["fact"] + [f"d{i}" for i in dim_ids] + [f"s{i}" for i in sub_ids]
        pyrng.shuffle(tables)
        conds = [f"f_d{i} = d{i}_id" for i in dim_ids] + [f"d{i}_sub = s{i}_id" for i in sub_ids]
        for i in dim_ids + [f"s{i}" for i in sub_ids]:
            if pyrng.random() < 0.5:
                col = f"d{i}_attr" if isinstance(i, int) else f"{i}_attr"
                conds.append(f"{col} < {pyrng.choice([5, 20, 50, 90])}")
        sql = f"select count(*) from {', '.join(tables)} where {' and '.join(conds)}"
        yield f"star-{q:02d}-{len(tables)}t", _pre_optimized(session, sql)


def _analyze_all(session, done: set) -> None:
    """``ANALYZE TABLE v COMPUTE STATISTICS FOR ALL COLUMNS`` on every new temporary view."""
    for name in session.session_catalog.list_views():
        if name in done:
            continue
        done.add(name)
        session.sql(f"ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS")


def _ratio(e: int, b: int | None) -> float | None:
    if b is None:
        return None
    if b == 0:
        return 1.0 if e == 0 else None  # infinite: reported separately
    return e / b


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tpch", default="/tmp/tpch001")
    ap.add_argument("--sf", type=float, default=0.01)
    ap.add_argument("--star", type=int, default=13)
    ap.add_argument("--exhaustive-max", type=int, default=10)
    ap.add_argument("--stats", choices=("exact", "plan_stats", "analyze"), default="plan_stats",
                    help="exact: injected exact statistics of every join input; plan_stats: "
                         "Ember's automatic statistics (ember.cbo.autoStats.enabled) -- what "
                         "users get; analyze: ANALYZE TABLE ... FOR ALL COLUMNS on every table")
    ap.add_argument("--no-tpch", action="store_true")
    ap.add_argument("--only", default=None, help="regular expression on query names")
    ap.add_argument("--check-rows", action="store_true",
                    help="also check the reordered plans return Spark-order's rows")
    args = ap.parse_args()
    import re

    if args.stats == "exact":
        star_schema.STATS_PROVIDER = exact_stats
    elif args.stats == "plan_stats":  # Ember's automatic statistics (beyond Spark, opt-in)
        CBO.set("ember.cbo.autoStats.enabled", "true")
        SPARK_CBO.set("ember.cbo.autoStats.enabled", "true")
    import ember

    session = ember.Session()
    rows = []
    sets = [] if args.no_tpch else [tpch_queries(session, args.tpch, args.sf)]
    sets.append(star_queries(session, args.star))
    print(f"statistics: {args.stats}")
    print(f"{'query':<16} {'items':>5} {'spark':>10} {'spark-cbo':>10} {'ember':>10} "
          f"{'best':>10} {'ember/best':>10} {'plan ms':>8}")
    analyzed: set[str] = set()
    for qs in sets:
        for name, pre in qs:
            if args.stats == "analyze":
                _analyze_all(session, analyzed)
            if args.only and not re.search(args.only, name):
                continue
            r = measure(name, pre, args.exhaustive_max, args.check_rows)
            if r is None:
                continue
            rows.append(r)
            _, n, s, e, b, t, c = r
            ratio = _ratio(e, b)
            shown = "" if b is None else ("inf" if ratio is None else f"{ratio:.2f}")
            flag = "  WORSE THAN SPARK" if e > s else ""
            print(f"{name:<16} {n:>5} {s:>10,} {c:>10,} {e:>10,} "
                  f"{'n/a' if b is None else f'{b:,}':>10} {shown:>10} {t * 1000:>8.1f}{flag}")
    with_best = [r for r in rows if r[4] is not None]
    ratios = [_ratio(r[3], r[4]) for r in with_best]
    finite = [x for x in ratios if x is not None]
    n_inf = len(ratios) - len(finite)
    mean = sum(finite) / len(finite) if finite else float("nan")
    geo = math.exp(sum(math.log(max(x, 1e-12)) for x in finite) / len(finite)) if finite \
        else float("nan")
    worse = sum(1 for r in rows if r[3] > r[2])
    cbo_worse = sum(1 for r in rows if r[6] > r[2])
    big = [r for r in rows if r[1] >= 16]
    print(f"\nSUMMARY stats={args.stats}: queries {len(rows)}; ember worse than spark: {worse}; "
          f"ember/best over {len(finite)} (exhaustive <= {args.exhaustive_max} items): "
          f"mean {mean:.3f}, geomean {geo:.3f}, max {max(finite, default=float('nan')):.2f}"
          + (f", {n_inf} infinite" if n_inf else "")
          + f"; spark-cbo worse than spark: {cbo_worse}; total spark {sum(r[2] for r in rows):,} "
          f"spark-cbo {sum(r[6] for r in rows):,} ember {sum(r[3] for r in rows):,}"
          + (f"; max planning time at 16 tables {max(r[5] for r in big) * 1000:.1f} ms"
             if big else ""))


if __name__ == "__main__":
    main()
