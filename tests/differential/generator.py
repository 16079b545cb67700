"""Seeded random tables and random SQL queries for differential testing against Spark.

Everything is derived from ``(seed, index)`` with :class:`random.Random` (string seeds), so a
failing query is reproduced exactly from the seed and its index, whatever ran before it.

Tables ``t1``, ``t2``, ``t3`` of one *scenario* always have an ``int`` column ``k`` plus a random
subset of ``j bigint``, ``s string``, ``d double``, ``m decimal(10,2)``, ``dt date``; values come
from small domains (many duplicates and join matches) with NULLs, NaN, +/-0.0, infinities; a table
is sometimes empty.

Queries cover: two- and three-way joins of every type (INNER, CROSS, comma, LEFT, RIGHT, FULL,
LEFT SEMI, LEFT ANTI, NATURAL, USING) with equi, multi-key, null-safe ``<=>``, equi + residual,
non-equi, OR and constant conditions; aggregates (count/sum/avg/min/max/count_if/first IGNORE NULLS,
DISTINCT, FILTER, GROUP BY with NULL/NaN keys, HAVING, over joins); EXISTS / NOT EXISTS / IN /
NOT IN (correlated or not, multi-column, IN lists with NULL, under OR) and scalar subqueries; UNION
[ALL], INTERSECT [ALL], EXCEPT [ALL].  Extended families: 3- and 4-way joins mixing join types
and comma joins (a JOIN after ``a, b`` applies to the whole product, as in Spark) with keys on
expressions (``a.k + 1 = b.j``, string functions, casts, implicit int/bigint/decimal/double
coercion), aggregates and DISTINCT over them; derived tables and CTEs joined to tables; GROUP BY
expressions with HAVING, ORDER BY an aggregate, LIMIT/OFFSET; set operations of aggregates;
nested subqueries (EXISTS inside IN), correlated scalar subqueries in SELECT and WHERE, NOT IN
with NULLs on both sides, IN/EXISTS as values; SELECT DISTINCT ... ORDER BY, count(DISTINCT a, b),
decimal sum/avg, min/max of strings and dates, NATURAL joins of three tables, USING with several
columns, self-joins of the view ``v`` (:data:`VIEW_SQL`).  Parquet-backed tables ``p1``, ``p2``
(:data:`PARQUET_TABLES`, with twin columns of one type) feed the reuse family
(:meth:`QueryGen.reuse`): reads of one table that differ only in the columns they read.  Results
must be deterministic in
Spark: LIMIT only after an ORDER BY over every output column, ``first`` only over values that are
constant within a group.
"""

from __future__ import annotations

import datetime as _dt
import math
import random
from dataclasses import dataclass, field
from decimal import Decimal

import pyarrow as pa

# name -> (sql type, arrow type for Spark, value domain)
COLUMNS: dict[str, tuple[str, pa.DataType, list]] = {
    "k": ("int", pa.int32(), [0, 1, 2, 3, 1, 2]),
    "j": ("bigint", pa.int64(), [-1, 0, 1, 2, 2]),
    "s": ("string", pa.string(), ["a", "b", "c", "", "B", "a"]),
    "d": ("double", pa.float64(), [0.0, -0.0, 1.0, 1.5, -2.25, float("nan"), 2.0, float("inf"),
                                   float("-inf")]),
    "m": ("decimal(10,2)", pa.decimal128(10, 2), [Decimal("0.00"), Decimal("1.25"), Decimal("-3.50"),
                                                  Decimal("2.00"), Decimal("1.00")]),
    "dt": ("date", pa.date32(), [_dt.date(2020, 1, 1), _dt.date(2020, 1, 2), _dt.date(1999, 12, 31)]),
}
NUMERIC = ("k", "j", "d", "m")
TABLE_NAMES = ("t1", "t2", "t3")
QUERIES_PER_SCENARIO = 20
#: Share of the queries from :meth:`QueryGen.lateral`.
LATERAL_SHARE = 0.1


def category(col: str) -> str:
    """Columns of one category can be compared with each other."""
    col = twin_of(col)
    return "num" if col in NUMERIC else col


@dataclass(frozen=True, slots=True)
class Scenario:
    """The tables of one scenario: name -> (column names, arrow table with Spark's types)."""

    tables: dict[str, pa.Table]
    #: the Parquet-backed tables (:data:`PARQUET_TABLES`, :func:`write_parquet`)
    parquet: dict[str, pa.Table] = field(default_factory=dict)

    def cols(self, name: str) -> list[str]:
        t = self.tables[name] if name in self.tables else self.parquet[name]
        return list(t.column_names)

    def describe(self) -> str:
        out = []
        for name, t in [*self.tables.items(), *self.parquet.items()]:
            out.append(f"{name}({', '.join(f'{c} {COLUMNS[twin_of(c)][0]}' for c in t.column_names)}): "
                       f"{t.to_pylist()}")
        return "\n".join(out)


def make_scenario(seed: int, scenario: int) -> Scenario:
    rng = random.Random(f"{seed}-tables-{scenario}")
    tables = {}
    for name in TABLE_NAMES:
        cols = ["k"] + [c for c in COLUMNS if c != "k" and rng.random() < 0.6]
        n = rng.choice([0, 1, 2, 3, 4, 5, 6, 8, 10, 12]) if rng.random() > 0.06 else 0
        data = {}
        for c in cols:
            _, atype, domain = COLUMNS[c]
            null_p = rng.choice([0.0, 0.15, 0.3])
            data[c] = pa.array([None if rng.random() < null_p else rng.choice(domain) for _ in range(n)],
                               type=atype)
        tables[name] = pa.table(data)
    return Scenario(tables, make_parquet_tables(seed, scenario))


def for_ember(table: pa.Table) -> pa.Table:
    """The same data with Ember's physical string type (large_string)."""
    fields = [pa.field(f.name, pa.large_string() if f.type == pa.string() else f.type)
              for f in table.schema]
    return table.cast(pa.schema(fields))


# -- Parquet-backed tables -----------------------------------------------------------------------
#: Tables read from Parquet files, written per scenario (:func:`write_parquet`) and registered on
#: both engines from the same files (:func:`parquet_view_sql`): plans over them hold file scans,
#: whose canonical forms decide exchange, broadcast and subquery reuse.  Each holds some columns
#: twice (``k`` and its *twin* ``k2``: same type and domain, other values), so two reads of one
#: table may read different columns of the same types (:meth:`QueryGen.reuse`).
PARQUET_TABLES = ("p1", "p2")
#: the share of queries from :meth:`QueryGen.reuse` (reads of the Parquet tables)
REUSE_SHARE = 0.08


def twin_of(col: str) -> str:
    """The column of :data:`COLUMNS` whose type and domain ``col`` (maybe a twin, ``k2``) has."""
    return col[:-1] if col not in COLUMNS and col.endswith("2") else col


def make_parquet_tables(seed: int, scenario: int) -> dict[str, pa.Table]:
    """The Parquet tables of a scenario: ``k`` and ``k2`` always, other columns and twins at
    random (from their own random stream: the in-memory tables do not change)."""
    rng = random.Random(f"{seed}-parquet-{scenario}")
    out = {}
    for name in PARQUET_TABLES:
        cols = [c for base in COLUMNS for c in (base, base + "2")
                if base == "k" or rng.random() < 0.6]
        n = rng.choice([0, 1, 3, 5, 8, 12, 20]) if rng.random() > 0.05 else 0
        data = {}
        for c in cols:
            _, atype, domain = COLUMNS[twin_of(c)]
            # no -0.0: Spark's Parquet reader drops a row group whose dictionary holds -0.0
            # under a pushed ``d = 0`` / ``d IN (0)`` (parquet-mr's dictionary filter compares
            # with Double.equals), where the same filter unpushed keeps the row: Spark's answer
            # would depend on the file layout
            domain = [v for v in domain if not (isinstance(v, float) and v == 0
                                                and math.copysign(1.0, v) < 0)]
            null_p = rng.choice([0.0, 0.15, 0.3])
            data[c] = pa.array([None if rng.random() < null_p else rng.choice(domain)
                                for _ in range(n)], type=atype)
        out[name] = pa.table(data)
    return out


