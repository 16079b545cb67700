"""Boolean predicates: AND/OR/NOT, comparisons, NULL tests, IN lists and LIKE.

Semantics (Spark 4, ANSI):

- ``AND``/``OR``/``NOT`` are three-valued (Kleene).  Like Spark, the right side of ``AND`` is not
  evaluated for rows where the left side is ``false`` (and of ``OR`` where it is ``true``), which
  matters when the right side can raise (``b <> 0 AND a / b > 1``).
- Comparisons require both sides to have the same type (the analyzer's coercion inserts casts).
  Floating point follows Spark, not IEEE: ``NaN = NaN`` is true and NaN is larger than any other
  value; ``-0.0 = 0.0``.
- ``a <=> b`` is true when both are NULL, false when exactly one is.
- ``x IN (v1, ..., vn)``: true on a match; otherwise NULL when ``x`` or any ``vi`` is NULL; else
  false.
- ``LIKE``: ``_`` matches one character, ``%`` any sequence (including newlines); the escape
  character may only precede ``_``, ``%`` or itself.

BETWEEN is parsed as ``And(GreaterThanOrEqual(x, lo), LessThanOrEqual(x, hi), from_between=True)``.
"""

from __future__ import annotations

import re
from dataclasses import field
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.errors import AnalysisError, ExecutionError
from ember.expressions.base import (
    Expression,
    Literal,
    canonical_operand_order,
    literal_to_string,
    out_of_canonical_order,
)
from ember.expressions.common import (
    TypeCheckFailure, diff_types, eval_where, may_fail, is_float_type, sql_type, to_array, to_mask,
    unexpected_input_type, wrong_type, eval_null_intolerant,
)
from ember.trees import node

__all__ = [
    "Predicate", "BinaryComparison", "And", "Or", "Not", "EqualTo", "EqualNullSafe", "LessThan",
    "LessThanOrEqual", "GreaterThan", "GreaterThanOrEqual", "IsNull", "IsNotNull", "In", "Like",
    "compare_arrays", "like_pattern_to_regex",
]


class Predicate(Expression):
    """An expression of type boolean."""

    __slots__ = ()

    @property
    def data_type(self) -> T.DataType:
        return T.BOOLEAN


def _bool_ok(t: T.DataType) -> bool:
    return isinstance(t, (T.BooleanType, T.NullType))


# ---------------------------------------------------------------------------------------------
# AND / OR / NOT


@node
class And(Predicate):
    """``left AND right`` (Kleene logic, right side skipped where left is false).

    ``from_between`` marks the ``x >= lo AND x <= hi`` the parser builds for ``x BETWEEN lo AND
    hi``: it only changes ``sql()`` (the column name), which Spark 4 shows as
    ``between(x, lo, hi)``."""

    left: Expression
    right: Expression
    from_between: bool = field(default=False, compare=False)

    @property
    def nullable(self) -> bool:
        return self.left.nullable or self.right.nullable

    def check_input_types(self) -> str | None:
        return _check_boolean_operands(self.left, self.right)

    def canonicalize_node(self) -> Expression:
        return _reorder_chain(self)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        left = _as_bool(to_array(self.left.eval(batch), n))
        # Rows where left is false never evaluate the right side.
        need = ~to_mask(pc.invert(pc.fill_null(left, True))) if left.null_count else to_mask(left)
        right = _as_bool(eval_where(self.right, batch, need))
        return pc.and_kleene(left, right)

    def simple_string(self) -> str:
        return f"({self.left.simple_string()} AND {self.right.simple_string()})"

    def sql(self) -> str:
        if (self.from_between and isinstance(self.left, GreaterThanOrEqual)
                and isinstance(self.right, LessThanOrEqual)):
            return (f"between({self.left.left.sql()}, {self.left.right.sql()}, "
                    f"{self.right.right.sql()})")
        return f"({self.left.sql()} AND {self.right.sql()})"


@node
class Or(Predicate):
    """``left OR right`` (Kleene logic, right side skipped where left is true)."""

    left: Expression
    right: Expression

    @property
    def nullable(self) -> bool:
        return self.left.nullable or self.right.nullable

    def check_input_types(self) -> str | None:
        return _check_boolean_operands(self.left, self.right)

    def canonicalize_node(self) -> Expression:
        return _reorder_chain(self)

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        left = _as_bool(to_array(self.left.eval(batch), n))
        need = ~to_mask(left)  # true or ... rows where left is true are done
        right = _as_bool(eval_where(self.right, batch, need))
        return pc.or_kleene(left, right)

    def simple_string(self) -> str:
        return f"({self.left.simple_string()} OR {self.right.simple_string()})"

    def sql(self) -> str:
        return f"({self.left.sql()} OR {self.right.sql()})"


