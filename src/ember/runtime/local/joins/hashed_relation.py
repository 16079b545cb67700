"""The build side of the hash joins (Spark's ``HashedRelation``, spark-behavior.md 7.1).

A :class:`HashedRelation` holds the build rows as one record batch and a multimap from key to
build row positions, in insertion order.  Keys are not hashed row by row: every key column gets a
*dictionary* fixed by the build side, and a row's key is the mixed-radix combination of its column
codes (:mod:`ember.execution.kernels.keys` does the same for two sides known together; here the
probe side arrives later, batch by batch):

- floating point keys are canonicalized first (every NaN equal, ``-0.0 == 0.0``,
  ``canonicalize_floats``);
- integer columns spanning a small range are coded ``value - min`` (probe: a range check);
- other primitive columns are dictionary-encoded; the probe side is looked up with
  ``pyarrow.compute.index_in`` against that dictionary;
- structs and arrays keep one representative value per build code; a probe batch is encoded
  jointly with those representatives (``encode_arrays``), then mapped back.

The combined codes are densified (sorted distinct codes) whenever the radix product would
overflow, and the same steps are replayed on the probe codes.

Index.  One code-indexed table (int32 when row numbers fit) with a trailing -1 slot, so code -1
(NULL / absent) gathers "no row" without a mask.  Every valid build row is scattered into its
code's slot; reading the slots back tells whether every key is unique (a key with two rows reads
back the other row for one of them).  Unique keys (Spark's ``keyIsUnique``) keep the table as a
direct code -> row map: a probe is one gather.  ``ignores_duplicated_key`` keeps the first row of
each key (``numpy.minimum.at`` over the scattered table) and probes the same way.  Otherwise
build rows are stably sorted by code, so the rows of one key are a contiguous run in insertion
order; the table maps a code to its key's run number and two arrays as small as the number of
keys give each run's start and length (plus a trailing empty run): a probe is three gathers of
``(start, count)`` per stream row (:class:`~ember.runtime.local.joins.kernel.Candidates`), with
no per-code arrays the size of a sparse integer range.

A NULL in any key column means the row can never match (``=`` semantics; null-safe ``<=>`` keys
arrive as Spark's ``coalesce(k, default)`` + ``isnull(k)`` pairs, which are never NULL).  NULL-key
build rows are dropped unless ``allows_null_key`` (shuffled hash joins that must emit unmatched
build rows keep them).  ``null_aware`` builds (NOT IN) become :class:`EmptyHashedRelation` or
:class:`HashedRelationWithAllNullKeys` as in Spark.  ``ignores_duplicated_key`` keeps only the
first row of each key.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.execution.kernels.batches import concat, make_batch, plain_array
from ember.execution.kernels.keys import (
    _column_codes,
    _MAX_CARD,
    canonicalize_floats,
    encode_arrays,
)
from ember.errors import InternalError
from ember.expressions.base import Expression
from ember.expressions.common import to_array
from ember.runtime.local.hashing import fixed_width_words, hash_columns
from ember.runtime.local.joins.kernel import Candidates

__all__ = [
    "HashedRelation",
    "EmptyHashedRelation",
    "HashedRelationWithAllNullKeys",
    "eval_keys",
    "to_batch",
]


def to_batch(data: pa.Table | pa.RecordBatch | Iterable[pa.RecordBatch],
             schema: pa.Schema | None = None) -> pa.RecordBatch:
    """All rows of ``data`` as one record batch."""
    if isinstance(data, pa.RecordBatch):
        return data
    if isinstance(data, pa.Table):
        if data.num_columns == 0:
            return make_batch((), data.schema, data.num_rows)
        return concat(data.to_batches(), data.schema)
    batches = list(data)
    if schema is None:
        if not batches:
            raise ValueError("to_batch: no batches and no schema")
        schema = batches[0].schema
    return concat(batches, schema)


def eval_keys(exprs: Sequence[Expression], batch: pa.RecordBatch) -> list[pa.Array]:
    """Key expressions (bound to ``batch``'s columns) evaluated over ``batch``."""
    return [to_array(e.eval(batch), batch.num_rows) for e in exprs]


def _fixed_width_bits(arr: pa.Array) -> np.ndarray | None:
    """int64 bit patterns of fixed-width values (equal values <=> equal bits, after float
    canonicalization; NULL slots hold junk), None for other types (and uint64)."""
    if pa.types.is_uint64(arr.type):
        return None
    words = fixed_width_words(arr)
    return None if words is None else words.view(np.int64)


def _valid_mask(arr: pa.Array) -> np.ndarray:
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


_PRIMITIVE_LOOKUP = (pa.types.is_integer, pa.types.is_floating, pa.types.is_string,
                     pa.types.is_large_string, pa.types.is_binary, pa.types.is_large_binary,
                     pa.types.is_decimal, pa.types.is_date, pa.types.is_timestamp,
                     pa.types.is_time, pa.types.is_boolean, pa.types.is_duration,
                     pa.types.is_fixed_size_binary)


#: Integer build keys spanning fewer than ``RANGE_FACTOR`` x rows values (and at most
#: ``_MAX_RANGE``) are coded by value: the key table is a direct-address array (4 bytes a slot),
#: probed by one gather -- cheaper than a binary search over sorted keys once there are many
#: probes, the common case.
RANGE_FACTOR = 16
_MAX_RANGE = 1 << 24


class _ColumnDictionary:
    """Codes of one key column, fixed by the build side; ``probe`` maps new values onto them
    (-1 for NULL or a value absent from the build side)."""

    def __init__(self, build: pa.Array) -> None:
        build = plain_array(build)
        self.type = build.type
        self.kind = "joint"
        self.lo = 0
        self.card = 0
        n = len(build)
        t = build.type
        if pa.types.is_null(t):
            self.kind = "null"
            self.codes = np.full(n, -1, dtype=np.int64)
            return
        if pa.types.is_integer(t) and build.null_count < n:
            mm = pc.min_max(build)
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
            if hi - lo < max(RANGE_FACTOR * n, 1 << 20) and hi - lo < _MAX_RANGE:
                v = (build if build.null_count == 0 else pc.fill_null(build, lo))
                codes = np.subtract(v.to_numpy(zero_copy_only=False), lo, dtype=np.int64)
                if build.null_count:
                    codes[~_valid_mask(build)] = -1
                self.kind, self.lo, self.hi, self.card, self.codes = "range", lo, hi, hi - lo + 1, codes
                return
        bits = _fixed_width_bits(build)
        if bits is not None:
            # Sorted distinct bit patterns (floats canonicalized): probing is a binary search,
            # no hash table is rebuilt per probe batch.
            valid = _valid_mask(build)
            self.uniq = _sorted_unique(bits[valid])
            codes = np.searchsorted(self.uniq, bits).astype(np.int64)
            self.kind, self.card = "bits", len(self.uniq)
            self.codes = np.where(valid, codes, -1)
            return
        if any(f(t) for f in _PRIMITIVE_LOOKUP):
            b = canonicalize_floats(build)
            enc = pc.dictionary_encode(b, null_encoding="mask")
            idx = enc.indices
            if idx.null_count:
                idx = pc.fill_null(idx, -1)
            self.dictionary = enc.dictionary
            self.codes = idx.to_numpy(zero_copy_only=False).astype(np.int64)
            self.card = len(enc.dictionary)
            self.kind = "lookup"
            if self.card:
                # Variable-width values: a 64-bit hash per distinct value, sorted; a probe is a
                # binary search plus one equality check (index_in would rebuild its hash table
                # of the whole dictionary for every probe batch).
                h = hash_columns([self.dictionary])
                order = np.argsort(h, kind="stable")
                hs = h[order]
                if len(hs) < 2 or bool((hs[1:] != hs[:-1]).all()):  # no collision
                    self.kind = "hashed"
                    self.hash_sorted = hs
                    self.hash_order = order.astype(np.int64)
            return
        codes, card = _column_codes(build)
        # One representative build value per code, for the joint encoding of probe batches.
        valid = np.flatnonzero(codes >= 0)
        uniq, first = np.unique(codes[valid], return_index=True)
        self.representatives = build.take(pa.array(valid[first], type=pa.int64()))
        remap = np.full(card + 1, -1, dtype=np.int64)
        remap[uniq] = np.arange(len(uniq), dtype=np.int64)
        self.codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
        self.card = len(uniq)

    def probe(self, arr: pa.Array) -> np.ndarray:
        arr = plain_array(arr)
        n = len(arr)
        if self.kind == "null" or self.card == 0 or pa.types.is_null(arr.type):
            return np.full(n, -1, dtype=np.int64)
        if arr.type != self.type:
            try:
                arr = arr.cast(self.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
        if self.kind == "range":
            nulls = arr.null_count
            v = (pc.fill_null(arr, self.lo) if nulls else arr).to_numpy(zero_copy_only=False)
            if v.dtype == np.uint64:
                v = np.where(v > np.uint64(self.hi), np.uint64(self.hi) + np.uint64(1), v)
            c = np.subtract(v, self.lo, dtype=np.int64)  # widening and offset in one pass
            # one unsigned comparison checks both bounds (negative offsets wrap around)
            bad = c.view(np.uint64) >= np.uint64(self.card)
            if nulls:
                bad |= ~_valid_mask(arr)
            np.putmask(c, bad, -1)
            return c
        if self.kind == "bits":
            bits = _fixed_width_bits(arr)
            if bits is not None:
                valid = _valid_mask(arr)
                pos = np.minimum(np.searchsorted(self.uniq, bits), len(self.uniq) - 1)
                found = valid & (self.uniq[pos] == bits)
                return np.where(found, pos, -1).astype(np.int64)
        if self.kind == "hashed":
            h = hash_columns([arr])
            hs = self.hash_sorted
            pos = np.minimum(np.searchsorted(hs, h), len(hs) - 1)
            cand = self.hash_order[pos]
            same = pc.equal(arr, self.dictionary.take(pa.array(cand, type=pa.int64())))
            found = np.asarray(pc.fill_null(same, False).to_numpy(zero_copy_only=False), bool)
            found &= hs[pos] == h
            return np.where(found, cand, -1).astype(np.int64)
        if self.kind in ("lookup", "bits", "hashed"):
            if self.kind != "lookup":
                raise InternalError(f"HashedRelation: cannot probe {self.type} keys with {arr.type}")
            if pa.types.is_floating(arr.type):
                arr = canonicalize_floats(arr)
            idx = pc.index_in(arr, value_set=self.dictionary, skip_nulls=True)
            if idx.null_count:
                idx = pc.fill_null(idx, -1)
            return idx.to_numpy(zero_copy_only=False).astype(np.int64)
        reps = self.representatives
        d = len(reps)
        joint, card = encode_arrays([pa.concat_arrays([reps, arr.cast(reps.type)])],
                                    nulls_equal=False)
        back = np.full(card + 1, -1, dtype=np.int64)
        back[joint[:d]] = np.arange(d, dtype=np.int64)
        pcodes = joint[d:]
        return np.where(pcodes >= 0, back[np.maximum(pcodes, 0)], -1)


class _KeyEncoder:
    """Multi-column build codes plus the replayable steps that map probe keys onto them."""

    def __init__(self, build_keys: Sequence[pa.Array]) -> None:
        self.columns = [_ColumnDictionary(k) for k in build_keys]
        self.steps: list[tuple[str, object]] = []
        combined: np.ndarray | None = None
        card = 1
        for col in self.columns:
            c, n = col.codes, max(col.card, 1)
            if combined is None:
                combined, card = c, n  # never written in place
                self.steps.append(("first", n))
                continue
            if card * n >= _MAX_CARD:
                combined, card, uniq = _densify_valid(combined)
                self.steps.append(("densify", uniq))
            combined = np.where((combined < 0) | (c < 0), -1, combined * n + c)
            card *= n
            self.steps.append(("combine", n))
        assert combined is not None
        if card > max(16 * len(combined), 1 << 20):
            combined, card, uniq = _densify_valid(combined)
            self.steps.append(("densify", uniq))
        self.codes = combined
        self.card = card

    def probe(self, keys: Sequence[pa.Array]) -> np.ndarray:
        combined: np.ndarray | None = None
        i = 0
        for kind, arg in self.steps:
            if kind == "first":
                combined = self.columns[0].probe(keys[0])
                i = 1
            elif kind == "combine":
                c = self.columns[i].probe(keys[i])
                i += 1
                combined = np.where((combined < 0) | (c < 0), -1, combined * arg + c)
            else:
                uniq = arg
                pos = np.searchsorted(uniq, combined)
                pos_c = np.minimum(pos, max(len(uniq) - 1, 0))
                found = (combined >= 0) & (len(uniq) > 0) & (uniq[pos_c] == combined) \
                    if len(uniq) else np.zeros(len(combined), dtype=bool)
                combined = np.where(found, pos_c, -1)
        assert combined is not None
        return combined.astype(np.int64, copy=False)


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending (``numpy.unique`` without its hash-based first pass,
    measured an order of magnitude slower on hundreds of thousands of int64 keys)."""
    s = np.sort(values)
    if len(s) < 2:
        return s
    head = np.empty(len(s), dtype=bool)
    head[0] = True
    np.not_equal(s[1:], s[:-1], out=head[1:])
    return s[head]


def _densify_valid(codes: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
    valid = codes >= 0
    uniq = _sorted_unique(codes[valid])
    out = np.full(len(codes), -1, dtype=np.int64)
    out[valid] = np.searchsorted(uniq, codes[valid])
    return out, max(len(uniq), 1), uniq


class HashedRelation:
    """Build rows indexed by key (see the module docstring).

    >>> # rel = HashedRelation.build(table, (BoundReference(0, LONG, True),), allows_null_key=False)
    >>> # si, bi = rel.probe([stream_keys])   # matching (stream row, build row) pairs
    """

    def __init__(self, batch: pa.RecordBatch, encoder: _KeyEncoder | None,
                 keep: np.ndarray, *, ignores_duplicated_key: bool) -> None:
        self.batch = batch
        self.encoder = encoder
        codes = encoder.codes if encoder is not None else np.zeros(0, dtype=np.int64)
        card = encoder.card if encoder is not None else 0
        valid = np.flatnonzero(codes >= 0) if len(codes) else np.zeros(0, dtype=np.int64)
        self.null_key_rows = int(batch.num_rows - len(valid)) if len(codes) else 0
        self.kept_rows = keep
        vcodes = codes[valid]
        self.match: np.ndarray | None = None
        self._match_ext: np.ndarray | None = None
        self.order: np.ndarray | None = None
        self._group_ext = self._group_count_ext = self._group_first_ext = None
        # Direct table: code -> build row, one trailing -1 (code -1, NULL / absent, gathers "no
        # row" without a mask); int32 when row numbers fit (half the memory to fill and to
        # gather from).  Scattering every row and reading back its own slot detects duplicate
        # keys without a per-code count: a slot holds one row, so a key with two rows reads
        # back another row for one of them.
        pos_type = np.int32 if batch.num_rows < (1 << 31) - 1 else np.int64
        pos = np.full(card + 1, -1, dtype=pos_type)
        pos[vcodes] = valid
        self.key_is_unique = bool((pos[vcodes] == valid).all())
        if self.key_is_unique:
            self.num_keys = len(vcodes)
            self._match_ext, self.match = pos, pos[:card]
        elif ignores_duplicated_key:
            # keep the first row (in insertion order) of every key: every present slot holds
            # one of its key's rows; the minimum over all of them is the first
            np.minimum.at(pos, vcodes, valid.astype(pos_type, copy=False))
            self.num_keys = int(np.count_nonzero(pos >= 0))
            self._match_ext, self.match = pos, pos[:card]
        else:
            # Rows stably sorted by code: each key's rows are one run, in insertion order.  The
            # table maps a code to its key's *group* (runs numbered in code order), and the
            # per-group start / count arrays are as small as the number of keys (not the code
            # range); a trailing group (start 0, count 0) answers code -1 and absent codes.
            by_code = np.argsort(vcodes, kind="stable")
            self.order = valid[by_code]
            sorted_codes = vcodes[by_code]
            head = np.empty(len(sorted_codes), dtype=bool)
            head[:1] = True
            np.not_equal(sorted_codes[1:], sorted_codes[:-1], out=head[1:])
            starts = np.flatnonzero(head)
            k = len(starts)
            pos[sorted_codes[starts]] = np.arange(k, dtype=pos_type)
            first = np.zeros(k + 1, dtype=np.int64)
            first[:k] = starts
            count = np.zeros(k + 1, dtype=np.int64)
            count[:k] = np.diff(first[:k], append=np.int64(len(sorted_codes)))
            self.num_keys = k
            self._group_ext, self._group_first_ext, self._group_count_ext = pos, first, count

    # -- construction ------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        table_or_batches: pa.Table | pa.RecordBatch | Iterable[pa.RecordBatch],
        key_exprs: Sequence[Expression],
        *,
        allows_null_key: bool,
        null_aware: bool = False,
        ignores_duplicated_key: bool = False,
        schema: pa.Schema | None = None,
    ) -> "HashedRelation":
        """Index the build rows on ``key_exprs`` (bound to the build output's columns)."""
        batch = to_batch(table_or_batches, schema)
        if null_aware and batch.num_rows == 0:
            return EmptyHashedRelation(batch)
        keys = eval_keys(key_exprs, batch)
        if null_aware:
            if any(k.null_count for k in keys):
                return HashedRelationWithAllNullKeys(batch)
        if not keys:
            raise ValueError("HashedRelation needs at least one key")
        encoder = _KeyEncoder(keys)
        keep = np.arange(batch.num_rows, dtype=np.int64)
        if not allows_null_key and batch.num_rows:
            valid = encoder.codes >= 0
            if not valid.all():
                # NULL-key rows can never match: drop them from the relation.
                keep = np.flatnonzero(valid)
                batch = batch.take(pa.array(keep, type=pa.int64()))
                keys = [k.take(pa.array(keep, type=pa.int64())) for k in keys]
                encoder = _KeyEncoder(keys)
        return cls(batch, encoder, keep, ignores_duplicated_key=ignores_duplicated_key)

    # -- probing -----------------------------------------------------------------------------

    @property
    def num_rows(self) -> int:
        return self.batch.num_rows

    @property
    def is_empty(self) -> bool:
        return self.batch.num_rows == 0

    def estimated_size(self) -> int:
        """Bytes held: the rows plus the index."""
        n = self.batch.nbytes
        for a in (self._match_ext, self.order, self._group_ext, self._group_first_ext,
                  self._group_count_ext):
            if a is not None:
                n += a.nbytes
        return int(n)

    @property
    def estimated_size_bytes(self) -> int:
        return self.estimated_size()

    def codes_of(self, stream_keys: Sequence[pa.Array]) -> np.ndarray:
        """Per stream row: the build key code, -1 when NULL or surely absent (a code >= 0 may
        still have no build rows: small-range integer keys are coded by value)."""
        n = len(stream_keys[0]) if stream_keys else 0
        if self.encoder is None or self.batch.num_rows == 0:
            return np.full(n, -1, dtype=np.int64)
        return self.encoder.probe(stream_keys)

    def lookup(self, stream_keys: Sequence[pa.Array]) -> Candidates:
        """The candidate build rows of each stream row."""
        sc = self.codes_of(stream_keys)
        if self._match_ext is not None:
            return Candidates.direct(self._match_ext[sc])
        g = self._group_ext[sc]
        return Candidates(self._group_count_ext[g], self._group_first_ext[g], self.order)

    def probe(self, stream_keys: Sequence[pa.Array]) -> tuple[np.ndarray, np.ndarray]:
        """Every matching ``(stream_idx, build_idx)`` pair, stream-major, build rows in insertion
        order."""
        cand = self.lookup(stream_keys)
        total = int(cand.counts.sum())
        sis, bis = [], []
        for si, bi, _ in cand.chunks(max(1, total)):
            sis.append(si)
            bis.append(bi)
        if not sis:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(sis), np.concatenate(bis)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(rows={self.num_rows}, keys={self.num_keys}, "
                f"unique={self.key_is_unique})")


class EmptyHashedRelation(HashedRelation):
    """A null-aware build side without rows (NOT IN over an empty subquery keeps every row)."""

    def __init__(self, batch: pa.RecordBatch) -> None:
        self.batch = batch
        self.encoder = None
        self.match = self.order = None
        self._match_ext = self._group_ext = self._group_first_ext = self._group_count_ext = None
        self.key_is_unique = True
        self.null_key_rows = 0
        self.num_keys = 0

    def lookup(self, stream_keys: Sequence[pa.Array]) -> Candidates:
        n = len(stream_keys[0]) if stream_keys else 0
        return Candidates(np.zeros(n, dtype=np.int64))


class HashedRelationWithAllNullKeys(EmptyHashedRelation):
    """A null-aware build side with a NULL key: NOT IN is never TRUE (no row is kept)."""
