"""Non-deterministic leaf functions whose values depend on the partition and the row's position
in it (Spark's ``Nondeterministic`` expressions, ``initialize(partitionIndex)`` per task):

- :class:`MonotonicallyIncreasingID` ``monotonically_increasing_id()``: ``(partition << 33) +
  row number in the partition``;
- :class:`SparkPartitionID` ``SPARK_PARTITION_ID()``;
- :class:`Rand` / :class:`Randn` ``rand(seed)`` / ``randn(seed)``: Spark's ``XORShiftRandom``
  seeded with ``seed + partition index``, ``nextDouble`` / ``nextGaussian`` per row in order, so
  the values equal Spark's wherever the rows sit in the same partitions in the same order (a
  ``range(0, n, 1, p)`` or a single-partition input; Ember's partitioning of other inputs can
  differ from Spark's);
- :class:`Uuid` ``uuid()``: random version-4 UUIDs (Spark's come from a seeded Mersenne Twister;
  the seed is random in both engines, so no sequence is reproducible).

The operators call :func:`initialize` on their bound expressions once per partition; each
initialized node carries its own state (the generator, the row count) across the partition's
batches.  ``XORShiftRandom`` is a linear map over GF(2)^64, so the states of a whole batch are
computed by repeated doubling (``T^m`` applied to the first ``m`` states) instead of a loop per
row.
"""

from __future__ import annotations

import secrets
from dataclasses import field
from typing import Any

import numpy as np
import pyarrow as pa

from ember import types as T
from ember.expressions.base import Expression, LeafExpression
from ember.trees import node

__all__ = ["MonotonicallyIncreasingID", "SparkPartitionID", "Rand", "Randn", "Uuid",
           "initialize", "XorShiftRandom"]

U64 = np.uint64
_M64 = (1 << 64) - 1


class _Stateful(LeafExpression):
    """A leaf whose value depends on the partition and the rows seen before in it."""

    __slots__ = ()

    @property
    def deterministic(self) -> bool:
        return False

    @property
    def nullable(self) -> bool:
        return False

    @property
    def resolved(self) -> bool:
        return True

    def initialize(self, partition_index: int) -> Expression:
        return self.copy(state=self._fresh_state(partition_index))

    def _fresh_state(self, partition_index: int) -> Any:
        raise NotImplementedError

    def _state(self) -> Any:
        st = self.state  # type: ignore[attr-defined]
        if st is None:  # evaluated without initialize (a constant context): partition 0
            st = self._fresh_state(0)
            object.__setattr__(self, "state", st)
        return st


def initialize(exprs: list[Expression], partition_index: int) -> list[Expression]:
    """``exprs`` with every stateful node initialized for ``partition_index`` (the unchanged
    list when there is none)."""
    def init(x: Expression) -> Expression | None:
        return x.initialize(partition_index) if isinstance(x, _Stateful) else None
    return [e.transform_up(init) for e in exprs]


@node
class MonotonicallyIncreasingID(_Stateful):
    state: Any = field(default=None, compare=False)

    @property
    def data_type(self) -> T.DataType:
        return T.LONG

    def _fresh_state(self, partition_index: int) -> Any:
        return [partition_index << 33]

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        st = self._state()
        n = batch.num_rows
        out = np.arange(st[0], st[0] + n, dtype=np.int64)
        st[0] += n
        return pa.array(out)

    def simple_string(self) -> str:
        return "monotonically_increasing_id()"

    def sql(self) -> str:
        return "monotonically_increasing_id()"


@node
class SparkPartitionID(_Stateful):
    state: Any = field(default=None, compare=False)

    @property
    def data_type(self) -> T.DataType:
        return T.INT

    def _fresh_state(self, partition_index: int) -> Any:
        return partition_index

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return pa.array(np.full(batch.num_rows, self._state(), dtype=np.int32))

    def simple_string(self) -> str:
        return "SPARK_PARTITION_ID()"

    def sql(self) -> str:
        return "SPARK_PARTITION_ID()"


# -- XORShiftRandom -----------------------------------------------------------------------------


def _scala_bytes_hash(data: bytes, seed: int) -> int:
    """Scala's ``MurmurHash3.bytesHash`` (as a signed 32-bit int)."""
    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & 0xFFFFFFFF

    def mix_last(h: int, k: int) -> int:
        k = rotl((k * 0xCC9E2D51) & 0xFFFFFFFF, 15)
        return h ^ ((k * 0x1B873593) & 0xFFFFFFFF)

    h = seed & 0xFFFFFFFF
    n = len(data) // 4 * 4
    for i in range(0, n, 4):
        h = mix_last(h, int.from_bytes(data[i:i + 4], "little"))
        h = (rotl(h, 13) * 5 + 0xE6546B64) & 0xFFFFFFFF
    tail = data[n:]
    if tail:
        h = mix_last(h, int.from_bytes(tail, "little"))
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def _hash_seed(seed: int) -> int:
    """Spark's ``XORShiftRandom.hashSeed`` (unsigned 64-bit)."""
    data = (seed & _M64).to_bytes(8, "big")
    low = _scala_bytes_hash(data, 0x3C074A61)
    high = _scala_bytes_hash(data, low)
    return ((high << 32) | (low & 0xFFFFFFFF)) & _M64


def _step(s: np.ndarray) -> np.ndarray:
    s = s ^ (s << U64(21))
    s = s ^ (s >> U64(35))
    return s ^ (s << U64(4))


