"""The build side of the hash joins (Spark's ``HashedRelation``).

A :class:`HashedRelation` holds the build rows as one record batch and a multimap from key to
build row positions, in insertion order.  Keys are not hashed row by row: every key column gets a
*dictionary* fixed by the build side, and a row's key is the mixed-radix combination of its column
codes (:mod:`ember.execution.kernels.keys` does the same for two sides known together; here the
probe side arrives later, batch by batch):

- floating point keys are canonicalized first (every NaN equal, ``-0.0 == 0.0``,
  ``canonicalize_floats``);
- integer columns spanning a small range are coded ``value - min`` (probe: a range check) --
  small: under ``RANGE_FACTOR`` x their rows or ``MIN_RANGE`` values, or, for a broadcast's
  relation (``shared``: probed by every stream partition), ``BROADCAST_MIN_RANGE`` values;
- other fixed-width columns (sparse integers, dates, timestamps, floats...) are coded by a binary
  search over the sorted distinct keys -- or, with ``HASH_TABLE``, through a :class:`_KeyTable`:
  a linear-probing hash table (power-of-two slots >= 2x the distinct keys, Fibonacci hashing)
  built and probed in vectorized rounds, each round advancing every still-unresolved key by one
  slot, falling back to the binary search for a key set that defeats the mixer (more than
  ``_MAX_VISITS_PER_KEY`` slot visits a key).  The table builds faster and wins on randomly
  ordered probes, but join probes are often sorted (files stored in key order: TPC-H's
  ``l_orderkey``), where the binary search is cache-friendly and measured 8% less CPU over the
  TPC-H join queries; so ``HASH_TABLE`` is off by default (tests run both paths).  The sorted
  keys (:class:`_SortedKeys`) keep the binary search for probe batches that arrive sorted and
  answer the others from a hash table over the same keys, built on the first unsorted batch;
- other primitive columns are dictionary-encoded; the probe side is looked up with
  ``pyarrow.compute.index_in`` against that dictionary;
- structs and arrays keep one representative value per build code; a probe batch is encoded
  jointly with those representatives (``encode_arrays``), then mapped back.

The combined codes are densified (through a :class:`_KeyTable`, or sorted distinct codes)
whenever the radix product would overflow, and the same steps are replayed on the probe codes.

Index.  One code-indexed table (int32 when row numbers fit) with a trailing -1 slot, so code -1
(NULL / absent) gathers "no row" without a mask.  Every valid build row is scattered into its
code's slot; reading the slots back tells whether every key is unique (a key with two rows reads
back the other row for one of them).  Unique keys (Spark's ``keyIsUnique``) keep the table as a
direct code -> row map: a probe is one gather.  ``ignores_duplicated_key`` keeps the first row of
each key (``numpy.minimum.at`` over the scattered table) and probes the same way.  Otherwise
build rows are stably sorted by code (one or two passes of numpy's 16-bit radix argsort,
``RADIX_GROUPING``), so the rows of one key are a contiguous run in insertion
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

import threading
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
#: ... and spanning fewer than this many values whatever their count (a direct table of at most
#: 4 MiB); a *shared* relation (a broadcast, built once and probed by every stream partition)
#: allows ``BROADCAST_MIN_RANGE`` (32 MiB), as its probes far outnumber its keys: e.g. orders
#: filtered to 227K keys over 6M order keys, probed by all 6M lineitem rows (TPC-H Q05)
MIN_RANGE = 1 << 20
BROADCAST_MIN_RANGE = 1 << 23

#: Sparse fixed-width keys (and densified multi-column codes) are found in a :class:`_KeyTable`
#: (open addressing) when True, by a binary search over the sorted distinct keys when False
#: (the default: see the module docstring; tests compare both paths).
HASH_TABLE = False
#: Build rows are grouped by key code with a (two-pass) 16-bit radix argsort; False restores
#: numpy's stable comparison argsort.
RADIX_GROUPING = True

_FIB = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio (Fibonacci hashing)
#: A table build giving up after this many slot visits per key (a pathological key set for the
#: mixer, e.g. long runs of colliding keys) falls back to the sorted distinct keys.
_MAX_VISITS_PER_KEY = 8


class _KeyTable:
    """int64 keys -> dense codes ``0..card-1``: a linear-probing hash table built and probed in
    vectorized rounds (every still-unresolved key advances one slot per round).

    ``slots`` is a power of two >= 2x the distinct keys (load <= 1/2, so a probe meets an empty
    slot within a few slots); the slot of a key is the top bits of ``k * 2**64/phi`` (mod 2**64)
    (Fibonacci hashing).  ``keys`` holds each slot's key, ``codes`` its dense code (-1: empty).
    Codes number the keys in slot order (not in key order).  12 bytes a slot, at most 48 bytes
    a distinct key."""

    __slots__ = ("keys", "codes", "shift", "mask", "card")

    def __init__(self, keys: np.ndarray, codes: np.ndarray, card: int) -> None:
        self.keys, self.codes, self.card = keys, codes, card
        self.mask = len(keys) - 1
        self.shift = np.uint64(64 - (len(keys).bit_length() - 1))

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.codes.nbytes)

    @staticmethod
    def _home(values: np.ndarray, shift: np.uint64) -> np.ndarray:
        h = values.view(np.uint64) * _FIB
        h >>= shift
        return h.view(np.int64)

    @classmethod
    def build(cls, values: np.ndarray) -> tuple["_KeyTable | None", np.ndarray]:
        """The table of ``values`` (int64) and each value's code; ``(None, empty)`` when the
        keys collide too much for linear probing (the caller falls back to a binary search)."""
        values = np.ascontiguousarray(values, dtype=np.int64)
        n = len(values)
        run_of = None
        if n > 1:
            # Equal keys are often adjacent (input clustered by key): insert one key per run.
            head = np.empty(n, dtype=bool)
            head[0] = True
            np.not_equal(values[1:], values[:-1], out=head[1:])
            runs = np.flatnonzero(head)
            if len(runs) < n - (n >> 3):
                run_of = np.cumsum(head, dtype=np.int64)
                run_of -= 1
                values = values[runs]
        table, slot_of = cls._insert(values, 2 * len(values))
        if table is None:
            return None, np.zeros(0, dtype=np.int64)
        occupied = table.codes >= 0
        card = int(np.count_nonzero(occupied))
        table.codes[occupied] = np.arange(card, dtype=np.int32)
        table.card = card
        codes = table.codes[slot_of]
        if len(table.keys) > 4 * max(card, 4):
            # many duplicates: re-insert only the distinct keys into a table sized for them
            distinct = table.keys[occupied]  # in slot order, i.e. code order
            small, dslot = cls._insert(distinct, 2 * card)
            if small is not None:
                small.codes[dslot] = np.arange(card, dtype=np.int32)
                small.card = card
                table = small
        if run_of is not None:
            codes = codes[run_of]
        return table, codes.astype(np.int64)

    @classmethod
    def _insert(cls, values: np.ndarray, min_slots: int
                ) -> tuple["_KeyTable | None", np.ndarray]:
        n = len(values)
        size = 1 << max(int(min_slots - 1).bit_length(), 4)
        # (a slot's key is only read once the slot is occupied)
        table = cls(np.empty(size, dtype=np.int64), np.full(size, -1, dtype=np.int32), 0)
        tk, tc, mask = table.keys, table.codes, table.mask
        slot_of = np.empty(n, dtype=np.int64)
        slot = cls._home(values, table.shift)
        keys, idx = values, None  # idx None: every key still live, in input order
        budget = _MAX_VISITS_PER_KEY * n + 1024
        while len(keys):
            budget -= len(keys)
            if budget < 0:
                return None, slot_of
            free = tc[slot] < 0
            if free.any():
                # claim the empty slots (one of several keys claiming a slot wins, the others
                # read back another key and move on; copies of one key move together)
                fs = slot[free]
                tk[fs] = keys[free]
                tc[fs] = 0
            hit = tk[slot] == keys
            if idx is None:
                slot_of[hit] = slot[hit]
                idx = np.flatnonzero(~hit)
                keys = keys[idx]
                slot = slot[idx]
            else:
                slot_of[idx[hit]] = slot[hit]
                miss = ~hit
                idx, keys, slot = idx[miss], keys[miss], slot[miss]
            slot += 1
            slot &= mask
        return table, slot_of

    def lookup(self, values: np.ndarray) -> np.ndarray:
        """The code of each of ``values`` (int64), -1 for a key not in the table."""
        values = np.ascontiguousarray(values, dtype=np.int64)
        if not self.card:
            return np.full(len(values), -1, dtype=np.int64)
        tk, tc, mask = self.keys, self.codes, self.mask
        slot = self._home(values, self.shift)
        # round 1 over every value; later rounds over those that met another key
        c = tc[slot]
        occupied = c >= 0
        hit = tk[slot] == values
        hit &= occupied
        out = np.where(hit, c, np.int64(-1))
        idx = np.flatnonzero(np.greater(occupied, hit))  # occupied by another key
        keys, slot = values[idx], slot[idx]
        while len(idx):
            slot += 1
            slot &= mask
            c = tc[slot]
            occupied = c >= 0
            hit = tk[slot] == keys
            hit &= occupied
            out[idx[hit]] = c[hit]
            more = np.greater(occupied, hit)
            idx, keys, slot = idx[more], keys[more], slot[more]
        return out


#: a :class:`_SortedKeys` of at least this many keys answers unsorted probes from a hash table
SORTED_KEYS_TABLE_MIN = 256


class _SortedKeys:
    """Sorted distinct int64 keys (``uniq``); :meth:`find` gives each value's position in them
    (-1: absent).  Probe values that arrive sorted are found by a binary search (numpy's
    ``searchsorted`` starts each search where the last ended: cache-friendly); others -- mixed
    multi-column codes, foreign keys in fact-table order -- through a :class:`_KeyTable` over
    the same keys numbering them by position, built on the first unsorted probe (measured 3-7x
    less CPU than the binary search over 5k-2M keys in random order)."""

    __slots__ = ("uniq", "_table", "_lock")

    def __init__(self, uniq: np.ndarray) -> None:
        self.uniq = uniq
        self._table: _KeyTable | None | bool = None  # False: the keys defeat the table
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.uniq)

    @property
    def nbytes(self) -> int:
        t = self._table
        return int(self.uniq.nbytes + (t.nbytes if isinstance(t, _KeyTable) else 0))

    def _hash_table(self) -> _KeyTable | None:
        t = self._table
        if t is None:
            with self._lock:
                t = self._table
                if t is None:
                    t, slot_of = _KeyTable._insert(self.uniq, 2 * len(self.uniq))
                    if t is not None:
                        t.codes[slot_of] = np.arange(len(self.uniq), dtype=np.int32)
                        t.card = len(self.uniq)
                    else:
                        t = False
                    self._table = t
        return t if isinstance(t, _KeyTable) else None

    def find(self, values: np.ndarray) -> np.ndarray:
        """Each of ``values``' position in ``uniq`` (int64), -1 when absent."""
        uniq = self.uniq
        n = len(values)
        if not len(uniq):
            return np.full(n, -1, dtype=np.int64)
        if len(uniq) >= SORTED_KEYS_TABLE_MIN and n > 1 and \
                not bool(np.less_equal(values[:-1], values[1:]).all()):
            t = self._hash_table()
            if t is not None:
                return t.lookup(values)
        pos = np.minimum(np.searchsorted(uniq, values), len(uniq) - 1)
        return np.where(uniq[pos] == values, pos, -1).astype(np.int64, copy=False)