@node
class Not(Predicate):
    """``NOT child``."""

    child: Expression

    @property
    def nullable(self) -> bool:
        return self.child.nullable

    def check_input_types(self) -> str | None:
        if not _bool_ok(self.child.data_type):
            return unexpected_input_type(1, '"BOOLEAN"', self.child)
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return pc.invert(_as_bool(to_array(self.child.eval(batch), batch.num_rows)))

    def canonicalize_node(self) -> Expression:
        # NOT of a comparison is the opposite comparison (both NULL on a NULL operand).
        match self.child:
            case GreaterThan(left=l, right=r):
                return LessThanOrEqual(l, r).canonicalized
            case LessThan(left=l, right=r):
                return GreaterThanOrEqual(l, r).canonicalized
            case GreaterThanOrEqual(left=l, right=r):
                return LessThan(l, r).canonicalized
            case LessThanOrEqual(left=l, right=r):
                return GreaterThan(l, r).canonicalized
            case _:
                return self

    def simple_string(self) -> str:
        return f"NOT {self.child.simple_string()}"

    def sql(self) -> str:
        return f"(NOT {self.child.sql()})"


def _reorder_chain(e: And | Or) -> Expression:
    """A deterministic ``And``/``Or`` chain (children canonical) as the chain of its operands in
    canonical order (Spark's ``Canonicalize.orderCommutative``)."""
    if not e.deterministic:
        return e
    cls = type(e)
    items: list[Expression] = []
    stack: list[Expression] = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, cls):
            stack.append(x.right)
            stack.append(x.left)
        else:
            items.append(x)
    ordered = canonical_operand_order(items)
    out = ordered[0]
    for x in ordered[1:]:
        out = cls(out, x)
    return out


def _check_boolean_operands(left: Expression, right: Expression) -> str | None:
    lt, rt = left.data_type, right.data_type
    if lt != rt and not isinstance(lt, T.NullType) and not isinstance(rt, T.NullType):
        return diff_types(left, right)
    for c in (left, right):
        if not _bool_ok(c.data_type):
            return wrong_type("", '"BOOLEAN"', c.data_type)
    return None


def _as_bool(arr: pa.Array) -> pa.Array:
    if arr.type == pa.bool_():
        return arr
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), pa.bool_())
    return arr.cast(pa.bool_())


# ---------------------------------------------------------------------------------------------
# Comparisons


def compare_arrays(op: str, left: pa.Array, right: pa.Array, dtype: T.DataType) -> pa.Array:
    """Vectorized Spark comparison ``op`` in {'=', '<', '<=', '>', '>='} of two arrays of the SQL
    type ``dtype`` (NULL in -> NULL out; NaN equal to itself and largest)."""
    n = len(left)
    if pa.types.is_null(left.type) or pa.types.is_null(right.type):
        return pa.nulls(n, pa.bool_())
    if isinstance(dtype, T.StructType):
        return _compare_structs(op, left, right, dtype)
    if op == "=":
        out = pc.equal(left, right)
    elif op == "<":
        out = pc.less(left, right)
    elif op == "<=":
        out = pc.less_equal(left, right)
    elif op == ">":
        out = pc.greater(left, right)
    else:
        out = pc.greater_equal(left, right)
    if is_float_type(dtype):
        ln, rn = pc.is_nan(left), pc.is_nan(right)
        if pc.any(ln).as_py() or pc.any(rn).as_py():
            both = pc.and_(ln, rn)
            if op == "=":
                out = pc.or_(out, both)
            elif op == "<":
                out = pc.or_(out, pc.and_(pc.invert(ln), rn))
            elif op == ">":
                out = pc.or_(out, pc.and_(ln, pc.invert(rn)))
            elif op == "<=":
                out = pc.or_(out, pc.or_(both, pc.and_(pc.invert(ln), rn)))
            else:
                out = pc.or_(out, pc.or_(both, pc.and_(ln, pc.invert(rn))))
    return out


