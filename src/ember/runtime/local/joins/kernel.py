"""Kernels shared by the five join operators: candidate pairs, join-type semantics, output.

Every join algorithm reduces one *stream* batch against one in-memory *build* batch to
:class:`Candidates`: per stream row, a run of build row positions (hash join: the rows of the
stream key in the hashed relation; sort-merge join: the rows of the equal key group of the
buffered side; nested loop and cartesian product: every build row).  :class:`JoinKernel` then
applies one join type's semantics (those of Spark's ``HashJoin`` and
``BroadcastNestedLoopJoinExec``) vectorized:

1. candidate pairs are expanded in *chunks* of at most ``max_pairs`` pairs, aligned to whole stream
   rows (a single stream row with more candidates than that is split over several chunks), so the
   pair matrix never exceeds a bounded number of rows;
2. the residual condition is evaluated on each chunk (``PairCondition`` of
   :mod:`ember.execution.kernels.conditions`), TRUE-only;
3. per join type: passing pairs are emitted, unmatched stream rows are NULL-padded (outer joins,
   merged into their stream position so the stream side's order is kept), stream rows are
   kept/dropped/flagged (semi, anti, existence), and build rows are marked in a matched bitset for
   the build-side outer joins and the build-left existence joins, finished by
   :meth:`JoinKernel.finish`.

Output batches hold the join's output columns in the join's order (left ++ right, whichever side
is built; semi/anti: left; existence: left ++ [exists]) and have at most ``batch_size`` rows.
Columns no parent reads (``JoinLayout.keep``, from :mod:`ember.runtime.local.pruning`: typically
the join keys a Project above drops) are not gathered: they hold a free all-NULL placeholder.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.errors import InternalError
from ember.execution.kernels.conditions import PairCondition
from ember.execution.kernels.batches import make_batch, schema_of
from ember.expressions.base import AttributeReference, Expression
from ember.plans.logical.join_type import BuildSide, ExistenceOutput, JoinType
from ember.runtime.local.pruning import placeholder

# Candidate pairs are enumerated in chunks of at most PAIR_CHUNK_FACTOR * batch_size pairs.
PAIR_CHUNK_FACTOR = 16
MIN_PAIR_CHUNK = 1024
MAX_PAIR_CHUNK = 1 << 21


def pair_chunk_size(batch_size: int) -> int:
    """The bound on candidate pairs materialized at once for a given output batch size."""
    return min(MAX_PAIR_CHUNK, max(MIN_PAIR_CHUNK, PAIR_CHUNK_FACTOR * max(1, batch_size)))


# ---------------------------------------------------------------------------------------------
# Candidate pairs


@dataclass(slots=True)
class Candidates:
    """Per stream row ``i``: build rows ``order[lo[i] : lo[i] + counts[i]]`` (``order`` None =
    the identity; ``lo`` None = every run starts at 0)."""

    counts: np.ndarray
    lo: np.ndarray | None = None
    order: np.ndarray | None = None
    #: at most one build row per stream row: ``match[i]`` (-1 = none); ``counts``/``lo`` agree.
    match: np.ndarray | None = None

    @classmethod
    def all_pairs(cls, n_stream: int, n_build: int) -> "Candidates":
        """Every build row for every stream row (nested loop, cartesian product)."""
        return cls(np.full(n_stream, n_build, dtype=np.int64))

    @classmethod
    def direct(cls, match: np.ndarray) -> "Candidates":
        """At most one build row per stream row: ``match[i]`` (-1 = none)."""
        match = np.asarray(match, dtype=np.int64)
        hit = match >= 0
        return cls(hit.view(np.int8).astype(np.int64), np.maximum(match, 0), None, match)

    @property
    def num_stream(self) -> int:
        return len(self.counts)

    def has_candidate(self) -> np.ndarray:
        return self.counts > 0

    def chunks(self, max_pairs: int) -> Iterator[tuple[np.ndarray, np.ndarray, int]]:
        """``(stream_idx, build_idx, done)`` chunks, stream-major, build rows in run order.
        After a chunk, the candidates of stream rows ``< done`` have all been produced."""
        counts = self.counts
        n = len(counts)
        if n == 0:
            return
        max_pairs = max(1, max_pairs)
        ends = np.cumsum(counts)
        starts = ends - counts
        s0 = 0
        while s0 < n:
            p0 = int(starts[s0])
            s1 = int(np.searchsorted(ends, p0 + max_pairs, side="right"))
            if s1 > s0:
                cnt = counts[s0:s1]
                m = int(ends[s1 - 1]) - p0
                if m == 0:
                    yield _EMPTY, _EMPTY, s1
                else:
                    si = np.repeat(np.arange(s0, s1, dtype=np.int64), cnt)
                    # position of pair j: j - (start of its row - p0) + lo of its row, with the
                    # per-row part repeated (no per-pair gathers of starts / lo)
                    delta = np.int64(p0) - starts[s0:s1]
                    if self.lo is not None:
                        delta = delta + self.lo[s0:s1]
                    pos = np.arange(m, dtype=np.int64)
                    pos += np.repeat(delta, cnt)
                    yield si, (pos if self.order is None else self.order[pos]), s1
                s0 = s1
                continue
            c = int(counts[s0])  # one stream row with more than max_pairs candidates
            for q in range(0, c, max_pairs):
                off = np.arange(q, min(c, q + max_pairs), dtype=np.int64)
                si = np.full(len(off), s0, dtype=np.int64)
                yield si, self._build_rows(si, off), (s0 + 1 if q + max_pairs >= c else s0)
            s0 += 1

    def _build_rows(self, si: np.ndarray, off: np.ndarray) -> np.ndarray:
        pos = off if self.lo is None else self.lo[si] + off
        return pos if self.order is None else self.order[pos]


_EMPTY = np.zeros(0, dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# Output assembly


def take_nullable(col: pa.Array, idx: np.ndarray) -> pa.Array:
    """``col[idx]`` where index -1 gives NULL.

    Arrow's ``take`` with NULL indices is several times slower than a plain gather, so the gather
    uses the clipped indices and the NULLs are applied afterwards: by swapping in a validity
    bitmap for flat types, with ``if_else`` for nested ones."""
    neg = idx < 0
    if not neg.any():
        return col.take(pa.array(idx, type=pa.int64()))
    if neg.all():
        return pa.nulls(len(idx), type=col.type)
    taken = col.take(pa.array(np.maximum(idx, 0), type=pa.int64()))
    valid = ~neg
    t = taken.type
    if (t.num_fields == 0 and not pa.types.is_null(t) and not pa.types.is_dictionary(t)
            and taken.offset == 0):
        if taken.null_count:
            valid &= np.asarray(taken.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
        try:
            return pa.Array.from_buffers(t, len(taken), [bitmap] + taken.buffers()[1:])
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
            pass
    return pc.if_else(pa.array(valid), taken, pa.scalar(None, type=t))


@dataclass(slots=True)
class JoinLayout:
    """Static facts of one physical join: types, sides, schema, condition."""

    join_type: JoinType
    build_left: bool
    left_attrs: tuple[AttributeReference, ...]
    right_attrs: tuple[AttributeReference, ...]
    out_schema: pa.Schema
    condition: PairCondition | None
    batch_size: int
    #: per output column: whether a parent reads it (None: all are); unread ones are placeholders
    keep: tuple[bool, ...] | None = None

    @classmethod
    def of(
        cls,
        join_type: JoinType,
        build_left: bool,
        left_attrs: Sequence[AttributeReference],
        right_attrs: Sequence[AttributeReference],
        output: Sequence[AttributeReference],
        condition: Expression | None,
        batch_size: int,
        keep: Sequence[bool] | None = None,
    ) -> "JoinLayout":
        cond = None if condition is None else PairCondition(condition, left_attrs, right_attrs)
        schema = schema_of(output)
        if keep is not None and (len(keep) != len(schema) or all(keep)):
            keep = None
        return cls(join_type, build_left, tuple(left_attrs), tuple(right_attrs), schema,
                   cond, max(1, batch_size), None if keep is None else tuple(keep))

    @property
    def left_schema(self) -> pa.Schema:
        return schema_of(self.left_attrs)

    @property
    def right_schema(self) -> pa.Schema:
        return schema_of(self.right_attrs)

    def emit(
        self,
        left: pa.RecordBatch | None,
        right: pa.RecordBatch | None,
        li: np.ndarray,
        ri: np.ndarray | None,
        exists: np.ndarray | None = None,
        *,
        left_identity: bool = False,
        right_identity: bool = False,
    ) -> Iterator[pa.RecordBatch]:
        """Output rows ``left[li] ++ right[ri]`` (index -1 = NULL padding; ``ri`` None: no right
        columns, semi/anti; ``exists``: the existence flag column), in batches.
        ``left_identity`` / ``right_identity``: that side's indices are ``0 .. n-1`` (its rows
        are sliced, not gathered).  Columns not in ``keep`` are placeholders."""
        size = self.batch_size
        n = len(li)
        schema = self.out_schema
        keep = self.keep
        nl = len(self.left_attrs)
        lcols = None if left is None else left.columns
        rcols = None if right is None else right.columns
        for s in range(0, n, size):
            e = min(n, s + size)
            m = e - s
            cols = _side(lcols, li, s, e, left_identity, schema, keep, 0, nl)
            if ri is not None:
                cols += _side(rcols, ri, s, e, right_identity, schema, keep, nl,
                              len(self.right_attrs))
            if exists is not None:
                j = len(cols)
                cols.append(pa.array(exists[s:e], type=pa.bool_())
                            if keep is None or keep[j] else placeholder(pa.bool_(), m))
            yield make_batch(cols, schema, m)


def _side(cols: list[pa.Array] | None, idx: np.ndarray, s: int, e: int, identity: bool,
          schema: pa.Schema, keep: tuple[bool, ...] | None, base: int, width: int
          ) -> list[pa.Array]:
    """Output columns ``base .. base + width`` for rows ``s:e`` of one side: its columns
    ``cols`` at ``idx[s:e]`` (``cols`` None: the side is NULL padding), placeholders where
    ``keep`` says no parent reads the column."""
    m = e - s
    out: list[pa.Array] = []
    sel = None
    for j in range(width):
        if keep is not None and not keep[base + j]:
            out.append(placeholder(schema.field(base + j).type, m))
        elif cols is None:
            out.append(pa.nulls(m, type=schema.field(base + j).type))
        elif identity:
            out.append(cols[j].slice(s, m))
        else:
            if sel is None:
                sel = idx[s:e]
            out.append(take_nullable(cols[j], sel))
    return out


# ---------------------------------------------------------------------------------------------
# Join-type semantics


class JoinKernel:
    """Applies one join type to (stream batch, build batch, candidates) triples.

    ``track_build`` keeps a matched bitset over the build rows (``build_rows`` of them) for the
    build-preserving joins; the caller runs :meth:`finish` once every stream row has been seen.
    One kernel serves one build batch (one partition, one sort-merge window, one grace partition).
    """

    def __init__(self, layout: JoinLayout, build: pa.RecordBatch, max_pairs: int | None = None,
                 *, track_build: bool | None = None) -> None:
        jt = layout.join_type
        self.layout = layout
        self.build = build
        self.max_pairs = max_pairs or pair_chunk_size(layout.batch_size)
        bl = layout.build_left
        self.stream_is_left = not bl
        self.emits_pairs = jt.outputs_right
        build_side = BuildSide.LEFT if bl else BuildSide.RIGHT
        # The stream side is preserved: unmatched stream rows come out NULL-padded.
        self.pad_stream = jt.pads_unmatched(build_side.other)
        # The build side is preserved, or the output is a function of the build rows.
        self.build_outer = jt.pads_unmatched(build_side)
        self.build_existence = jt.is_left_existence and bl
        self.stream_existence = jt.is_left_existence and not bl
        needs_bits = jt.tracks_build_matches(build_side)
        if track_build is not None:
            needs_bits = needs_bits or track_build
        self.build_matched = np.zeros(build.num_rows, dtype=bool) if needs_bits else None

    # -- per stream batch ------------------------------------------------------------------

    def _mask(self, stream: pa.RecordBatch, si: np.ndarray, bi: np.ndarray) -> np.ndarray | None:
        cond = self.layout.condition
        if cond is None or not len(si):
            return None
        if self.stream_is_left:
            return cond.mask(stream, self.build, si, bi)
        return cond.mask(self.build, stream, bi, si)

    def _out(self, stream: pa.RecordBatch, si: np.ndarray, bi: np.ndarray,
             stream_identity: bool = False) -> Iterator[pa.RecordBatch]:
        if self.stream_is_left:
            return self.layout.emit(stream, self.build, si, bi, left_identity=stream_identity)
        return self.layout.emit(self.build, stream, bi, si, right_identity=stream_identity)

    def process(self, stream: pa.RecordBatch, cand: Candidates) -> Iterator[pa.RecordBatch]:
        """Output rows for ``stream`` (and bookkeeping of the build rows it matches)."""
        n = stream.num_rows
        if n == 0:
            return
        cond = self.layout.condition
        if self.stream_existence and cond is None:
            # Existence is all that matters: no pair needs to be materialized.
            yield from self._stream_existence(stream, np.arange(n), cand.has_candidate())
            return
        if self.build_existence and cond is None and self.build_matched is not None:
            self._mark_build(cand)
            return
        if cand.match is not None:
            yield from self._process_direct(stream, cand.match)
            return
        stream_matched = np.zeros(n, dtype=bool)
        prev = 0
        for si, bi, done in cand.chunks(self.max_pairs):
            m = self._mask(stream, si, bi)
            if m is not None:
                si, bi = si[m], bi[m]
            stream_matched[si] = True
            if self.build_matched is not None and len(bi):
                self.build_matched[bi] = True
            if self.emits_pairs:
                if self.pad_stream and done > prev:
                    rows = np.arange(prev, done, dtype=np.int64)
                    un = rows[~stream_matched[prev:done]]
                    if len(un):
                        si = np.concatenate([si, un])
                        bi = np.concatenate([bi, np.full(len(un), -1, dtype=np.int64)])
                        order = np.argsort(si, kind="stable")
                        si, bi = si[order], bi[order]
                if len(si):
                    yield from self._out(stream, si, bi)
            elif self.stream_existence and done > prev:
                rows = np.arange(prev, done, dtype=np.int64)
                yield from self._stream_existence(stream, rows, stream_matched[prev:done])
            prev = max(prev, done)

    def process_pairs(self, stream: pa.RecordBatch,
                      chunks: Iterable[tuple[np.ndarray, np.ndarray]],
                      residual: PairCondition | None) -> Iterator[pa.RecordBatch]:
        """As :meth:`process`, for candidate ``(stream rows, build rows)`` chunks in any order
        (:mod:`.range_join`) that satisfy the join condition but for ``residual`` (left ++
        right; None: they all pass): the passing pairs as they come, then the unmatched stream
        rows NULL-padded (or the semi / anti / existence rows of the stream side)."""
        n = stream.num_rows
        if n == 0:
            return
        stream_matched = np.zeros(n, dtype=bool)
        for si, bi in chunks:
            if self.stream_existence and self.build_matched is None:
                keep = ~stream_matched[si]  # a decided stream row needs no more pairs
                si, bi = si[keep], bi[keep]
            if residual is not None and len(si):
                m = (residual.mask(stream, self.build, si, bi) if self.stream_is_left
                     else residual.mask(self.build, stream, bi, si))
                si, bi = si[m], bi[m]
            stream_matched[si] = True
            if self.build_matched is not None and len(bi):
                self.build_matched[bi] = True
            if self.emits_pairs and len(si):
                yield from self._out(stream, si, bi)
        rows = np.arange(n, dtype=np.int64)
        if self.emits_pairs and self.pad_stream:
            un = rows[~stream_matched]
            if len(un):
                yield from self._out(stream, un, np.full(len(un), -1, dtype=np.int64))
        elif self.stream_existence:
            yield from self._stream_existence(stream, rows, stream_matched)

    def process_exists(self, stream: pa.RecordBatch, matched: np.ndarray
                       ) -> Iterator[pa.RecordBatch]:
        """Output rows for ``stream`` of a stream-side semi / anti / existence join whose
        per-row answer ``matched`` (some build row satisfies key and condition) was decided
        without candidate pairs (:mod:`.residual_bounds`)."""
        if not self.stream_existence:
            raise InternalError("process_exists needs a stream-side semi / anti / existence join")
        n = stream.num_rows
        if n:
            yield from self._stream_existence(stream, np.arange(n, dtype=np.int64), matched)

    def _process_direct(self, stream: pa.RecordBatch, match: np.ndarray
                        ) -> Iterator[pa.RecordBatch]:
        """Unique build keys: at most one pair per stream row, already in stream order -- no
        pair expansion, no re-sorting of NULL-padded rows."""
        n = stream.num_rows
        si = np.flatnonzero(match >= 0)
        bi = match[si]
        m = self._mask(stream, si, bi)
        if m is not None:
            si, bi = si[m], bi[m]
        if self.build_matched is not None and len(bi):
            self.build_matched[bi] = True
        if self.emits_pairs:
            if self.pad_stream:
                full = np.full(n, -1, dtype=np.int64)
                full[si] = bi
                yield from self._out(stream, np.arange(n, dtype=np.int64), full, True)
            elif len(si) == n:
                yield from self._out(stream, si, bi, True)
            elif len(si):
                yield from self._out(stream, si, bi)
        elif self.stream_existence:
            matched = np.zeros(n, dtype=bool)
            matched[si] = True
            yield from self._stream_existence(stream, np.arange(n, dtype=np.int64), matched)

    def _mark_build(self, cand: Candidates) -> None:
        """Without a condition: every candidate build row is matched."""
        assert self.build_matched is not None
        if cand.match is not None:
            self.build_matched[cand.match[cand.match >= 0]] = True
            return
        if cand.order is None and cand.lo is None:
            if int(cand.counts.max(initial=0)) > 0:
                self.build_matched[: int(cand.counts.max())] = True
            return
        for _si, bi, _done in cand.chunks(self.max_pairs):
            self.build_matched[bi] = True

    def _stream_existence(
        self, stream: pa.RecordBatch, rows: np.ndarray, matched: np.ndarray
    ) -> Iterator[pa.RecordBatch]:
        kept = self.layout.join_type.existence_output
        n = stream.num_rows
        # ``rows`` ascend within 0 .. n-1: as many as the batch holds means every row, in order.
        if kept is ExistenceOutput.MATCHED:
            sel = rows[matched]
            yield from self.layout.emit(stream, None, sel, None, left_identity=len(sel) == n)
        elif kept is ExistenceOutput.UNMATCHED:
            sel = rows[~matched]
            yield from self.layout.emit(stream, None, sel, None, left_identity=len(sel) == n)
        else:
            yield from self.layout.emit(stream, None, rows, None, exists=matched,
                                        left_identity=len(rows) == n)

    # -- after the last stream row -------------------------------------------------------------

    def finish(self, start: int = 0, stop: int | None = None) -> Iterator[pa.RecordBatch]:
        """Rows decided by the build-side bitset: unmatched build rows NULL-padded (build-side
        outer, full outer), or the build (left) rows of a build-left semi/anti/existence join;
        only the build rows ``[start, stop)`` when given."""
        bits = self.build_matched
        if bits is None:
            return
        stop = len(bits) if stop is None else stop
        rows = np.arange(start, stop, dtype=np.int64)
        bits = bits[start:stop]
        if self.build_outer:
            un = rows[~bits]
            none = np.full(len(un), -1, dtype=np.int64)
            if self.layout.build_left:
                yield from self.layout.emit(self.build, None, un, none)
            else:
                yield from self.layout.emit(None, self.build, none, un)
        elif self.build_existence:
            kept = self.layout.join_type.existence_output
            if kept is ExistenceOutput.MATCHED:
                yield from self.layout.emit(self.build, None, rows[bits], None)
            elif kept is ExistenceOutput.UNMATCHED:
                yield from self.layout.emit(self.build, None, rows[~bits], None)
            else:
                yield from self.layout.emit(self.build, None, rows, None, exists=bits)
