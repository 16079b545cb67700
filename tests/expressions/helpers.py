"""Test helpers: build a batch, coerce/check/bind an expression like the analyzer would, eval."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa

from ember import types as T
from ember.coercion import coerce_expression
from ember.expressions.base import AttributeReference, Expression, Literal, bind_references
from ember.expressions.registry import lookup_function

COLS = {
    "a": (T.INT, [1, None, 3]),
    "b": (T.LONG, [2, 5, None]),
    "s": (T.STRING, ["x", "Hello", None]),
    "d": (T.DOUBLE, [1.5, -2.5, None]),
    "m": (T.DecimalType(3, 2), [Decimal("2.50"), Decimal("-1.25"), None]),
    "dt": (T.DATE, [dt.date(2020, 1, 31), dt.date(2019, 12, 1), None]),
    "ts": (T.TIMESTAMP, [dt.datetime(2020, 1, 2, 3, 4, 5, 500000, tzinfo=dt.timezone.utc),
                         dt.datetime(1999, 12, 31, 23, 59, 59, tzinfo=dt.timezone.utc), None]),
    "bo": (T.BOOLEAN, [True, False, None]),
    "z": (T.INT, [0, 2, 0]),
}
ATTRS = {n: AttributeReference(n, t) for n, (t, _) in COLS.items()}
BATCH = pa.record_batch([pa.array(v, type=t.to_arrow()) for t, v in COLS.values()],
                        names=list(COLS))


def col(name: str) -> AttributeReference:
    return ATTRS[name]


def lit(value, dtype=None) -> Literal:
    if dtype is None:
        dtype = {bool: T.BOOLEAN, int: T.INT, float: T.DOUBLE, str: T.STRING,
                 Decimal: None, type(None): T.NULL}[type(value)]
        if dtype is None:
            sign, digits, exp = value.as_tuple()
            dtype = T.DecimalType(max(len(digits), -exp, 1), max(-exp, 0))
    return Literal(value, dtype)


def fn(name: str, *args: Expression) -> Expression:
    return lookup_function(name, tuple(args))


def analyze(e: Expression) -> Expression:
    e = e.transform_up(coerce_expression)
    bad = e.find(lambda n: n.check_input_types() is not None)
    if bad is not None:
        raise AssertionError(f"type check failed for {bad}: {bad.check_input_types()}")
    return e


def ev(e: Expression, batch: pa.RecordBatch = BATCH) -> list:
    e = analyze(e)
    bound = bind_references(e, list(ATTRS.values()))
    out = bound.eval(batch)
    assert len(out) == batch.num_rows
    assert out.type == e.data_type.to_arrow(), (out.type, e.data_type)
    return out.to_pylist()


def ev1(e: Expression) -> object:
    """Evaluate a constant expression on a one-row batch."""
    return ev(e, BATCH.slice(0, 1))[0]
