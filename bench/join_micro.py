"""Micro-benchmark of the local join kernels: an equi-join of 1M x 100K rows per join type.

Not a test.  Run: ``/work/venv/bin/python bench/join_micro.py [n_left] [n_right]``.
Prints rows/s (input rows processed per second) so accidental quadratic behaviour stands out.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.execution.context import ExecContext
from ember.execution.executor import execute
from ember.expressions.base import AttributeReference
from ember.expressions.predicates import And, EqualTo, LessThan
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Join, LocalRelation


def main() -> None:
    n_left = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    n_right = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    rng = np.random.default_rng(0)
    # Right keys unique-ish over 0..n_right, left keys drawn from a 2x wider range: about half
    # of the left rows find a partner.
    lk, lv = rng.integers(0, 2 * n_right, n_left), rng.integers(0, 100, n_left)
    rk, rv = rng.permutation(n_right), rng.integers(0, 100, n_right)
    k, v = AttributeReference("k", T.LONG), AttributeReference("v", T.LONG)
    k2, w = AttributeReference("k2", T.LONG), AttributeReference("w", T.LONG)
    left = LocalRelation((k, v), pa.table({"k": lk, "v": lv}))
    right = LocalRelation((k2, w), pa.table({"k2": rk, "w": rv}))
    ctx = ExecContext()
    conds = {"equi": EqualTo(k, k2), "equi+residual": And(EqualTo(k, k2), LessThan(v, w))}
    print(f"left={n_left:,} right={n_right:,} batch_size={ctx.batch_size}")
    for cname, cond in conds.items():
        for jt in JoinType:
            exists = (AttributeReference("exists", T.BOOLEAN, False)
                      if jt is JoinType.EXISTENCE else None)
            plan = Join(left, right, jt, cond, existence_attr=exists)
            t0 = time.perf_counter()
            out = sum(b.num_rows for b in execute(plan, ctx))
            dt = time.perf_counter() - t0
            rate = (n_left + n_right) / dt
            print(f"{cname:14s} {str(jt):14s} out={out:>10,} {dt:7.3f}s {rate/1e6:7.2f} M rows/s")


if __name__ == "__main__":
    main()
