"""Hash functions bit-exact with Spark: ``hash`` (Spark's Murmur3Hash: Murmur3 x86_32, seed 42),
``xxhash64`` (Spark's XxHash64: XXH64, seed 42), ``crc32``, ``md5``, ``sha1``/``sha``, ``sha2``.

``hash(a, b, ...)`` folds its arguments left to right: the running hash is the seed of the next
argument's hash, and a NULL argument leaves it unchanged (Spark's HashExpression).  Per type:
boolean, tinyint, smallint, int and date hash their value as an int (``hashInt``); bigint and
timestamps as a long (``hashLong``); a float its ``floatToIntBits`` and a double its
``doubleToLongBits`` (-0.0 hashed as 0.0, every NaN as the canonical NaN); a decimal of precision
<= 18 its unscaled long, a wider one the bytes of its unscaled ``BigInteger.toByteArray``; strings
and binaries their bytes (``hashUnsafeBytes``: Spark's Murmur3 mixes each trailing byte that does
not fill a 4-byte word as a whole word, sign-extended, unlike the reference Murmur3).

Murmur3 and XXH64 run vectorized over all rows at once (NumPy ``uint32``/``uint64`` wrapping
arithmetic; over strings one step per word position, with the rows still that long).  ``crc32``
runs one step per byte position (table-driven).  ``md5``/``sha1``/``sha2`` call :mod:`hashlib`
once per *distinct* value (dictionary encoding).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import UnsupportedError
from ember.expressions import decimals as D
from ember.expressions.common import TypeCheckFailure
from ember.expressions.misc import FunctionSpec, register

__all__ = ["HASH_FUNCTIONS", "murmur3_hash", "xxhash64"]

U32, U64 = np.uint32, np.uint64
SEED = 42


def _rotl32(x: np.ndarray, r: int) -> np.ndarray:
    return (x << U32(r)) | (x >> U32(32 - r))


def _rotl64(x: np.ndarray, r: int) -> np.ndarray:
    return (x << U64(r)) | (x >> U64(64 - r))


# -- Murmur3 x86_32 (Spark's Murmur3_x86_32) ------------------------------------------------------

_C1, _C2 = U32(0xCC9E2D51), U32(0x1B873593)


def _mix_k1(k: np.ndarray) -> np.ndarray:
    return _rotl32(k * _C1, 15) * _C2


def _mix_h1(h: np.ndarray, k: np.ndarray) -> np.ndarray:
    return _rotl32(h ^ k, 13) * U32(5) + U32(0xE6546B64)


def _fmix32(h: np.ndarray, length) -> np.ndarray:
    h = h ^ np.asarray(length).astype(U32)
    h ^= h >> U32(16)
    h *= U32(0x85EBCA6B)
    h ^= h >> U32(13)
    h *= U32(0xC2B2AE35)
    return h ^ (h >> U32(16))


def _m3_int(v: np.ndarray, seed: np.ndarray) -> np.ndarray:
    return _fmix32(_mix_h1(seed, _mix_k1(v.astype(np.int32).view(U32))), 4)


def _m3_long(v: np.ndarray, seed: np.ndarray) -> np.ndarray:
    u = v.astype(np.int64).view(U64)
    h = _mix_h1(seed, _mix_k1((u & U64(0xFFFFFFFF)).astype(U32)))
    h = _mix_h1(h, _mix_k1((u >> U64(32)).astype(U32)))
    return _fmix32(h, 8)


def _layout(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(padded bytes, start offsets, lengths) of a string/binary array."""
    arr = arr.cast(pa.large_binary())
    n = len(arr)
    bufs = arr.buffers()
    off = np.frombuffer(bufs[1], dtype=np.int64, count=arr.offset + n + 1)[arr.offset:]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else \
        np.zeros(0, np.uint8)
    data = np.concatenate([data[: int(off[-1]) if n else 0], np.zeros(8, np.uint8)])
    return data, off[:-1].astype(np.int64), np.diff(off).astype(np.int64)


def _word32(data: np.ndarray, pos: np.ndarray) -> np.ndarray:
    d = data.astype(U32)
    return d[pos] | (d[pos + 1] << U32(8)) | (d[pos + 2] << U32(16)) | (d[pos + 3] << U32(24))


def _word64(data: np.ndarray, pos: np.ndarray) -> np.ndarray:
    return _word32(data, pos).astype(U64) | (_word32(data, pos + 4).astype(U64) << U64(32))


