"""Collection functions over ARRAY and MAP values (Spark's ``collectionOperations``):
``array_contains``, ``array_position``, ``array_remove``, ``array_distinct``, ``array_union``,
``array_intersect``, ``array_except``, ``sort_array``, ``array_sort``, ``array_max``,
``array_min``, ``flatten``, ``slice``, ``array_join``, ``arrays_zip``, ``sequence``,
``map_entries``, ``map_concat``, ``split``.

Every kernel works on the flattened elements of the whole batch: an element's row is
``np.repeat(arange(n), lengths)``; per-row answers come from ``bincount``/``minimum.reduceat``,
Arrow's ``group_by``/``sort_by`` over ``(row, value)`` tables, and the result lists are rebuilt
from new offsets -- never a Python loop per row.  NULL semantics are Spark's (a NULL array or
argument gives NULL; ``array_contains`` is NULL when the value is absent but the array holds a
NULL; the set functions treat NULL as one value).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.coercion import find_wider_type
from ember.errors import ExecutionError
from ember.expressions.base import Literal
from ember.expressions.cast import cast_array
from ember.expressions.collections import (
    _build_map,
    check_array_lengths,
    list_parts,
    lists_from_lengths,
)
from ember.expressions.common import unexpected_input_type
from ember.expressions.misc import FunctionSpec, ScalarFunction, nullable_from_arguments, register
from ember.expressions.regex import translate

__all__ = ["ARRAY_FUNCTIONS", "zip_field_names"]


# ---------------------------------------------------------------------------------------------
# Flattened views


class Flat:
    """The elements of a list (or map) array in row order: ``rows`` (input row per element),
    ``pos`` (index into the unsliced child values), ``lens``/``valid`` per row."""

    def __init__(self, arr: pa.Array) -> None:
        starts, lens, valid = list_parts(arr)
        self.n = len(arr)
        self.valid = valid
        self.lens = np.where(valid, lens, 0)
        self.rows = np.repeat(np.arange(self.n), self.lens)
        first = np.repeat(np.cumsum(self.lens) - self.lens, self.lens)
        self.within = np.arange(int(self.lens.sum())) - first
        self.pos = np.repeat(starts, self.lens) + self.within
        self.arr = arr

    def values(self) -> pa.Array:
        return pc.take(self.arr.values, pa.array(self.pos, pa.int64()))


_lists = lists_from_lengths


def _rows_of(rows: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(rows, minlength=n)


def _valid(a: pa.Array) -> np.ndarray:
    return ~pc.is_null(a).to_numpy(zero_copy_only=False)


def _bool_or_null(values: np.ndarray, valid: np.ndarray) -> pa.Array:
    return pa.array(values, pa.bool_(), mask=~valid)


def _et(t: T.DataType) -> T.DataType:
    return t.element_type if isinstance(t, T.ArrayType) else T.NULL  # type: ignore[attr-defined]


def _spec(key: str, inputs, result, kernel, **kw) -> FunctionSpec:
    return register(FunctionSpec(key, inputs, result, kernel, **kw))


def _array_and_element(types: tuple[T.DataType, ...]):
    """``f(array, value)``: both to the wider of the element and value types (Spark's
    ``findWiderTypeWithoutStringPromotionForTwo``)."""
    at, vt = types
    if isinstance(at, T.NullType):
        return (None, None)
    if not isinstance(at, T.ArrayType):
        return None
    wider = find_wider_type([at.element_type, vt], string_promotion=False)
    if wider is None:
        return None
    return (T.ArrayType(wider, at.contains_null), wider)


def _eq_elements(flat: Flat, value: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Per element: equal to its row's ``value`` (False for NULLs) and is NULL."""
    vals = flat.values()
    wanted = pc.take(value, pa.array(flat.rows, pa.int64()))
    eq = pc.equal(vals, wanted)
    null = pc.is_null(vals).to_numpy(zero_copy_only=False)
    return pc.fill_null(eq, False).to_numpy(zero_copy_only=False), null


# ---------------------------------------------------------------------------------------------
# Search


def _contains(a, node, b):
    arr, v = a
    flat = Flat(arr)
    eq, null = _eq_elements(flat, v)
    found = _rows_of(flat.rows[eq], flat.n) > 0
    has_null = _rows_of(flat.rows[null], flat.n) > 0
    valid = flat.valid & _valid(v) & (found | ~has_null)
    return _bool_or_null(found, valid)


_spec("array_contains", _array_and_element, lambda t: T.BOOLEAN, _contains,
      expected='"ARRAY"')


def _position(a, node, b):
    arr, v = a
    flat = Flat(arr)
    eq, _ = _eq_elements(flat, v)
    out = np.zeros(flat.n, dtype=np.int64)
    hit_rows = flat.rows[eq][::-1]
    out[hit_rows] = flat.within[eq][::-1] + 1  # the last write (the first hit) wins
    return pa.array(out, pa.int64(), mask=~(flat.valid & _valid(v)))


_spec("array_position", _array_and_element, lambda t: T.LONG, _position, expected='"ARRAY"')