def _compare_structs(op: str, left: pa.Array, right: pa.Array, dtype: T.StructType) -> pa.Array:
    """Struct equality field by field (NULL struct -> NULL; NULL fields compare equal to NULL
    fields, as Spark's interpreted ordering does)."""
    if op != "=":
        raise ExecutionError(f"Ordering comparison of {dtype.simple_string()} is not supported",
                             error_class="UNSUPPORTED_FEATURE")
    n = len(left)
    acc = pa.array(np.ones(n, dtype=bool))
    for i, f in enumerate(dtype.fields):
        lf, rf = pc.struct_field(left, [i]), pc.struct_field(right, [i])
        eq = pc.fill_null(compare_arrays("=", lf, rf, f.data_type), False)
        both_null = pc.and_(pc.is_null(lf), pc.is_null(rf))
        acc = pc.and_(acc, pc.or_(eq, both_null))
    valid = pc.and_(pc.is_valid(left), pc.is_valid(right))
    return pc.if_else(valid, acc, pa.scalar(None, pa.bool_()))


class BinaryComparison(Predicate):
    """Base of ``=``, ``<=>``, ``<``, ``<=``, ``>``, ``>=``.  Subclasses set ``symbol``."""

    __slots__ = ()
    symbol: ClassVar[str] = "?"
    requires_ordering: ClassVar[bool] = True

    left: Expression
    right: Expression

    @property
    def nullable(self) -> bool:
        return self.left.nullable or self.right.nullable

    def check_input_types(self) -> str | None:
        lt, rt = self.left.data_type, self.right.data_type
        if lt != rt and not isinstance(lt, T.NullType) and not isinstance(rt, T.NullType):
            return diff_types(self.left, self.right)
        # Spark's BinaryComparison checks TypeUtils.checkForOrderingExpr for ``=`` and ``<=>``
        # too: a MAP (the one unorderable type) is refused by every comparison
        if (self.requires_ordering or isinstance(lt, (T.MapType, T.ArrayType, T.StructType))) \
                and not lt.is_orderable:
            return TypeCheckFailure(
                f"The `{self.symbol}` does not support ordering on type {sql_type(lt)}.",
                "INVALID_ORDERING_TYPE", {"functionName": f"`{self.symbol}`", "dataType": sql_type(lt)},
            )
        return None

    def _operand_type(self) -> T.DataType:
        lt = self.left.data_type
        return self.right.data_type if isinstance(lt, T.NullType) else lt

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        left, right = eval_null_intolerant((self.left, self.right), batch)
        return compare_arrays(self.symbol, left, right, self._operand_type())

    def simple_string(self) -> str:
        return f"({self.left.simple_string()} {self.symbol} {self.right.simple_string()})"

    def sql(self) -> str:
        return f"({self.left.sql()} {self.symbol} {self.right.sql()})"


@node
class EqualTo(BinaryComparison):
    """``left = right``."""

    left: Expression
    right: Expression
    symbol: ClassVar[str] = "="
    requires_ordering: ClassVar[bool] = False

    def canonicalize_node(self) -> Expression:
        l, r = self.left, self.right
        return self.copy(left=r, right=l) if out_of_canonical_order(l, r) else self


@node
class EqualNullSafe(BinaryComparison):
    """``left <=> right``: NULL-safe equality (never NULL)."""

    left: Expression
    right: Expression
    symbol: ClassVar[str] = "<=>"
    requires_ordering: ClassVar[bool] = False

    @property
    def nullable(self) -> bool:
        return False

    def canonicalize_node(self) -> Expression:
        l, r = self.left, self.right
        return self.copy(left=r, right=l) if out_of_canonical_order(l, r) else self

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        left = to_array(self.left.eval(batch), n)
        right = to_array(self.right.eval(batch), n)
        eq = pc.fill_null(compare_arrays("=", left, right, self._operand_type()), False)
        both_null = pc.and_(pc.is_null(left), pc.is_null(right))
        return pc.or_(eq, both_null)


@node
class LessThan(BinaryComparison):
    """``left < right``."""

    left: Expression
    right: Expression
    symbol: ClassVar[str] = "<"

    def canonicalize_node(self) -> Expression:
        l, r = self.left, self.right
        return GreaterThan(r, l) if out_of_canonical_order(l, r) else self


