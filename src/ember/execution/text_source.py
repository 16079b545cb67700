"""The text data source (Spark's ``TextFileFormat``): one string column ``value``, a row per
line of the files, or a row per file with ``wholetext`` (none for an empty file).

Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` (Hadoop's ``LineRecordReader``); a final line
without a terminator is a row, a terminator at the end of the file adds none. ``lineSep``
replaces the terminators with one given separator. Bytes that are not UTF-8 decode to U+FFFD,
as the JVM's decoder does.
"""

from __future__ import annotations

import re

import pyarrow as pa

from ember import types as T
from ember.errors import AnalysisError

__all__ = ["TEXT_SCHEMA", "check_text_schema", "read_text", "splittable"]

#: the one column of a text source (Spark's ``TextFileFormat`` schema)
TEXT_SCHEMA = [("value", T.StringType())]

_LINE_ENDS = re.compile("\r\n|\r|\n")


def _flag(opts: dict[str, str], key: str) -> bool:
    return opts.get(key.lower(), "false").strip().lower() == "true"


def splittable(opts: dict[str, str]) -> bool:
    """Whether files can be cut into byte ranges by ``\\n`` (not with ``wholetext`` or a
    custom ``lineSep``)."""
    return not _flag(opts, "wholetext") and "linesep" not in opts


def check_text_schema(cols: list[tuple[str, T.DataType]]) -> None:
    """A user schema of a text source: string columns only (Spark's
    ``TextFileFormat.supportDataType``)."""
    for name, dt in cols:
        if not isinstance(dt, T.StringType):
            raise AnalysisError(
                f"The Text datasource doesn't support the column `{name}` of the type "
                f"\"{dt.sql()}\".",
                error_class="UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE",
                parameters={"columnName": f"`{name}`", "columnType": f"\"{dt.sql()}\"",
                            "format": "Text"})


def read_text(path: str, opts: dict[str, str], data: bytes | None = None) -> pa.Array:
    """The ``value`` strings of ``path`` (or of ``data``, lines already cut from it)."""
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    text = data.decode("utf-8", errors="replace")
    if _flag(opts, "wholetext"):
        return pa.array([text] if text else [], pa.string())  # an empty file has no row
    sep = opts.get("linesep")
    parts = text.split(sep) if sep else _LINE_ENDS.split(text)
    if parts and parts[-1] == "":
        parts.pop()  # the terminator of the last line
    return pa.array(parts, pa.string())
