"""A binary row encoding of Arrow rows, computed column-wise (Spark's UnsafeRow, in spirit).

State stores address entries by key rows and keep value rows; the RocksDB provider needs each row
as one byte string, and both providers need a canonical byte form of a key to hash and compare
keys.  :func:`encode_rows` turns a batch of rows into a ``pyarrow`` binary array (one string per
row) and :func:`decode_rows` turns such an array back into columns, both with NumPy over whole
columns (no Python loop per row).

Layout of one row::

    [one null byte per leaf] [fixed-width leaves] [uint32 length per variable-width leaf]
    [bytes of the variable-width leaves, in leaf order]

Struct columns (e.g. an event-time ``window``) are flattened into their leaves; the struct's own
validity is one more null byte.  NULL leaves are zero bytes (and length 0), and floats are
canonicalised (NaN, -0.0) when ``canonical=True``, so equal keys always have equal bytes.
Supported leaves: booleans, integers, floats, decimals, dates, timestamps, durations, fixed-size
binary, strings and binaries, and lists of fixed-width numbers or times without NULL elements
(aggregation buffers such as HLL registers: the list's value bytes, a variable-width leaf); other
types raise ``UnsupportedError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember.errors import UnsupportedError
from ember.execution.kernels.keys import canonicalize_floats

__all__ = ["encode_rows", "decode_rows", "RowCodec"]


@dataclass(frozen=True, slots=True)
class _Leaf:
    kind: str  # "fixed", "var", "null" (struct validity or a NullType column: flag only)
    arrow_type: pa.DataType
    width: int  # bytes in the fixed part (fixed: value width, var: 4, null: 0)
    np_dtype: str | None  # NumPy dtype of fixed values read as a whole column


def _leaf_for(t: pa.DataType) -> _Leaf:
    if pa.types.is_boolean(t):
        return _Leaf("fixed", t, 1, "u1")
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return _Leaf("fixed", t, t.bit_width // 8, np.dtype(t.to_pandas_dtype()).str)
    if pa.types.is_date32(t):
        return _Leaf("fixed", t, 4, "<i4")
    if pa.types.is_date64(t) or pa.types.is_timestamp(t) or pa.types.is_duration(t):
        return _Leaf("fixed", t, 8, "<i8")
    if pa.types.is_decimal(t):
        return _Leaf("fixed", t, t.bit_width // 8, None)
    if pa.types.is_fixed_size_binary(t):
        return _Leaf("fixed", t, t.byte_width, None)
    if pa.types.is_string(t) or pa.types.is_binary(t):
        return _Leaf("var", t, 4, None)
    if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        return _Leaf("var", t, 4, None)
    if pa.types.is_null(t):
        return _Leaf("null", t, 0, None)
    if _is_fixed_list(t):  # its element bytes, as a variable-width leaf
        return _Leaf("var", t, 4, None)
    raise UnsupportedError(f"Streaming state cannot store values of type {t} yet",
                           error_class="UNSUPPORTED_FEATURE")


class RowCodec:
    """Encoder/decoder of rows of one Arrow schema (leaf layout computed once)."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.leaves: list[_Leaf] = []
        for f in schema:
            self._plan(f.type)
        self.num_leaves = len(self.leaves)
        self.fixed_width = self.num_leaves + sum(lf.width for lf in self.leaves)
        self.num_var = sum(1 for lf in self.leaves if lf.kind == "var")

    def _plan(self, t: pa.DataType) -> None:
        if pa.types.is_struct(t):
            self.leaves.append(_Leaf("null", t, 0, None))  # the struct's own validity
            for i in range(t.num_fields):
                self._plan(t.field(i).type)
            return
        if pa.types.is_dictionary(t):
            self._plan(t.value_type)
            return
        self.leaves.append(_leaf_for(t))

    # -- encoding ---------------------------------------------------------------------------
    def encode(self, columns: Sequence[pa.Array | pa.ChunkedArray], num_rows: int,
               canonical: bool = False) -> pa.Array:
        """One binary string per row of ``columns`` (laid out per ``self.schema``)."""
        n = num_rows
        arrays: list[pa.Array] = []
        for c in columns:
            if isinstance(c, pa.ChunkedArray):
                c = c.combine_chunks() if c.num_chunks != 1 else c.chunk(0)
            if pa.types.is_dictionary(c.type):
                c = c.cast(c.type.value_type)
            self._flatten(c, arrays, None)
        fixed = np.zeros((n, self.fixed_width), dtype=np.uint8)
        pos = self.num_leaves
        var_lengths: list[np.ndarray] = []
        var_arrays: list[pa.Array] = []
        for li, (leaf, arr) in enumerate(zip(self.leaves, arrays)):
            valid = _validity(arr)
            fixed[:, li] = ~valid
            if leaf.kind == "fixed":
                fixed[:, pos:pos + leaf.width] = _fixed_bytes(arr, leaf, valid, canonical)
            elif leaf.kind == "var":
                if _is_fixed_list(leaf.arrow_type):
                    arr = _list_bytes(arr)
                lengths = _var_lengths(arr, valid)
                fixed[:, pos:pos + 4] = lengths.astype("<u4").view(np.uint8).reshape(n, 4)
                var_lengths.append(lengths)
                var_arrays.append(arr)
            pos += leaf.width
        row_len = np.full(n, self.fixed_width, dtype=np.int64)
        for ln in var_lengths:
            row_len += ln
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(row_len, out=offsets[1:])
        out = np.empty(int(offsets[-1]), dtype=np.uint8)
        starts = offsets[:-1]
        if n:
            out[(starts[:, None] + np.arange(self.fixed_width)).reshape(-1)] = fixed.reshape(-1)
        dst = starts + self.fixed_width
        for ln, arr in zip(var_lengths, var_arrays):
            _scatter_var(arr, ln, dst, out)
            dst = dst + ln
        if offsets[-1] < (1 << 31):
            return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(
                offsets.astype(np.int32)), pa.py_buffer(out)])
        return pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets),
                                                            pa.py_buffer(out)])

    def _flatten(self, arr: pa.Array, out: list[pa.Array], parent_valid: pa.Array | None) -> None:
        t = arr.type
        if pa.types.is_dictionary(t):
            arr = arr.cast(t.value_type)
            t = arr.type
        if pa.types.is_struct(t):
            out.append(arr)
            # A child of a NULL struct is NULL (its bytes must not depend on hidden values).
            valid = arr.is_valid() if parent_valid is None else pc.and_(parent_valid,
                                                                        arr.is_valid())
            for i in range(t.num_fields):
                child = arr.field(i)
                if valid.false_count:
                    child = pc.if_else(valid, child, pa.nulls(len(child), child.type))
                self._flatten(child, out, valid)
            return
        out.append(arr)

    # -- decoding ---------------------------------------------------------------------------
    def decode(self, rows: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
        """The columns of ``rows`` (a binary array from :meth:`encode`; NULL entries decode to
        all-NULL rows)."""
        if isinstance(rows, pa.ChunkedArray):
            rows = rows.combine_chunks() if rows.num_chunks != 1 else (
                rows.chunk(0) if rows.num_chunks else pa.array([], pa.binary()))
        n = len(rows)
        if rows.null_count:
            valid_idx = np.flatnonzero(_validity(rows))
            cols = self.decode(rows.take(pa.array(valid_idx)))
            back = np.full(n, -1, dtype=np.int64)
            back[valid_idx] = np.arange(len(valid_idx))
            idx = pa.array(back, mask=back < 0)
            return [c.take(idx) for c in cols]
        offs_dtype = np.int64 if pa.types.is_large_binary(rows.type) else np.int32
        bufs = rows.buffers()
        offsets = np.frombuffer(bufs[1], dtype=offs_dtype)[rows.offset:rows.offset + n + 1]
        offsets = offsets.astype(np.int64)
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(
            0, np.uint8)
        starts = offsets[:-1]
        if n:
            fixed = data[(starts[:, None] + np.arange(self.fixed_width)).reshape(-1)].reshape(
                n, self.fixed_width)
        else:
            fixed = np.zeros((0, self.fixed_width), dtype=np.uint8)
        leaf_arrays: list[pa.Array] = []
        pos = self.num_leaves
        var_src = starts + self.fixed_width
        for li, leaf in enumerate(self.leaves):
            valid = fixed[:, li] == 0
            if leaf.kind == "fixed":
                raw = np.ascontiguousarray(fixed[:, pos:pos + leaf.width])
                leaf_arrays.append(_from_fixed(raw, leaf, valid))
            elif leaf.kind == "var":
                lengths = np.ascontiguousarray(fixed[:, pos:pos + 4]).view("<u4").reshape(n)
                lengths = lengths.astype(np.int64)
                if _is_fixed_list(leaf.arrow_type):
                    raw = _gather_var(data, var_src, lengths, valid, pa.large_binary())
                    leaf_arrays.append(_bytes_list(raw, leaf.arrow_type, valid))
                else:
                    leaf_arrays.append(_gather_var(data, var_src, lengths, valid,
                                                   leaf.arrow_type))
                var_src = var_src + lengths
            else:
                leaf_arrays.append(_NullLeaf(valid))  # type: ignore[arg-type]
            pos += leaf.width
        it = iter(leaf_arrays)
        return [self._rebuild(f.type, it, n) for f in self.schema]

    def _rebuild(self, t: pa.DataType, it, n: int) -> pa.Array:
        if pa.types.is_dictionary(t):
            return self._rebuild(t.value_type, it, n).dictionary_encode().cast(t)
        if pa.types.is_struct(t):
            flag = next(it)
            children = [self._rebuild(t.field(i).type, it, n) for i in range(t.num_fields)]
            mask = pa.array(~flag.valid)
            return pa.StructArray.from_arrays(children, fields=list(t), mask=mask)
        leaf = next(it)
        if isinstance(leaf, _NullLeaf):
            return pa.nulls(n, t)
        return leaf


class _NullLeaf:
    __slots__ = ("valid",)

    def __init__(self, valid: np.ndarray) -> None:
        self.valid = valid


def _validity(arr: pa.Array) -> np.ndarray:
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr), dtype=bool)
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _raw_fixed_buffer(arr: pa.Array, width: int) -> np.ndarray:
    """The values buffer of a fixed-width array as an (n, width) byte matrix."""
    buf = arr.buffers()[1]
    n = len(arr)
    raw = np.frombuffer(buf, dtype=np.uint8)[arr.offset * width:(arr.offset + n) * width]
    return raw.reshape(n, width)


