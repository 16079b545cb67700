"""Shared fixtures of the join operator tests: data with NULL / duplicate / NaN / -0.0 keys, join
conditions, the reference (DuckDB running the same join over the same Arrow tables) and physical
plan builders."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import pyarrow as pa

from ember import types as T
from ember.conf import SQLConf
from ember.execution.kernels.batches import schema_of
from ember.expressions.arithmetic import Add, Subtract, UnaryMinus
from ember.expressions.base import (
    AttributeReference,
    Literal,
    SortOrder,
    bind_references,
    split_conjuncts,
)
from ember.expressions.predicates import (
    And,
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    Or,
)
from ember.physical.nodes import (
    BroadcastExchangeExec,
    BroadcastHashJoinExec,
    BroadcastNestedLoopJoinExec,
    BuildSide,
    CartesianProductExec,
    LocalTableScanExec,
    RangeJoinExec,
    ShuffledHashJoinExec,
    ShuffleExchangeExec,
    SortExec,
    SortMergeJoinExec,
)
from ember.physical.partitioning import (
    HashedRelationBroadcastMode,
    HashPartitioning,
    IdentityBroadcastMode,
)
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Join, LocalRelation
from ember.plans.logical.patterns import extract_equi_join_keys
from ember.runtime.local import LocalRuntime

NAN = float("nan")


def left_table() -> pa.Table:
    return pa.table({
        "lk": pa.array([1, 1, 2, None, 3, 4, None, 5, 2, 7, 8, 1], pa.int64()),
        "ls": pa.array(["a", "b", "a", "a", None, "c", None, "e", "a", "x", "y", "a"]),
        "ld": pa.array([0.0, -0.0, NAN, None, 1.5, NAN, 2.0, -1.0, 0.0, 3.0, None, 1.5]),
        "lv": pa.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], pa.int64()),
    })


def right_table() -> pa.Table:
    return pa.table({
        "rk": pa.array([1, 2, 2, None, 3, 6, 1, None, 9, 1], pa.int64()),
        "rs": pa.array(["a", "a", "b", "z", None, "c", "b", None, "q", "a"]),
        "rd": pa.array([-0.0, NAN, 0.0, None, 1.5, 5.0, NAN, 2.0, None, 0.0]),
        "rv": pa.array([10, 1, 2, 3, 6, 5, 0, 8, 9, 4], pa.int64()),
    })


def attrs_of(table: pa.Table, types: dict[str, T.DataType]) -> tuple[AttributeReference, ...]:
    return tuple(AttributeReference(n, types[n]) for n in table.column_names)


TYPES = {"lk": T.LONG, "ls": T.STRING, "ld": T.DOUBLE, "lv": T.LONG,
         "rk": T.LONG, "rs": T.STRING, "rd": T.DOUBLE, "rv": T.LONG}


@dataclass
class Sides:
    ltable: pa.Table
    rtable: pa.Table
    lattrs: tuple[AttributeReference, ...]
    rattrs: tuple[AttributeReference, ...]

    def col(self, name: str) -> AttributeReference:
        for a in self.lattrs + self.rattrs:
            if a.name == name:
                return a
        raise KeyError(name)


def sides(ltable: pa.Table | None = None, rtable: pa.Table | None = None) -> Sides:
    lt = left_table() if ltable is None else ltable
    rt = right_table() if rtable is None else rtable
    return Sides(lt, rt, attrs_of(lt, TYPES), attrs_of(rt, TYPES))


def condition(s: Sides, name: str):
    """Named join conditions (full conditions, as the logical Join holds them)."""
    c = s.col
    match name:
        case "int":
            return EqualTo(c("lk"), c("rk"))
        case "double":
            return EqualTo(c("ld"), c("rd"))
        case "multi":
            return And(EqualTo(c("lk"), c("rk")), EqualTo(c("ls"), c("rs")))
        case "nullsafe":
            return EqualNullSafe(c("lk"), c("rk"))
        case "residual":
            return And(EqualTo(c("lk"), c("rk")), LessThan(c("lv"), c("rv")))
        case "nullsafe_residual":
            return And(EqualNullSafe(c("ls"), c("rs")), LessThan(c("lv"), Add(c("rv"), c("rv"))))
        case "nonequi":
            return LessThan(c("lv"), c("rv"))
        case "none":
            return None
        # range joins (RangeJoinExec): a lower and an upper bound between the sides
        case "point":  # lv BETWEEN rk AND rv
            return And(GreaterThanOrEqual(c("lv"), c("rk")), LessThanOrEqual(c("lv"), c("rv")))
        case "overlap":  # [lk, lv] overlaps [rk, rv), with a residual on the strings
            return And(And(LessThanOrEqual(c("lk"), c("rv")), LessThan(c("rk"), c("lv"))),
                       Not(EqualTo(c("ls"), c("rs"))))
        case "band_double":  # ld within (rd - 1, rd + 1.5]: NaN, -0.0, NULL
            return And(GreaterThan(c("ld"), Subtract(c("rd"), Literal(1.0, T.DOUBLE))),
                       LessThanOrEqual(c("ld"), Add(c("rd"), Literal(1.5, T.DOUBLE))))
    raise KeyError(name)


RANGE_CONDITIONS = ("point", "overlap", "band_double")


EQUI_CONDITIONS = ("int", "double", "multi", "nullsafe", "residual", "nullsafe_residual")


def logical_join(s: Sides, jt: JoinType, cond) -> Join:
    exists = AttributeReference("exists", T.BOOLEAN, False) if jt is JoinType.EXISTENCE else None
    return Join(LocalRelation(s.lattrs, s.ltable), LocalRelation(s.rattrs, s.rtable), jt, cond,
                existence_attr=exists)


def conf(batch_size: int | None = None, budget: int | None = None, partitions: int = 3) -> SQLConf:
    c = SQLConf()
    if batch_size is not None:
        c.set("ember.execution.batchSize", batch_size)
    if budget is not None:
        c.set("ember.execution.memoryBudget", budget)
    c.set("spark.sql.shuffle.partitions", partitions)
    c.set("ember.execution.progress.enabled", False)
    return c


_SQL_OPS = {EqualTo: "=", EqualNullSafe: "IS NOT DISTINCT FROM", LessThan: "<",
            LessThanOrEqual: "<=", GreaterThan: ">", GreaterThanOrEqual: ">=", And: "AND",
            Or: "OR", Add: "+", Subtract: "-"}
_SQL_TYPES = {T.LONG: "BIGINT", T.INT: "INTEGER", T.DOUBLE: "DOUBLE", T.STRING: "VARCHAR"}


def _sql(e, left_ids: frozenset[int]) -> str:
    """A join condition as DuckDB SQL over the tables ``l`` and ``r``."""
    match e:
        case AttributeReference():
            return f'{"l" if e.id in left_ids else "r"}."{e.name}"'
        case Literal(value=v, dtype=t):
            return f"CAST({v!r} AS {_SQL_TYPES[t]})"
        case IsNull(child=c):
            return f"({_sql(c, left_ids)} IS NULL)"
        case Not(child=c):
            return f"(NOT {_sql(c, left_ids)})"
        case UnaryMinus(child=c):
            return f"(-{_sql(c, left_ids)})"
    op = _SQL_OPS[type(e)]
    return f"({_sql(e.left, left_ids)} {op} {_sql(e.right, left_ids)})"


def reference(join: Join) -> pa.Table:
    """The rows of ``join`` as DuckDB computes them from the same tables.  Only equalities of
    non-floating columns are DuckDB join keys; every other conjunct is evaluated as ``(c) IS
    TRUE`` (only TRUE matches, as in Spark) on each candidate pair: DuckDB's hash join does not
    match NaN with NaN nor -0.0 with 0.0, which Spark's joins do and DuckDB's scalar comparisons
    do as well."""
    import duckdb

    left_ids = frozenset(a.id for a in join.left.output)
    conjuncts = split_conjuncts(join.condition) if join.condition is not None else []
    # Equalities of non-floating columns of both sides become DuckDB's hash join keys; the other
    # conjuncts are evaluated only on the pairs those (and the conjuncts before them) accept, as
    # a join evaluates its residual only on pairs whose keys match (so a residual that overflows
    # on other pairs raises in neither).
    keys = [c for c in conjuncts if isinstance(c, EqualTo)
            and all(isinstance(x, AttributeReference) for x in (c.left, c.right))
            and (c.left.id in left_ids) != (c.right.id in left_ids)
            and not isinstance(c.left.data_type, (T.FloatType, T.DoubleType))]
    cond = "TRUE"
    for c in reversed([c for c in conjuncts if not any(c is k for k in keys)]):
        cond = f"CASE WHEN ({_sql(c, left_ids)}) IS TRUE THEN {cond} ELSE FALSE END"
    cond = " AND ".join([_sql(k, left_ids) for k in keys] + [cond])
    exists = f"EXISTS (SELECT 1 FROM r WHERE {cond})"
    sql = {
        JoinType.INNER: f"SELECT l.*, r.* FROM l JOIN r ON {cond}",
        JoinType.CROSS: f"SELECT l.*, r.* FROM l JOIN r ON {cond}",
        JoinType.LEFT_OUTER: f"SELECT l.*, r.* FROM l LEFT JOIN r ON {cond}",
        JoinType.RIGHT_OUTER: f"SELECT l.*, r.* FROM l RIGHT JOIN r ON {cond}",
        JoinType.FULL_OUTER: f"SELECT l.*, r.* FROM l FULL JOIN r ON {cond}",
        JoinType.LEFT_SEMI: f"SELECT l.* FROM l WHERE {exists}",
        JoinType.LEFT_ANTI: f"SELECT l.* FROM l WHERE NOT {exists}",
        JoinType.EXISTENCE: f"SELECT l.*, {exists} FROM l",
    }[join.join_type]
    con = duckdb.connect()
    try:
        con.register("l", join.left.data)
        con.register("r", join.right.data)
        got = con.execute(sql).arrow()
    finally:
        con.close()
    if isinstance(got, pa.RecordBatchReader):
        got = got.read_all()
    schema = schema_of(join.output)
    return pa.Table.from_arrays([c.cast(f.type) for c, f in zip(got.columns, schema)],
                                schema=schema)


def _norm(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, float) and v == 0.0:
        return 0.0
    return v


def rows(table: pa.Table) -> Counter:
    return Counter(tuple(_norm(v) for v in r.values()) for r in table.to_pylist())


def assert_same_rows(actual: pa.Table, expected: pa.Table) -> None:
    assert actual.num_columns == expected.num_columns
    assert actual.schema.types == expected.schema.types
    ra, re = rows(actual), rows(expected)
    assert ra == re, f"\nmissing: {re - ra}\nextra: {ra - re}"


# ---------------------------------------------------------------------------------------------
# Physical plans


def scan(attrs, table) -> LocalTableScanExec:
    return LocalTableScanExec(attrs, table)


def _shuffled(plan, keys, n):
    return ShuffleExchangeExec(HashPartitioning(tuple(keys), n), plan)


def physical(algorithm: str, join: Join, build: BuildSide | None = None, *,
             partitions: int = 3, null_aware: bool = False):
    """The physical join of ``join`` for ``algorithm`` ('bhj', 'shj', 'smj', 'bnlj', 'cartesian'),
    children laid out as EnsureRequirements would."""
    left = scan(join.left.output, join.left.data)
    right = scan(join.right.output, join.right.data)
    jt = join.join_type
    ex = join.existence_attr
    if algorithm in ("bhj", "shj", "smj"):
        if null_aware:
            from ember.plans.logical.patterns import extract_null_aware_anti_join_keys

            lk, rk = extract_null_aware_anti_join_keys(join)
            lkeys, rkeys, residual = (lk,), (rk,), None
        else:
            lkeys, rkeys, residual = extract_equi_join_keys(join)
    if algorithm == "bhj":
        if build is BuildSide.LEFT:
            mode = HashedRelationBroadcastMode(
                tuple(bind_references(k, left.output) for k in lkeys), null_aware)
            left = BroadcastExchangeExec(mode, left)
        else:
            mode = HashedRelationBroadcastMode(
                tuple(bind_references(k, right.output) for k in rkeys), null_aware)
            right = BroadcastExchangeExec(mode, right)
        return BroadcastHashJoinExec(lkeys, rkeys, jt, build, residual, left, right,
                                     is_null_aware_anti_join=null_aware, existence_attr=ex)
    if algorithm == "shj":
        return ShuffledHashJoinExec(lkeys, rkeys, jt, build, residual,
                                    _shuffled(left, lkeys, partitions),
                                    _shuffled(right, rkeys, partitions), existence_attr=ex)
    if algorithm == "smj":
        ls = SortExec(tuple(SortOrder(k, True) for k in lkeys), False,
                      _shuffled(left, lkeys, partitions))
        rs = SortExec(tuple(SortOrder(k, True) for k in rkeys), False,
                      _shuffled(right, rkeys, partitions))
        return SortMergeJoinExec(lkeys, rkeys, jt, residual, ls, rs, existence_attr=ex)
    if algorithm == "bnlj":
        if build is BuildSide.LEFT:
            left = BroadcastExchangeExec(IdentityBroadcastMode(), left)
        else:
            right = BroadcastExchangeExec(IdentityBroadcastMode(), right)
        return BroadcastNestedLoopJoinExec(left, right, build, jt, join.condition,
                                           existence_attr=ex)
    if algorithm == "cartesian":
        return CartesianProductExec(left, right, join.condition)
    if algorithm == "range":
        if build is BuildSide.LEFT:
            left = BroadcastExchangeExec(IdentityBroadcastMode(), left)
        else:
            right = BroadcastExchangeExec(IdentityBroadcastMode(), right)
        return RangeJoinExec(left, right, build, jt, join.condition, existence_attr=ex)
    raise KeyError(algorithm)


def run(plan, batch_size: int | None = None, budget: int | None = None,
        partitions: int = 3) -> tuple[pa.Table, LocalRuntime]:
    rt = LocalRuntime(conf(batch_size, budget, partitions))
    try:
        return rt.collect(plan), rt
    finally:
        rt.close()
