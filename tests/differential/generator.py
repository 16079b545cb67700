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
[ALL], INTERSECT [ALL], EXCEPT [ALL].  Results must be deterministic in Spark: no LIMIT, ORDER BY
only over every output column, ``first`` only over values that are constant within a group.
"""

from __future__ import annotations

import datetime as _dt
import random
from dataclasses import dataclass
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


def category(col: str) -> str:
    """Columns of one category can be compared with each other."""
    return "num" if col in NUMERIC else col


@dataclass(frozen=True, slots=True)
class Scenario:
    """The tables of one scenario: name -> (column names, arrow table with Spark's types)."""

    tables: dict[str, pa.Table]

    def cols(self, name: str) -> list[str]:
        return list(self.tables[name].column_names)

    def describe(self) -> str:
        out = []
        for name, t in self.tables.items():
            out.append(f"{name}({', '.join(f'{c} {COLUMNS[c][0]}' for c in t.column_names)}): "
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
    return Scenario(tables)


def for_ember(table: pa.Table) -> pa.Table:
    """The same data with Ember's physical string type (large_string)."""
    fields = [pa.field(f.name, pa.large_string() if f.type == pa.string() else f.type)
              for f in table.schema]
    return table.cast(pa.schema(fields))


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
        if self.r.random() < 0.2 and "j" in self.cols(ta):
            left_cols[0] = "j" if category(cols[0]) == "num" else left_cols[0]
        op = self.r.choice(["UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL",
                            "MINUS", "UNION DISTINCT"])
        lw = f" WHERE {self.one_side_pred(ta, ta)}" if self.r.random() < 0.3 else ""
        rw = f" WHERE {self.one_side_pred(tb, tb)}" if self.r.random() < 0.3 else ""
        return f"SELECT {', '.join(left_cols)} FROM {ta}{lw} {op} SELECT {', '.join(cols)} FROM {tb}{rw}" \
               f"{self.maybe_order(len(cols))}"

    def query(self) -> str:
        fam = self.r.choices(
            [self.join2, self.join3, self.natural_using, self.aggregate, self.subquery, self.setop],
            weights=[32, 8, 10, 22, 16, 12])[0]
        return fam()


def make_query(seed: int, index: int) -> tuple[int, str]:
    """``(scenario number, SQL)`` of query ``index`` for ``seed``."""
    scenario = index // QUERIES_PER_SCENARIO
    sc = make_scenario(seed, scenario)
    return scenario, QueryGen(sc, random.Random(f"{seed}-query-{index}")).query()