def write_parquet(scenario: Scenario, root: str) -> dict[str, str]:
    """Writes each Parquet table of ``scenario`` as a directory under ``root`` (its rows in 1 to 3
    files, so scans have several splits); ``{name: directory}``."""
    import os

    import pyarrow.parquet as pq

    out = {}
    for name, t in scenario.parquet.items():
        d = os.path.join(root, name)
        os.makedirs(d, exist_ok=True)
        files = 1 + t.num_rows % 3
        step = -(-t.num_rows // files) if t.num_rows else 1
        for i in range(files):
            pq.write_table(t.slice(i * step, step), os.path.join(d, f"part-{i:05d}.parquet"))
        out[name] = d
    return out


def parquet_view_sql(name: str, path: str) -> str:
    """The statement registering a Parquet table on Spark and on Ember alike."""
    return f"CREATE TEMPORARY VIEW {name} USING parquet OPTIONS (path '{path}')"


# ----------------------------------------------------------------------------------------------

_LITERALS = {
    "num": ["0", "1", "2", "1.5", "-1"],
    "s": ["'a'", "'b'", "''"],
    "dt": ["DATE'2020-01-01'", "DATE'2020-01-02'"],
}


class QueryGen:
    """Random SQL over one scenario's tables."""

    def __init__(self, scenario: Scenario, rng: random.Random) -> None:
        self.sc = scenario
        self.r = rng

    # -- small helpers -------------------------------------------------------------------------
    def cols(self, t: str) -> list[str]:
        return self.sc.cols(t)

    def pick_tables(self, n: int) -> list[str]:
        return [self.r.choice(TABLE_NAMES) for _ in range(n)]

    def comparable_pair(self, ta: str, tb: str, prefer_same: bool = True) -> tuple[str, str]:
        ca, cb = self.cols(ta), self.cols(tb)
        same = [c for c in ca if c in cb]
        if prefer_same and same and self.r.random() < 0.7:
            c = self.r.choice(same)
            return c, c
        pairs = [(x, y) for x in ca for y in cb if category(x) == category(y)]
        return self.r.choice(pairs)  # (k, k) always exists

    def literal_for(self, col: str) -> str:
        return self.r.choice(_LITERALS[category(col)])

    def one_side_pred(self, alias: str, t: str) -> str:
        c = self.r.choice(self.cols(t))
        roll = self.r.random()
        if roll < 0.25:
            return f"{alias}.{c} IS {'NOT ' if self.r.random() < 0.5 else ''}NULL"
        op = self.r.choice(["=", "<>", "<", ">=", ">"])
        return f"{alias}.{c} {op} {self.literal_for(c)}"

    def join_condition(self, a: str, ta: str, b: str, tb: str) -> str:
        kind = self.r.choice(["equi", "equi", "equi", "multi", "nullsafe", "residual", "residual",
                              "onesided", "nonequi", "or", "const"])
        x, y = self.comparable_pair(ta, tb)
        if kind == "equi":
            return f"{a}.{x} = {b}.{y}"
        if kind == "multi":
            x2, y2 = self.comparable_pair(ta, tb, prefer_same=False)
            return f"{a}.{x} = {b}.{y} AND {a}.{x2} = {b}.{y2}"
        if kind == "nullsafe":
            extra = ""
            if self.r.random() < 0.4:
                x2, y2 = self.comparable_pair(ta, tb)
                extra = f" AND {a}.{x2} <=> {b}.{y2}"
            return f"{a}.{x} <=> {b}.{y}{extra}"
        if kind == "residual":
            x2, y2 = self.comparable_pair(ta, tb, prefer_same=False)
            op = self.r.choice(["<", "<=", ">", "<>"])
            return f"{a}.{x} = {b}.{y} AND {a}.{x2} {op} {b}.{y2}"
        if kind == "onesided":
            side = self.r.choice([(a, ta), (b, tb)])
            return f"{a}.{x} = {b}.{y} AND {self.one_side_pred(*side)}"
        if kind == "nonequi":
            if category(x) == "num":
                return self.r.choice([f"{a}.{x} < {b}.{y}", f"{a}.{x} + 1 >= {b}.{y}",
                                      f"{a}.{x} <> {b}.{y}", f"{a}.{x} BETWEEN {b}.{y} - 1 AND {b}.{y}"])
            return self.r.choice([f"{a}.{x} < {b}.{y}", f"{a}.{x} <> {b}.{y}"])
        if kind == "or":
            x2, y2 = self.comparable_pair(ta, tb, prefer_same=False)
            return f"{a}.{x} = {b}.{y} OR {a}.{x2} = {b}.{y2}"
        return self.r.choice(["true", "false", "1 = 1", f"{a}.k = {a}.k"])

    def order_by_all(self, n_cols: int) -> str:
        parts = []
        for i in range(1, n_cols + 1):
            d = self.r.choice(["", " ASC", " DESC", " ASC NULLS LAST", " DESC NULLS FIRST"])
            parts.append(f"{i}{d}")
        return " ORDER BY " + ", ".join(parts)

    def maybe_order(self, n_cols: int) -> str:
        return self.order_by_all(n_cols) if self.r.random() < 0.2 else ""

    def select_from(self, sides: list[tuple[str, str]], semi: bool = False) -> tuple[str, int]:
        """A select list over aliased tables: ``(text, number of output columns)``."""
        usable = sides[:1] if semi else sides
        roll = self.r.random()
        if roll < 0.35:
            return ", ".join(f"{a}.*" for a, _ in usable), sum(len(self.cols(t)) for _, t in usable)
        items = []
        for a, t in usable:
            for c in self.cols(t):
                if self.r.random() < 0.5:
                    items.append(f"{a}.{c}")
        if not items:
            a, t = usable[0]
            items.append(f"{a}.{self.r.choice(self.cols(t))}")
        if not semi and len(sides) > 1 and self.r.random() < 0.3:
            (a, ta), (b, tb) = sides[0], sides[1]
            x, y = self.comparable_pair(ta, tb)
            items.append(f"coalesce({a}.{x}, {b}.{y}) AS co")
        return ", ".join(items), len(items)

    # -- query families ------------------------------------------------------------------------
    def join2(self) -> str:
        ta, tb = self.pick_tables(2)
        jt = self.r.choice(["INNER JOIN", "JOIN", "CROSS JOIN", "LEFT JOIN", "LEFT OUTER JOIN",
                            "RIGHT JOIN", "FULL OUTER JOIN", "FULL JOIN", "LEFT SEMI JOIN",
                            "LEFT ANTI JOIN", ","])
        semi = "SEMI" in jt or "ANTI" in jt
        sel, n = self.select_from([("a", ta), ("b", tb)], semi=semi)
        if jt == ",":
            where = f" WHERE {self.join_condition('a', ta, 'b', tb)}" if self.r.random() < 0.8 else ""
            return f"SELECT {sel} FROM {ta} a, {tb} b{where}{self.maybe_order(n)}"
        on = "" if jt == "CROSS JOIN" and self.r.random() < 0.6 else \
            f" ON {self.join_condition('a', ta, 'b', tb)}"
        where = ""
        if self.r.random() < 0.25:
            where = " WHERE " + (self.one_side_pred("a", ta) if semi or self.r.random() < 0.5
                                 else self.one_side_pred("b", tb))
        return f"SELECT {sel} FROM {ta} a {jt} {tb} b{on}{where}{self.maybe_order(n)}"

    def join3(self) -> str:
        ta, tb, tc = self.pick_tables(3)
        j1 = self.r.choice(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN"])
        j2 = self.r.choice(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT SEMI JOIN",
                            "LEFT ANTI JOIN"])
        c1 = "" if j1 == "CROSS JOIN" else f" ON {self.join_condition('a', ta, 'b', tb)}"
        left_for_c = self.r.choice([("a", ta), ("b", tb)])
        c2 = f" ON {self.join_condition(left_for_c[0], left_for_c[1], 'c', tc)}"
        sides = [("a", ta), ("b", tb)] if "SEMI" in j2 or "ANTI" in j2 else [("a", ta), ("b", tb), ("c", tc)]
        sel, n = self.select_from(sides)
        return f"SELECT {sel} FROM {ta} a {j1} {tb} b{c1} {j2} {tc} c{c2}{self.maybe_order(n)}"

    def natural_using(self) -> str:
        ta, tb = self.pick_tables(2)
        common = [c for c in self.cols(ta) if c in self.cols(tb)]
        jt = self.r.choice(["", "INNER ", "LEFT ", "RIGHT ", "FULL OUTER "])
        if self.r.random() < 0.45:
            sel = self.r.choice(["*", "a.*", "b.*", "k", "a.k, b.k"])
            return f"SELECT {sel} FROM {ta} a NATURAL {jt}JOIN {tb} b"
        using = self.r.sample(common, self.r.randint(1, min(2, len(common))))
        if self.r.random() < 0.2:
            jt = self.r.choice(["LEFT SEMI ", "LEFT ANTI "])
            sel = self.r.choice(["*", "a.*"])
        else:
            sel = self.r.choice(["*", "a.*, b.*", ", ".join(using), f"a.{using[0]}, b.{using[0]}"])
        return f"SELECT {sel} FROM {ta} a {jt}JOIN {tb} b USING ({', '.join(using)})"

    def agg_call(self, alias: str, t: str, group_keys: list[str], qual: str) -> str:
        c = self.r.choice(self.cols(t))
        col = f"{qual}{c}"
        num = c in NUMERIC
        fns = ["count", "min", "max", "count_distinct", "count_star", "count_if"]
        if num:
            fns += ["sum", "avg", "sum", "sum_distinct", "avg"]
        if group_keys:
            fns.append("first_key")
        fns.append("first_const")
        fn = self.r.choice(fns)
        if fn == "count_star":
            call = "count(*)"
        elif fn == "count_distinct":
            if self.r.random() < 0.3 and len(self.cols(t)) > 1:
                c2 = self.r.choice([x for x in self.cols(t) if x != c])
                call = f"count(DISTINCT {col}, {qual}{c2})"
            else:
                call = f"count(DISTINCT {col})"
        elif fn == "sum_distinct":
            call = f"{self.r.choice(['sum', 'avg'])}(DISTINCT {col})"
        elif fn == "count_if":
            call = f"count_if({self.one_side_pred(alias, t).replace(alias + '.', qual)})"
        elif fn == "first_key":
            key = self.r.choice(group_keys)
            call = self.r.choice([f"first({key}) IGNORE NULLS", f"first({key}, true)", f"first({key})"])
        elif fn == "first_const":
            call = self.r.choice([f"first(IF({col} IS NULL, NULL, 7)) IGNORE NULLS",
                                  f"first(CASE WHEN {col} IS NULL THEN NULL ELSE 'x' END, true)"])
        else:
            call = f"{fn}({col})"
        if self.r.random() < 0.25 and not fn.startswith("first"):
            call += f" FILTER (WHERE {self.one_side_pred(alias, t).replace(alias + '.', qual)})"
        return call

    def aggregate(self) -> str:
        over_join = self.r.random() < 0.3
        if over_join:
            ta, tb = self.pick_tables(2)
            jt = self.r.choice(["JOIN", "LEFT JOIN", "FULL JOIN"])
            src = f"{ta} a {jt} {tb} b ON {self.join_condition('a', ta, 'b', tb)}"
            t, alias, qual = self.r.choice([(ta, "a", "a."), (tb, "b", "b.")])
        else:
            t = self.r.choice(TABLE_NAMES)
            src, alias, qual = t, t, ""
        n_keys = self.r.choice([0, 1, 1, 1, 2])
        keys = self.r.sample(self.cols(t), min(n_keys, len(self.cols(t))))
        key_exprs = [f"{qual}{k}" for k in keys]
        if keys and self.r.random() < 0.15 and keys[0] in ("k", "j"):
            key_exprs[0] = f"{qual}{keys[0]} % 2"
        aggs = [self.agg_call(alias, t, key_exprs, qual) for _ in range(self.r.randint(1, 4))]
        items = [f"{e} AS g{i}" for i, e in enumerate(key_exprs)] + \
                [f"{a} AS c{i}" for i, a in enumerate(aggs)]
        sql = f"SELECT {', '.join(items)} FROM {src}"
        if self.r.random() < 0.2:
            sql += f" WHERE {self.one_side_pred(alias, t).replace(alias + '.', qual)}"
        if key_exprs:
            sql += f" GROUP BY {', '.join(key_exprs)}"
        if self.r.random() < 0.3:
            sql += " HAVING " + self.r.choice(["count(*) > 1", f"max({qual}k) IS NOT NULL",
                                               f"count(DISTINCT {qual}k) >= 1", f"min({qual}k) < 2"])
        if self.r.random() < 0.15 and not key_exprs:
            sql = f"SELECT DISTINCT {', '.join(items)} FROM {src}"
        return sql + self.maybe_order(len(items))

    def subquery(self) -> str:
        ta, tb = self.pick_tables(2)
        sel, n = self.select_from([("a", ta)])
        kind = self.r.choice(["exists", "exists", "in", "in", "notin", "notin", "multi_in",
                              "inlist", "or_exists", "or_in", "scalar", "scalar_uncorr"])
        x, y = self.comparable_pair(ta, tb)
        inner_filter = f" WHERE {self.one_side_pred('b', tb)}" if self.r.random() < 0.4 else ""
        if kind == "exists":
            neg = "NOT " if self.r.random() < 0.5 else ""
            cond = f"b.{y} = a.{x}"
            if self.r.random() < 0.4:
                x2, y2 = self.comparable_pair(ta, tb, prefer_same=False)
                cond += f" AND b.{y2} {self.r.choice(['<', '>', '<>'])} a.{x2}"
            return f"SELECT {sel} FROM {ta} a WHERE {neg}EXISTS (SELECT 1 FROM {tb} b WHERE {cond})" \
                   f"{self.maybe_order(n)}"
        if kind in ("in", "notin"):
            neg = "NOT " if kind == "notin" else ""
            if self.r.random() < 0.3:
                sa, sb = self.comparable_pair(ta, tb)
                inner_filter = f" WHERE b.{sb} = a.{sa}"
            return f"SELECT {sel} FROM {ta} a WHERE a.{x} {neg}IN (SELECT b.{y} FROM {tb} b{inner_filter})" \
                   f"{self.maybe_order(n)}"
        if kind == "multi_in":
            x2, y2 = self.comparable_pair(ta, tb, prefer_same=False)
            neg = "NOT " if self.r.random() < 0.5 else ""
            return f"SELECT {sel} FROM {ta} a WHERE (a.{x}, a.{x2}) {neg}IN " \
                   f"(SELECT b.{y}, b.{y2} FROM {tb} b{inner_filter}){self.maybe_order(n)}"
        if kind == "inlist":
            c = self.r.choice(self.cols(ta))
            lits = self.r.sample(_LITERALS[category(c)], 2)
            if self.r.random() < 0.4:
                lits.append("NULL")
            neg = "NOT " if self.r.random() < 0.5 else ""
            return f"SELECT {sel} FROM {ta} a WHERE a.{c} {neg}IN ({', '.join(lits)}){self.maybe_order(n)}"
        if kind == "or_exists":
            neg = "NOT " if self.r.random() < 0.3 else ""
            return f"SELECT {sel} FROM {ta} a WHERE {neg}EXISTS (SELECT 1 FROM {tb} b WHERE b.{y} = a.{x}) " \
                   f"OR {self.one_side_pred('a', ta)}{self.maybe_order(n)}"
        if kind == "or_in":
            neg = "NOT " if self.r.random() < 0.3 else ""
            return f"SELECT {sel} FROM {ta} a WHERE a.{x} {neg}IN (SELECT b.{y} FROM {tb} b{inner_filter}) " \
                   f"OR {self.one_side_pred('a', ta)}{self.maybe_order(n)}"
        if kind == "scalar":
            agg = self.r.choice(["count(*)", f"max(b.{y})", f"sum(b.k)", f"count(b.{y})"])
            return f"SELECT a.k, (SELECT {agg} FROM {tb} b WHERE b.{y} = a.{x}) AS sq FROM {ta} a" \
                   f"{self.maybe_order(2)}"
        agg = self.r.choice(["min(b.k)", "count(*)", "max(b.k)"])
        return f"SELECT {sel} FROM {ta} a WHERE a.k >= (SELECT {agg} FROM {tb} b{inner_filter})" \
               f"{self.maybe_order(n)}"

    def setop(self) -> str:
        ta, tb = self.pick_tables(2)
        common = [c for c in self.cols(ta) if c in self.cols(tb)]
        cols = self.r.sample(common, self.r.randint(1, min(3, len(common))))
        left_cols = list(cols)
        if self.r.random() < 0.3 and category(cols[0]) == "num":
            # never repeat a left column: Spark's RewriteExceptAll fails internally on duplicate
            # output names (PLAN_VALIDATION_FAILED_RULE_IN_BATCH), a Spark bug, not a semantic
            others = [c for c in self.cols(ta) if c in NUMERIC and c not in left_cols[1:]]
            left_cols[0] = self.r.choice(others)  # int/bigint/decimal/double widening
        op = self.r.choice(["UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL",
                            "MINUS", "UNION DISTINCT"])
        lw = f" WHERE {self.one_side_pred(ta, ta)}" if self.r.random() < 0.3 else ""
        rw = f" WHERE {self.one_side_pred(tb, tb)}" if self.r.random() < 0.3 else ""
        return f"SELECT {', '.join(left_cols)} FROM {ta}{lw} {op} SELECT {', '.join(cols)} FROM {tb}{rw}" \
               f"{self.maybe_order(len(cols))}"


    # -- extended families -----------------------------------------------------------------------
    def expr_key_pair(self, a: str, ta: str, b: str, tb: str) -> str:
        """An equality between expressions of ``a`` and ``b`` (computed keys, implicit coercion)."""
        ca, cb = self.cols(ta), self.cols(tb)
        opts = []
        nums_a = [c for c in ca if c in NUMERIC]
        nums_b = [c for c in cb if c in NUMERIC]
        for x in nums_a:
            for y in nums_b:
                opts.append(f"{a}.{x} = {b}.{y}")  # int/bigint/decimal/double: implicit widening
                if x in ("k", "j") and y in ("k", "j"):
                    opts.append(f"{a}.{x} + 1 = {b}.{y}")
                    opts.append(f"{a}.{x} % 2 = {b}.{y} % 2")
                    opts.append(f"abs({a}.{x}) = {b}.{y}")
                opts.append(f"CAST({a}.{x} AS double) = CAST({b}.{y} AS double)")
                opts.append(f"CAST({a}.{x} AS decimal(12,2)) = {b}.{y}")
        if "k" in ca and "m" in cb:
            opts.append(f"CAST({a}.k AS decimal(5,1)) = {b}.m")
        if "s" in ca and "s" in cb:
            opts += [f"upper({a}.s) = upper({b}.s)", f"substr({a}.s, 1, 1) = {b}.s",
                     f"concat({a}.s, 'x') = concat({b}.s, 'x')", f"lower({a}.s) = {b}.s"]
        if "s" in ca:
            opts += [f"length({a}.s) = {b}.k", f"CAST({b}.k AS string) = {a}.s"]
        if "dt" in ca and "dt" in cb:
            opts += [f"date_add({a}.dt, 1) = {b}.dt", f"{a}.dt = {b}.dt"]
        if "dt" in ca:
            opts.append(f"day({a}.dt) = {b}.k")
        if "d" in ca:
            opts.append(f"{a}.d = {b}.k")
        return self.r.choice(opts)

    def join_cond_any(self, a: str, ta: str, b: str, tb: str) -> str:
        if self.r.random() < 0.45:
            cond = self.expr_key_pair(a, ta, b, tb)
            if self.r.random() < 0.25:
                cond += f" AND {self.join_condition(a, ta, b, tb)}"
            return cond
        return self.join_condition(a, ta, b, tb)

    def join_multi(self) -> str:
        n = self.r.choice([3, 3, 4])
        tabs = self.pick_tables(n)
        aliases = ["a", "b", "c", "e"][:n]
        src = f"{tabs[0]} a"
        where: list[str] = []
        visible = [("a", tabs[0])]
        # Spark applies a JOIN after ``a, b`` to the whole comma product (visitFromClause), so an
        # ON condition may name any earlier table.
        for i in range(1, n):
            al, t = aliases[i], tabs[i]
            jt = self.r.choice(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", ",",
                                "LEFT SEMI JOIN", "LEFT ANTI JOIN", "JOIN", ","])
            prev_al, prev_t = self.r.choice(visible)
            cond = self.join_cond_any(prev_al, prev_t, al, t)
            if jt == ",":
                src += f", {t} {al}"
                if self.r.random() < 0.85:
                    where.append(cond)
            elif jt == "CROSS JOIN":
                src += f" CROSS JOIN {t} {al}"
            else:
                src += f" {jt} {t} {al} ON {cond}"
            if "SEMI" not in jt and "ANTI" not in jt:
                visible.append((al, t))
        if self.r.random() < 0.2:
            al, t = self.r.choice(visible)
            where.append(self.one_side_pred(al, t))
        if self.r.random() < 0.35:
            # aggregate over the join
            al, t = self.r.choice(visible)
            g = self.r.choice(self.cols(t))
            al2, t2 = self.r.choice(visible)
            c2 = self.r.choice(self.cols(t2))
            aggs = [f"count(*) AS n", f"count({al2}.{c2}) AS nc", f"max({al2}.{c2}) AS mx",
                    f"count(DISTINCT {al2}.{c2}) AS nd"]
            if c2 in NUMERIC:
                aggs.append(f"sum({al2}.{c2}) AS sm")
            aggs = self.r.sample(aggs, self.r.randint(1, 3))
            sql = f"SELECT {al}.{g} AS g, {', '.join(aggs)} FROM {src}"
            if where:
                sql += " WHERE " + " AND ".join(where)
            return sql + f" GROUP BY {al}.{g}" + self.maybe_order(1 + len(aggs))
        distinct = self.r.random() < 0.25
        if distinct:
            items = []
            for al, t in visible:
                c = self.r.choice(self.cols(t))
                if self.r.random() < 0.6:
                    items.append(f"{al}.{c}")
            if not items:
                items = [f"a.{self.r.choice(self.cols(tabs[0]))}"]
            sel, ncols = ", ".join(items), len(items)
        else:
            sel, ncols = self.select_from(visible)
        sql = f"SELECT {'DISTINCT ' if distinct else ''}{sel} FROM {src}"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return sql + self.maybe_order(ncols)

    def derived(self) -> str:
        ta, tb = self.pick_tables(2)
        g = self.r.choice(self.cols(ta))
        c = self.r.choice(self.cols(ta))
        agg = self.r.choice([f"count(*)", f"count({c})", f"max({c})", f"min({c})"] +
                            ([f"sum({c})", f"avg({c})"] if c in NUMERIC else []))
        inner = f"SELECT {g} AS x, {agg} AS y FROM {ta}"
        if self.r.random() < 0.3:
            inner += f" WHERE {self.one_side_pred(ta, ta)}"
        inner += f" GROUP BY {g}"
        if self.r.random() < 0.3:
            inner = f"SELECT {g} AS x, {c} AS y FROM {ta}"
        yb = [col for col in self.cols(tb) if category(col) == category(g)]
        y = self.r.choice(yb) if yb else None
        jt = self.r.choice(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT SEMI JOIN"])
        cond = f"q.x = b.{y}" if y else "true"
        sel = "q.*" if "SEMI" in jt else self.r.choice(["q.*, b.k", "q.x, q.y, b.*", "*"])
        if self.r.random() < 0.5:
            return f"WITH q AS ({inner}) SELECT {sel} FROM q {jt} {tb} b ON {cond}"
        if self.r.random() < 0.3:
            # two CTEs, one referencing the other
            return (f"WITH q AS ({inner}), r AS (SELECT x, count(*) AS n FROM q GROUP BY x) "
                    f"SELECT q.*, r.n FROM q JOIN r ON q.x <=> r.x")
        return f"SELECT {sel} FROM ({inner}) q {jt} {tb} b ON {cond}"

    def group_top(self) -> str:
        """GROUP BY expressions, HAVING, ORDER BY every output column (aggregate first), LIMIT."""
        t = self.r.choice(TABLE_NAMES)
        cols = self.cols(t)
        c = self.r.choice(cols)
        key = self.r.choice([c, c] + ([f"{c} % 2", f"{c} + 1", f"abs({c})"] if c in ("k", "j") else []) +
                            (["upper(s)", "substr(s, 1, 1)", "length(s)"] if c == "s" else []) +
                            (["year(dt)", "month(dt)"] if c == "dt" else []) +
                            (["CAST(m AS int)", "floor(m)"] if c == "m" else []))
        v = self.r.choice(cols)
        aggs = ["count(*)", f"count({v})", f"min({v})", f"max({v})"]
        if v in NUMERIC:
            aggs += [f"sum({v})", f"avg({v})"]
        agg = self.r.choice(aggs)
        group_by = self.r.choice([key, key, f"ROLLUP({key})", f"CUBE({key})",
                                  f"GROUPING SETS (({key}), ())", f"{key} WITH ROLLUP"])
        # grouping analytics: the grand total's NULL key can tie with a NULL group, which the
        # grouping id tells apart (so ORDER BY still orders every output column)
        gid = ", grouping_id() AS gid" if group_by != key else ""
        sql = f"SELECT {key} AS g, {agg} AS a{gid} FROM {t} GROUP BY {group_by}"
        order_by = ["a", "2", agg]
        if self.r.random() < 0.5:
            having = self.r.choice(["count(*) >= 1", f"count({v}) > 0", f"{agg} IS NOT NULL", "count(*) > 1"])
            sql += " HAVING " + having
            # (a HAVING aggregate missing from the select list puts a Project over the Filter, and
            # an aggregate in ORDER BY then fails: UNRESOLVED_COLUMN / UNSUPPORTED_EXPR_FOR_OPERATOR)
        d = self.r.choice(["", " DESC", " ASC NULLS LAST", " DESC NULLS LAST"])
        sql += f" ORDER BY {self.r.choice(order_by)}{d}, 1{self.r.choice(['', ' DESC'])}"
        if gid:
            sql += ", gid"
        sql += f" LIMIT {self.r.randint(0, 4)}"
        if self.r.random() < 0.3:
            sql += f" OFFSET {self.r.randint(0, 2)}"
        return sql

    def setop_agg(self) -> str:
        ta, tb = self.pick_tables(2)
        def side(t: str) -> str:
            c = self.r.choice(self.cols(t))
            g = self.r.choice(["k", "k % 2"])
            agg = self.r.choice(["count(*)", f"count({c})", "max(k)", "sum(k)"])
            return f"SELECT {g} AS g, {agg} AS v FROM {t} GROUP BY {g}"
        op = self.r.choice(["UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"])
        sql = f"{side(ta)} {op} {side(tb)}"
        if self.r.random() < 0.3:
            sql = f"SELECT v, count(*) AS n FROM ({sql}) u GROUP BY v"
        return sql

    def nested_sub(self) -> str:
        ta, tb, tc = self.pick_tables(3)
        sel, n = self.select_from([("a", ta)])
        x, y = self.comparable_pair(ta, tb)
        y2, z = self.comparable_pair(tb, tc)
        kind = self.r.choice(["exists_in_in", "in_in_exists", "scalar_where", "scalar_select",
                              "notin_nulls", "in_or", "scalar_cmp", "pred_in_select", "pred_in_select",
                              "scalar_uncorr_rows"])
        if kind == "exists_in_in":
            neg = self.r.choice(["", "NOT "])
            return (f"SELECT {sel} FROM {ta} a WHERE a.{x} {neg}IN (SELECT b.{y} FROM {tb} b WHERE "
                    f"{self.r.choice(['', 'NOT '])}EXISTS (SELECT 1 FROM {tc} c WHERE c.{z} = b.{y2}))"
                    f"{self.maybe_order(n)}")
        if kind == "in_in_exists":
            return (f"SELECT {sel} FROM {ta} a WHERE EXISTS (SELECT 1 FROM {tb} b WHERE b.{y} = a.{x} "
                    f"AND b.{y2} IN (SELECT c.{z} FROM {tc} c))"
                    f"{self.maybe_order(n)}")
        if kind == "scalar_where":
            agg = self.r.choice(["count(*)", "max(b.k)", "min(b.k)", "sum(b.k)", "count(b.k)"])
            op = self.r.choice(["=", "<", ">=", "<>"])
            return (f"SELECT {sel} FROM {ta} a WHERE a.k {op} (SELECT {agg} FROM {tb} b WHERE b.{y} = a.{x})"
                    f"{self.maybe_order(n)}")
        if kind == "scalar_select":
            agg = self.r.choice(["count(*)", f"max(b.{y})", "sum(b.k)", "avg(b.k)", "count(DISTINCT b.k)"])
            extra = f" AND b.k <> a.k" if self.r.random() < 0.3 else ""
            return (f"SELECT a.k, (SELECT {agg} FROM {tb} b WHERE b.{y} = a.{x}{extra}) AS sq, "
                    f"(SELECT count(*) FROM {tc} c WHERE c.k = a.k) + 1 AS sq2 FROM {ta} a"
                    f"{self.maybe_order(3)}")
        if kind == "notin_nulls":
            extra = self.r.choice([" UNION ALL SELECT NULL", "", f" WHERE b.{y} IS NOT NULL",
                                   f" WHERE b.{y} IS NULL"])
            c2 = f" OR a.{x} IS NULL" if self.r.random() < 0.3 else ""
            return (f"SELECT {sel} FROM {ta} a WHERE a.{x} NOT IN (SELECT b.{y} FROM {tb} b{extra}){c2}"
                    f"{self.maybe_order(n)}")
        if kind == "in_or":
            neg = self.r.choice(["", "NOT "])
            return (f"SELECT {sel} FROM {ta} a WHERE a.{x} {neg}IN (SELECT b.{y} FROM {tb} b) OR "
                    f"a.k IN (SELECT c.k FROM {tc} c WHERE c.k > 1){self.maybe_order(n)}")
        if kind == "pred_in_select":
            # IN / NOT IN / EXISTS as values (existence joins), three-valued with NULLs
            neg = self.r.choice(["", "NOT "])
            w = self.r.choice([c for c in self.cols(tc) if category(c) == category(x)] or ["k"])
            if category(w) != category(x):
                x = "k"
            return (f"SELECT a.k, a.{x}, a.{x} {neg}IN (SELECT b.{y} FROM {tb} b) AS i, "
                    f"{self.r.choice(['', 'NOT '])}EXISTS (SELECT 1 FROM {tc} c WHERE c.k = a.k) AS e, "
                    f"CASE WHEN a.{x} IN (SELECT c.{w} FROM {tc} c) "
                    f"THEN 1 ELSE 0 END AS w FROM {ta} a")
        if kind == "scalar_uncorr_rows":
            # (more than one row would be SCALAR_SUBQUERY_TOO_MANY_ROWS, which Spark raises at
            # execution as a Py4JJavaError the harness cannot classify: keep it to one row)
            return (f"SELECT a.k, (SELECT b.k FROM {tb} b WHERE b.k IS NOT NULL ORDER BY b.k "
                    f"{self.r.choice(['', 'DESC '])}LIMIT 1) AS sq FROM {ta} a")
        return (f"SELECT {sel} FROM {ta} a WHERE (SELECT count(*) FROM {tb} b WHERE b.{y} = a.{x}) > "
                f"(SELECT count(*) FROM {tc} c WHERE c.k = a.k){self.maybe_order(n)}")

    def misc(self) -> str:
        t = self.r.choice(TABLE_NAMES)
        cols = self.cols(t)
        kind = self.r.choice(["distinct_order", "count_distinct2", "dec_agg", "minmax", "limit_offset",
                              "natural3", "using_multi", "view_self"])
        if kind == "distinct_order":
            cs = self.r.sample(cols, self.r.randint(1, min(3, len(cols))))
            # ORDER BY every output column: deterministic
            return f"SELECT DISTINCT {', '.join(cs)} FROM {t}{self.order_by_all(len(cs))}"
        if kind == "count_distinct2":
            cs = self.r.sample(cols, min(2, len(cols)))
            g = self.r.choice(["", " GROUP BY k"])
            sel = ("k, " if g else "") + f"count(DISTINCT {', '.join(cs)}) AS cd, count(*) AS n"
            return f"SELECT {sel} FROM {t}{g}"
        if kind == "dec_agg":
            tt = [x for x in TABLE_NAMES if "m" in self.cols(x)]
            if not tt:
                return f"SELECT sum(k), avg(k) FROM {t}"
            t = self.r.choice(tt)
            g = self.r.choice(["", " GROUP BY k"])
            sel = ("k, " if g else "") + "sum(m), avg(m), sum(DISTINCT m), min(m), max(m), sum(m * 2), avg(m + 1)"
            return f"SELECT {sel} FROM {t}{g}"
        if kind == "minmax":
            cs = [c for c in cols if c in ("s", "dt")] or ["k"]
            g = self.r.choice(["", " GROUP BY k"])
            sel = ("k, " if g else "") + ", ".join(f"min({c}), max({c})" for c in cs)
            return f"SELECT {sel} FROM {t}{g}"
        if kind == "limit_offset":
            cs = self.r.sample(cols, self.r.randint(1, len(cols)))
            lim = f" LIMIT {self.r.randint(0, 5)}" if self.r.random() < 0.8 else ""
            off = f" OFFSET {self.r.randint(0, 4)}" if self.r.random() < 0.5 or not lim else ""
            return f"SELECT {', '.join(cs)} FROM {t}{self.order_by_all(len(cs))}{lim}{off}"
        if kind == "natural3":
            ta, tb, tc = self.pick_tables(3)
            j1, j2 = self.r.choice(["", "LEFT ", "FULL "]), self.r.choice(["", "LEFT ", "RIGHT "])
            return f"SELECT * FROM {ta} NATURAL {j1}JOIN {tb} NATURAL {j2}JOIN {tc}"
        if kind == "using_multi":
            ta, tb = self.pick_tables(2)
            common = [c for c in self.cols(ta) if c in self.cols(tb)]
            using = self.r.sample(common, self.r.randint(1, min(4, len(common))))
            jt = self.r.choice(["", "LEFT ", "RIGHT ", "FULL "])
            sel = self.r.choice(["*", ", ".join(using), "x.*, y.*"])
            return f"SELECT {sel} FROM {ta} x {jt}JOIN {tb} y USING ({', '.join(using)})"
        jt = self.r.choice(["JOIN", "LEFT JOIN", "FULL JOIN", "LEFT ANTI JOIN"])
        sel = "x.*" if "ANTI" in jt else "x.k, x.k1, y.k, y.k1"
        cond = self.r.choice(["x.k = y.k1", "x.k1 = y.k", "x.k = y.k AND x.k1 <> y.k1", "x.k < y.k"])
        return f"SELECT {sel} FROM v x {jt} v y ON {cond}"

    # -- names that are both a select-list alias and a column (issue 18) ------------------------
    def _clash_agg(self, t: str) -> tuple[str, str]:
        """An aggregate over ``t`` and the category of its value."""
        c = self.r.choice(self.cols(t))
        opts = [("count(*)", "num"), (f"count({c})", "num"), (f"max({c})", category(c)),
                (f"min({c})", category(c))]
        if c in NUMERIC:
            opts += [(f"sum({c})", "num"), (f"-max({c})", "num"), (f"avg({c})", "num")]
        return self.r.choice(opts)

    def _clash_pred(self, name: str, *cats: str) -> str:
        """A predicate on ``name``; a comparison only when every meaning of ``name`` (alias or
        column) has the same category, else a NULL test (typed alike whichever it resolves to)."""
        if len(set(cats)) == 1 and self.r.random() < 0.75:
            op = self.r.choice(["=", "<>", "<", ">=", ">"])
            lits = _LITERALS[cats[0]]
            if len(cats) > 1:
                # Known and left alone: Spark coerces a HAVING comparison while the name is
                # still the input column, so `j > 1.5` over a bigint column j becomes `j > 1`
                # and stays so once j resolves to a double alias; integer literals only here
                lits = [x for x in lits if x != "1.5"]
            return f"{name} {op} {self.r.choice(lits)}"
        return f"{name} IS {self.r.choice(['', 'NOT '])}NULL"

    def alias_clash(self) -> str:
        """HAVING / ORDER BY / GROUP BY names that are both an alias and a column: Spark resolves
        a HAVING name to the aggregate's input first (a grouping column, or an aggregate's
        argument) and ORDER BY / plain names to the select list first."""
        t = self.r.choice(TABLE_NAMES)
        cols = self.cols(t)
        g = self.r.choice(cols)
        agg, acat = self._clash_agg(t)
        kind = self.r.choice(["having_group", "having_group", "having_input", "having_in_agg",
                              "having_swap", "order_group", "having_sub", "group_alias",
                              "order_plain"])
        if kind == "having_group":
            # alias = grouping column: HAVING means the grouping column
            extra = f", {self._clash_agg(t)[0]} AS x" if self.r.random() < 0.4 else ""
            name = f"{t}.{g}" if self.r.random() < 0.15 else g
            return (f"SELECT {agg} AS {g}{extra} FROM {t} GROUP BY {g} "
                    f"HAVING {self._clash_pred(name, category(g), acat)}")
        others = [c for c in cols if c != g]
        if kind in ("having_input", "having_in_agg") and others:
            # alias = an input column that is not grouped: HAVING means the alias, except
            # inside an aggregate function (the input column)
            y = self.r.choice(others)
            if kind == "having_input":
                cond = self._clash_pred(y, acat, category(y))
            else:
                fn = self.r.choice(["max", "min", "count"])
                inner_cat = "num" if fn == "count" else category(y)
                cond = self._clash_pred(f"{fn}({y})", inner_cat)
            return f"SELECT {g}, {agg} AS {y} FROM {t} GROUP BY {g} HAVING {cond}"
        if kind == "having_swap":
            same = [c for c in others if category(c) == category(g)]
            if same:
                y = self.r.choice(same)
                return (f"SELECT {g} AS {y}, {y} AS {g}, count(*) AS n FROM {t} GROUP BY {g}, {y} "
                        f"HAVING {self._clash_pred(g, category(g))}{self.order_by_all(3)}")
        if kind == "order_group" or kind == "having_swap":
            # ORDER BY after aggregation: the alias (the aggregate) sorts, then the group
            having = f" HAVING {self._clash_pred(g, category(g), acat)}" if self.r.random() < 0.5 else ""
            d = self.r.choice(["", " DESC", " DESC NULLS LAST", " ASC NULLS LAST"])
            return (f"SELECT {agg} AS {g}, {g} AS gk FROM {t} GROUP BY {g}{having} "
                    f"ORDER BY {g}{d}, 2{self.r.choice(['', ' DESC'])}")
        if kind == "having_sub":
            tb = self.r.choice(TABLE_NAMES)
            _, y = self.comparable_pair(t, tb)
            if category(y) != category(g):
                g, y = "k", "k"
            # (the inner column renamed, so that ``g`` is an outer reference)
            inner = f"(SELECT {y} AS z FROM {tb}) x"
            sub = self.r.choice([f"EXISTS (SELECT 1 FROM {inner} WHERE x.z = {g})",
                                 f"{g} IN (SELECT x.{y} FROM {tb} x)",
                                 f"NOT EXISTS (SELECT 1 FROM {inner} WHERE x.z = {g})"])
            return f"SELECT {agg} AS {g} FROM {t} GROUP BY {g} HAVING {sub}"
        if kind == "group_alias":
            # GROUP BY a name: a column of that name wins over an alias
            c = self.r.choice([x for x in cols if x in NUMERIC or x in ("s", "dt")])
            e = self.r.choice({"s": ["upper(s)", "concat(s, 'x')"], "dt": ["date_add(dt, 1)"]}.get(
                c, [f"{c} + 1", f"-{c}", f"abs({c})", f"{c} * 2"]))
            name = self.r.choice([c, "ga"])
            having = f" HAVING {self._clash_pred(name, category(c))}" if self.r.random() < 0.4 else ""
            return (f"SELECT {e} AS {name}, count(*) AS n FROM {t} GROUP BY {name}{having}"
                    f"{self.order_by_all(2)}")
        # ORDER BY over a plain SELECT: the alias shadows the column; a qualified name does not
        items, names = [], []
        for c in self.r.sample(cols, min(len(cols), self.r.randint(1, 3))):
            other = self.r.choice([x for x in cols if category(x) == category(c)])
            e = self.r.choice([other] + ([f"-{c}"] if c in NUMERIC else []))
            items.append(f"{e} AS {c}")
            names.append(c)
        key = self.r.choice(names)
        key = f"{t}.{key}" if self.r.random() < 0.25 else key
        distinct = "DISTINCT " if self.r.random() < 0.2 and "." not in key else ""
        ords = ", ".join(str(i + 1) for i in range(len(items)))
        return (f"SELECT {distinct}{', '.join(items)} FROM {t} "
                f"ORDER BY {key}{self.r.choice(['', ' DESC'])}, {ords}")

    # -- reuse: several reads of one Parquet table ----------------------------------------------
    def reuse(self) -> str:
        """Several reads of one Parquet table (:data:`PARQUET_TABLES`) that differ only in the
        columns they read, or not at all: uncorrelated scalar subqueries, IN / EXISTS subqueries
        with the same filter, self-joins, self-unions and set operations, CTEs read twice.  The
        plans hold exchanges (and broadcasts) over scans of the same files with the same filters;
        only the columns read tell them apart, which exchange reuse must see."""
        kind = self.r.choice(["scalars", "scalars", "in", "exists", "self_join", "self_join",
                              "self_union", "cte_join"])
        return getattr(self, f"reuse_{kind}")()

    def twin_pair(self, t: str) -> tuple[str, str]:
        """Two columns of the Parquet table ``t`` of one type: a column and its twin (either
        order), or one in five times the same column twice (a reuse that is right)."""
        cols = self.cols(t)
        a, b = self.r.choice([(c, c + "2") for c in cols if c + "2" in cols])  # (k, k2) always
        if self.r.random() < 0.5:
            a, b = b, a
        return (a, a) if self.r.random() < 0.2 else (a, b)

    def parquet_filter(self, alias: str, t: str) -> str:
        """A filter over a column of the Parquet table ``t`` (`` WHERE ...`` or nothing)."""
        if self.r.random() < 0.15:
            return ""
        c = self.r.choice(self.cols(t))
        q = f"{alias}.{c}"
        opts = [f"{q} IS NOT NULL", f"{q} = {self.literal_for(c)}", f"{q} <> {self.literal_for(c)}",
                f"{q} > {self.literal_for(c)}", f"{q} IN ({self.literal_for(c)}, {self.literal_for(c)})"]
        if category(c) == "num":
            opts.append(f"{q} BETWEEN {self.r.choice(['-1', '0', '1'])} AND {self.r.choice(['1', '2', '20'])}")
        return " WHERE " + self.r.choice(opts)

    def parquet_agg(self, fn: str, col: str) -> str:
        """``fn`` over ``col`` (``count`` for a non-numeric column where ``fn`` needs numbers)."""
        if fn in ("sum", "avg") and category(col) != "num":
            fn = "count"
        return f"count(DISTINCT {col})" if fn == "count_distinct" else f"{fn}({col})"

    def agg_fn(self) -> str:
        return self.r.choice(["avg", "sum", "min", "max", "count", "count_distinct"])

    def reuse_scalars(self) -> str:
        t = self.r.choice(PARQUET_TABLES)
        where = self.parquet_filter("p", t)
        a, b = self.twin_pair(t)
        cols = [a, b] + [self.r.choice(self.cols(t)) for _ in range(self.r.randint(0, 2))]
        fn = self.agg_fn()
        aggs = [self.parquet_agg(fn if self.r.random() < 0.7 else self.agg_fn(), f"p.{c}")
                for c in cols]
        subs = [f"(SELECT {g} FROM {t} p{where})" for g in aggs]
        if self.r.random() < 0.5:
            return "SELECT " + ", ".join(f"{q} AS a{i}" for i, q in enumerate(subs))
        to = self.r.choice(TABLE_NAMES)
        if self.r.random() < 0.5:
            return f"SELECT o.k, " + ", ".join(f"{q} AS a{i}" for i, q in enumerate(subs)) + \
                f" FROM {to} o"
        # compared with an outer column: counts only (any type compares with a bigint count)
        subs = [f"(SELECT count(p.{c}) FROM {t} p{where})" for c in cols[:2]]
        return f"SELECT o.* FROM {to} o WHERE o.k <= {subs[0]} AND o.k + 1 >= {subs[1]}"

    def _parquet_pair_for(self, t: str, x: str) -> tuple[str, str] | None:
        """Two columns of the Parquet table ``t`` comparable with ``x`` (twins preferred)."""
        same = [c for c in self.cols(t) if category(c) == category(x)]
        if not same:
            return None
        twins = [(c, c + "2") for c in same if c + "2" in same]
        if twins and self.r.random() < 0.8:
            a, b = self.r.choice(twins)
            return (b, a) if self.r.random() < 0.5 else (a, b)
        return self.r.choice(same), self.r.choice(same)

    def _outer_and_pair(self) -> tuple[str, str, str, tuple[str, str]]:
        """An in-memory table, a Parquet table, a column of the first and two comparable
        columns of the second (for subqueries over the Parquet table)."""
        ta, t = self.r.choice(TABLE_NAMES), self.r.choice(PARQUET_TABLES)
        x = self.r.choice(self.cols(ta))
        pair = self._parquet_pair_for(t, x)
        if pair is None:
            x, pair = "k", self.twin_pair(t)
        return ta, t, x, pair

    def reuse_in(self) -> str:
        ta, t, x, pair = self._outer_and_pair()
        where = self.parquet_filter("p", t)
        ins = [f"a.{x} {neg}IN (SELECT p.{c} FROM {t} p{where})"
               for c, neg in zip(pair, (self.r.choice(["", "NOT "]) for _ in pair))]
        if self.r.random() < 0.3:
            return f"SELECT a.k, a.{x}, {ins[0]} AS i0, {ins[1]} AS i1 FROM {ta} a"
        sel, n = self.select_from([("a", ta)])
        return f"SELECT {sel} FROM {ta} a WHERE {ins[0]} {self.r.choice(['AND', 'OR'])} {ins[1]}" \
               f"{self.maybe_order(n)}"

    def reuse_exists(self) -> str:
        ta, t, x, pair = self._outer_and_pair()
        f = self.parquet_filter("p", t).replace(" WHERE ", " AND ")
        ex = [f"{self.r.choice(['', 'NOT '])}EXISTS (SELECT 1 FROM {t} p WHERE p.{c} = a.{x}{f})"
              for c in pair]
        sel, n = self.select_from([("a", ta)])
        return f"SELECT {sel} FROM {ta} a WHERE {ex[0]} {self.r.choice(['AND', 'OR'])} {ex[1]}" \
               f"{self.maybe_order(n)}"

    def _twin_sides(self, t: str) -> tuple[list[str], list[str]]:
        """Column lists for two reads of ``t``: the same types position by position, the first
        of each a join key (a twin pair), the rest more twins or the very same columns."""
        a, b = self.twin_pair(t)
        left, right = [a], [b]
        for _ in range(self.r.randint(0, 2)):
            c, d = self.twin_pair(t)
            if c not in left and d not in right:
                left.append(c)
                right.append(d)
        return left, right

    def reuse_self_join(self) -> str:
        t = self.r.choice(PARQUET_TABLES)
        left, right = self._twin_sides(t)
        where = self.parquet_filter("p", t)
        lw = where if self.r.random() < 0.7 else self.parquet_filter("p", t)
        x = f"(SELECT {', '.join(f'p.{c}' for c in left)} FROM {t} p{lw})"
        y = f"(SELECT {', '.join(f'p.{c}' for c in right)} FROM {t} p{where})"
        jt = self.r.choice(["JOIN", "JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN",
                            "LEFT SEMI JOIN", "LEFT ANTI JOIN"])
        cond = f"x.{left[0]} = y.{right[0]}"
        if self.r.random() < 0.2:
            cond = f"x.{left[0]} <=> y.{right[0]}"
        sel = [f"x.{c}" for c in left]
        last = sel[-1]
        if "SEMI" not in jt and "ANTI" not in jt:
            sel += [f"y.{c} AS y_{c}" for c in right]
            last = f"y.{right[-1]}"
        if self.r.random() < 0.3:
            return f"SELECT x.{left[0]} AS g, count(*) AS n, count({last}) AS nc " \
                   f"FROM {x} x {jt} {y} y ON {cond} GROUP BY x.{left[0]}"
        return f"SELECT {', '.join(sel)} FROM {x} x {jt} {y} y ON {cond}{self.maybe_order(len(sel))}"

    def reuse_self_union(self) -> str:
        t = self.r.choice(PARQUET_TABLES)
        left, right = self._twin_sides(t)
        where = self.parquet_filter("p", t)
        op = self.r.choice(["UNION ALL", "UNION", "INTERSECT", "INTERSECT ALL", "EXCEPT",
                            "EXCEPT ALL"])
        if self.r.random() < 0.5:
            fn = self.agg_fn()

            def side(cols: list[str]) -> str:
                return f"SELECT p.{cols[0]} AS g, {self.parquet_agg(fn, f'p.{cols[-1]}')} AS v " \
                       f"FROM {t} p{where} GROUP BY p.{cols[0]}"
        else:
            def side(cols: list[str]) -> str:
                items = ", ".join(f"p.{c} AS c{i}" for i, c in enumerate(cols))
                return f"SELECT {items} FROM {t} p{where}"
        return f"{side(left)} {op} {side(right)}"

    def reuse_cte_join(self) -> str:
        t = self.r.choice(PARQUET_TABLES)
        left, right = self._twin_sides(t)
        where = self.parquet_filter("p", t)
        fn = self.agg_fn()

        def cte(cols: list[str]) -> str:
            return f"SELECT p.{cols[0]} AS g, {self.parquet_agg(fn, f'p.{cols[-1]}')} AS v, " \
                   f"count(*) AS n FROM {t} p{where} GROUP BY p.{cols[0]}"
        jt = self.r.choice(["JOIN", "LEFT JOIN", "FULL JOIN"])
        return f"WITH a AS ({cte(left)}), b AS ({cte(right)}) " \
               f"SELECT a.g, a.v, a.n, b.g AS bg, b.v AS bv, b.n AS bn FROM a {jt} b ON a.g <=> b.g"

    def lateral(self) -> str:
        """Issue 23's LATERAL subqueries and the correlated subqueries Spark 4 decorrelates with
        domain joins: outer columns in projections, under aggregates (the COUNT bug), unions,
        GROUP BY, derived tables of a correlated scalar subquery, EXISTS over a projection."""
        ta, tb = self.pick_tables(2)
        x, y = self.comparable_pair(ta, tb)
        pred = f" AND {self.one_side_pred('b', tb)}" if self.r.random() < 0.3 else ""
        op = self.r.choice(["=", "=", "<", ">="])
        corr = f"b.{y} {op} a.{x}"
        jt = self.r.choice([", LATERAL", " JOIN LATERAL", " LEFT JOIN LATERAL", " CROSS JOIN LATERAL"])
        on = "" if jt in (", LATERAL", " CROSS JOIN LATERAL") else self.r.choice(
            [" ON TRUE", " ON s.v IS NOT NULL", " ON a.k <= s.n"])
        kind = self.r.choice(["filter", "project", "count", "group", "union", "scalar_derived",
                              "exists_project"])
        if kind == "filter":
            sub = f"SELECT b.{y} AS v, b.k AS n FROM {tb} b WHERE {corr}{pred}"
        elif kind == "project":
            sub = f"SELECT a.{x} AS v, b.k + a.k AS n FROM {tb} b WHERE {corr}{pred}"
        elif kind == "count":
            sub = f"SELECT max(b.{y}) AS v, count(*) AS n FROM {tb} b WHERE {corr}{pred}"
        elif kind == "group":
            sub = f"SELECT b.{y} AS v, count(*) AS n FROM {tb} b WHERE {corr}{pred} GROUP BY b.{y}"
        elif kind == "union":
            sub = (f"SELECT b.{y} AS v, b.k AS n FROM {tb} b WHERE {corr}{pred} "
                   f"{self.r.choice(['UNION ALL', 'UNION', 'INTERSECT', 'EXCEPT'])} "
                   f"SELECT a.{x}, a.k")
        elif kind == "scalar_derived":
            agg = self.r.choice(["sum(n)", "count(*)", "max(n)", "count(n)"])
            return (f"SELECT a.k, a.{x}, (SELECT {agg} FROM (SELECT b.k + a.k AS n FROM {tb} b "
                    f"WHERE {corr}{pred})) AS sq FROM {ta} a{self.maybe_order(3)}")
        else:
            neg = self.r.choice(["", "NOT "])
            return (f"SELECT a.k, a.{x} FROM {ta} a WHERE {neg}EXISTS (SELECT a.k + b.k AS z "
                    f"FROM {tb} b WHERE {corr}{pred}){self.maybe_order(2)}")
        return f"SELECT a.k, a.{x}, s.v, s.n FROM {ta} a{jt} ({sub}) s{on}{self.maybe_order(4)}"

    def query(self) -> str:
        if self.r.random() < REUSE_SHARE:
            return self.reuse()
        fam = self.r.choices(
            [self.join2, self.join3, self.natural_using, self.aggregate, self.subquery, self.setop,
             self.join_multi, self.derived, self.group_top, self.setop_agg, self.nested_sub, self.misc,
             self.alias_clash],
            weights=[14, 4, 5, 11, 8, 6, 14, 7, 7, 5, 10, 9, 8])[0]
        return fam()


#: A view over ``t1`` that every scenario defines (self-joins of a view).
VIEW_SQL = "CREATE OR REPLACE TEMPORARY VIEW v AS SELECT k, k + 1 AS k1 FROM t1 WHERE k IS NOT NULL"


def make_query(seed: int, index: int) -> tuple[int, str]:
    """``(scenario number, SQL)`` of query ``index`` for ``seed``."""
    scenario = index // QUERIES_PER_SCENARIO
    sc = make_scenario(seed, scenario)
    gen = QueryGen(sc, random.Random(f"{seed}-query-{index}"))
    # lateral joins and domain-join decorrelation (issue 23), drawn with their own generator so
    # that the other queries of a seed stay what they were
    if random.Random(f"{seed}-lateral-{index}").random() < LATERAL_SHARE:
        return scenario, gen.lateral()
    return scenario, gen.query()