def _fixed_bytes(arr: pa.Array, leaf: _Leaf, valid: np.ndarray, canonical: bool) -> np.ndarray:
    n = len(arr)
    t = arr.type
    if pa.types.is_boolean(t):
        v = pc.fill_null(arr, False).to_numpy(zero_copy_only=False).astype(np.uint8)
        return v.reshape(n, 1)
    if leaf.np_dtype is None:  # decimals, fixed-size binary: copy the value bytes
        raw = _raw_fixed_buffer(arr, leaf.width).copy()
        raw[~valid] = 0
        return raw
    if canonical and pa.types.is_floating(t):
        arr = canonicalize_floats(arr)
    if not (pa.types.is_integer(t) or pa.types.is_floating(t)):
        arr = arr.view(pa.int32() if leaf.width == 4 else pa.int64())
    v = pc.fill_null(arr, 0).to_numpy(zero_copy_only=False)
    v = np.ascontiguousarray(v.astype(np.dtype(leaf.np_dtype).newbyteorder("<"), copy=False))
    return v.view(np.uint8).reshape(n, leaf.width)


def _from_fixed(raw: np.ndarray, leaf: _Leaf, valid: np.ndarray) -> pa.Array:
    n = len(raw)
    t = leaf.arrow_type
    mask = None if valid.all() else pa.array(~valid)
    if pa.types.is_boolean(t):
        v = raw.reshape(n).astype(bool)
        return pa.array(v, type=t, mask=None if mask is None else ~valid)
    if leaf.np_dtype is None:
        validity = None if mask is None else pa.array(valid).buffers()[1]
        return pa.Array.from_buffers(t, n, [validity, pa.py_buffer(raw.reshape(-1).copy())],
                                     null_count=-1 if validity is not None else 0)
    v = raw.view(np.dtype(leaf.np_dtype).newbyteorder("<")).reshape(n)
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return pa.array(v, type=t, mask=None if mask is None else ~valid)
    storage = pa.int32() if leaf.width == 4 else pa.int64()
    return pa.array(v, type=storage, mask=None if mask is None else ~valid).view(t)