@node
class LessThanOrEqual(BinaryComparison):
    """``left <= right``."""

    left: Expression
    right: Expression
    symbol: ClassVar[str] = "<="

    def canonicalize_node(self) -> Expression:
        l, r = self.left, self.right
        return GreaterThanOrEqual(r, l) if out_of_canonical_order(l, r) else self


@node
class GreaterThan(BinaryComparison):
    """``left > right``."""

    left: Expression
    right: Expression
    symbol: ClassVar[str] = ">"

    def canonicalize_node(self) -> Expression:
        l, r = self.left, self.right
        return LessThan(r, l) if out_of_canonical_order(l, r) else self


@node
class GreaterThanOrEqual(BinaryComparison):
    """``left >= right``."""

    left: Expression
    right: Expression
    symbol: ClassVar[str] = ">="

    def canonicalize_node(self) -> Expression:
        l, r = self.left, self.right
        return LessThanOrEqual(r, l) if out_of_canonical_order(l, r) else self


# ---------------------------------------------------------------------------------------------
# NULL tests


@node
class IsNull(Predicate):
    """``child IS NULL`` (NaN is not NULL)."""

    child: Expression

    @property
    def nullable(self) -> bool:
        return False

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return pc.is_null(to_array(self.child.eval(batch), batch.num_rows))

    def simple_string(self) -> str:
        return f"isnull({self.child.simple_string()})"

    def sql(self) -> str:
        return f"({self.child.sql()} IS NULL)"


@node
class IsNotNull(Predicate):
    """``child IS NOT NULL``."""

    child: Expression

    @property
    def nullable(self) -> bool:
        return False

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        return pc.is_valid(to_array(self.child.eval(batch), batch.num_rows))

    def simple_string(self) -> str:
        return f"isnotnull({self.child.simple_string()})"

    def sql(self) -> str:
        return f"({self.child.sql()} IS NOT NULL)"


# ---------------------------------------------------------------------------------------------
# IN list


@node
class In(Predicate):
    """``value IN (items...)`` with SQL NULL semantics."""

    value: Expression
    items: tuple[Expression, ...]

    @property
    def nullable(self) -> bool:
        return self.value.nullable or any(i.nullable for i in self.items)

    def check_input_types(self) -> str | None:
        vt = self.value.data_type
        types = [vt] + [i.data_type for i in self.items]
        non_null = [t for t in types if not isinstance(t, T.NullType)]
        if any(t != non_null[0] for t in non_null):
            listed = ", ".join(sql_type(t) for t in types)
            return TypeCheckFailure(
                f"Input to `in` should all be the same type, but it's [{listed}].",
                "DATA_DIFF_TYPES", {"functionName": "`in`", "dataType": f"[{listed}]"},
            )
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        value = to_array(self.value.eval(batch), n)
        if pa.types.is_null(value.type) or not self.items:
            return pa.nulls(n, pa.bool_())
        dtype = self.value.data_type
        if any(may_fail(i) for i in self.items):
            return self._eval_in_order(batch, value, dtype)
        literals = [i for i in self.items if isinstance(i, Literal)]
        others = [i for i in self.items if not isinstance(i, Literal)]
        result: pa.Array | None = None
        lit_values = [lit.value for lit in literals if lit.value is not None]
        has_null_literal = any(lit.value is None for lit in literals)
        if lit_values and not is_float_type(dtype):
            value_set = pa.array(lit_values, type=value.type)
            matched = pc.is_in(value, value_set=value_set, skip_nulls=True)
            # is_in never returns NULL; restore NULL for NULL inputs.
            result = pc.if_else(pc.is_valid(value), matched, pa.scalar(None, pa.bool_()))
        elif lit_values:
            others = [Literal(v, dtype) for v in lit_values] + others
        if has_null_literal:
            nulls = pa.nulls(n, pa.bool_())
            result = nulls if result is None else pc.or_kleene(result, nulls)
        for item in others:
            eq = compare_arrays("=", value, to_array(item.eval(batch), n), dtype)
            result = eq if result is None else pc.or_kleene(result, eq)
        assert result is not None
        return result

    def _eval_in_order(self, batch: pa.RecordBatch, value: pa.Array, dtype: T.DataType
                       ) -> pa.Array:
        """Spark's row-wise evaluation: items in order, none for a NULL value, and none after the
        first match (so a failing item after a match, or for a NULL value, does not raise)."""
        pending = to_mask(pc.is_valid(value))
        result = pc.if_else(pc.is_valid(value), pa.scalar(False), pa.scalar(None, pa.bool_()))
        for item in self.items:
            if not pending.any():
                break
            eq = compare_arrays("=", value, eval_where(item, batch, pending), dtype)
            eq = pc.if_else(pa.array(pending), eq, pa.scalar(False))
            result = pc.or_kleene(result, eq)
            pending &= ~to_mask(eq)
        return result

    def simple_string(self) -> str:
        return f"{self.value.simple_string()} IN ({','.join(i.simple_string() for i in self.items)})"

    def sql(self) -> str:
        return f"({self.value.sql()} IN ({', '.join(i.sql() for i in self.items)}))"