def _m3_bytes(arr: pa.Array, seed: np.ndarray) -> np.ndarray:
    data, start, length = _layout(arr)
    h = seed.copy()
    aligned = length - length % 4
    for w in range(int(aligned.max(initial=0)) // 4):
        rows = np.flatnonzero(aligned > 4 * w)
        h[rows] = _mix_h1(h[rows], _mix_k1(_word32(data, start[rows] + 4 * w)))
    for t in range(3):
        rows = np.flatnonzero(length % 4 > t)
        if len(rows):
            byte = data[start[rows] + aligned[rows] + t].view(np.int8).astype(np.int32)
            h[rows] = _mix_h1(h[rows], _mix_k1(byte.view(U32)))
    return _fmix32(h, length)


# -- XXH64 (Spark's XXH64) -------------------------------------------------------------------------

P1, P2, P3 = U64(0x9E3779B185EBCA87), U64(0xC2B2AE3D27D4EB4F), U64(0x165667B19E3779F9)
P4, P5 = U64(0x85EBCA77C2B2AE63), U64(0x27D4EB2F165667C5)


def _fmix64(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> U64(33))
    h *= P2
    h ^= h >> U64(29)
    h *= P3
    return h ^ (h >> U64(32))


def _xx_int(v: np.ndarray, seed: np.ndarray) -> np.ndarray:
    h = seed + P5 + U64(4)
    h ^= (v.astype(np.int32).view(U32).astype(U64)) * P1
    return _fmix64(_rotl64(h, 23) * P2 + P3)


def _xx_long(v: np.ndarray, seed: np.ndarray) -> np.ndarray:
    h = seed + P5 + U64(8)
    h ^= _rotl64(v.astype(np.int64).view(U64) * P2, 31) * P1
    return _fmix64(_rotl64(h, 27) * P1 + P4)


def _xx_round(acc: np.ndarray, lane: np.ndarray) -> np.ndarray:
    return _rotl64(acc + lane * P2, 31) * P1


def _xx_bytes(arr: pa.Array, seed: np.ndarray) -> np.ndarray:
    data, start, length = _layout(arr)
    n = len(length)
    h = seed + P5
    stripes = np.where(length >= 32, length // 32, 0)
    long_rows = np.flatnonzero(stripes > 0)
    if len(long_rows):
        s = seed[long_rows]
        v = [s + P1 + P2, s + P2, s.copy(), s - P1]
        st, cnt = start[long_rows], stripes[long_rows]
        for k in range(int(cnt.max())):
            live = np.flatnonzero(cnt > k)
            for j in range(4):
                v[j][live] = _xx_round(v[j][live], _word64(data, st[live] + 32 * k + 8 * j))
        acc = _rotl64(v[0], 1) + _rotl64(v[1], 7) + _rotl64(v[2], 12) + _rotl64(v[3], 18)
        for j in range(4):
            acc = (acc ^ _xx_round(U64(0), v[j])) * P1 + P4
        h[long_rows] = acc
    h = h + length.astype(U64)
    pos = start + stripes * 32
    rest = length - stripes * 32
    for k in range(int(rest.max(initial=0)) // 8):
        rows = np.flatnonzero(rest >= 8 * (k + 1))
        k1 = _xx_round(U64(0), _word64(data, pos[rows] + 8 * k))
        h[rows] = _rotl64(h[rows] ^ k1, 27) * P1 + P4
    pos = pos + (rest // 8) * 8
    rest = rest % 8
    rows = np.flatnonzero(rest >= 4)
    if len(rows):
        h[rows] = _rotl64(h[rows] ^ (_word32(data, pos[rows]).astype(U64) * P1), 23) * P2 + P3
    pos = np.where(rest >= 4, pos + 4, pos)
    rest = np.where(rest >= 4, rest - 4, rest)
    for t in range(3):
        rows = np.flatnonzero(rest > t)
        if len(rows):
            h[rows] = _rotl64(h[rows] ^ (data[pos[rows] + t].astype(U64) * P5), 11) * P1
    del n
    return _fmix64(h)


# -- one argument into the running hash --------------------------------------------------------------


def _big_decimal_bytes(arr: pa.Array) -> pa.Array:
    """The unscaled values' ``BigInteger.toByteArray`` (minimal two's complement, big-endian)."""
    vals, valid = D.unscaled(arr)

    def to_bytes(v: int) -> bytes:
        return v.to_bytes((v + (v < 0)).bit_length() // 8 + 1, "big", signed=True)
    enc = pc.dictionary_encode(pa.array([int(v) for v in vals], pa.decimal128(38, 0)))
    raw = [to_bytes(int(d)) for d in enc.dictionary.to_pylist()]
    return pa.array([raw[i] if ok else None for i, ok in zip(
        enc.indices.to_numpy(zero_copy_only=False), valid)], pa.binary())


def _fold(arr: pa.Array, t: T.DataType, seed: np.ndarray, xx: bool) -> np.ndarray:
    """``seed`` advanced by the non-NULL values of ``arr`` (of Spark type ``t``)."""
    if isinstance(t, T.NullType):
        return seed
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    valid = arr.is_valid().to_numpy(zero_copy_only=False) if arr.null_count else None
    h_int, h_long, h_bytes = (_xx_int, _xx_long, _xx_bytes) if xx else \
        (_m3_int, _m3_long, _m3_bytes)
    if isinstance(t, (T.BooleanType, T.ByteType, T.ShortType, T.IntegerType, T.DateType)):
        v = pc.fill_null(arr.cast(pa.int32()) if not isinstance(t, T.DateType) else
                         arr.cast(pa.int32()), 0).to_numpy(zero_copy_only=False)
        out = h_int(v, seed)
    elif isinstance(t, (T.LongType, T.TimestampType)) or t.simple_string() == "timestamp_ntz":
        v = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
        out = h_long(v, seed)
    elif isinstance(t, T.FloatType):
        f = pc.fill_null(arr, 0.0).to_numpy(zero_copy_only=False).astype(np.float32)
        f = np.where(np.isnan(f), np.float32("nan"), f + np.float32(0.0))
        bits = f.view(np.int32)
        bits = np.where(np.isnan(f), np.int32(0x7FC00000), bits)
        out = h_int(bits, seed)
    elif isinstance(t, T.DoubleType):
        f = pc.fill_null(arr, 0.0).to_numpy(zero_copy_only=False).astype(np.float64) + 0.0
        bits = np.where(np.isnan(f), np.int64(0x7FF8000000000000), f.view(np.int64))
        out = h_long(bits, seed)
    elif isinstance(t, T.DecimalType):
        if t.precision <= 18:
            vals, _ = D.unscaled(arr)
            out = h_long(vals.astype(np.int64), seed)
        else:
            out = h_bytes(pc.fill_null(_big_decimal_bytes(arr), b""), seed)
    elif isinstance(t, (T.StringType, T.BinaryType)):
        out = h_bytes(arr, seed)
    elif isinstance(t, T.StructType):  # the fields in order (Spark's hashing of an InternalRow)
        out = seed
        for i, f in enumerate(t.fields):
            out = _fold(pc.struct_field(arr, [i]), f.data_type, out, xx)
    elif isinstance(t, T.ArrayType):
        out = _fold_elements(arr, t.element_type, seed, xx)
    else:
        raise UnsupportedError(f"hash of {t.simple_string()} values")
    return out if valid is None else np.where(valid, out, seed)


def _fold_elements(arr: pa.Array, et: T.DataType, seed: np.ndarray, xx: bool) -> np.ndarray:
    """``seed`` advanced by each array's elements in order, NULL elements skipped (Spark's
    ``hashForArray``): one vectorized step per element position, over the rows that long."""
    offsets = arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    starts, lens = offsets[:-1], np.diff(offsets)
    out = seed.copy()
    for k in range(int(lens.max()) if len(lens) else 0):
        rows = np.flatnonzero(lens > k)
        values = arr.values.take(pa.array(starts[rows] + k, pa.int64()))
        out[rows] = _fold(values, et, out[rows], xx)
    return out


def _fold_columns(arrays, types, seed: int, xx: bool) -> np.ndarray:
    n = len(arrays[0]) if arrays else 0
    h = np.full(n, seed, dtype=U64 if xx else U32)
    with np.errstate(over="ignore"):
        for a, t in zip(arrays, types):
            h = _fold(a, t, h, xx)
    return h.view(np.int64 if xx else np.int32)


def murmur3_hash(arrays, types, seed: int = SEED) -> np.ndarray:
    """Spark's ``hash(...)`` of the columns (int32 per row)."""
    return _fold_columns(arrays, types, seed, False)


def xxhash64(arrays, types, seed: int = SEED) -> np.ndarray:
    """Spark's ``xxhash64(...)`` of the columns (int64 per row)."""
    return _fold_columns(arrays, types, seed, True)


def _hash_kernel(xx: bool):
    def kernel(a, node, b):
        types = node.arg_types
        if not a:
            n = b.num_rows
            return pa.array(np.full(n, SEED, dtype=np.int64 if xx else np.int32))
        fn = xxhash64 if xx else murmur3_hash
        return pa.array(fn(a, types))
    return kernel


def _hash_inputs(types):
    return tuple(None for _ in types)


def _has_map(t: T.DataType) -> bool:
    if isinstance(t, T.MapType):
        return True
    if isinstance(t, T.ArrayType):
        return _has_map(t.element_type)
    if isinstance(t, T.StructType):
        return any(_has_map(f.data_type) for f in t.fields)
    return False


def _no_map(node) -> TypeCheckFailure | None:
    """Spark's ``HASH_MAP_TYPE``: equal maps may hash differently, so no MAP anywhere."""
    if any(_has_map(t) for t in node.arg_types):
        fn = node.fn_name
        return TypeCheckFailure(
            f'Input to the function `{fn}` cannot contain elements of the "MAP" type. In Spark, '
            'same maps may have different hashcode, thus hash expressions are prohibited on "MAP" '
            'elements. To restore previous behavior set "spark.sql.legacy.allowHashOnMapType" to '
            '"true".', "HASH_MAP_TYPE", {"functionName": f"`{fn}`"})
    return None


register(FunctionSpec("hash", _hash_inputs, lambda t: T.INT, _hash_kernel(False),
                      null_intolerant=False, nullable=lambda n: False, check=_no_map))
register(FunctionSpec("xxhash64", _hash_inputs, lambda t: T.LONG, _hash_kernel(True),
                      null_intolerant=False, nullable=lambda n: False, check=_no_map))


# -- crc32 and the digests ----------------------------------------------------------------------------

_CRC_TABLE = np.zeros(256, dtype=U32)
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0xEDB88320 if _c & 1 else _c >> 1
    _CRC_TABLE[_i] = _c


def _crc32(a, node, b):
    arr = a[0]
    data, start, length = _layout(arr)
    crc = np.full(len(length), 0xFFFFFFFF, dtype=U32)
    for k in range(int(length.max(initial=0))):
        rows = np.flatnonzero(length > k)
        byte = data[start[rows] + k].astype(U32)
        crc[rows] = _CRC_TABLE[((crc[rows] ^ byte) & U32(0xFF)).astype(np.intp)] ^ \
            (crc[rows] >> U32(8))
    out = (crc ^ U32(0xFFFFFFFF)).astype(np.int64)
    return pa.array(out, mask=~arr.is_valid().to_numpy(zero_copy_only=False))


def _digest(algorithm):
    def kernel(a, node, b):
        name = algorithm(node) if callable(algorithm) else algorithm
        arr = a[0].cast(pa.binary())
        if name is None:
            return pa.nulls(len(arr), pa.string())
        enc = pc.dictionary_encode(arr)
        hexes = [hashlib.new(name, v).hexdigest() for v in enc.dictionary.to_pylist()]
        return pc.take(pa.array(hexes, pa.string()), enc.indices)
    return kernel


def _sha2_name(node) -> str | None:
    """SHA-224/256/384/512 for a bit length of 224, 256 (or 0), 384, 512; else NULL."""
    bits = node.arguments[1]
    value = getattr(bits, "value", None)
    return {0: "sha256", 224: "sha224", 256: "sha256", 384: "sha384", 512: "sha512"}.get(value)


def _binary_input(types):
    t = types[0]
    if isinstance(t, (T.BinaryType, T.NullType)):
        return (None,) + (T.INT,) * (len(types) - 1)
    if isinstance(t, T.StringType):
        return (T.BINARY,) + (T.INT,) * (len(types) - 1)
    return None


register(FunctionSpec("crc32", _binary_input, lambda t: T.LONG, _crc32, expected='"BINARY"'))
register(FunctionSpec("md5", _binary_input, lambda t: T.STRING, _digest("md5"),
                      expected='"BINARY"'))
register(FunctionSpec("sha1", _binary_input, lambda t: T.STRING, _digest("sha1"),
                      expected='"BINARY"'))
register(FunctionSpec("sha2", _binary_input, lambda t: T.STRING, _digest(_sha2_name),
                      expected='"BINARY"'))

#: name -> (spec key, display name, min args, max args)
HASH_FUNCTIONS: dict[str, tuple[str, str, int, int]] = {
    "hash": ("hash", "hash", 1, 1 << 20), "xxhash64": ("xxhash64", "xxhash64", 1, 1 << 20),
    "crc32": ("crc32", "crc32", 1, 1), "md5": ("md5", "md5", 1, 1),
    "sha1": ("sha1", "sha1", 1, 1), "sha": ("sha1", "sha", 1, 1),
    "sha2": ("sha2", "sha2", 2, 2),
}