def _remove(a, node, b):
    arr, v = a
    flat = Flat(arr)
    eq, _ = _eq_elements(flat, v)
    keep = ~eq
    vals = flat.values().filter(pa.array(keep))
    lens = _rows_of(flat.rows[keep], flat.n)
    return _lists(lens, vals, flat.valid & _valid(v), node.data_type.to_arrow())


_spec("array_remove", _array_and_element, lambda t: t[0], _remove, expected='"ARRAY"')


# ---------------------------------------------------------------------------------------------
# Set operations (NULL is one value; the first occurrence's order is kept)


def _key(values: pa.Array, t: T.DataType) -> pa.Array:
    """Comparable keys: floating point NaN and -0.0 normalised (Spark's SQLOrderingUtil)."""
    if isinstance(t, (T.FloatType, T.DoubleType)):
        values = pc.if_else(pc.equal(values, 0), pa.scalar(0.0, values.type), values)
    return values


def _first_occurrences(rows: np.ndarray, keys: pa.Array) -> np.ndarray:
    """Indexes (ascending) of the first element of each distinct ``(row, key)``."""
    if not len(rows):
        return np.zeros(0, np.int64)
    t = pa.table({"r": pa.array(rows), "k": keys, "i": pa.array(np.arange(len(rows)))})
    firsts = t.group_by(["r", "k"], use_threads=False).aggregate([("i", "min")])
    return np.sort(firsts.column("i_min").to_numpy())


def _member(rows: np.ndarray, keys: pa.Array, other_rows: np.ndarray,
            other_keys: pa.Array) -> np.ndarray:
    """Per element: whether ``(row, key)`` occurs among the other side's elements (NULL keys
    match NULL keys)."""
    if not len(rows):
        return np.zeros(0, bool)
    left = pa.table({"r": pa.array(rows), "k": keys, "null": pc.is_null(keys),
                     "i": pa.array(np.arange(len(rows)))})
    right = pa.table({"r": pa.array(other_rows), "k": other_keys,
                      "null": pc.is_null(other_keys)})
    right = right.group_by(["r", "k", "null"], use_threads=False).aggregate([])
    right = right.append_column("hit", pa.array(np.ones(right.num_rows, bool)))
    # NULL keys join on the null flag, their key filled with one stand-in value
    if keys.null_count or other_keys.null_count:
        both = pa.concat_arrays([keys, other_keys])
        non_null = pc.drop_null(both)
        stand_in = non_null[0] if len(non_null) else pa.scalar(0, pa.int8())
        left = _fill_key(left, stand_in)
        right = _fill_key(right, stand_in)
    joined = left.join(right, ["r", "k", "null"], join_type="left outer", use_threads=False)
    hit = np.zeros(len(rows), bool)
    got = joined.filter(pc.is_valid(joined.column("hit")))
    hit[got.column("i").to_numpy()] = True
    return hit


def _fill_key(t: pa.Table, stand_in) -> pa.Table:
    k = t.column("k")
    if len(k) and pa.types.is_null(k.type):
        k = pa.array(np.zeros(len(k), np.int8))
    elif k.null_count:
        k = pc.fill_null(k, stand_in.cast(k.type) if isinstance(stand_in, pa.Scalar) else stand_in)
    return t.set_column(t.schema.get_field_index("k"), "k", k)


def _distinct(a, node, b):
    flat = Flat(a[0])
    et = _et(node.arguments[0].data_type)
    vals = _key(flat.values(), et)  # Spark writes -0.0 as 0.0 here
    keep = _first_occurrences(flat.rows, vals)
    lens = _rows_of(flat.rows[keep], flat.n)
    return _lists(lens, vals.take(pa.array(keep)), flat.valid, node.data_type.to_arrow())


def _one_array(types):
    return (None,) if isinstance(types[0], (T.ArrayType, T.NullType)) else None


_spec("array_distinct", _one_array, lambda t: t[0], _distinct, expected='"ARRAY"')


def _two_arrays(types):
    """Two arrays of one (wider) element type (Spark's ``ArrayBinaryLike``)."""
    lt, rt = types
    if not all(isinstance(t, (T.ArrayType, T.NullType)) for t in types):
        return None
    wider = find_wider_type([_et(lt), _et(rt)], string_promotion=False)
    if wider is None:
        return None
    return (T.ArrayType(wider), T.ArrayType(wider))


def _set_op(a, node, b):
    left, right = (Flat(x) for x in a)
    et = _et(node.data_type)
    lv, rv = (cast_array(f.values(), _et(x.data_type), et)
              for f, x in zip((left, right), node.arguments))
    key = node.spec.key
    valid = left.valid & right.valid
    if key == "array_union":
        # the left elements of a row, then the right ones: stable order by row
        rows = np.concatenate([left.rows, right.rows])
        order = np.argsort(rows, kind="stable")
        rows = rows[order]
        vals = pa.concat_arrays([lv, rv]).take(pa.array(order))
    else:
        hit = _member(left.rows, _key(lv, et), right.rows, _key(rv, et))
        keep = hit if key == "array_intersect" else ~hit
        rows = left.rows[keep]
        vals = lv.filter(pa.array(keep))
    vals = _key(vals, et)
    first = _first_occurrences(rows, vals)
    lens = _rows_of(rows[first], left.n)
    return _lists(lens, vals.take(pa.array(first)), valid, node.data_type.to_arrow())


