"""Random window, grouping-analytics and aggregate-library queries over the tables of
:mod:`tests.differential.generator` (same scenarios, same seeding rules).

Each family sits behind a feature switch, so the generator only emits what Ember can run:

* ``windows``: window functions (ranking, offset, aggregates over ROWS/RANGE frames, random
  partition and order keys, named windows, QUALIFY, top-k filters, windows over aggregates and
  joins);
* ``grouping``: ROLLUP, CUBE, GROUPING SETS (mixed and composite), ``grouping()``,
  ``grouping_id()``, HAVING and ORDER BY over them, over joins;
* ``aggregates``: the aggregate library (variance family, covariance/correlation/regression,
  bitwise, boolean, ``max_by``/``min_by``, collections, percentiles, ``approx_count_distinct``,
  ``listagg``), plain, grouped, inside the other families.

:data:`ENABLED_FEATURES` lists the features merged into main (edit it when a feature lands);
``EMBER_DIFF_FEATURES=windows,grouping`` (or ``all``, or ``none``) overrides it for one run.

Results must be deterministic in Spark: functions that depend on the order of rows within a
window (``row_number``, ``ntile``, offsets, ROWS frames, ``collect_list``) order by every column
of the table after the chosen keys, so tied rows are equal up to the comparison's leniency
(``-0.0`` = ``0.0``, NaN = NaN); order-insensitive ones (``rank``, RANGE frames, whole
partitions) keep ties. Collections are sorted, ``max_by``/``min_by`` order by a struct that ends
with the value itself, ``approx_count_distinct`` is compared with the exact count (small tables
are within its error bound).
"""

from __future__ import annotations

import os
import random

from tests.differential.generator import (NUMERIC, QUERIES_PER_SCENARIO, TABLE_NAMES, QueryGen,
                                          make_scenario)

#: The query families' switches, in the order queries cycle through them.
FEATURES = ("windows", "grouping", "aggregates")
#: Further switches: ``arrays`` lets grouped collections be compared through ``sort_array`` /
#: ``size`` (without it they only appear in windows with a total order, where theirs is defined).
OPTIONS = ("arrays",)

#: The features merged into main: the default of :func:`enabled_features`.
ENABLED_FEATURES: frozenset[str] = frozenset(FEATURES)


def enabled_features() -> frozenset[str]:
    """:data:`ENABLED_FEATURES`, or ``$EMBER_DIFF_FEATURES`` (comma-separated, ``all``, ``none``)."""
    raw = os.environ.get("EMBER_DIFF_FEATURES")
    if raw is None:
        return ENABLED_FEATURES
    if raw.strip() == "all":
        return frozenset(FEATURES + OPTIONS)
    names = frozenset(x.strip() for x in raw.split(",") if x.strip() and x.strip() != "none")
    unknown = names - set(FEATURES + OPTIONS)
    if unknown:
        raise ValueError(f"EMBER_DIFF_FEATURES: unknown switch(es) {sorted(unknown)}; known: "
                         f"{FEATURES + OPTIONS}")
    return names


INTEGRAL = ("k", "j")
#: RANGE offsets by order-key column (numeric offsets, intervals on integral keys; dates take
#: integer days or day intervals).
_RANGE_OFFSETS = {
    # an interval on an integral key is cast to it (its end field's units: 1 DAY is 1)
    "k": ("0", "1", "2", "INTERVAL '1' DAY"), "j": ("0", "1", "3", "INTERVAL '2' HOUR"),
    "d": ("0.5", "1.5", "1"), "m": ("1.00", "0.25", "2"),
    "dt": ("1", "0", "INTERVAL '1' DAY", "INTERVAL '2' DAY"),
}
_RANKING = ("rank()", "dense_rank()", "percent_rank()", "cume_dist()")
#: Where a window's OVER clause goes in an aggregate wrapped in other functions (``size(...)``).
OVER = "\x00"


def over(agg: str, spec: str) -> str:
    """``agg`` evaluated over the window ``spec`` (after its aggregate call, not its wrapper)."""
    clause = f" OVER ({spec.strip()})"
    return agg.replace(OVER, clause) if OVER in agg else agg + clause