def _is_fixed_list(t: pa.DataType) -> bool:
    """A list of fixed-width numbers or times (an aggregation buffer such as HLL registers)."""
    if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
        return False
    v = t.value_type
    return (pa.types.is_integer(v) or pa.types.is_floating(v) or pa.types.is_date32(v)
            or pa.types.is_timestamp(v))


def _list_bytes(arr: pa.Array) -> pa.Array:
    """A list array of fixed-width values as a binary array of each list's value bytes."""
    values = arr.values
    if values.null_count:
        raise UnsupportedError("Streaming state cannot store lists with NULL elements yet",
                               error_class="UNSUPPORTED_FEATURE")
    w = values.type.bit_width // 8
    offs = np.asarray(arr.offsets, dtype=np.int64) * w
    raw = np.frombuffer(values.buffers()[1], np.uint8)[values.offset * w:
                                                       (values.offset + len(values)) * w]
    return pa.Array.from_buffers(pa.large_binary(), len(arr),
                                 [None, pa.py_buffer(offs), pa.py_buffer(raw.copy())])


def _bytes_list(raw: pa.Array, t: pa.DataType, valid: np.ndarray) -> pa.Array:
    """The inverse of :func:`_list_bytes` (``valid``: which lists are not NULL)."""
    w = t.value_type.bit_width // 8
    n = len(raw)
    offs = np.frombuffer(raw.buffers()[1], np.int64)[:n + 1] // w
    data = raw.buffers()[2]
    count = int(offs[-1]) if n else 0
    values = pa.Array.from_buffers(t.value_type, count,
                                   [None, data if data is not None else pa.py_buffer(b"")])
    cls = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
    off_arr = pa.array(offs if cls is pa.LargeListArray else offs.astype(np.int32))
    return cls.from_arrays(off_arr, values, type=t,
                           mask=None if valid.all() else pa.array(~valid))