for _k in ("array_union", "array_intersect", "array_except"):
    _spec(_k, lambda t: None if _two_arrays(t) is None else (None, None), lambda t: T.ArrayType(find_wider_type(
        [_et(t[0]), _et(t[1])], string_promotion=False) or T.NULL), _set_op,
        expected='"ARRAY"')


# ---------------------------------------------------------------------------------------------
# Ordering and extremes


def _sorted(arr: pa.Array, ascending: pa.Array | bool, nulls_first_when_asc: bool,
            at: pa.DataType, et: T.DataType) -> pa.Array:
    flat = Flat(arr)
    vals = flat.values()
    asc = ascending if isinstance(ascending, bool) else None
    if asc is None:
        flags = ascending.to_numpy(zero_copy_only=False)
        asc_rows = flags[flat.rows] if len(flat.rows) else np.zeros(0, bool)
    else:
        asc_rows = np.full(len(flat.rows), asc)
    null = pc.is_null(vals).to_numpy(zero_copy_only=False)
    # NULLs first ascending, last descending (sort_array); always last (array_sort)
    nulls_first = asc_rows & nulls_first_when_asc
    null_rank = np.where(null, np.where(nulls_first, 0, 2), 1)
    t = pa.table({"r": pa.array(flat.rows), "n": pa.array(null_rank),
                  "v": _key(vals, et), "i": pa.array(np.arange(len(vals)))})
    idx_asc = t.sort_by([("r", "ascending"), ("n", "ascending"), ("v", "ascending")]
                        ).column("i").to_numpy()
    idx_desc = t.sort_by([("r", "ascending"), ("n", "ascending"), ("v", "descending")]
                         ).column("i").to_numpy()
    idx = np.where(asc_rows[idx_asc] if len(idx_asc) else np.zeros(0, bool), idx_asc, idx_desc)
    return _lists(flat.lens, vals.take(pa.array(idx, pa.int64())), flat.valid, at)


def _sort_array(a, node, b):
    asc = a[1] if len(a) > 1 else True
    if not isinstance(asc, bool):
        asc = pc.fill_null(asc, True)
    return _sorted(a[0], asc, True, node.data_type.to_arrow(), _et(node.data_type))


def _array_sort(a, node, b):
    return _sorted(a[0], True, False, node.data_type.to_arrow(), _et(node.data_type))


def _orderable_array(types):
    if not isinstance(types[0], (T.ArrayType, T.NullType)):
        return None
    return (None,) + ((T.BOOLEAN,) if len(types) > 1 else ())


_spec("sort_array", _orderable_array, lambda t: t[0], _sort_array, expected='"ARRAY"')
_spec("array_sort", _orderable_array, lambda t: t[0], _array_sort, expected='"ARRAY"')


def _extreme(a, node, b):
    flat = Flat(a[0])
    vals = flat.values()
    n = flat.n
    op = "max" if node.spec.key == "array_max" else "min"
    t = pa.table({"r": pa.array(flat.rows), "v": vals})
    got = t.group_by("r", use_threads=False).aggregate([("v", op)])
    out_idx = np.full(n, -1, np.int64)
    out_idx[got.column("r").to_numpy()] = np.arange(got.num_rows)
    ok = out_idx >= 0
    res = got.column(f"v_{op}").combine_chunks()
    return pc.take(res, pa.array(np.where(ok, out_idx, 0), mask=~ok))


for _k in ("array_max", "array_min"):
    _spec(_k, _one_array, lambda t: _et(t[0]), _extreme, expected='"ARRAY"')


# ---------------------------------------------------------------------------------------------
# Shape


def _flatten(a, node, b):
    outer = Flat(a[0])
    inner = outer.values()  # the inner lists, in row order
    inner_flat = Flat(inner)
    inner_null = ~inner_flat.valid
    bad = _rows_of(outer.rows[inner_null], outer.n) > 0
    lens = np.bincount(outer.rows, weights=inner_flat.lens, minlength=outer.n).astype(np.int64)
    return _lists(lens, inner_flat.values(), outer.valid & ~bad, node.data_type.to_arrow())


_spec("flatten", lambda t: (None,) if isinstance(t[0], T.ArrayType) and isinstance(
    t[0].element_type, T.ArrayType) else None, lambda t: t[0].element_type, _flatten,
    expected='"ARRAY<ARRAY>"')


