"""Maps and element/field access of ARRAY, MAP and STRUCT values.

- :class:`CreateMap` ``map(k1, v1, ...)``, :class:`MapFromArrays` ``map_from_arrays(ks, vs)``
  (Spark's ``CreateMap``/``MapFromArrays``: NULL keys raise ``NULL_MAP_KEY``, a repeated key
  ``DUPLICATED_MAP_KEY``, Spark's default ``spark.sql.mapKeyDedupPolicy=EXCEPTION``).
- :class:`GetStructField` ``s.a``, :class:`GetArrayStructFields` ``arr_of_structs.a``,
  :class:`GetArrayItem` ``a[0]`` (0-based; ANSI: ``INVALID_ARRAY_INDEX`` out of bounds),
  :class:`GetMapValue` ``m['k']`` (NULL for a missing key), :class:`ElementAt`
  ``element_at(a, 1)`` (1-based, negative from the end; ``INVALID_INDEX_OF_ZERO``,
  ``INVALID_ARRAY_INDEX_IN_ELEMENT_AT``) and ``element_at(m, k)``.
- :func:`extract_value` is Spark's ``ExtractValue.apply``: the access node for ``child[key]`` /
  ``child.key`` by the child's type.
- :class:`Size` ``size``/``cardinality``, :class:`MapKeys`, :class:`MapValues`.

Every kernel works on the flattened child values through the list offsets: a lookup computes one
position per row with NumPy and takes the values once, never a Python loop per row.
"""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.coercion import coerce_all, implicit_cast
from ember.errors import AnalysisError, ExecutionError
from ember.expressions.base import Expression, Literal, literal_to_string
from ember.expressions.common import (
    TypeCheckFailure, eval_null_intolerant, sql_type, to_array, unexpected_input_type,
)
from ember.trees import node

__all__ = ["CreateMap", "MapFromArrays", "GetStructField", "GetArrayStructFields",
           "GetArrayItem", "GetMapValue", "ElementAt", "Size", "MapKeys", "MapValues",
           "extract_value", "list_parts", "lists_from_lengths", "check_arrays"]


