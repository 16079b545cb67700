"""The vectorized column-argument string kernels agree with the Python reference semantics they
replaced (``str.find``/``strip``/``replace`` on code points, UTF8String.substringSQL)."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from ember.expressions import strings as S

ALPHABET = ["a", "b", "c", "ab", "é", "ß", "日", "😀", " ", "x"]


def _rand_str(rng: random.Random, max_parts: int) -> str | None:
    if rng.random() < 0.08:
        return None
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, max_parts)))


def _rand_int(rng: random.Random, lo: int, hi: int) -> int | None:
    return None if rng.random() < 0.08 else rng.randint(lo, hi)


def _ref(fn, *cols):
    return [None if any(v is None for v in row) else fn(*row) for row in zip(*cols)]


def _substring_ref(s: str, pos: int, length: int) -> str:
    n = len(s)
    start = pos - 1 if pos > 0 else (n + pos if pos < 0 else 0)
    end = min(start + length, n)
    start = max(start, 0)
    return s[start:end] if start < end else ""


def _pad_ref(left: bool):
    def f(s: str, n: int, p: str) -> str:
        if n <= 0:
            return ""
        if len(s) >= n:
            return s[:n]
        if not p:
            return s
        fill = (p * (n // len(p) + 1))[: n - len(s)]
        return fill + s if left else s + fill
    return f


def _locate_ref(sub: str, s: str, pos: int) -> int:
    return 0 if pos < 1 else s.find(sub, pos - 1) + 1


@pytest.mark.parametrize("seed", range(6))
def test_column_kernels_match_reference(seed: int) -> None:
    rng = random.Random(seed)
    n = 400
    s = [_rand_str(rng, 8) for _ in range(n)]
    p = [_rand_str(rng, 2) for _ in range(n)]
    r = [_rand_str(rng, 3) for _ in range(n)]
    i1 = [_rand_int(rng, -10, 10) for _ in range(n)]
    i2 = [_rand_int(rng, -3, 12) for _ in range(n)]
    sa, pa_, ra = (pa.array(x, pa.large_string()) for x in (s, p, r))
    ia, ib = pa.array(i1, pa.int32()), pa.array(i2, pa.int32())
    # slices of the arrays exercise non-zero offsets
    cases = [
        (S._substring_columns([sa, ia, ib]).to_pylist(), _ref(_substring_ref, s, i1, i2)),
        (S._substring_columns([sa, ia]).to_pylist(),
         _ref(lambda a, b: _substring_ref(a, b, 2147483647), s, i1)),
        (S._find_columns(sa, pa_, None).to_pylist(), _ref(lambda a, b: a.find(b) + 1, s, p)),
        (S._find_columns(sa, pa_, ia).to_pylist(), _ref(_locate_ref, p, s, i1)),
        (S._match_columns(sa, pa_, str.startswith).to_pylist(), _ref(str.startswith, s, p)),
        (S._match_columns(sa, pa_, str.endswith).to_pylist(), _ref(str.endswith, s, p)),
        (S._match_columns(sa, pa_, str.__contains__).to_pylist(),
         _ref(str.__contains__, s, p)),
        (S._trim_columns([sa, pa_], True, True).to_pylist(), _ref(str.strip, s, p)),
        (S._trim_columns([sa, pa_], True, False).to_pylist(), _ref(str.lstrip, s, p)),
        (S._trim_columns([sa, pa_], False, True).to_pylist(), _ref(str.rstrip, s, p)),
        (S._pad_columns(sa, ib, pa_, True).to_pylist(), _ref(_pad_ref(True), s, i2, p)),
        (S._pad_columns(sa, ib, pa_, False).to_pylist(), _ref(_pad_ref(False), s, i2, p)),
        (S._replace_columns(sa, pa_, ra).to_pylist(),
         _ref(lambda a, b, c: a.replace(b, c) if b else a, s, p, r)),
        (S._replace_columns(sa.slice(7), pa_.slice(7), ra.slice(7)).to_pylist(),
         _ref(lambda a, b, c: a.replace(b, c) if b else a, s[7:], p[7:], r[7:])),
        (S._substring_columns([sa.slice(3), ia.slice(3), ib.slice(3)]).to_pylist(),
         _ref(_substring_ref, s[3:], i1[3:], i2[3:])),
    ]
    for i, (got, want) in enumerate(cases):
        assert got == want, i


def test_replace_overlapping_matches() -> None:
    s = pa.array(["aaaaa", "abababa", "aaa", "", None], pa.large_string())
    x = pa.array(["aa", "aba", "aaaa", "a", "a"], pa.large_string())
    r = pa.array(["X", "-", "y", "z", "z"], pa.large_string())
    assert S._replace_columns(s, x, r).to_pylist() == ["XXa", "-b-", "aaa", "", None]
