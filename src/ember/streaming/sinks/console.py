"""The console sink (Spark's ``ConsoleWrite``): prints each batch as Spark does::

    -------------------------------------------
    Batch: 3
    -------------------------------------------
    +---+---+
    |  k|  v|
    ...

then the batch's ``show()`` table (``ember.dataframe.show_string``, timestamps in the session
time zone). Options: ``numRows`` (default 20) and ``truncate`` (``true``/``false``, default true:
cells cut to 20 characters). Every batch is printed, an empty one as an empty table. The console
keeps no log: a batch id already printed by this sink object is skipped (contract 4); after a
restart the last batch may print again, as in Spark.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TextIO

import pyarrow as pa

from ember import types as T
from ember.errors import AnalysisError
from ember.dataframe import show_string

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["ConsoleSink"]

_RULE = "-------------------------------------------"


class ConsoleSink:
    """``df.writeStream.format("console").option("numRows", 5).start()``.

    >>> ConsoleSink(session, {"truncate": "false"}, None).add_batch(0, table)  # doctest: +SKIP
    -------------------------------------------
    Batch: 0
    -------------------------------------------
    ...
    """

    def __init__(self, session: "Session", options: dict[str, Any] | None,
                 path: str | None = None, *, out: TextIO | None = None) -> None:
        opts = {str(k).lower(): str(v) for k, v in (options or {}).items()}
        raw_rows = opts.get("numrows", "20")
        try:
            self.num_rows = int(raw_rows)
        except ValueError:
            raise AnalysisError(f"For input string: \"{raw_rows}\" (option numRows)") from None
        raw_trunc = opts.get("truncate", "true").strip().lower()
        if raw_trunc not in ("true", "false"):
            raise AnalysisError(f"For input string: \"{opts['truncate']}\" (option truncate must "
                                "be 'true' or 'false')")
        self.truncate = raw_trunc == "true"
        self.session = session
        self._out = out
        self._last_batch: int | None = None

    def text(self, batch_id: int, data: pa.Table) -> str:
        """What ``add_batch`` prints for ``data`` as batch ``batch_id``."""

        conf = getattr(self.session, "sql_conf", None)
        tz = conf.time_zone if conf is not None else "UTC"
        types = [T.from_arrow(f.type) for f in data.schema]
        body = show_string(data.slice(0, max(self.num_rows, 0) + 1), types, max(self.num_rows, 0),
                           20 if self.truncate else 0, False, tz)
        if data.num_rows > max(self.num_rows, 0) and body.endswith("\n"):
            body = body[:-1]  # Spark's "only showing top n rows" line has no newline of its own
        return f"{_RULE}\nBatch: {batch_id}\n{_RULE}\n{body}"

    def add_batch(self, batch_id: int, data: pa.Table) -> None:
        if self._last_batch is not None and batch_id <= self._last_batch:
            return
        out = self._out if self._out is not None else sys.stdout
        # show() ends with a newline and println adds a blank line, as Spark prints
        print(self.text(batch_id, data), file=out, flush=True)
        self._last_batch = batch_id

    def __repr__(self) -> str:
        return f"ConsoleWriter[numRows={self.num_rows}, truncate={str(self.truncate).lower()}]"