class _ColumnDictionary:
    """Codes of one key column, fixed by the build side; ``probe`` maps new values onto them
    (-1 for NULL or a value absent from the build side)."""

    def __init__(self, build: pa.Array, min_range: int = MIN_RANGE) -> None:
        build = plain_array(build)
        self.type = build.type
        self.kind = "joint"
        self.lo = 0
        self.card = 0
        self.table: _KeyTable | None = None
        self.uniq: _SortedKeys | None = None
        n = len(build)
        t = build.type
        if pa.types.is_null(t):
            self.kind = "null"
            self.codes = np.full(n, -1, dtype=np.int64)
            return
        if pa.types.is_integer(t) and build.null_count < n:
            mm = pc.min_max(build)
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
            if hi - lo < max(RANGE_FACTOR * n, min_range) and hi - lo < _MAX_RANGE:
                v = (build if build.null_count == 0 else pc.fill_null(build, lo))
                codes = np.subtract(v.to_numpy(zero_copy_only=False), lo, dtype=np.int64)
                if build.null_count:
                    codes[~_valid_mask(build)] = -1
                self.kind, self.lo, self.hi, self.card, self.codes = "range", lo, hi, hi - lo + 1, codes
                return
        bits = _fixed_width_bits(build)
        if bits is not None:
            # Distinct bit patterns (floats canonicalized) in a hash table built once; without
            # it (or when the keys defeat its mixer) sorted, and probing is a binary search.
            valid = _valid_mask(build) if build.null_count else None
            vbits = bits if valid is None else bits[valid]
            if HASH_TABLE:
                self.table, codes = _KeyTable.build(vbits)
                if self.table is not None:
                    self.kind, self.card = "bits", self.table.card
                    if valid is None:
                        self.codes = codes
                    else:
                        self.codes = np.full(n, -1, dtype=np.int64)
                        self.codes[valid] = codes
                    return
            if valid is None:
                valid = np.ones(n, dtype=bool)
            uniq = _sorted_unique(vbits)
            self.uniq = _SortedKeys(uniq)
            codes = np.searchsorted(uniq, bits).astype(np.int64)
            self.kind, self.card = "bits", len(uniq)
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
            if bits is not None and self.table is not None:
                codes = self.table.lookup(bits)
                if arr.null_count:
                    codes[~_valid_mask(arr)] = -1
                return codes
            if bits is not None:
                codes = self.uniq.find(bits)
                if arr.null_count:
                    codes[~_valid_mask(arr)] = -1
                return codes
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

    def __init__(self, build_keys: Sequence[pa.Array], min_range: int = MIN_RANGE) -> None:
        self.columns = [_ColumnDictionary(k, min_range) for k in build_keys]
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
        if card > max(16 * len(combined), min_range):
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
            elif isinstance(arg, _KeyTable):
                combined = arg.lookup(combined)  # -1 (NULL / absent) is never a key
            else:
                combined = arg.find(combined)  # -1 (NULL / absent) is never a key
        assert combined is not None
        return combined.astype(np.int64, copy=False)

    @property
    def nbytes(self) -> int:
        """Bytes of the probe-side structures (hash tables, sorted distinct keys)."""
        n = 0
        for col in self.columns:
            for a in (col.table, col.uniq):
                if a is not None:
                    n += a.nbytes
        for _, arg in self.steps:
            if isinstance(arg, (_KeyTable, _SortedKeys)):
                n += arg.nbytes
        return int(n)


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