def _slice(a, node, b):
    arr, start, length = a
    flat = Flat(arr)
    ok = flat.valid & _valid(start) & _valid(length)
    s = pc.fill_null(start, 1).to_numpy(zero_copy_only=False).astype(np.int64)
    ln = pc.fill_null(length, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    if np.any(ok & (s == 0)):
        raise ExecutionError(
            "The value of parameter(s) `start` in `slice` is invalid: Expects a positive or a "
            "negative value for `start`, but got 0.",
            error_class="INVALID_PARAMETER_VALUE.START",
            parameters={"parameter": "`start`", "functionName": "`slice`"})
    if np.any(ok & (ln < 0)):
        r = int(np.argmax(ok & (ln < 0)))
        raise ExecutionError(
            "The value of parameter(s) `length` in `slice` is invalid: Expects `length` greater "
            f"than or equal to 0, but got {ln[r]}.",
            error_class="INVALID_PARAMETER_VALUE.LENGTH",
            parameters={"parameter": "`length`", "functionName": "`slice`",
                        "length": str(ln[r])})
    begin = np.where(s > 0, s - 1, flat.lens + s)
    end = np.minimum(begin + ln, flat.lens)
    begin_e = begin[flat.rows]
    end_e = end[flat.rows]
    keep = (flat.within >= begin_e) & (flat.within < end_e) & (begin_e >= 0)
    lens = _rows_of(flat.rows[keep], flat.n)
    return _lists(lens, flat.values().filter(pa.array(keep)), ok, node.data_type.to_arrow())


_spec("slice", lambda t: (None, T.INT, T.INT) if isinstance(t[0], (T.ArrayType, T.NullType))
      else None, lambda t: t[0], _slice, may_fail=True, expected='"ARRAY"')


def _array_join(a, node, b):
    arr, delim = a[0], a[1]
    flat = Flat(arr)
    et = _et(node.arguments[0].data_type)
    vals = cast_array(flat.values(), et, T.STRING)
    keep = np.ones(len(vals), bool)
    if len(a) > 2:
        repl = pc.take(a[2], pa.array(flat.rows, pa.int64()))
        vals = pc.coalesce(vals, repl)
    if vals.null_count:
        keep = _valid(vals)
        vals = vals.filter(pa.array(keep))
    lens = _rows_of(flat.rows[keep], flat.n)
    valid = flat.valid & _valid(delim) & (_valid(a[2]) if len(a) > 2 else True)
    lists = _lists(lens, vals, valid, pa.large_list(pa.large_string()))
    out = pc.binary_join(lists, delim.cast(pa.large_string()))
    return out


_spec("array_join", lambda t: (None,) + (T.STRING,) * (len(t) - 1)
      if isinstance(t[0], (T.ArrayType, T.NullType)) else None, lambda t: T.STRING, _array_join,
      expected='"ARRAY"')


def _arrays_zip(a, node, b):
    flats = [Flat(x) for x in a]
    n = batch_rows = b.num_rows
    valid = np.ones(n, bool)
    for f in flats:
        valid &= f.valid
    lens = np.zeros(n, np.int64)
    for f in flats:
        lens = np.maximum(lens, f.lens)
    lens = np.where(valid, lens, 0)
    rows = np.repeat(np.arange(batch_rows), lens)
    first = np.repeat(np.cumsum(lens) - lens, lens)
    within = np.arange(int(lens.sum())) - first
    at = node.data_type.to_arrow()
    fields = []
    for f, x, fld in zip(flats, a, at.value_type):
        starts = np.concatenate([[0], np.cumsum(f.lens)])[:-1]
        ok = within < f.lens[rows]
        idx = np.where(ok, starts[rows] + within, 0)
        vals = f.values()
        col = pc.take(vals, pa.array(idx, mask=~ok)) if len(vals) else pa.nulls(len(idx),
                                                                              fld.type)
        fields.append(col if col.type == fld.type else col.cast(fld.type))
    structs = pa.StructArray.from_arrays(fields, fields=list(at.value_type))
    return _lists(lens, structs, valid, at)


def zip_field_names(args) -> tuple[str, ...]:
    """Spark's ``ArraysZip`` field names: a column argument's name, else its position."""
    names = []
    for i, e in enumerate(args):
        nm = getattr(e, "name", None)
        names.append(nm if isinstance(nm, str) and not isinstance(e, Literal) else str(i))
    return tuple(names)


def _zip_result(node: ScalarFunction) -> T.DataType:
    # the names are fixed when the call is built (``options``): bound references have none
    names = node.options[0] if node.options else zip_field_names(node.arguments)
    return T.ArrayType(T.StructType(tuple(T.StructField(nm, _et(e.data_type), True)
                                          for nm, e in zip(names, node.arguments))), False)


_spec("arrays_zip", lambda t: tuple(None for _ in t) if all(
    isinstance(x, (T.ArrayType, T.NullType)) for x in t) else None, lambda t: T.NULL,
    _arrays_zip, expected='"ARRAY"', node_result=_zip_result)


def _sequence(a, node, b):
    start, stop = a[0], a[1]
    s = pc.fill_null(start, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    e = pc.fill_null(stop, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    valid = _valid(start) & _valid(stop)
    if len(a) > 2:
        step = pc.fill_null(a[2], 1).to_numpy(zero_copy_only=False).astype(np.int64)
        valid &= _valid(a[2])
    else:
        step = np.where(s <= e, 1, -1)
    bad = valid & ((step == 0) & (s != e) | (step > 0) & (s > e) | (step < 0) & (s < e))
    if bad.any():
        r = int(np.argmax(bad))
        # Spark: a bare IllegalArgumentException from ``require`` (no error class)
        raise ExecutionError(
            f"requirement failed: Illegal sequence boundaries: {s[r]} to {e[r]} by {step[r]}",
            error_class=None)
    safe = np.where(step == 0, 1, step)
    lens = np.where(valid, (e - s) // safe + 1, 0)
    check_array_lengths(lens, "sequence")
    rows = np.repeat(np.arange(len(s)), lens)
    within = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
    vals = s[rows] + within * step[rows]
    at = node.data_type.to_arrow()
    return _lists(lens, pa.array(vals).cast(at.value_type), valid, at)


def _sequence_inputs(types):
    if not all(t.is_integral or isinstance(t, T.NullType) for t in types):
        return None
    wider = find_wider_type(list(types[:2]), string_promotion=False)
    return (wider, wider) + ((wider,) if len(types) > 2 else ())


_spec("sequence", _sequence_inputs, lambda t: T.ArrayType(
    find_wider_type(list(t[:2]), string_promotion=False) or T.LONG, False), _sequence,
    may_fail=True, expected='"INTEGRAL"', nullable=nullable_from_arguments)


# ---------------------------------------------------------------------------------------------
# Maps and strings


def _map_entries(a, node, b):
    m = a[0]
    at = node.data_type.to_arrow()
    flat = Flat(m)
    take = pa.array(flat.pos, pa.int64())
    structs = pa.StructArray.from_arrays([pc.take(m.keys, take), pc.take(m.items, take)],
                                         fields=list(at.value_type))
    return _lists(flat.lens, structs, flat.valid, at)


_spec("map_entries", lambda t: (None,) if isinstance(t[0], T.MapType) else None,
      lambda t: T.ArrayType(T.StructType((T.StructField("key", t[0].key_type, False),
                                          T.StructField("value", t[0].value_type,
                                                        t[0].value_contains_null))), False),
      _map_entries, expected='"MAP"')


def _map_concat(a, node, b):
    flats = [Flat(m) for m in a]
    n = b.num_rows
    valid = np.ones(n, bool)
    for f in flats:
        valid &= f.valid
    rows = np.concatenate([f.rows for f in flats])
    order = np.argsort(rows, kind="stable")
    dt = node.data_type
    keys = pa.concat_arrays([pc.take(m.keys, pa.array(f.pos, pa.int64())).cast(
        dt.key_type.to_arrow()) for m, f in zip(a, flats)]).take(pa.array(order))
    items = pa.concat_arrays([pc.take(m.items, pa.array(f.pos, pa.int64())).cast(
        dt.value_type.to_arrow()) for m, f in zip(a, flats)]).take(pa.array(order))
    lens = _rows_of(rows, n)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    return _build_map(keys, items, offsets, ~valid, dt)


def _maps(types):
    if not types:
        return ()
    if not all(isinstance(t, (T.MapType, T.NullType)) for t in types):
        return None
    wider = find_wider_type([t for t in types if not isinstance(t, T.NullType)],
                            string_promotion=False)
    return None if wider is None else tuple(wider for _ in types)


_spec("map_concat", _maps, lambda t: (find_wider_type(
    [x for x in t if not isinstance(x, T.NullType)], string_promotion=False)
    if t else T.MapType(T.STRING, T.STRING)), _map_concat, expected='"MAP"',
    null_intolerant=True)


def _split(a, node, b):
    s = a[0]
    limit = a[2] if len(a) > 2 else None
    if not isinstance(node.arguments[1], Literal) or (
            limit is not None and not isinstance(node.arguments[2], Literal)):
        raise ExecutionError("split with a non-literal pattern or limit is not supported",
                             error_class="UNSUPPORTED_FEATURE")
    regex = node.arguments[1].value
    lim = node.arguments[2].value if limit is not None else -1
    # Spark's StringSplit: a limit <= 0 splits without limit, keeping trailing empty strings
    max_splits = None if lim is None or lim <= 0 else lim - 1
    if regex == "":
        return _split_chars(s, max_splits)
    out = pc.split_pattern_regex(s, regex, max_splits=max_splits)
    return out.cast(pa.large_list(pa.large_string()))


def _split_chars(s: pa.Array, max_splits: int | None) -> pa.Array:
    """``split(s, '')``: Java's split on the empty pattern, one string per character (the last
    one holding the rest when ``limit`` stops it), cut at the UTF-8 character starts."""
    s = pa.concat_arrays([s.cast(pa.large_string())])  # offset 0, 64-bit offsets
    valid = _valid(s)
    offsets = np.frombuffer(s.buffers()[1], np.int64)[: len(s) + 1]
    data = s.buffers()[2]
    raw = np.frombuffer(data, np.uint8)[: offsets[-1]] if data is not None else \
        np.zeros(0, np.uint8)
    starts = np.flatnonzero((raw & 0xC0) != 0x80)  # UTF-8 character starts
    rows = np.searchsorted(offsets, starts, side="right") - 1
    if max_splits is not None:
        rank = np.arange(len(starts)) - np.searchsorted(starts, offsets[rows])
        keep = rank <= max_splits
        starts, rows = starts[keep], rows[keep]
    # a piece ends where the next one starts, or at its row's end
    last = np.append(rows[1:] != rows[:-1], True) if len(starts) else np.zeros(0, bool)
    ends = np.where(last, offsets[rows + 1], np.append(starts[1:], 0)) if len(starts) else starts
    pieces = _substrings(data, starts, ends)
    counts = np.bincount(rows, minlength=len(s))
    empty_rows = valid & (counts == 0)
    lens = np.where(empty_rows, 1, counts)
    if empty_rows.any():  # '' splits to ['']
        all_rows = np.concatenate([rows, np.flatnonzero(empty_rows)])
        order = np.argsort(all_rows, kind="stable")
        pieces = pa.concat_arrays([pieces, pa.array([""] * int(empty_rows.sum()),
                                                    pa.large_string())]).take(pa.array(order))
    return _lists(lens, pieces, valid, pa.large_list(pa.large_string()))


def _substrings(data: pa.Buffer, starts: np.ndarray, ends: np.ndarray) -> pa.Array:
    """Strings ``data[starts[i]:ends[i]]`` (byte ranges of one UTF-8 buffer), vectorized."""
    lens = ends - starts
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    raw = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
    idx = np.repeat(starts, lens) + (np.arange(int(lens.sum())) - np.repeat(offsets[:-1], lens))
    body = raw[idx] if len(idx) else np.zeros(0, np.uint8)
    return pa.LargeStringArray.from_buffers(len(starts), pa.py_buffer(offsets.tobytes()),
                                            pa.py_buffer(body.tobytes()))


_spec("split", lambda t: (T.STRING, T.STRING) + ((T.INT,) if len(t) > 2 else ()),
      lambda t: T.ArrayType(T.STRING), _split, expected='"STRING"', nullable=nullable_from_arguments)

#: how Spark shows ``array_sort(a)``: with its default comparator
ARRAY_SORT_COMPARATOR = (
    "lambdafunction((IF(((namedlambdavariable() IS NULL) AND (namedlambdavariable() IS NULL)), "
    "0, (IF((namedlambdavariable() IS NULL), 1, (IF((namedlambdavariable() IS NULL), -1, "
    "(IF((namedlambdavariable() < namedlambdavariable()), -1, (IF((namedlambdavariable() > "
    "namedlambdavariable()), 1, 0)))))))))), namedlambdavariable(), namedlambdavariable())")


#: name -> (spec key, min args, max args), registered by :mod:`ember.expressions.registry`
ARRAY_FUNCTIONS: dict[str, tuple[str, int, int]] = {
    "array_contains": ("array_contains", 2, 2), "array_position": ("array_position", 2, 2),
    "array_remove": ("array_remove", 2, 2), "array_distinct": ("array_distinct", 1, 1),
    "array_union": ("array_union", 2, 2), "array_intersect": ("array_intersect", 2, 2),
    "array_except": ("array_except", 2, 2), "sort_array": ("sort_array", 1, 2),
    "array_max": ("array_max", 1, 1),
    "array_min": ("array_min", 1, 1), "flatten": ("flatten", 1, 1), "slice": ("slice", 3, 3),
    "array_join": ("array_join", 2, 3), "arrays_zip": ("arrays_zip", 1, 1 << 20),
    "sequence": ("sequence", 2, 3), "map_entries": ("map_entries", 1, 1),
    "map_concat": ("map_concat", 0, 1 << 20), "split": ("split", 2, 3),
}


# ---------------------------------------------------------------------------------------------
# array_append / array_prepend / array_insert / array_compact / array_repeat / array_size /
# arrays_overlap / map_from_entries / str_to_map / shuffle


def _placed(flat: Flat, new_lens: np.ndarray, dest: np.ndarray, extra: pa.Array,
            extra_dest: np.ndarray, valid: np.ndarray, at: pa.DataType) -> pa.Array:
    """Lists of ``new_lens`` elements: the old elements at positions ``dest`` (within their
    row), the ``extra`` values at ``extra_dest`` (absolute) and NULL everywhere else."""
    new_lens = np.where(valid, new_lens, 0)
    starts = np.concatenate([[0], np.cumsum(new_lens)])[:-1]
    total = int(new_lens.sum())
    old = flat.values()
    n_old = len(old)
    src = np.full(total, n_old + len(extra), np.int64)  # the NULL appended last
    keep = valid[flat.rows] if len(flat.rows) else np.zeros(0, bool)
    src[starts[flat.rows[keep]] + dest[keep]] = np.flatnonzero(keep)
    src[extra_dest] = n_old + np.arange(len(extra))
    et = at.value_type
    pool = pa.concat_arrays([old.cast(et), extra.cast(et), pa.nulls(1, et)])
    return _lists(new_lens, pool.take(pa.array(src)), valid, at)


def _append_like(a, node, b):
    arr, v = a[0], a[-1]
    flat = Flat(arr)
    valid = flat.valid
    rows = np.flatnonzero(valid)
    new_lens = flat.lens + 1
    starts = np.concatenate([[0], np.cumsum(np.where(valid, new_lens, 0))])[:-1]
    if node.spec.key == "array_append":
        dest, extra_dest = flat.within, starts[rows] + flat.lens[rows]
    else:
        dest, extra_dest = flat.within + 1, starts[rows]
    return _placed(flat, new_lens, dest, v.take(pa.array(rows, pa.int64())), extra_dest, valid,
                   node.data_type.to_arrow())


def _append_result(t):
    at = t[0]
    if not isinstance(at, T.ArrayType):
        return T.ArrayType(t[1])
    wider = find_wider_type([at.element_type, t[1]], string_promotion=False) or at.element_type
    return T.ArrayType(wider, True)


def _element_only(types):
    """``f(array, value)`` with the value cast to the wider element type and the array left
    as it is (the kernel casts its elements)."""
    t = _array_and_element(types)
    return t if t is None else (None, t[1])


for _k in ("array_append", "array_prepend"):
    _spec(_k, _element_only, _append_result, _append_like, expected='"ARRAY"',
          null_intolerant=False, nullable=lambda node: node.arguments[0].nullable)


def _insert(a, node, b):
    arr, pos, v = a
    flat = Flat(arr)
    p, p_ok = pc.fill_null(pos.cast(pa.int64()), 1).to_numpy(zero_copy_only=False), _valid(pos)
    valid = flat.valid & p_ok
    if np.any(valid & (p == 0)):
        raise ExecutionError(
            "The index 0 is invalid. An index shall be either < 0 or > 0 (the first element "
            "has index 1).", error_class="INVALID_INDEX_OF_ZERO")
    lens = flat.lens
    k = np.where(p > 0, p - 1, lens + p + 1)  # the new element's index, before any padding
    pad_front = np.where(k < 0, -k, 0)
    idx = np.where(k < 0, 0, k)
    new_lens = np.where(k < 0, lens + 1 + pad_front, np.maximum(lens + 1, idx + 1))
    r = flat.rows
    dest = np.where((k < 0)[r], flat.within + 1 + pad_front[r],
                    flat.within + (flat.within >= idx[r]))
    rows = np.flatnonzero(valid)
    starts = np.concatenate([[0], np.cumsum(np.where(valid, new_lens, 0))])[:-1]
    return _placed(flat, new_lens, dest, v.take(pa.array(rows, pa.int64())),
                   starts[rows] + idx[rows], valid, node.data_type.to_arrow())


def _insert_inputs(types):
    at, pt, vt = types
    t = _element_only((at, vt))
    if t is None or not (pt.is_integral or isinstance(pt, T.NullType)):
        return None
    return (t[0], None if isinstance(pt, T.NullType) else T.INT, t[1])  # NULL: _insert_check


def _insert_check(node) -> str | None:
    p = node.arguments[1]
    if not isinstance(p.data_type, T.IntegerType):
        return unexpected_input_type(2, '"INT"', p)
    return None


_spec("array_insert", _insert_inputs, lambda t: _append_result((t[0], t[2])), _insert,
      expected='"ARRAY"', null_intolerant=False, may_fail=True, check=_insert_check,
      nullable=lambda node: node.arguments[0].nullable or node.arguments[1].nullable)


def _compact(a, node, b):
    flat = Flat(a[0])
    vals = flat.values()
    keep = _valid(vals)
    lens = _rows_of(flat.rows[keep], flat.n)
    return _lists(lens, vals.filter(pa.array(keep)), flat.valid, node.data_type.to_arrow())


_spec("array_compact", _one_array, lambda t: T.ArrayType(_et(t[0]), False), _compact,
      expected='"ARRAY"', nullable=nullable_from_arguments)


def _repeat(a, node, b):
    v, count = a
    c = pc.fill_null(count.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    valid = _valid(count)
    lens = np.where(valid, np.maximum(c, 0), 0)
    check_array_lengths(lens, "array_repeat")
    at = node.data_type.to_arrow()
    vals = v.cast(at.value_type).take(pa.array(np.repeat(np.arange(len(v)), lens), pa.int64()))
    return _lists(lens, vals, valid, at)


_spec("array_repeat", lambda t: (None, T.INT) if t[1].is_integral or isinstance(t[1], T.NullType)
      else None, lambda t: T.ArrayType(t[0], True), _repeat, null_intolerant=False,
      expected='"INT"', nullable=lambda node: node.arguments[1].nullable)


def _array_size(a, node, b):
    flat = Flat(a[0])
    return pa.array(flat.lens.astype(np.int32), pa.int32(), mask=~flat.valid)


_spec("array_size", _one_array, lambda t: T.INT, _array_size, expected='"ARRAY"',
      nullable=nullable_from_arguments)


def _overlap(a, node, b):
    left, right = (Flat(x) for x in a)
    et = find_wider_type([_et(x.data_type) for x in node.arguments], string_promotion=False)
    lv, rv = (cast_array(f.values(), _et(x.data_type), et)
              for f, x in zip((left, right), node.arguments))
    lnull, rnull = ~_valid(lv), ~_valid(rv)
    hit = _member(left.rows, _key(lv, et), right.rows, _key(rv, et)) & ~lnull
    found = _rows_of(left.rows[hit], left.n) > 0
    has_null = (_rows_of(left.rows[lnull], left.n) + _rows_of(right.rows[rnull], left.n)) > 0
    both = (left.lens > 0) & (right.lens > 0)
    valid = left.valid & right.valid & (found | ~(has_null & both))
    return _bool_or_null(found, valid)


def _overlap_nullable(node) -> bool:
    return any(x.nullable or getattr(x.data_type, "contains_null", True) for x in node.arguments)


_spec("arrays_overlap", lambda t: None if _two_arrays(t) is None else (None, None), lambda t: T.BOOLEAN, _overlap, expected='"ARRAY"',
      nullable=_overlap_nullable)


def _map_from_entries(a, node, b):
    flat = Flat(a[0])
    entries = flat.values()
    bad_entry = ~_valid(entries)
    bad_row = _rows_of(flat.rows[bad_entry], flat.n) > 0
    valid = flat.valid & ~bad_row
    keep = valid[flat.rows] if len(flat.rows) else np.zeros(0, bool)
    entries = entries.filter(pa.array(keep))
    lens = np.where(valid, flat.lens, 0)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    keys = pc.struct_field(entries, [0]) if len(entries) else pa.array(
        [], node.data_type.key_type.to_arrow())
    items = pc.struct_field(entries, [1]) if len(entries) else pa.array(
        [], node.data_type.value_type.to_arrow())
    return _build_map(keys, items, offsets, ~valid, node.data_type)


def _entries_inputs(types):
    t = types[0]
    if isinstance(t, T.ArrayType) and isinstance(t.element_type, T.StructType) and len(
            t.element_type.fields) == 2:
        return (None,)
    return None


def _entries_result(t):
    st = t[0].element_type
    k, v = st.fields
    return T.MapType(k.data_type, v.data_type, v.nullable)


_spec("map_from_entries", _entries_inputs, _entries_result, _map_from_entries, may_fail=True,
      expected='"ARRAY" of pair "STRUCT"',
      nullable=lambda node: node.arguments[0].nullable or node.arguments[0].data_type.contains_null)


def _str_to_map(a, node, b):
    text = a[0].cast(pa.large_string())
    delims = []
    for e in node.arguments[1:]:
        if not isinstance(e, Literal) or e.value is None:
            raise ExecutionError("str_to_map with a non-literal delimiter is not supported",
                                 error_class="UNSUPPORTED_FEATURE")
        delims.append(e.value)
    pair_delim, kv_delim = delims
    pairs = _java_split(text, pair_delim, None)
    flat = Flat(pairs)
    kv = _java_split(flat.values(), kv_delim, 1)
    kv_flat = Flat(kv)
    starts = np.concatenate([[0], np.cumsum(kv_flat.lens)])[:-1]
    vals = kv_flat.values()
    keys = vals.take(pa.array(starts, pa.int64()))
    has_value = kv_flat.lens > 1
    items = vals.take(pa.array(np.where(has_value, starts + 1, 0), mask=~has_value))
    offsets = np.concatenate([[0], np.cumsum(flat.lens)]).astype(np.int64)
    return _build_map(keys, items, offsets, ~flat.valid, node.data_type)


def _java_split(s: pa.Array, delim: str, max_splits: int | None) -> pa.Array:
    """Java's ``String.split(regex, -1 / 2)``: every piece kept (the empty pattern splits
    characters)."""
    if delim == "":
        return _split_chars(s, max_splits)
    tr = translate(delim)
    if tr.re2 is None:
        raise ExecutionError(f"Java regex feature not supported by Ember: '{delim}'",
                             error_class="UNSUPPORTED_FEATURE")
    return pc.split_pattern_regex(s, tr.re2, max_splits=max_splits).cast(
        pa.large_list(pa.large_string()))


_spec("str_to_map", lambda t: (T.STRING, T.STRING, T.STRING), lambda t: T.MapType(
    T.STRING, T.STRING, True), _str_to_map, may_fail=True, expected='"STRING"',
    nullable=lambda node: node.arguments[0].nullable)


def _shuffle(a, node, b):
    flat = Flat(a[0])
    seed = node.arguments[1].value if len(node.arguments) > 1 else None
    rng = np.random.default_rng(None if seed is None else int(seed) % (1 << 64))
    order = np.lexsort((rng.random(len(flat.rows)), flat.rows))
    return _lists(flat.lens, flat.values().take(pa.array(order, pa.int64())), flat.valid,
                  node.data_type.to_arrow())


_spec("shuffle", lambda t: (None,) + ((None,) if len(t) > 1 else ())
      if isinstance(t[0], (T.ArrayType, T.NullType)) else None, lambda t: t[0], _shuffle,
      expected='"ARRAY"', nullable=nullable_from_arguments)

ARRAY_FUNCTIONS.update({
    "array_append": ("array_append", 2, 2), "array_prepend": ("array_prepend", 2, 2),
    "array_insert": ("array_insert", 3, 3), "array_compact": ("array_compact", 1, 1),
    "array_repeat": ("array_repeat", 2, 2), "array_size": ("array_size", 1, 1),
    "arrays_overlap": ("arrays_overlap", 2, 2), "map_from_entries": ("map_from_entries", 1, 1),
})