# ---------------------------------------------------------------------------------------------
# LIKE


def like_pattern_to_regex(pattern: str, escape_char: str = "\\") -> str:
    """An RE2 regex (anchored, dot matches newline) equivalent to the SQL LIKE ``pattern``.

    >>> like_pattern_to_regex("a_%")
    '(?s)^a..*$'
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == escape_char:
            if i + 1 >= n:
                raise AnalysisError(
                    f"The pattern '{pattern}' is invalid: the escape character is not allowed to "
                    "end with.",
                    error_class="INVALID_FORMAT.ESC_AT_THE_END",
                    parameters={"format": f"'{pattern}'"},
                )
            nxt = pattern[i + 1]
            if nxt in "_%" or nxt == escape_char:
                out.append(re.escape(nxt))
                i += 2
                continue
            raise AnalysisError(
                f"The pattern '{pattern}' is invalid: the escape character is not allowed to "
                f"precede '{nxt}'.",
                error_class="INVALID_FORMAT.ESC_IN_THE_MIDDLE",
                parameters={"format": f"'{pattern}'", "char": f"'{nxt}'"},
            )
        if c == "_":
            out.append(".")
        elif c == "%":
            out.append(".*")
        else:
            out.append(re.escape(c))
        i += 1
    return "(?s)^" + "".join(out) + "$"


@node
class Like(Predicate):
    """``left LIKE right [ESCAPE escape_char]``."""

    left: Expression
    right: Expression
    escape_char: str = "\\"

    @property
    def nullable(self) -> bool:
        return self.left.nullable or self.right.nullable

    def check_input_types(self) -> str | None:
        for i, c in enumerate((self.left, self.right), 1):
            if not isinstance(c.data_type, (T.StringType, T.NullType)):
                return unexpected_input_type(i, '"STRING"', c)
        return None

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        n = batch.num_rows
        left = to_array(self.left.eval(batch), n)
        if pa.types.is_null(left.type):
            return pa.nulls(n, pa.bool_())
        if isinstance(self.right, Literal):
            if self.right.value is None:
                return pa.nulls(n, pa.bool_())
            regex = like_pattern_to_regex(self.right.value, self.escape_char)
            return pc.match_substring_regex(left, regex)
        right = to_array(self.right.eval(batch), n)
        if pa.types.is_null(right.type):
            return pa.nulls(n, pa.bool_())
        # A pattern per row: evaluate once per distinct pattern.
        out = np.zeros(n, dtype=bool)
        uniques = pc.unique(right.drop_null())
        for pat in uniques.to_pylist():
            rows = to_mask(pc.equal(right, pat))
            sub = pc.match_substring_regex(left.filter(pa.array(rows)),
                                           like_pattern_to_regex(pat, self.escape_char))
            out[rows] = to_mask(sub)
        validity = pc.and_(pc.is_valid(left), pc.is_valid(right))
        return pc.if_else(validity, pa.array(out), pa.scalar(None, pa.bool_()))

    def _escape_suffix(self) -> str:
        return "" if self.escape_char == "\\" else f" ESCAPE '{self.escape_char}'"

    def simple_string(self) -> str:
        return f"{self.left.simple_string()} LIKE {self.right.simple_string()}{self._escape_suffix()}"

    def sql(self) -> str:
        # Spark 4 names ``s LIKE 'x%'`` as ``s LIKE x%`` (the pattern literal unquoted).
        right = self.right
        pattern = (literal_to_string(right.value, right.dtype) if isinstance(right, Literal)
                   else right.sql())
        return f"{self.left.sql()} LIKE {pattern}{self._escape_suffix()}"
