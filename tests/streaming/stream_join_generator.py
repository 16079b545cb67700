"""Random stream-stream join scenarios for :mod:`tests.streaming.test_random_stream_joins`.

:func:`make_scenario` ``(seed, index)`` draws one :class:`~tests.streaming.spark_harness.Scenario`:

* two streams aliased ``l`` and ``r``, either with distinct column names (``lk, lt, ln, lv`` /
  ``rk, rt, rn, rv``) or the same ones (``k, t, n, v`` on both: every unselected output repeats
  a name), each with a watermark of 5 or 10 s on its event time ``t``;
* a join type (inner, left / right / full outer, left semi);
* a time constraint: a range of the right time around the left one (strict or not, either
  direction of the comparison), the event times as a key (``l.t = r.t``), or tumbling
  ``window()`` equality (Spark's TimeWindowing);
* zero to three extra conjuncts over one side (``l.n > 1``, ``r.v <> 'x'``), both sides
  (``l.n + r.n >= 4``, ``l.n < r.n``) or the time columns (``l.t <= r.t``,
  ``r.t - interval 3 seconds < l.t``): the shapes that decide which conjuncts give a state
  watermark (``StreamingJoinHelper.getStateValueWatermark``) and which are pre-join filters;
* the output: every column, or a projection of qualified columns that may repeat names
  (``l.k, l.t, r.k, r.t``) or a column;
* three to five steps of zero to four rows per stream (keys 1-3, event times moving forward
  with some late rows), then a step far ahead that moves the watermark past every held row,
  so the outer rows are emitted and the state is evicted.

Nothing is expected of a scenario by itself: the test runs it on Spark and on Ember and compares
batch by batch (:func:`~tests.streaming.spark_harness.assert_same`); a query Spark refuses must be
refused by Ember with the same error class.
"""

from __future__ import annotations

import random
from typing import Any

from tests.streaming.spark_harness import Scenario, ts

__all__ = ["make_scenario"]

JOIN_TYPES = ("inner", "left_outer", "right_outer", "full_outer", "left_semi")


def _names(same: bool, side: str) -> dict[str, str]:
    prefix = "" if same else side
    return {c: f"{prefix}{c}" for c in ("k", "t", "n", "v")}


def _ddl(names: dict[str, str]) -> str:
    return (f"{names['k']} INT, {names['t']} TIMESTAMP, {names['n']} INT, "
            f"{names['v']} STRING")


def _interval(seconds: int) -> str:
    return f"interval {seconds} seconds"


def _time_constraint(rng: random.Random, c: Any) -> tuple[str, bool]:
    """``(SQL, uses window())`` of the time part of the condition."""
    kind = rng.choices(("range", "between", "key", "window"), (4, 3, 1, 2))[0]
    lt, rt = c("l", "t"), c("r", "t")
    if kind == "between":
        a, b = rng.choice((2, 5, 8)), rng.choice((0, 3, 10))
        return f"{rt} BETWEEN {lt} - {_interval(a)} AND {lt} + {_interval(b)}", False
    if kind == "range":
        a, b = rng.choice((3, 5, 8)), rng.choice((2, 6, 10))
        lower = rng.choice((f"{lt} > {rt} - {_interval(a)}", f"{rt} - {_interval(a)} < {lt}",
                            f"{lt} >= {rt} - {_interval(a)}"))
        upper = rng.choice((f"{lt} < {rt} + {_interval(b)}", f"{rt} + {_interval(b)} >= {lt}",
                            f"{lt} <= {rt} + {_interval(b)}"))
        return f"{lower} AND {upper}", False
    if kind == "key":
        return f"{lt} = {rt}", False
    return f"{c('l', 'w')} = {c('r', 'w')}", True


