"""The checkpoint's write-ahead logs (Spark's ``HDFSMetadataLog``, ``OffsetSeqLog``,
``CommitLog`` and ``StreamMetadata``), in Spark's layout so each engine can read the other's::

    <checkpoint>/metadata            {"id":"<query id>"}  (the id survives restarts)
    <checkpoint>/offsets/<batchId>   v1
                                     {"batchWatermarkMs":0,"batchTimestampMs":..,"conf":{..}}
                                     <offset of source 0 as JSON, or "-" when it has none>
                                     ...one line per source
    <checkpoint>/commits/<batchId>   v1
                                     {"nextBatchWatermarkMs":0}

Write-ahead protocol (Spark's ``MicroBatchExecution``, and the loop in :mod:`.execution`): a
batch's offsets are logged *before* it runs; its commit entry is written only after the sink has
committed its output.  Entries older than the last ``spark.sql.streaming.minBatchesToRetain``
(default 100) batches are purged.  A restart whose latest offsets entry has no commit re-runs that batch with
the same offsets.  Entries are written to a temporary file and hard-linked to their final name,
which fails when the entry exists: a batch id is logged at most once (Spark's
``concurrentStreamLogUpdate``).  JSON is compact (no spaces), as Spark writes it.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field
from typing import Any

from ember.errors import ExecutionError

__all__ = ["MetadataLog", "OffsetSeq", "OffsetSeqMetadata", "OffsetSeqLog", "CommitLog",
           "StreamMetadata", "dumps"]

VERSION = 1


def dumps(value: Any) -> str:
    """Compact JSON, as Spark's json4s writes it."""
    return json.dumps(value, separators=(",", ":"))


class MetadataLog:
    """Files named by batch id under one directory, written once each (``HDFSMetadataLog``)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _file(self, batch_id: int) -> str:
        return os.path.join(self.path, str(batch_id))

    def batch_ids(self) -> list[int]:
        if not os.path.isdir(self.path):
            return []
        return sorted(int(n) for n in os.listdir(self.path) if n.isdigit())

    def latest_id(self) -> int | None:
        ids = self.batch_ids()
        return ids[-1] if ids else None

    def read_text(self, batch_id: int) -> str | None:
        try:
            with open(self._file(batch_id), encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def add_text(self, batch_id: int, text: str) -> bool:
        """Write the entry of ``batch_id``; False when it already exists (nothing written)."""
        os.makedirs(self.path, exist_ok=True)
        final = self._file(batch_id)
        if os.path.exists(final):
            return False
        tmp = os.path.join(self.path, f".{batch_id}.{uuid.uuid4().hex}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, final)
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)
        return True

    def purge(self, threshold: int) -> None:
        """Delete the entries before batch ``threshold`` (exclusive, as Spark's ``purge``)."""
        for bid in self.batch_ids():
            if bid < threshold:
                try:
                    os.remove(self._file(bid))
                except FileNotFoundError:
                    pass

    @staticmethod
    def parse_version(text: str, where: str) -> list[str]:
        lines = text.split("\n")
        head = lines[0].strip()
        if not head.startswith("v") or not head[1:].isdigit():
            raise ExecutionError(f"Log file was malformed: failed to read correct log version "
                                 f"from {head!r} ({where}).")
        if int(head[1:]) > VERSION:
            raise ExecutionError(
                f"The log file was produced by a newer version of Spark and cannot be read by "
                f"this version. Please upgrade. (found v{head[1:]}, supported v{VERSION}; "
                f"{where})", error_class="INVALID_LOG_VERSION.EXACT_MATCH_VERSION")
        return lines[1:]


@dataclass(frozen=True)
class OffsetSeqMetadata:
    """A batch's metadata: its watermark, its timestamp and the settings a checkpoint keeps."""

    batch_watermark_ms: int = 0
    batch_timestamp_ms: int = 0
    conf: dict[str, str] = field(default_factory=dict)

    def json(self) -> str:
        return dumps({"batchWatermarkMs": self.batch_watermark_ms,
                      "batchTimestampMs": self.batch_timestamp_ms, "conf": self.conf})

    @staticmethod
    def from_json(text: str) -> "OffsetSeqMetadata":
        d = json.loads(text)
        return OffsetSeqMetadata(int(d.get("batchWatermarkMs", 0)),
                                 int(d.get("batchTimestampMs", 0)),
                                 {str(k): str(v) for k, v in (d.get("conf") or {}).items()})


@dataclass(frozen=True)
class OffsetSeq:
    """One offsets entry: the end offset of every source (None: the source has none yet)."""

    offsets: tuple[Any, ...]
    metadata: OffsetSeqMetadata

    def serialize(self) -> str:
        lines = [f"v{VERSION}", self.metadata.json()]
        lines += ["-" if o is None else dumps(o) for o in self.offsets]
        return "\n".join(lines)


class OffsetSeqLog(MetadataLog):
    """``<checkpoint>/offsets``."""

    def add(self, batch_id: int, entry: OffsetSeq) -> bool:
        return self.add_text(batch_id, entry.serialize())

    def get(self, batch_id: int) -> OffsetSeq | None:
        text = self.read_text(batch_id)
        if text is None:
            return None
        lines = self.parse_version(text, self._file(batch_id))
        if not lines:
            raise ExecutionError(f"Log file was malformed: no metadata ({self._file(batch_id)})")
        meta = OffsetSeqMetadata.from_json(lines[0])
        offsets = tuple(None if ln.strip() == "-" else json.loads(ln) for ln in lines[1:]
                        if ln.strip())
        return OffsetSeq(offsets, meta)

    def latest(self) -> tuple[int, OffsetSeq] | None:
        bid = self.latest_id()
        if bid is None:
            return None
        entry = self.get(bid)
        return None if entry is None else (bid, entry)


class CommitLog(MetadataLog):
    """``<checkpoint>/commits``: ``{"nextBatchWatermarkMs": ..}`` per finished batch."""

    def add(self, batch_id: int, next_batch_watermark_ms: int) -> bool:
        return self.add_text(batch_id, f"v{VERSION}\n" + dumps(
            {"nextBatchWatermarkMs": int(next_batch_watermark_ms)}))

    def get(self, batch_id: int) -> int | None:
        """The entry's ``nextBatchWatermarkMs`` (None when the batch has no commit)."""
        text = self.read_text(batch_id)
        if text is None:
            return None
        lines = self.parse_version(text, self._file(batch_id))
        body = next((ln for ln in lines if ln.strip()), "{}")
        return int(json.loads(body).get("nextBatchWatermarkMs", 0))

    def latest(self) -> tuple[int, int] | None:
        bid = self.latest_id()
        if bid is None:
            return None
        wm = self.get(bid)
        return None if wm is None else (bid, wm)


class StreamMetadata:
    """``<checkpoint>/metadata``: the query id, created on the first run."""

    @staticmethod
    def read_or_create(checkpoint: str) -> str:
        path = os.path.join(checkpoint, "metadata")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                first = f.readline().strip()
            return str(json.loads(first)["id"])
        os.makedirs(checkpoint, exist_ok=True)
        qid = str(uuid.uuid4())
        tmp = path + f".{uuid.uuid4().hex}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(dumps({"id": qid}))
        try:
            os.link(tmp, path)
        except FileExistsError:  # another start got there first: use its id
            os.unlink(tmp)
            return StreamMetadata.read_or_create(checkpoint)
        os.unlink(tmp)
        return qid