def plain(agg: str) -> str:
    """``agg`` as an ordinary aggregate."""
    return agg.replace(OVER, "")


class AnalyticsGen(QueryGen):
    """Random window / grouping-analytics / aggregate-library SQL over one scenario."""

    def __init__(self, scenario, rng: random.Random, features: frozenset[str]) -> None:
        super().__init__(scenario, rng)
        self.features = features

    # -- aggregates ---------------------------------------------------------------------------
    def new_agg(self, t: str, qual: str = "", window: bool = False) -> str:
        """One call of a library aggregate over columns of ``t`` (deterministic in Spark); with
        ``window``, one a window may hold (no DISTINCT), with :data:`OVER` marking its place."""
        cols = self.cols(t)
        nums = [c for c in cols if c in NUMERIC]
        ints = [c for c in cols if c in INTEGRAL]
        c = self.r.choice(cols)
        x = f"{qual}{self.r.choice(nums)}" if nums else f"{qual}k"
        y = f"{qual}{self.r.choice(nums)}" if nums else f"{qual}k"
        kind = self.r.choice(["var", "var", "two", "two", "moment", "bit", "bool", "by", "coll",
                              "coll", "pct", "pct", "acd", "listagg"])
        if kind == "var":
            fn = self.r.choice(["stddev", "stddev_samp", "stddev_pop", "variance", "var_samp",
                                "var_pop", "std"])
            return f"{fn}({x})"
        if kind == "two":
            fn = self.r.choice(["covar_samp", "covar_pop", "corr", "regr_count", "regr_avgx",
                                "regr_avgy", "regr_slope", "regr_intercept", "regr_r2", "regr_sxx",
                                "regr_sxy", "regr_syy"])
            return f"{fn}({x}, {y})"
        if kind == "moment":
            return f"{self.r.choice(['skewness', 'kurtosis'])}({x})"
        if kind == "bit":
            col = f"{qual}{self.r.choice(ints)}" if ints else f"{qual}k"
            return f"{self.r.choice(['bit_and', 'bit_or', 'bit_xor'])}({col})"
        if kind == "bool":
            pred = self.one_side_pred("_x", t).replace("_x.", qual)
            return f"{self.r.choice(['bool_and', 'bool_or', 'every', 'some', 'any'])}({pred})"
        if kind == "by":
            fn = self.r.choice(["max_by", "min_by"])
            key = self.r.choice([f"named_struct('o', {y}, 'v', {qual}{c})", f"array({y}, {x})"])
            return f"{fn}({qual}{c}, {key})"
        if kind == "coll" and window:
            # in frame order (the caller gives it a total order); collect_set's order is Spark's hash order
            return f"{self.r.choice(['collect_list', 'array_agg'])}({qual}{c})"
        if kind == "coll" and "arrays" not in self.features:
            kind = "var"
        if kind == "var":
            fn = self.r.choice(["stddev", "stddev_samp", "stddev_pop", "variance", "var_samp",
                                "var_pop", "std"])
            return f"{fn}({x})"
        if kind == "coll":
            fn = self.r.choice(["collect_list", "collect_set", "array_agg"])
            distinct = "DISTINCT " if fn != "collect_set" and not window and self.r.random() < 0.2 else ""
            return self.r.choice([f"sort_array({fn}({distinct}{qual}{c}){OVER})",
                                  f"size({fn}({distinct}{qual}{c}){OVER})"])
        if kind == "pct":
            p = self.r.choice(["0.5", "0.25", "0.0", "1.0", "0.9"])
            # array(0.1, 0.5) as users write it: decimals of different precisions widened
            # to one type (and doubles with a D suffix); DATE columns for percentile_approx
            approx = f"{qual}dt" if "dt" in cols and self.r.random() < 0.3 else x
            return self.r.choice([f"percentile({x}, {p})", f"median({x})",
                                  f"percentile({x}, array(0.1, {p}))",
                                  f"percentile({x}, array(0.1D, {p}D))",
                                  f"percentile_approx({approx}, {p})",
                                  f"percentile_approx({approx}, array({p}, 0.75), 1000)"])
        if kind == "acd" and not window:
            return f"abs(approx_count_distinct({qual}{c}) - count(DISTINCT {qual}{c})) <= 1"
        if window:  # approx_count_distinct / listagg: not compared over windows
            return f"var_pop({x})"
        s = f"{qual}s" if "s" in cols else f"CAST({qual}k AS STRING)"
        fn = self.r.choice(["listagg", "string_agg"])
        return f"{fn}({s}, ',') WITHIN GROUP (ORDER BY {s} {self.r.choice(['ASC', 'DESC'])})"

    def any_agg(self, alias: str, t: str, qual: str, window: bool = False) -> str:
        """A core aggregate (the join generator's) or, with ``aggregates`` on, sometimes a library
        one (:meth:`new_agg`; with ``window``, still holding the :data:`OVER` mark)."""
        if "aggregates" in self.features and self.r.random() < 0.5:
            agg = self.new_agg(t, qual, window)
            return agg if window else plain(agg)
        return self.agg_call(alias, t, [], qual)

    @staticmethod
    def spark_safe(aggs: list[str]) -> list[str]:
        """Spark 4.3 fails (ClassCastException in ``ListAgg.withNewChildrenInternal``) when
        ``listagg ... WITHIN GROUP`` meets a DISTINCT aggregate: keep only one of them."""
        if any("WITHIN GROUP" in a for a in aggs) and any("DISTINCT" in a for a in aggs):
            return [a for a in aggs if "WITHIN GROUP" not in a] or ["count(*)"]
        return aggs

    def aggregates_query(self) -> str:
        t = self.r.choice(TABLE_NAMES)
        keys = self.r.sample(self.cols(t), min(self.r.choice([0, 1, 1, 2]), len(self.cols(t))))
        aggs = self.spark_safe([plain(self.new_agg(t)) for _ in range(self.r.randint(1, 4))])
        items = [f"{k} AS g{i}" for i, k in enumerate(keys)] + [f"{a} AS c{i}" for i, a in enumerate(aggs)]
        sql = f"SELECT {', '.join(items)} FROM {t}"
        if self.r.random() < 0.2:
            sql += f" WHERE {self.one_side_pred(t, t).replace(t + '.', '')}"
        if keys:
            sql += f" GROUP BY {', '.join(keys)}"
        return sql

    # -- windows ------------------------------------------------------------------------------
    def _direction(self) -> str:
        return self.r.choice(["", " ASC", " DESC", " ASC NULLS LAST", " DESC NULLS FIRST"])

    def _partition(self, t: str, qual: str) -> list[str]:
        keys = self.r.sample(self.cols(t), min(self.r.choice([0, 1, 1, 2]), len(self.cols(t))))
        out = [f"{qual}{k}" for k in keys]
        if out and keys[0] in INTEGRAL and self.r.random() < 0.3:
            out[0] = f"{out[0]} % 2"
        return out

    def _total_order(self, t: str, qual: str, first: list[str]) -> list[str]:
        """``first`` then every column of ``t``: ties only among rows equal up to -0.0/NaN."""
        rest = [f"{qual}{c}{self._direction()}" for c in self.cols(t)]
        return first + rest

    def _frame(self, order_key: str | None) -> str:
        """A frame clause: ROWS with offsets, or RANGE (offsets only over ``order_key``)."""
        bounds = ["UNBOUNDED PRECEDING", "2 PRECEDING", "1 PRECEDING", "CURRENT ROW",
                  "1 FOLLOWING", "2 FOLLOWING", "UNBOUNDED FOLLOWING"]
        if order_key is not None and self.r.random() < 0.6:
            offsets = _RANGE_OFFSETS[order_key]
            lo = self.r.choice(["UNBOUNDED PRECEDING", "P", "CURRENT ROW", "F"])
            hi = self.r.choice({"UNBOUNDED PRECEDING": ["P", "CURRENT ROW", "F", "UNBOUNDED FOLLOWING"],
                                "P": ["P", "CURRENT ROW", "F", "UNBOUNDED FOLLOWING"],
                                "CURRENT ROW": ["CURRENT ROW", "F", "UNBOUNDED FOLLOWING"],
                                "F": ["F", "UNBOUNDED FOLLOWING"]}[lo])
            if lo == hi and lo in ("P", "F"):
                # both offsets on one side: the lower bound must not lie after the upper one
                near, far = self.r.choice([("0", "1"), ("1", "2")]) if order_key != "dt" else ("0", "1")
                if lo == "P":
                    return f"RANGE BETWEEN {far} PRECEDING AND {near} PRECEDING"
                return f"RANGE BETWEEN {near} FOLLOWING AND {far} FOLLOWING"
            spell = {"P": f"{self.r.choice(offsets)} PRECEDING", "F": f"{self.r.choice(offsets)} FOLLOWING"}
            return f"RANGE BETWEEN {spell.get(lo, lo)} AND {spell.get(hi, hi)}"
        i = self.r.randrange(len(bounds) - 1)
        j = self.r.randrange(i, len(bounds))
        lo, hi = bounds[i], bounds[j]
        if lo == "UNBOUNDED FOLLOWING":
            lo = "CURRENT ROW"
        if hi == "UNBOUNDED PRECEDING":
            hi = "CURRENT ROW"
        return f"ROWS BETWEEN {lo} AND {hi}"

    def window_expr(self, t: str, qual: str = "", tiebreak: tuple[str, ...] = ()) -> str:
        """``fn(...) OVER (...)`` over columns of ``t``, deterministic in Spark; ``tiebreak``
        ends total orders (over a join, the other side's column in the output: the rows of ``t``
        it repeats are otherwise tied)."""
        cols = self.cols(t)
        part = self._partition(t, qual)
        pby = f"PARTITION BY {', '.join(part)} " if part else ""
        key = self.r.choice(cols)
        keyed = [f"{qual}{key}{self._direction()}"]
        kind = self.r.choice(["rank", "rank", "rowlike", "offset", "offset", "agg", "agg", "agg",
                              "range", "range"])
        if kind == "rank":
            more = [f"{qual}{c}{self._direction()}" for c in self.r.sample(cols, min(len(cols), self.r.randint(0, 1)))]
            order = ", ".join(keyed + [m for m in more if m.split()[0] != keyed[0].split()[0]])
            return f"{self.r.choice(_RANKING)} OVER ({pby}ORDER BY {order})"
        total = ", ".join(self._total_order(t, qual, keyed) + list(tiebreak))
        c = f"{qual}{self.r.choice(cols)}"
        if kind == "rowlike":
            fn = self.r.choice(["row_number()", f"ntile({self.r.choice([1, 2, 3, 5])})"])
            return f"{fn} OVER ({pby}ORDER BY {total})"
        if kind == "offset":
            n = self.r.choice([1, 1, 2, 3])
            ignore = " IGNORE NULLS" if self.r.random() < 0.3 else ""
            fn = self.r.choice([f"lag({c})", f"lead({c})", f"lag({c}, {n})", f"lead({c}, {n})",
                                f"lag({c}, {n}, {c})", f"nth_value({c}, {n})",
                                f"first_value({c})", f"last_value({c})"])
            frame = ""
            if fn.startswith(("nth_value", "first_value", "last_value")) and self.r.random() < 0.6:
                frame = " " + self._frame(None)
            elif fn.startswith(("lag", "lead")) and ignore and self.r.random() < 0.5:
                ignore = ""
            if fn.startswith(("lag", "lead")) and fn.count(",") == 2:
                ignore = ""  # a column default with IGNORE NULLS: keep the common form
            return f"{fn}{ignore} OVER ({pby}ORDER BY {total}{frame})"
        agg = self.any_agg("_x", t, qual, window=True) if self.r.random() < 0.5 else \
            self.r.choice([f"count({c})", "count(*)", f"min({c})", f"max({c})"] +
                          [f"{fn}({qual}{n})" for n in cols if n in NUMERIC for fn in ("sum", "avg")])
        if "FILTER" in agg or "DISTINCT" in agg or "WITHIN GROUP" in agg:
            agg = f"count({c})"  # not allowed in a window
        if agg.startswith(("percentile(", "median(", "percentile_approx(")):
            # Spark allows neither ORDER BY nor a frame for these: whole partitions only
            return over(agg, pby)
        if agg.startswith(("collect_list(", "array_agg(")):
            # the array is in frame order: a ROWS frame over a total order
            return over(agg, f"{pby}ORDER BY {total} {self._frame(None)}")
        if kind == "agg":
            # ROWS frames (total order) or the whole partition
            if self.r.random() < 0.3:
                return over(agg, pby)
            return over(agg, f"{pby}ORDER BY {total} {self._frame(None)}")
        # RANGE frames: one order key of a numeric or date type, ties kept
        keys = [k for k in cols if k in _RANGE_OFFSETS]
        if not keys:
            return over(agg, f"{pby}ORDER BY {qual}{key}{self._direction()}")
        rk = self.r.choice(keys)
        frame = self._frame(rk) if self.r.random() < 0.8 else ""
        return over(agg, f"{pby}ORDER BY {qual}{rk}{self._direction()}{' ' + frame if frame else ''}")

    def window_query(self) -> str:
        shape = self.r.choice(["plain", "plain", "plain", "topk", "qualify", "over_agg", "join", "named"])
        t = self.r.choice(TABLE_NAMES)
        cols = self.cols(t)
        if shape == "topk":
            fn = self.r.choice(["row_number()", "rank()", "dense_rank()"])
            part = self._partition(t, "")
            pby = f"PARTITION BY {', '.join(part)} " if part else ""
            order = ", ".join(self._total_order(t, "", [])) if fn == "row_number()" else \
                f"{self.r.choice(cols)}{self._direction()}"
            op = self.r.choice(["<=", "<", "="])
            return (f"SELECT * FROM (SELECT {', '.join(cols)}, {fn} OVER ({pby}ORDER BY {order}) AS rn "
                    f"FROM {t}) WHERE rn {op} {self.r.choice([1, 2, 3])}")
        if shape == "qualify":
            w = self.window_expr(t)
            op = self.r.choice(["IS NOT NULL", "IS NULL", "> 1", "<= 2"])
            return f"SELECT {', '.join(cols)} FROM {t} QUALIFY {w} {op}"
        if shape == "over_agg":
            keys = self.r.sample(cols, min(len(cols), self.r.choice([1, 1, 2])))
            agg = self.r.choice(["count(*)", "sum(k)", "max(k)", "min(k)"])
            ks = ", ".join(keys)
            w = self.r.choice([f"rank() OVER (ORDER BY {agg}{self._direction()})",
                               f"sum({agg}) OVER (ORDER BY {ks}{self._direction()})",
                               f"count(*) OVER ()",
                               f"dense_rank() OVER (PARTITION BY {keys[0]} ORDER BY {agg} DESC)"])
            return f"SELECT {ks}, {agg} AS a, {w} AS w FROM {t} GROUP BY {ks}"
        if shape == "join":
            ta, tb = self.pick_tables(2)
            jt = self.r.choice(["JOIN", "LEFT JOIN", "FULL JOIN"])
            side, alias = self.r.choice([(ta, "a"), (tb, "b")])
            other = "b" if alias == "a" else "a"
            ws = [self.window_expr(side, f"{alias}.", (f"{other}.k",))
                  for _ in range(self.r.randint(1, 2))]
            return (f"SELECT {alias}.*, {other}.k AS ok, "
                    + ", ".join(f"{w} AS w{i}" for i, w in enumerate(ws))
                    + f" FROM {ta} a {jt} {tb} b ON {self.join_condition('a', ta, 'b', tb)}")
        if shape == "named":
            part = self._partition(t, "")
            pby = f"PARTITION BY {', '.join(part)}" if part else ""
            total = ", ".join(self._total_order(t, "", []))
            agg = self.r.choice([f"sum(k)", "count(*)", f"max({self.r.choice(cols)})"])
            return (f"SELECT {', '.join(cols)}, {agg} OVER w AS a, row_number() OVER w AS rn, "
                    f"lag(k) OVER w AS lg FROM {t} WINDOW w AS ({pby} ORDER BY {total})")
        ws = [self.window_expr(t) for _ in range(self.r.randint(1, 3))]
        sel = ", ".join(self.r.sample(cols, self.r.randint(1, len(cols))))
        sql = f"SELECT {sel}, " + ", ".join(f"{w} AS w{i}" for i, w in enumerate(ws)) + f" FROM {t}"
        if self.r.random() < 0.2:
            sql += f" WHERE {self.one_side_pred(t, t).replace(t + '.', '')}"
        return sql

    # -- grouping analytics -------------------------------------------------------------------
    def grouping_query(self) -> str:
        over_join = self.r.random() < 0.2
        if over_join:
            ta, tb = self.pick_tables(2)
            jt = self.r.choice(["JOIN", "LEFT JOIN"])
            src = f"{ta} a {jt} {tb} b ON {self.join_condition('a', ta, 'b', tb)}"
            t, alias, qual = ta, "a", "a."
        else:
            t = self.r.choice(TABLE_NAMES)
            src, alias, qual = t, t, ""
        cols = self.cols(t)
        keys = [f"{qual}{c}" for c in self.r.sample(cols, min(len(cols), self.r.randint(1, 3)))]
        if keys[0].endswith(INTEGRAL) and self.r.random() < 0.2:
            keys[0] = f"{keys[0]} % 2"
        form = self.r.choice(["rollup", "cube", "sets", "mixed", "composite"])
        if form == "rollup":
            group = f"ROLLUP({', '.join(keys)})"
        elif form == "cube":
            group = f"CUBE({', '.join(keys)})"
        elif form == "sets":
            chosen = [self.r.sample(keys, self.r.randint(0, len(keys))) for _ in range(self.r.randint(1, 4))]
            keys = [k for k in keys if any(k in s for s in chosen)]  # the others are not grouped
            sets = {f"({', '.join(s)})" for s in chosen}
            group = f"GROUPING SETS ({', '.join(sorted(sets))})"
        elif form == "mixed" and len(keys) > 1:
            group = f"{keys[0]}, {self.r.choice(['ROLLUP', 'CUBE'])}({', '.join(keys[1:])})"
        else:
            group = f"ROLLUP({keys[0]}, ({', '.join(keys[1:]) or keys[0]}))" if len(keys) > 1 else f"CUBE({keys[0]})"
        aggs = self.spark_safe([self.any_agg(alias, t, qual) for _ in range(self.r.randint(1, 3))])
        gfns = []
        if keys and self.r.random() < 0.6:
            gfns.append(f"grouping({self.r.choice(keys)})")
        if self.r.random() < 0.5:
            gfns.append("grouping_id()")
        items = [f"{k} AS g{i}" for i, k in enumerate(keys)] + [f"{a} AS c{i}" for i, a in enumerate(aggs)] + \
                [f"{g} AS f{i}" for i, g in enumerate(gfns)]
        sql = f"SELECT {', '.join(items)} FROM {src} GROUP BY {group}"
        if self.r.random() < 0.3:
            # (Spark resolves a grouping key in HAVING through its select alias only)
            sql += " HAVING " + self.r.choice(["count(*) > 1", "grouping_id() > 0", "grouping_id() = 0"]
                                              + (["g0 IS NULL", "g0 IS NOT NULL"] if keys else []))
        if self.r.random() < 0.3:
            sql += self.order_by_all(len(items))
        return sql

    # -- entry point --------------------------------------------------------------------------
    def query_for(self, feature: str) -> str:
        if feature == "windows":
            return self.window_query()
        if feature == "grouping":
            return self.grouping_query()
        return self.aggregates_query()


def make_analytics_query(seed: int, index: int, features: frozenset[str] | None = None) -> tuple[int, str]:
    """``(scenario number, SQL)`` of analytics query ``index``: the enabled features take turns."""
    features = enabled_features() if features is None else features
    order = [f for f in FEATURES if f in features]
    if not order:
        raise ValueError("no analytics feature is enabled")
    scenario = index // QUERIES_PER_SCENARIO
    gen = AnalyticsGen(make_scenario(seed, scenario), random.Random(f"{seed}-analytics-{index}"), features)
    return scenario, gen.query_for(order[index % len(order)])