_BITS = U64(1) << np.arange(64, dtype=U64)
_T1 = _step(_BITS.copy())  # columns of the one-step matrix


def _apply(cols: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The GF(2) matrix with columns ``cols`` applied to every value of ``x``."""
    out = np.zeros(len(x), dtype=U64)
    for j in range(64):
        out ^= np.where((x >> U64(j)) & U64(1) == U64(1), cols[j], U64(0))
    return out


class XorShiftRandom:
    """Spark's ``XORShiftRandom`` (a ``java.util.Random`` whose ``next(bits)`` is a 64-bit
    xorshift), drawing whole arrays of values."""

    def __init__(self, seed: int) -> None:
        self.seed = U64(_hash_seed(seed))
        self.next_gaussian: float | None = None

    def states(self, n: int) -> np.ndarray:
        """The next ``n`` states (each the value ``next(bits)`` masks)."""
        if n == 0:
            return np.zeros(0, dtype=U64)
        out = _step(np.array([self.seed], dtype=U64))
        cols = _T1
        while len(out) < n:
            m = len(out)
            out = np.concatenate([out, _apply(cols, out[: n - m])])
            if len(out) < n:
                cols = _apply(cols, cols)  # T^m composed with itself: T^(2m)
        self.seed = out[n - 1]
        return out[:n]

    def doubles(self, n: int) -> np.ndarray:
        """``nextDouble()`` ``n`` times: ``((next(26) << 27) + next(27)) * 2^-53``."""
        s = self.states(2 * n)
        hi = (s[0::2] & U64((1 << 26) - 1)).astype(np.int64)
        lo = (s[1::2] & U64((1 << 27) - 1)).astype(np.int64)
        return ((hi << 27) + lo).astype(np.float64) * (1.0 / (1 << 53))

    def gaussians(self, n: int) -> np.ndarray:
        """``nextGaussian()`` ``n`` times (Java's polar method; each accepted pair gives two
        values, the second kept for the next call)."""
        out = np.empty(n, dtype=np.float64)
        k = 0
        if n and self.next_gaussian is not None:
            out[0] = self.next_gaussian
            self.next_gaussian = None
            k = 1
        while k < n:
            need = (n - k + 1) // 2
            pairs = max(8, int(need / 0.75) + 8)
            # draw pairs one block at a time; states beyond the last accepted pair used are
            # given back by rewinding to the saved seed and redrawing exactly what was used
            saved = self.seed
            d = self.doubles(2 * pairs)
            v1, v2 = 2 * d[0::2] - 1, 2 * d[1::2] - 1
            s = v1 * v1 + v2 * v2
            ok = np.flatnonzero((s < 1) & (s != 0))
            use = ok[:need]
            used_pairs = int(use[-1]) + 1 if len(use) else pairs
            self.seed = saved
            self.doubles(2 * used_pairs)
            with np.errstate(all="ignore"):
                mult = np.sqrt(-2 * np.log(s[use]) / s[use])
            g = np.empty(2 * len(use))
            g[0::2] = v1[use] * mult
            g[1::2] = v2[use] * mult
            take = min(len(g), n - k)
            out[k:k + take] = g[:take]
            k += take
            if take < len(g):
                self.next_gaussian = float(g[take])
        return out


@node
class Rand(_Stateful):
    """``rand(seed)`` (uniform in [0, 1)); ``gaussian``: ``randn(seed)``."""

    seed: int
    gaussian: bool = False
    fn_name: str = field(default="rand", compare=False)
    state: Any = field(default=None, compare=False)

    @property
    def data_type(self) -> T.DataType:
        return T.DOUBLE

    def _fresh_state(self, partition_index: int) -> Any:
        return XorShiftRandom(self.seed + partition_index)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        rng = self._state()
        n = batch.num_rows
        return pa.array(rng.gaussians(n) if self.gaussian else rng.doubles(n))

    def simple_string(self) -> str:
        return f"{self.fn_name}({self.seed})"

    def sql(self) -> str:
        return f"{self.fn_name}({self.seed})"


def Randn(seed: int) -> Rand:  # noqa: N802 - Spark's class name
    return Rand(seed, True, "randn")


def random_seed() -> int:
    """A seed for ``rand()`` without one (Spark's ResolveRandomSeed draws a random long)."""
    return secrets.randbits(64) - (1 << 63)


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


@node
class Uuid(_Stateful):
    state: Any = field(default=None, compare=False)

    @property
    def data_type(self) -> T.DataType:
        return T.STRING

    def _fresh_state(self, partition_index: int) -> Any:
        return np.random.default_rng(secrets.randbits(128))

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        raw = self._state().integers(0, 256, size=(n, 16), dtype=np.uint8)
        raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40
        raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80
        digits = np.empty((n, 32), dtype=np.uint8)
        digits[:, 0::2] = _HEX[raw >> 4]
        digits[:, 1::2] = _HEX[raw & 0x0F]
        text = np.full((n, 36), ord("-"), dtype=np.uint8)
        for lo, hi, at in ((0, 8, 0), (8, 12, 9), (12, 16, 14), (16, 20, 19), (20, 32, 24)):
            text[:, at:at + hi - lo] = digits[:, lo:hi]
        offsets = np.arange(0, 36 * (n + 1), 36, dtype=np.int32)
        return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets.tobytes()),
                                                      pa.py_buffer(text.tobytes())])

    def simple_string(self) -> str:
        return "uuid()"

    def sql(self) -> str:
        return "uuid()"