def _extra_conjuncts(rng: random.Random, c: Any, windowed: bool) -> list[str]:
    one_side = [f"{c('l', 'n')} > {rng.randint(0, 2)}", f"{c('r', 'n')} > {rng.randint(0, 2)}",
                f"{c('l', 'v')} <> 'x'", f"{c('r', 'v')} <> 'x'",
                f"{c('l', 'n')} % 2 = 0", f"{c('r', 'n')} < 4"]
    both = [f"{c('l', 'n')} + {c('r', 'n')} >= {rng.randint(2, 6)}",
            f"{c('l', 'n')} < {c('r', 'n')}", f"{c('l', 'n')} <> {c('r', 'n')}",
            f"{c('l', 'n')} - 2 < {c('r', 'n')}", f"{c('l', 'v')} = {c('r', 'v')}"]
    pools = [one_side, both]
    if not windowed:
        lt, rt = c("l", "t"), c("r", "t")
        pools.append([f"{lt} <= {rt}", f"{rt} - {_interval(3)} < {lt}",
                      f"{lt} < {rt} + {_interval(rng.choice((1, 4)))}",
                      f"{rt} >= {lt} - {_interval(2)}", f"{lt} > {rt} - {_interval(20)}"])
    return [rng.choice(rng.choice(pools)) for _ in range(rng.choices((0, 1, 2, 3),
                                                                     (2, 4, 3, 1))[0])]


def _output(rng: random.Random, c: Any, how: str, windowed: bool) -> list[str] | None:
    """None (every column) or the qualified columns to select."""
    if rng.random() < 0.4:
        return None
    tcol = "w" if windowed else "t"
    sides = ("l",) if how == "left_semi" else ("l", "r")
    cols = [c(s, x) for s in sides for x in ("k", tcol, "n", "v") if rng.random() < 0.7]
    if not cols:
        cols = [c("l", "k")]
    if rng.random() < 0.3:
        cols.append(rng.choice(cols))  # a column twice
    rng.shuffle(cols)
    return cols


def _steps(rng: random.Random) -> tuple[dict[str, tuple[tuple, ...]], ...]:
    steps = []
    base = 100
    for _ in range(rng.randint(3, 5)):
        step: dict[str, tuple[tuple, ...]] = {}
        for side in ("left", "right"):
            rows = []
            for _ in range(rng.choices((0, 1, 2, 3, 4), (1, 3, 3, 2, 1))[0]):
                t = base + rng.randint(-18, 12)
                rows.append((rng.randint(1, 3), ts(t), rng.randint(0, 5), rng.choice("abx")))
            if rows:
                step[side] = tuple(rows)
        steps.append(step)
        base += rng.choice((0, 10, 20, 30))
    # far ahead: the watermark passes every held row (outer rows emitted, state evicted)
    steps.append({"left": ((9, ts(base + 300), 5, "a"),), "right": ((9, ts(base + 300), 5, "a"),)})
    return tuple(steps)


def make_scenario(seed: int, index: int) -> Scenario:
    """The ``index``-th random scenario of ``seed`` (module docstring)."""
    rng = random.Random(seed * 1_000_003 + index)
    same = rng.random() < 0.5
    names = {"l": _names(same, "l"), "r": _names(same, "r")}

    def c(side: str, col: str) -> str:
        return f"{side}.{side}w" if col == "w" else f"{side}.{names[side][col]}"

    how = rng.choice(JOIN_TYPES)
    delays = {"l": rng.choice((5, 10)), "r": rng.choice((5, 10))}
    time, windowed = _time_constraint(rng, c)
    conjuncts = [f"{c('l', 'k')} = {c('r', 'k')}", time, *_extra_conjuncts(rng, c, windowed)]
    rng.shuffle(conjuncts)
    condition = " AND ".join(conjuncts)
    output = _output(rng, c, how, windowed)

    def build(F: Any, s: dict[str, Any], _statics: dict[str, Any]) -> Any:
        sides = {}
        for side, stream in (("l", s["left"]), ("r", s["right"])):
            n = names[side]
            df = stream.withWatermark(n["t"], f"{delays[side]} seconds")
            if windowed:
                df = df.select(n["k"], F.window(n["t"], "10 seconds").alias(f"{side}w"),
                               n["n"], n["v"])
            sides[side] = df.alias(side)
        joined = sides["l"].join(sides["r"], F.expr(condition), how)
        return joined if output is None else joined.select(*output)

    text = (f"seed={seed} index={index}: l.join(r, {condition!r}, {how!r})"
            f"{'' if output is None else '.select' + str(tuple(output))}; watermarks "
            f"l {delays['l']} s, r {delays['r']} s{'; window(t, 10 s)' if windowed else ''}")
    return Scenario(text, {"left": _ddl(names["l"]), "right": _ddl(names["r"])}, _steps(rng),
                    build)