def _var_offsets(arr: pa.Array) -> np.ndarray:
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    offs = np.frombuffer(arr.buffers()[1], dtype=np.int64 if large else np.int32)
    return offs[arr.offset:arr.offset + len(arr) + 1].astype(np.int64)


def _var_lengths(arr: pa.Array, valid: np.ndarray) -> np.ndarray:
    offs = _var_offsets(arr)
    lengths = np.diff(offs)
    return np.where(valid, lengths, 0)


def _scatter_var(arr: pa.Array, lengths: np.ndarray, dst_starts: np.ndarray,
                 out: np.ndarray) -> None:
    total = int(lengths.sum())
    if total == 0:
        return
    src_starts = _var_offsets(arr)[:-1]
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8)
    within = np.arange(total) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    out[np.repeat(dst_starts, lengths) + within] = data[np.repeat(src_starts, lengths) + within]


def _gather_var(data: np.ndarray, src_starts: np.ndarray, lengths: np.ndarray,
                valid: np.ndarray, t: pa.DataType) -> pa.Array:
    n = len(lengths)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    within = np.arange(total) - np.repeat(offsets[:-1], lengths)
    values = data[np.repeat(src_starts, lengths) + within] if total else np.zeros(0, np.uint8)
    large = pa.types.is_large_string(t) or pa.types.is_large_binary(t)
    validity = None if valid.all() else pa.array(valid).buffers()[1]
    offs = offsets if large else offsets.astype(np.int32)
    return pa.Array.from_buffers(t, n, [validity, pa.py_buffer(offs), pa.py_buffer(values)],
                                 null_count=-1 if validity is not None else 0)


def encode_rows(table: pa.Table | pa.RecordBatch, canonical: bool = False) -> pa.Array:
    """``table``'s rows as one binary string each (see the module docstring)."""
    return RowCodec(table.schema).encode(table.columns, table.num_rows, canonical)


def decode_rows(rows: pa.Array, schema: pa.Schema) -> pa.Table:
    """The table of ``schema`` encoded in ``rows``."""
    cols = RowCodec(schema).decode(rows)
    return pa.Table.from_arrays(cols, schema=schema)
