"""The local operator of ``GenerateExec`` (Spark's ``GenerateExec``): per batch, the generator
gives the input row of each generated row (:meth:`ember.expressions.generators.Generator.generate`),
one ``take`` repeats the child's columns for them, and an outer Generate adds one NULL row for
each input row that generated none, in input order."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from ember.execution.kernels.batches import make_batch, schema_of
from ember.execution.prepare import prepare
from ember.physical.nodes import GenerateExec
from ember.runtime.local.registry import PartitionFn, operator

__all__ = ["generate_batch"]


def generate_batch(gen, outer: bool, b: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """The output rows of a Generate over batch ``b`` (``gen`` bound to ``b``'s columns)."""
    rows, cols = gen.generate(b)
    n_child = b.num_columns
    gen_types = [schema.field(n_child + i).type for i in range(len(schema) - n_child)]
    cols = [c if c.type == t else c.cast(t) for c, t in zip(cols, gen_types)]
    if outer:
        missing = np.flatnonzero(np.bincount(rows, minlength=b.num_rows) == 0)
        if len(missing):
            order = np.argsort(np.concatenate([rows, missing]), kind="stable")
            rows = np.concatenate([rows, missing])[order]
            idx = pa.array(order)
            cols = [pa.concat_arrays([c, pa.nulls(len(missing), t)]).take(idx)
                    for c, t in zip(cols, gen_types)]
    taken = b.take(pa.array(rows, pa.int64())) if n_child else None
    child_cols = list(taken.columns) if taken is not None else []
    return make_batch(child_cols + cols, schema, len(rows))


@operator(GenerateExec)
def run_generate(node: GenerateExec, rt) -> list[PartitionFn]:
    child = node.child
    schema = schema_of(node.output)

    def part(fn: PartitionFn) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            gen = prepare(node.generator, child.output)
            start = getattr(gen, "for_partition", None)  # a Python UDTF: an instance per part
            if start is not None:
                gen = start()
            last = None
            for b in fn():
                out = generate_batch(gen, node.outer, b, schema)
                if b.num_rows:
                    last = b.slice(b.num_rows - 1)
                if out.num_rows:
                    yield out
            tail = gen.terminate() if start is not None else None
            if tail and len(tail[0]):
                # a UDTF's terminate() rows go with the partition's last input row, as Spark's
                n, k = len(tail[0]), len(child.output)
                kept = [c.take(pa.array(np.zeros(n, np.int64))) for c in last.columns] \
                    if last is not None else [pa.nulls(n, f.type) for f in list(schema)[:k]]
                yield make_batch(kept + [c.cast(f.type) for c, f in zip(tail, list(schema)[k:])],
                                 schema, n)

        return run

    return [part(p) for p in rt.execute(child)]
