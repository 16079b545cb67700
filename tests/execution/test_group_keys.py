"""Grouping by several key columns (``aggregate.group_ids`` / ``assign_groups``): the column-by-
column refinement (integer columns first, columns constant within the groups so far skipped)
gives exactly the groups, ids and first rows of the joint encoding -- numbered by first
appearance -- with NULLs, empty and long strings, floats, decimals, nested keys, many keys, and
dependent columns that differ from their group in a single row."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

import ember
import ember.execution.aggregate as A
from ember.execution.kernels.keys import encode_arrays


def _py_key(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, dict):
        return tuple(sorted((k, _py_key(x)) for k, x in v.items()))
    if isinstance(v, list):
        return tuple(_py_key(x) for x in v)
    return (type(v).__name__, v)


def _ref_group_ids(cols: list[pa.Array]) -> tuple[list[int], list[int]]:
    """First-appearance numbering in plain Python (NULL one value, NaN one value)."""
    seen: dict[tuple, int] = {}
    ids, first = [], []
    for i, key in enumerate(zip(*[[_py_key(v) for v in c.to_pylist()] for c in cols])):
        if key not in seen:
            seen[key] = len(seen)
            first.append(i)
        ids.append(seen[key])
    return ids, first


def _check(cols: list[pa.Array]) -> None:
    n = len(cols[0])
    gids, n_groups, keys = A.assign_groups(list(cols), n)
    canon = [A._canonical_key(c) for c in cols]
    rids, rfirst = _ref_group_ids(canon)
    assert gids.dtype == np.int64
    assert gids.tolist() == rids and n_groups == len(rfirst)
    first = pa.array(rfirst, type=pa.int64())
    def py(arr):
        return [_py_key(v) for v in arr.to_pylist()]

    assert [py(k) for k in keys] == [py(c.take(first)) for c in canon]
    # the joint encoding of every column (the path taken before the refinement) agrees
    codes, card = encode_arrays(canon, nulls_equal=True)
    jids, jfirst = A._dense_by_first(codes, card)
    assert jids.tolist() == rids and jfirst.tolist() == rfirst


def _strings(rng, n, card, max_len, null_p=0.1):
    pool = ["", "a", "a\x00", "é" * 3] + [
        "".join(rng.choice(list("abcxyz #"), rng.integers(0, max_len + 1))) for _ in range(card)]
    vals = [pool[i] for i in rng.integers(0, len(pool), n)]
    return pa.array([None if rng.random() < null_p else v for v in vals], pa.string())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_mixed_keys_match_reference(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    ints = rng.integers(0, 40, n)
    cols = [
        pa.array(ints, pa.int64(), mask=rng.random(n) < 0.05),
        _strings(rng, n, 30, 130),
        pa.array(rng.choice([0.0, -0.0, 1.5, float("nan")], n), mask=rng.random(n) < 0.1),
        pa.array([Decimal(int(x)) / 100 for x in rng.integers(0, 5, n)], pa.decimal128(10, 2)),
        pa.array(rng.random(n) < 0.5),
        pa.array([dt.date(2020, 1, 1 + int(x)) for x in rng.integers(0, 3, n)]),
        _strings(rng, n, 5, 3, null_p=0.3).cast(pa.large_binary()),
    ]
    _check(cols)
    _check(cols[1:])          # no integer column
    _check(cols[1:2] + cols[6:])  # strings only


def test_dependent_columns_are_skipped_but_still_split_groups():
    rng = np.random.default_rng(7)
    n = 5000
    key = rng.integers(0, 1200, n)
    name = np.array([f"Customer#{k:09d}" for k in range(1200)], dtype=object)[key]
    comment = np.array(["x" * (k % 117) + str(k) for k in range(1200)], dtype=object)[key]
    base = [pa.array(key), pa.array(list(name)), pa.array(list(comment))]
    _check(base)  # every string column depends on the key
    # one row deep inside (not sampled by the probe) differs from its group's first row
    for row in (2500, 2501, n - 2, 1):
        changed = list(comment)
        changed[row] = changed[row] + "!"
        _check([base[0], base[1], pa.array(changed)])
    # NULL vs empty string, and NULL vs a value, in one group
    k = pa.array([1, 1, 1, 2, 2, 1])
    _check([k, pa.array(["", None, "", None, None, None])])
    _check([k, pa.array(["v", "v", None, "w", "w", "v"])])
    _check([k, pa.array([None, None, None, None, None, None], pa.string())])


def test_floats_constant_by_canonical_bits():
    k = pa.array([1, 2, 1, 2, 1, 3])
    _check([k, pa.array([float("nan"), 0.0, float("nan"), -0.0, float("nan"), None])])
    _check([k, pa.array([float("nan"), 0.0, 1.0, -0.0, float("nan"), None])])
    _check([k, pa.array([1.0, 2.0, 1.0, 2.0, 1.0, 3.0], pa.float32())])


def test_nested_and_many_keys():
    rng = np.random.default_rng(3)
    n = 800
    a = rng.integers(0, 3, n)
    struct = pa.StructArray.from_arrays([pa.array(a), pa.array([str(x) for x in a])], ["x", "y"])
    lst = pa.array([[int(x), None] if x else None for x in a], pa.list_(pa.int64()))
    _check([pa.array(a), struct, lst])
    _check([struct, pa.array(rng.integers(0, 2, n))])
    many = [pa.array(rng.integers(0, 2, n)) for _ in range(6)] + [
        _strings(rng, n, 3, 20) for _ in range(6)]
    _check(many)
    # every row its own group after the first column: later columns are not even looked at
    uniq = pa.array(np.arange(n))
    _check([uniq, _strings(rng, n, 50, 40), pa.array(rng.random(n))])


def test_odd_key_types():
    k = pa.array([1, 1, 2, 2, 1, 3])
    nulls = pa.nulls(6)
    dictionary = pa.array(["a", "a", "b", "b", "a", "c"]).dictionary_encode()
    u64 = pa.array([1, 1, 2, 2, 1, (1 << 64) - 1], pa.uint64())
    all_null_int = pa.array([None] * 6, pa.int64())
    for cols in ([k, nulls], [nulls, k], [k, dictionary], [dictionary, u64], [u64, k],
                 [all_null_int, pa.array(["x", "y", "x", "y", "x", "y"])],
                 [k, pa.chunked_array([["a", "a", "b"], ["b", "a", "d"]])]):
        n = len(cols[0])
        ids, first = A.group_ids([A._canonical_key(c) for c in cols], n)
        plain = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in cols]
        plain = [c.dictionary_decode() if pa.types.is_dictionary(c.type) else c for c in plain]
        rids, rfirst = _ref_group_ids(plain)
        assert ids.tolist() == rids and first.tolist() == rfirst


def test_refinement_matches_joint_encoding_on_skewed_sizes(monkeypatch):
    rng = np.random.default_rng(11)
    n = 20_000
    key = rng.zipf(1.5, n) % 5000
    cols = [pa.array(key), pa.array([f"n{k % 977}" for k in key]),
            pa.array([f"c{k}" * (1 + k % 9) for k in key])]
    new = A.group_ids([A._canonical_key(c) for c in cols], n)
    monkeypatch.setattr(A, "MULTI_KEY_REFINE", False)
    old = A.group_ids([A._canonical_key(c) for c in cols], n)
    assert (new[0] == old[0]).all() and (new[1] == old[1]).all()


@pytest.mark.parametrize("batch", ["2", "65536"])
def test_sql_group_by_string_keys(batch):
    s = ember.Session()
    s.sql("SET ember.execution.progress.enabled=false")
    s.sql(f"SET ember.execution.batchSize={batch}")
    s.sql("SET spark.sql.shuffle.partitions=3")
    long = "L" * 150
    rows = [(1, "ann", "", long), (1, "ann", "", long), (2, "bob", None, "x"), (2, "bob", None, "x"),
            (3, None, "c", long + "1"), (3, None, "c", long + "2"), (None, "", None, None),
            (None, "", None, None), (4, "dan", "d", "y"), (4, "dan", "e", "y")]
    s.createDataFrame(rows, "k int, a string, b string, c string").createOrReplaceTempView("t")
    got = s.sql("select k, a, b, c, count(*) n from t group by k, a, b, c").collect()
    want = {}
    for r in rows:
        want[r] = want.get(r, 0) + 1
    assert {tuple(r)[:4]: r[4] for r in got} == want
    assert len(got) == len(want)
