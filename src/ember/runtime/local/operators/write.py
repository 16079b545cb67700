"""The local operator of ``WriteFilesExec``: each input partition is one write task
(:func:`ember.execution.write.write_task`), run in parallel like any partition; each returns one
row per file it wrote.  A plan with no input partitions still runs task 0 (over no rows), which
writes the empty file that keeps an unpartitioned result's schema, as Spark's
``FileFormatWriter`` does."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from ember.execution.write import WriteJob, write_task
from ember.physical.writes import WriteFilesExec
from ember.runtime.local.registry import PartitionFn, operator

if TYPE_CHECKING:  # pragma: no cover
    from ember.runtime.local.context import RunContext


@operator(WriteFilesExec)
def run_write_files(node: WriteFilesExec, rt: RunContext) -> list[PartitionFn]:
    job: WriteJob = node.job
    parts = rt.execute(node.child)

    def task(i: int, part: PartitionFn | None) -> PartitionFn:
        def run() -> Iterator[pa.RecordBatch]:
            yield write_task(job, i, part() if part is not None else iter(()))
        return run

    if not parts:
        return [task(0, None)]
    return [task(i, p) for i, p in enumerate(parts)]
