"""Helpers for local-runtime tests: hand-built physical plans over small tables."""

from __future__ import annotations

import pyarrow as pa
import pytest

from ember import types as T
from ember.conf import SQLConf
from ember.expressions.base import AttributeReference
from ember.physical.nodes import LocalTableScanExec


def attrs(**cols: T.DataType) -> tuple[AttributeReference, ...]:
    return tuple(AttributeReference(n, t) for n, t in cols.items())


def scan(table: pa.Table, out: tuple[AttributeReference, ...] | None = None) -> LocalTableScanExec:
    """A LocalTableScanExec over ``table`` (attributes named like its columns)."""
    if out is None:
        out = tuple(AttributeReference(f.name, T.from_arrow(f.type)) for f in table.schema)
    return LocalTableScanExec(out, table)


def make_conf(batch_size: int | None = None, **kv) -> SQLConf:
    c = SQLConf()
    c.set("ember.execution.progress.enabled", "false")
    if batch_size is not None:
        c.set("ember.execution.batchSize", str(batch_size))
    for k, v in kv.items():
        c.set(k.replace("__", "."), str(v))
    return c


@pytest.fixture(params=[2, 65536], ids=["bs2", "bsdefault"])
def conf(request) -> SQLConf:
    return make_conf(request.param)