def list_parts(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(starts, lengths, valid)`` of a list or map array, as int64/bool NumPy arrays; starts
    index the unsliced ``values``/``keys``/``items``."""
    offsets = arr.offsets.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    valid = ~pc.is_null(arr).to_numpy(zero_copy_only=False)
    return offsets[:-1], np.diff(offsets), valid


def lists_from_lengths(lens: np.ndarray, values: pa.Array, valid: np.ndarray,
                       at: pa.DataType) -> pa.Array:
    """A list array of type ``at`` cutting ``values`` by ``lens`` (NULL where not ``valid``)."""
    offsets = np.concatenate([[0], np.cumsum(np.where(valid, lens, 0))]).astype(np.int64)
    if values.type != at.value_type:
        values = values.cast(at.value_type)
    return pa.LargeListArray.from_arrays(pa.array(offsets), values, type=at,
                                         mask=pa.array(~valid))


#: Spark's largest array, in elements (``ByteArrayMethods.MAX_ROUNDED_ARRAY_LENGTH``)
MAX_ARRAY_LENGTH = 2**31 - 1 - 15


def check_array_lengths(lens: np.ndarray, function: str, parameter: str = "count") -> None:
    """Refuse, before allocating, an array longer than Spark can hold: Spark's
    ``COLLECTION_SIZE_LIMIT_EXCEEDED.PARAMETER`` (``sequence``, ``array_repeat``)."""
    if len(lens) and int(lens.max()) > MAX_ARRAY_LENGTH:
        n = int(lens.max())
        raise ExecutionError(
            f"Can't create array with {n} elements which exceeding the array size limit "
            f"{MAX_ARRAY_LENGTH}, the value of parameter(s) `{parameter}` in the function "
            f"`{function}` is invalid.", error_class="COLLECTION_SIZE_LIMIT_EXCEEDED.PARAMETER",
            parameters={"numberOfElements": str(n), "maxRoundedArrayLength": str(MAX_ARRAY_LENGTH),
                        "parameter": f"`{parameter}`", "functionName": f"`{function}`"})


def check_arrays(*args: Expression) -> str | None:
    """``UNEXPECTED_INPUT_TYPE`` for the first argument that is not an ARRAY (or NULL)."""
    for i, a in enumerate(args, 1):
        if not isinstance(a.data_type, (T.ArrayType, T.NullType)):
            return unexpected_input_type(i, '"ARRAY"', a)
    return None


def _np_index(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """An integral index array as int64 values (NULL as 0) and its validity."""
    valid = ~pc.is_null(arr).to_numpy(zero_copy_only=False)
    vals = pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    return vals, valid


def _take_or_null(values: pa.Array, positions: np.ndarray, ok: np.ndarray) -> pa.Array:
    """``values[positions]`` where ``ok``, NULL elsewhere."""
    return pc.take(values, pa.array(np.where(ok, positions, 0), mask=~ok))


def _key_string(value: object, t: T.DataType) -> str:
    return literal_to_string(value, t) if value is not None else "null"


# ---------------------------------------------------------------------------------------------
# Map construction


def _build_map(keys: pa.Array, items: pa.Array, offsets: np.ndarray, mask: np.ndarray | None,
               dtype: T.MapType) -> pa.Array:
    """A map array from flattened entries, checking Spark's map-key rules over all entries at
    once: no NULL key (``NULL_MAP_KEY``), no key twice in one map (``DUPLICATED_MAP_KEY``)."""
    if keys.null_count:
        raise ExecutionError("Cannot use null as map key.", error_class="NULL_MAP_KEY")
    n_entries = len(keys)
    if n_entries:
        rows = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
        if mask is not None:
            live = ~mask[rows]
        else:
            live = np.ones(n_entries, dtype=bool)
        table = pa.table({"r": pa.array(rows[live]), "k": keys.filter(pa.array(live))})
        counts = table.group_by(["r", "k"]).aggregate([([], "count_all")])
        dup = pc.greater(counts.column("count_all"), 1)
        if pc.any(dup).as_py():
            key = counts.filter(dup).column("k")[0].as_py()
            shown = _key_string(key, dtype.key_type)
            raise ExecutionError(
                f"Duplicate map key {shown} was found, please check the input data.",
                error_class="DUPLICATED_MAP_KEY",
                parameters={"key": shown, "mapKeyDedupPolicy": '"spark.sql.mapKeyDedupPolicy"'})
    at = dtype.to_arrow()
    keys = keys.cast(at.key_type)
    items = items.cast(at.item_type)
    return pa.MapArray.from_arrays(pa.array(offsets.astype(np.int32)), keys, items, type=at,
                                   mask=None if mask is None else pa.array(mask))


@node
class CreateMap(Expression):
    """``map(k1, v1, k2, v2, ...)`` (Spark's ``CreateMap``): keys share one type, values share
    one type (each coerced to its wider common type)."""

    keys: tuple[Expression, ...]
    values: tuple[Expression, ...]

    @property
    def data_type(self) -> T.DataType:
        def common(xs: tuple[Expression, ...]) -> T.DataType:
            for x in xs:
                if not isinstance(x.data_type, T.NullType):
                    return x.data_type
            return T.NULL
        return T.MapType(common(self.keys), common(self.values),
                         any(v.nullable for v in self.values))

    @property
    def nullable(self) -> bool:
        return False

    @property
    def foldable(self) -> bool:
        return all(x.foldable for x in self.keys + self.values)  # ``map()`` too

    def coerce_arguments(self, legacy: bool) -> Expression:
        """Keys and values each cast to their wider common type (Spark's
        FunctionArgumentConversion for CreateMap)."""
        keys = coerce_all(self.keys, legacy=legacy) or self.keys
        values = coerce_all(self.values, legacy=legacy) or self.values
        if all(a is b for a, b in zip(keys + values, self.keys + self.values)):
            return self
        return self.copy(keys=tuple(keys), values=tuple(values))

    def check_input_types(self) -> str | None:
        for what, xs in (("keys", self.keys), ("values", self.values)):
            types = [x.data_type for x in xs if not isinstance(x.data_type, T.NullType)]
            if any(t != types[0] for t in types):
                listed = ", ".join(sql_type(x.data_type) for x in xs)
                return TypeCheckFailure(
                    f"Input to `map` should all be the same type, but it's [{listed}].",
                    "DATA_DIFF_TYPES",
                    {"functionName": "`map`", "dataType": f"[{listed}]"})
        kt = self.data_type.key_type  # type: ignore[attr-defined]
        if not kt.is_orderable or isinstance(kt, T.MapType):
            return TypeCheckFailure(
                f"The input key of function `map` can't be map type: {sql_type(kt)}.",
                "INVALID_MAP_KEY_TYPE", {"keyType": sql_type(kt)})
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n, k = batch.num_rows, len(self.keys)
        if n and any(isinstance(x.data_type, T.NullType) for x in self.keys):
            raise ExecutionError("Cannot use null as map key.", error_class="NULL_MAP_KEY")
        dt = self.data_type
        assert isinstance(dt, T.MapType)
        kt, vt = dt.to_arrow().key_type, dt.to_arrow().item_type
        offsets = np.arange(n + 1, dtype=np.int64) * k
        if k == 0:
            return _build_map(pa.array([], kt), pa.array([], vt), offsets, None, dt)
        order = (np.arange(k)[None, :] * n + np.arange(n)[:, None]).reshape(-1)

        def interleave(xs: tuple[Expression, ...], at: pa.DataType) -> pa.Array:
            arrays = [to_array(x.eval(batch), n) for x in xs]
            arrays = [a if a.type == at else a.cast(at) for a in arrays]
            return pc.take(pa.concat_arrays(arrays), pa.array(order))

        return _build_map(interleave(self.keys, kt), interleave(self.values, vt), offsets, None,
                          dt)

    def _args(self, f) -> str:
        return ", ".join(f(x) for kv in zip(self.keys, self.values) for x in kv)

    def simple_string(self) -> str:
        return f"map({self._args(lambda x: x.simple_string())})"

    def sql(self) -> str:
        return f"map({self._args(lambda x: x.sql())})"


@node
class MapFromArrays(Expression):
    """``map_from_arrays(keys, values)`` (Spark's ``MapFromArrays``): NULL when either array is
    NULL; arrays of different lengths raise ``_LEGACY_ERROR_TEMP_2128``."""

    left: Expression
    right: Expression

    @property
    def data_type(self) -> T.DataType:
        lt, rt = self.left.data_type, self.right.data_type
        kt = lt.element_type if isinstance(lt, T.ArrayType) else T.NULL
        vt = rt.element_type if isinstance(rt, T.ArrayType) else T.NULL
        return T.MapType(kt, vt, getattr(rt, "contains_null", True))

    @property
    def nullable(self) -> bool:
        return self.left.nullable or self.right.nullable

    def check_input_types(self) -> str | None:
        return check_arrays(self.left, self.right)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        ks, vs = eval_null_intolerant((self.left, self.right), batch)
        dt = self.data_type
        assert isinstance(dt, T.MapType)
        if pa.types.is_null(ks.type) or pa.types.is_null(vs.type):
            return pa.nulls(n, dt.to_arrow())
        k_start, k_len, k_ok = list_parts(ks)
        v_start, v_len, v_ok = list_parts(vs)
        ok = k_ok & v_ok
        if np.any(ok & (k_len != v_len)):
            raise ExecutionError("The key array and value array of MapData must have the same "
                                 "length.", error_class="_LEGACY_ERROR_TEMP_2128")
        lens = np.where(ok, k_len, 0)
        offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        within = np.arange(offsets[-1]) - np.repeat(offsets[:-1], lens)
        keys = pc.take(ks.values, pa.array(np.repeat(k_start, lens) + within))
        items = pc.take(vs.values, pa.array(np.repeat(v_start, lens) + within))
        return _build_map(keys, items, offsets, ~ok, dt)

    def simple_string(self) -> str:
        return f"map_from_arrays({self.left.simple_string()}, {self.right.simple_string()})"

    def sql(self) -> str:
        return f"map_from_arrays({self.left.sql()}, {self.right.sql()})"


# ---------------------------------------------------------------------------------------------
# Access


def _field_ordinal(st: T.StructType, name: str, case_sensitive: bool = False) -> int | None:
    for i, f in enumerate(st.fields):
        if f.name == name:
            return i
    if not case_sensitive:
        low = name.lower()
        for i, f in enumerate(st.fields):
            if f.name.lower() == low:
                return i
    return None


def _field_not_found(name: str, st: T.StructType) -> AnalysisError:
    fields = ", ".join(f"`{f.name}`" for f in st.fields)
    return AnalysisError(f"No such struct field `{name}` in {fields}.",
                         error_class="FIELD_NOT_FOUND",
                         parameters={"fieldName": f"`{name}`", "fields": fields})


def extract_value(child: Expression, key: Expression, case_sensitive: bool = False) -> Expression:
    """Spark's ``ExtractValue.apply``: ``child[key]`` or ``child.key`` by ``child``'s type (a
    field name is a string Literal)."""
    dt = child.data_type
    if isinstance(dt, T.StructType) and isinstance(key, Literal) and isinstance(key.value, str):
        i = _field_ordinal(dt, key.value, case_sensitive)
        if i is None:
            raise _field_not_found(key.value, dt)
        return GetStructField(child, i, dt.fields[i].name)
    if (isinstance(dt, T.ArrayType) and isinstance(dt.element_type, T.StructType)
            and isinstance(key, Literal) and isinstance(key.value, str)):
        st = dt.element_type
        i = _field_ordinal(st, key.value, case_sensitive)
        if i is None:
            raise _field_not_found(key.value, st)
        return GetArrayStructFields(child, i, st.fields[i].name)
    if isinstance(dt, T.ArrayType):
        return GetArrayItem(child, key)
    if isinstance(dt, T.MapType):
        return GetMapValue(child, key)
    shown = '"' + child.sql() + '"'
    raise AnalysisError(
        f"Can't extract a value from {shown}. Need a complex type [STRUCT, ARRAY, MAP] but got "
        f"{sql_type(dt)}.", error_class="INVALID_EXTRACT_BASE_FIELD_TYPE",
        parameters={"base": shown, "other": sql_type(dt)})


@node
class GetStructField(Expression):
    """``s.name`` (Spark's ``GetStructField``); NULL when the struct is NULL."""

    child: Expression
    ordinal: int
    name: str = field(default="", compare=False)

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type.fields[self.ordinal].data_type  # type: ignore[attr-defined]

    @property
    def nullable(self) -> bool:
        return self.child.nullable or self.child.data_type.fields[self.ordinal].nullable  # type: ignore[attr-defined]

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        arr = to_array(self.child.eval(batch), batch.num_rows)
        if pa.types.is_null(arr.type):
            return pa.nulls(len(arr), self.data_type.to_arrow())
        return pc.struct_field(arr, [self.ordinal])

    def simple_string(self) -> str:
        return f"{self.child.simple_string()}.{self.name}"

    def sql(self) -> str:
        return f"{self.child.sql()}.{_quote_if_needed(self.name)}"


@node
class GetArrayStructFields(Expression):
    """``arr.name`` over an array of structs (Spark's ``GetArrayStructFields``): the array of
    that field's values."""

    child: Expression
    ordinal: int
    name: str = field(default="", compare=False)

    @property
    def data_type(self) -> T.DataType:
        st = self.child.data_type.element_type  # type: ignore[attr-defined]
        return T.ArrayType(st.fields[self.ordinal].data_type, True)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        arr = to_array(self.child.eval(batch), batch.num_rows)
        at = self.data_type.to_arrow()
        if pa.types.is_null(arr.type):
            return pa.nulls(len(arr), at)
        values = pc.struct_field(arr.values, [self.ordinal])
        return pa.LargeListArray.from_arrays(arr.offsets.cast(pa.int64()), values, type=at,
                                             mask=pc.is_null(arr))

    def simple_string(self) -> str:
        return f"{self.child.simple_string()}.{self.name}"

    def sql(self) -> str:
        return f"{self.child.sql()}.{_quote_if_needed(self.name)}"


def _quote_if_needed(name: str) -> str:
    return name if name.replace("_", "a").isalnum() and not name[:1].isdigit() else (
        "`" + name.replace("`", "``") + "`")


@node
class GetArrayItem(Expression):
    """``a[i]`` (Spark's ``GetArrayItem``), 0-based; out of bounds raises
    ``INVALID_ARRAY_INDEX`` in ANSI mode (NULL in legacy mode and for ``get``)."""

    child: Expression
    ordinal: Expression
    ansi: bool = True

    may_fail_at_runtime = True

    @property
    def ansi_mode(self) -> bool:
        return self.ansi

    def to_legacy_mode(self) -> Expression:
        return self.copy(ansi=False)

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type.element_type  # type: ignore[attr-defined]

    def check_input_types(self) -> str | None:
        if not (self.ordinal.data_type.is_integral
                or isinstance(self.ordinal.data_type, T.NullType)):
            return unexpected_input_type(2, '"INTEGRAL"', self.ordinal)
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        arr, idx = eval_null_intolerant((self.child, self.ordinal), batch)
        at = self.data_type.to_arrow()
        if pa.types.is_null(arr.type) or pa.types.is_null(idx.type):
            return pa.nulls(n, at)
        starts, lens, ok = list_parts(arr)
        i, i_ok = _np_index(idx)
        ok &= i_ok
        inside = (i >= 0) & (i < lens)
        bad = ok & ~inside
        if self.ansi and bad.any():
            r = int(np.argmax(bad))
            raise ExecutionError(
                f"The index {i[r]} is out of bounds. The array has {lens[r]} elements. Use the "
                "SQL function `get()` to tolerate accessing element at invalid index and return "
                "NULL instead.", error_class="INVALID_ARRAY_INDEX",
                parameters={"indexValue": str(i[r]), "arraySize": str(lens[r]),
                            "ansiConfig": '"spark.sql.ansi.enabled"'})
        return _take_or_null(arr.values, starts + i, ok & inside)

    def simple_string(self) -> str:
        return f"{self.child.simple_string()}[{self.ordinal.simple_string()}]"

    def sql(self) -> str:
        return f"{self.child.sql()}[{self.ordinal.sql()}]"


def _map_lookup(arr: pa.Array, key: pa.Array) -> pa.Array:
    """For each row the value under ``key[row]`` in the map ``arr[row]`` (NULL when absent)."""
    starts, lens, ok = list_parts(arr)
    ok &= ~pc.is_null(key).to_numpy(zero_copy_only=False)
    n_entries = int(lens.sum())
    pos = np.full(len(arr), 0, dtype=np.int64)
    found = np.zeros(len(arr), dtype=bool)
    if n_entries:
        rows = np.repeat(np.arange(len(arr)), lens)
        entry = np.repeat(starts, lens) + (np.arange(n_entries) - np.repeat(
            np.cumsum(lens) - lens, lens))
        keys = pc.take(arr.keys, pa.array(entry))
        wanted = pc.take(key, pa.array(rows))
        if wanted.type != keys.type:
            wanted = wanted.cast(keys.type)
        hit = pc.fill_null(pc.equal(keys, wanted), False).to_numpy(zero_copy_only=False)
        hit &= ok[rows]
        hit_rows, first = np.unique(rows[hit], return_index=True)
        pos[hit_rows] = entry[hit][first]
        found[hit_rows] = True
    return _take_or_null(arr.items, pos, found)


@node
class GetMapValue(Expression):
    """``m[key]`` (Spark's ``GetMapValue``): NULL for a missing key."""

    child: Expression
    key: Expression

    @property
    def data_type(self) -> T.DataType:
        return self.child.data_type.value_type  # type: ignore[attr-defined]

    def coerce_arguments(self, legacy: bool) -> Expression:
        kt = self.child.data_type.key_type  # type: ignore[attr-defined]
        if self.key.data_type == kt or isinstance(self.key.data_type, T.NullType):
            return self
        c = implicit_cast(self.key, kt)
        return self if c is None else self.copy(key=c)

    def check_input_types(self) -> str | None:
        kt = self.child.data_type.key_type  # type: ignore[attr-defined]
        if self.key.data_type != kt and not isinstance(self.key.data_type, T.NullType):
            return unexpected_input_type(2, sql_type(kt), self.key)
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        arr, key = eval_null_intolerant((self.child, self.key), batch)
        if pa.types.is_null(arr.type) or pa.types.is_null(key.type):
            return pa.nulls(n, self.data_type.to_arrow())
        return _map_lookup(arr, key)

    def simple_string(self) -> str:
        return f"{self.child.simple_string()}[{self.key.simple_string()}]"

    def sql(self) -> str:
        return f"{self.child.sql()}[{self.key.sql()}]"


@node
class ElementAt(Expression):
    """``element_at(array, index)`` (1-based, negative counts from the end) and
    ``element_at(map, key)`` (Spark's ``ElementAt``); ``try_element_at`` is ``ansi=False``."""

    left: Expression
    right: Expression
    ansi: bool = True
    fn_name: str = field(default="element_at", compare=False)

    may_fail_at_runtime = True

    @property
    def ansi_mode(self) -> bool:
        return self.ansi and self.fn_name == "element_at"

    def to_legacy_mode(self) -> Expression:
        return self.copy(ansi=False)

    @property
    def data_type(self) -> T.DataType:
        lt = self.left.data_type
        if isinstance(lt, T.MapType):
            return lt.value_type
        return lt.element_type  # type: ignore[attr-defined]

    def coerce_arguments(self, legacy: bool) -> Expression:
        lt, rt = self.left.data_type, self.right.data_type
        target = lt.key_type if isinstance(lt, T.MapType) else T.INT
        if rt == target or isinstance(rt, T.NullType):
            return self
        c = implicit_cast(self.right, target)
        return self if c is None else self.copy(right=c)

    def check_input_types(self) -> str | None:
        lt, rt = self.left.data_type, self.right.data_type
        if isinstance(lt, T.MapType):
            if rt != lt.key_type and not isinstance(rt, T.NullType):
                return unexpected_input_type(2, sql_type(lt.key_type), self.right)
            return None
        if not isinstance(lt, T.ArrayType):
            return unexpected_input_type(1, '("ARRAY" or "MAP")', self.left)
        if not isinstance(rt, (T.IntegerType, T.NullType)):
            return unexpected_input_type(2, '"INT"', self.right)
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        arr, idx = eval_null_intolerant((self.left, self.right), batch)
        if pa.types.is_null(arr.type) or pa.types.is_null(idx.type):
            return pa.nulls(n, self.data_type.to_arrow())
        if isinstance(self.left.data_type, T.MapType):
            return _map_lookup(arr, idx)
        starts, lens, ok = list_parts(arr)
        i, i_ok = _np_index(idx)
        ok &= i_ok
        if np.any(ok & (i == 0)):
            raise ExecutionError(
                "The index 0 is invalid. An index shall be either < 0 or > 0 (the first element "
                "has index 1).", error_class="INVALID_INDEX_OF_ZERO")
        pos = np.where(i > 0, i - 1, lens + i)
        inside = (pos >= 0) & (pos < lens)
        bad = ok & ~inside
        if self.ansi and self.fn_name == "element_at" and bad.any():
            r = int(np.argmax(bad))
            raise ExecutionError(
                f"The index {i[r]} is out of bounds. The array has {lens[r]} elements. Use "
                "`try_element_at` to tolerate accessing element at invalid index and return "
                "NULL instead.", error_class="INVALID_ARRAY_INDEX_IN_ELEMENT_AT",
                parameters={"indexValue": str(i[r]), "arraySize": str(lens[r]),
                            "ansiConfig": '"spark.sql.ansi.enabled"'})
        return _take_or_null(arr.values, starts + pos, ok & inside)

    def simple_string(self) -> str:
        return f"{self.fn_name}({self.left.simple_string()}, {self.right.simple_string()})"

    def sql(self) -> str:
        return f"{self.fn_name}({self.left.sql()}, {self.right.sql()})"


# ---------------------------------------------------------------------------------------------
# Simple collection functions


@node
class Size(Expression):
    """``size(x)``/``cardinality(x)`` of an array or map (Spark's ``Size``): NULL for NULL in
    ANSI mode, -1 in legacy mode (``spark.sql.legacy.sizeOfNull`` applies only without ANSI)."""

    child: Expression
    ansi: bool = True
    fn_name: str = field(default="size", compare=False)

    @property
    def ansi_mode(self) -> bool:
        return self.ansi

    def to_legacy_mode(self) -> Expression:
        return self.copy(ansi=False)

    @property
    def data_type(self) -> T.DataType:
        return T.INT

    @property
    def nullable(self) -> bool:
        return self.ansi and self.child.nullable

    def check_input_types(self) -> str | None:
        if not isinstance(self.child.data_type, (T.ArrayType, T.MapType, T.NullType)):
            return unexpected_input_type(1, '("ARRAY" or "MAP")', self.child)
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        arr = to_array(self.child.eval(batch), batch.num_rows)
        if pa.types.is_null(arr.type):
            return pa.nulls(len(arr), pa.int32()) if self.ansi else pa.repeat(
                pa.scalar(-1, pa.int32()), len(arr))
        _, lens, ok = list_parts(arr)
        if self.ansi:
            return pa.array(lens.astype(np.int32), mask=~ok)
        return pa.array(np.where(ok, lens, -1).astype(np.int32))

    def simple_string(self) -> str:
        return f"{self.fn_name}({self.child.simple_string()})"

    def sql(self) -> str:
        return f"{self.fn_name}({self.child.sql()})"


class _MapPart(Expression):
    """``map_keys(m)`` / ``map_values(m)``: the keys or the values of each map as an array."""

    __slots__ = ()
    fn_name: ClassVar[str] = "?"
    part: ClassVar[str] = "?"  # the pyarrow MapArray attribute: keys or items

    def check_input_types(self) -> str | None:
        if not isinstance(self.child.data_type, T.MapType):
            return unexpected_input_type(1, '"MAP"', self.child)
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        arr = to_array(self.child.eval(batch), batch.num_rows)
        return pa.LargeListArray.from_arrays(arr.offsets.cast(pa.int64()),
                                             getattr(arr, self.part),
                                             type=self.data_type.to_arrow(),
                                             mask=pc.is_null(arr))

    def simple_string(self) -> str:
        return f"{self.fn_name}({self.child.simple_string()})"

    def sql(self) -> str:
        return f"{self.fn_name}({self.child.sql()})"


@node
class MapKeys(_MapPart):
    """``map_keys(m)`` (Spark's ``MapKeys``)."""

    child: Expression
    fn_name: ClassVar[str] = "map_keys"
    part: ClassVar[str] = "keys"

    @property
    def data_type(self) -> T.DataType:
        return T.ArrayType(getattr(self.child.data_type, "key_type", T.NULL), False)


@node
class MapValues(_MapPart):
    """``map_values(m)`` (Spark's ``MapValues``)."""

    child: Expression
    fn_name: ClassVar[str] = "map_values"
    part: ClassVar[str] = "items"

    @property
    def data_type(self) -> T.DataType:
        dt = self.child.data_type
        return T.ArrayType(getattr(dt, "value_type", T.NULL),
                           getattr(dt, "value_contains_null", True))