def _densify_valid(codes: np.ndarray) -> tuple[np.ndarray, int, "_SortedKeys | _KeyTable"]:
    """Codes renumbered ``0..card-1`` (-1 kept) and the index that renumbers probe codes: a
    :class:`_KeyTable`, or the sorted distinct codes (:class:`_SortedKeys`)."""
    valid = codes >= 0
    if HASH_TABLE:
        all_valid = bool(valid.all())
        table, dense = _KeyTable.build(codes if all_valid else codes[valid])
        if table is not None:
            if all_valid:
                return dense, max(table.card, 1), table
            out = np.full(len(codes), -1, dtype=np.int64)
            out[valid] = dense
            return out, max(table.card, 1), table
    uniq = _sorted_unique(codes[valid])
    out = np.full(len(codes), -1, dtype=np.int64)
    keys = _SortedKeys(uniq)
    out[valid] = keys.find(codes[valid])  # unsorted codes: builds the table probes reuse
    return out, max(len(uniq), 1), keys


def _stable_argsort(codes: np.ndarray, card: int) -> np.ndarray:
    """``numpy.argsort(codes, kind="stable")`` for codes in ``[0, card)``: one or two passes of
    numpy's 16-bit radix argsort (low half, then high half), several times faster than its
    comparison sort on hundreds of thousands of codes."""
    if not RADIX_GROUPING or card > (1 << 32) or len(codes) < 256:
        return np.argsort(codes, kind="stable")
    if card <= (1 << 16):
        return np.argsort(codes.astype(np.uint16), kind="stable")
    low = np.argsort(codes.astype(np.uint16), kind="stable")  # truncates to the low 16 bits
    high = codes[low]
    high >>= 16
    return low[np.argsort(high.astype(np.uint16), kind="stable")]


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
            by_code = _stable_argsort(vcodes, card)
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
        shared: bool = False,
    ) -> "HashedRelation":
        """Index the build rows on ``key_exprs`` (bound to the build output's columns);
        ``shared``: a broadcast's relation, probed by every stream partition (a bigger direct
        table is worth it, ``BROADCAST_MIN_RANGE``)."""
        min_range = BROADCAST_MIN_RANGE if shared else MIN_RANGE
        batch = to_batch(table_or_batches, schema)
        if null_aware and batch.num_rows == 0:
            return EmptyHashedRelation(batch)
        keys = eval_keys(key_exprs, batch)
        if null_aware:
            if any(k.null_count for k in keys):
                return HashedRelationWithAllNullKeys(batch)
        if not keys:
            raise ValueError("HashedRelation needs at least one key")
        encoder = _KeyEncoder(keys, min_range)
        keep = np.arange(batch.num_rows, dtype=np.int64)
        if not allows_null_key and batch.num_rows:
            valid = encoder.codes >= 0
            if not valid.all():
                # NULL-key rows can never match: drop them from the relation.
                keep = np.flatnonzero(valid)
                batch = batch.take(pa.array(keep, type=pa.int64()))
                keys = [k.take(pa.array(keep, type=pa.int64())) for k in keys]
                encoder = _KeyEncoder(keys, min_range)
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
        n = self.batch.nbytes + (self.encoder.nbytes if self.encoder is not None else 0)
        for a in (self._match_ext, self.order, self._group_ext, self._group_first_ext,
                  self._group_count_ext):
            if a is not None:
                n += a.nbytes
        return int(n)

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

    def group_runs(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(order, group)`` when a key has several rows: build rows by key group (``order``,
        as :meth:`lookup` gives them) and the group number of each position; None otherwise."""
        if self.order is None or self._group_count_ext is None:
            return None
        k = self.num_keys
        return self.order, np.repeat(np.arange(k, dtype=np.int64), self._group_count_ext[:k])

    def groups_of(self, stream_keys: Sequence[pa.Array]) -> np.ndarray:
        """Per stream row: its key's group number in :meth:`group_runs`, -1 for none (only when
        :meth:`group_runs` is not None)."""
        return self._group_ext[self.codes_of(stream_keys)].astype(np.int64, copy=False)

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
