"""Hashing of string / binary keys a word at a time (``hashing._bytes_hash``): the hash is a
function of the value alone (any batch, slice offset, chunking, string vs large_string, zero-copy
or copied data buffer, chunk boundaries of the fold), distinct values practically never collide,
and partition targets stay balanced for adversarial-looking key sets."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ember.runtime.local import hashing
from ember.runtime.local.hashing import _bytes_hash, hash_columns, partition_ids


def _random_strings(rng: np.random.Generator, n: int, max_len: int) -> list[str]:
    """``n`` random ASCII strings of lengths 0..max_len (built from buffers, no row loop)."""
    alphabet = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789 ,.-", np.uint8)
    lens = rng.integers(0, max_len + 1, n)
    offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int32)
    data = alphabet[rng.integers(0, len(alphabet), int(offsets[-1]))]
    arr = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets.tobytes()),
                                                 pa.py_buffer(data.tobytes())])
    return arr.to_pylist()


def _reference(values: list) -> np.ndarray:
    """Each value hashed alone, in its own freshly built one-row array."""
    return np.array([_bytes_hash(pa.array([v]))[0] for v in values], dtype=np.uint64)


EDGE = ["", "a", "ab", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghijklmnop",
        "abcdefghijklmnopq", "a\x00", "\x00", "\x00\x00", "a" * 117, "a" * 116 + "b",
        "héllo wörld", "x" * 1000]


def test_hash_depends_only_on_the_value():
    rng = np.random.default_rng(0)
    values = EDGE + _random_strings(rng, 600, 130)
    ref = _reference(values)
    arr = pa.array(values, pa.string())
    assert (_bytes_hash(arr) == ref).all()
    assert (_bytes_hash(arr.cast(pa.large_string())) == ref).all()
    assert (_bytes_hash(arr.cast(pa.binary())) == ref).all()
    assert (_bytes_hash(arr.cast(pa.large_binary())) == ref).all()
    for off in (1, 2, 3, 5, 7, 8, 9, 1000):  # every data-buffer misalignment of the values
        assert (_bytes_hash(arr.slice(off)) == ref[off:]).all()
        assert (_bytes_hash(arr.cast(pa.large_binary()).slice(off)) == ref[off:]).all()
        assert (_bytes_hash(arr.slice(off, 17)) == ref[off: off + 17]).all()
    # values shifted inside the data buffer by a prefix of k bytes
    for k in range(1, 9):
        shifted = pa.array(["#" * k] + values).slice(1)
        assert (_bytes_hash(shifted) == ref).all()
    chunked = pa.chunked_array([arr.slice(0, 1001), arr.slice(1001)])
    assert (hash_columns([chunked]) == hash_columns([arr])).all()


def test_hash_is_independent_of_fold_chunking(monkeypatch):
    rng = np.random.default_rng(1)
    values = _random_strings(rng, 5000, 70) + EDGE
    arr = pa.array(values)
    ref = _bytes_hash(arr)
    monkeypatch.setattr(hashing, "_CHUNK_ROWS", (1, 7))
    assert (_bytes_hash(arr) == ref).all()
    monkeypatch.setattr(hashing, "_CHUNK_ROWS", (1 << 20, 1 << 20))
    assert (_bytes_hash(arr) == ref).all()


@pytest.mark.parametrize("lengths", [[16] * 50 + [3], [3] + [16] * 50, [8] * 40 + [0, 8, 7]])
def test_masked_fold_matches_reference(lengths):
    # nearly equal word counts take the masked fold (finished rows read on past their end)
    values = [("v%02d" % i + "abcdefghijklmnopqrstuvwxyz")[:ln] for i, ln in enumerate(lengths)]
    assert (_bytes_hash(pa.array(values)) == _reference(values)).all()
    assert (_bytes_hash(pa.array(["#"] + values).slice(1)) == _reference(values)).all()


def test_long_values(monkeypatch):
    # values over 256 bytes are summed word by word in flat passes, not folded round by round
    base = "".join(chr(33 + (i * 7) % 90) for i in range(3000))
    values = [base[:ln] for ln in (255, 256, 257, 264, 265, 1000, 3000)]
    values += [base[:500] + "~" + base[501:1200], base[:1199] + "~", "~" + base[1:1200],
               base[:1200], "short", ""]
    ref = _reference(values)
    assert len(set(ref.tolist())) == len(values)
    for off in range(1, 9):
        assert (_bytes_hash(pa.array(["#" * off] + values).slice(1)) == ref).all()
    monkeypatch.setattr(hashing, "_LONG_BLOCK_WORDS", 5)  # a value's words over many blocks
    assert (_bytes_hash(pa.array(values, pa.large_string())) == ref).all()
    # a few very long values hash quickly (no Python round per word)
    big = pa.array(["a" * (1 << 20) + str(i) for i in range(4)])
    assert len(set(_bytes_hash(big).tolist())) == 4


def test_unpadded_or_unaligned_data_buffer_is_copied():
    values = ["abcdefghij", "", "klmnopqrstuvwxyz0"]
    ref = _reference(values)
    data = "".join(values).encode()
    offsets = np.array([0, 10, 10, 27], dtype=np.int32)
    for pad in (0, 1, 3):  # a data buffer at an odd address, of exactly the values' size
        raw = pa.py_buffer(b"?" * pad + data)
        arr = pa.Array.from_buffers(pa.string(), 3, [None, pa.py_buffer(offsets.tobytes()),
                                                     raw.slice(pad)])
        assert (_bytes_hash(arr) == ref).all()


def test_nulls_and_empty_input():
    arr = pa.array(["abc", None, "", None, "abc"])
    h = hash_columns([arr])
    assert h[1] == h[3] and h[0] == h[4] and len({h[0], h[1], h[2]}) == 3
    assert len(_bytes_hash(pa.array([], pa.string()))) == 0
    assert len(hash_columns([pa.array([None, None], pa.string())])) == 2
    assert len(set(hash_columns([pa.array(["", ""]), ]).tolist())) == 1


def test_no_collisions_on_random_and_structured_strings():
    rng = np.random.default_rng(2)
    values = set(_random_strings(rng, 200_000, 40))
    # one-byte differences at every position, common prefixes, trailing NULs, lengths 0..33
    base = "the quick brown fox jumps over the lazy dog!"
    for i in range(len(base)):
        for c in "abcXYZ019 \x00":
            values.add(base[:i] + c + base[i + 1:])
    for ln in range(34):
        for c in "ab\x00":
            values.add(c * ln)
            values.add("prefix/" + c * ln)
    values.update(f"customer#{i:09d}" for i in range(100_000))
    arr = pa.array(sorted(values))
    h = hash_columns([arr])
    assert len(np.unique(h)) == len(arr)


@pytest.mark.parametrize("kind", ["one_byte_diff", "last_byte", "prefix", "lengths", "numbered"])
def test_partition_balance(kind):
    n_parts = 16
    if kind == "one_byte_diff":
        keys = [f"{'x' * 20}{chr(33 + i % 90)}{'y' * 20}{i // 90}" for i in range(16_000)]
    elif kind == "last_byte":
        keys = [bytes([i // 256, i % 256]).hex() + "abcdefgh" * 2 + chr(33 + i % 90)
                for i in range(16_000)]
    elif kind == "prefix":
        keys = ["common/prefix/of/forty/bytes/exactly/" + str(i) for i in range(16_000)]
    elif kind == "lengths":
        keys = [("k" + str(i)).ljust(ln, "\x00") for i in range(1000)
                for ln in (7, 8, 9, 16, 17, 0)] + [""]
    else:
        keys = [f"Customer#{i:09d}" for i in range(16_000)]
    keys = list(dict.fromkeys(keys))
    ids = partition_ids([pa.array(keys)], n_parts)
    counts = np.bincount(ids, minlength=n_parts)
    expected = len(keys) / n_parts
    # a uniform placement: every target within 6 standard deviations of the mean
    assert np.abs(counts - expected).max() < 6 * np.sqrt(expected), counts


def test_strings_of_the_old_bytewise_path_still_work():
    arr = pa.array(["abc", "", None, "abcdefghijk"])
    old = hashing.WORD_HASH
    try:
        hashing.WORD_HASH = False
        h = hash_columns([arr])
    finally:
        hashing.WORD_HASH = old
    assert h[0] != h[3] and len(h) == 4
