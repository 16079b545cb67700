"""Grouping analytics: ``GROUP BY CUBE / ROLLUP / GROUPING SETS`` and ``grouping()`` /
``grouping_id()`` (Spark's ``grouping.scala``).

- :class:`Cube`, :class:`Rollup`, :class:`GroupingSets` (Spark's ``BaseGroupingSets``) stand in an
  ``Aggregate``'s grouping expressions until the analyzer's ResolveGroupingAnalytics turns the
  Aggregate into ``Aggregate(groupBy + spark_grouping_id, ..., Expand(...))``. They are never
  resolved and never evaluated.
- :class:`Grouping` / :class:`GroupingID` are resolved (typed) once their arguments are, and
  ResolveGroupingAnalytics replaces them with arithmetic over the grouping id: they are never
  evaluated either.

The grouping id (``spark_grouping_id``, bigint) has one bit per distinct grouping expression,
the first expression the most significant bit; a bit is 1 where that expression is not part of
the row's grouping set (:func:`grouping_id_bitmask`).
"""

from __future__ import annotations

from typing import ClassVar

import pyarrow as pa

from ember import types as T
from ember.errors import InternalError
from ember.expressions.base import Expression, Unevaluable
from ember.trees import node

__all__ = ["BaseGroupingSets", "Cube", "Rollup", "GroupingSets", "Grouping", "GroupingID",
           "GROUPING_ID_NAME", "HIVE_GROUPING_ID_NAME", "MAX_GROUPING_EXPRESSIONS",
           "distinct_group_by_exprs", "grouping_id_bitmask"]

#: The grouping id column Expand adds (Spark's ``VirtualColumn.groupingIdName``).
GROUPING_ID_NAME = "spark_grouping_id"
#: Hive's name for ``grouping_id()`` that Spark still resolves (``VirtualColumn.hiveGroupingIdName``).
HIVE_GROUPING_ID_NAME = "grouping__id"
#: At most this many distinct grouping expressions: one bit each in a bigint grouping id.
MAX_GROUPING_EXPRESSIONS = 64


def distinct_group_by_exprs(exprs: list[Expression]) -> list[Expression]:
    """``exprs`` without semantic duplicates, first occurrence kept
    (``BaseGroupingSets.distinctGroupByExprs``)."""
    out: list[Expression] = []
    for e in exprs:
        if not any(e.semantic_equals(o) for o in out):
            out.append(e)
    return out


def grouping_id_bitmask(selected: list[int], n: int) -> int:
    """Spark's ``Expand.buildBitmask``: of ``n`` grouping expressions, those at the indexes
    ``selected`` are grouped (bit 0), the others are not (bit 1); index 0 is the most significant
    bit. Over 64 expressions the value wraps like Spark's Long."""
    mask = (1 << n) - 1
    for i in selected:
        mask &= ~(1 << (n - 1 - i))
    return mask - (1 << 64) if mask >= 1 << 63 else mask


class BaseGroupingSets(Unevaluable):
    """Spark's ``BaseGroupingSets``: ``set_indexes`` lists each grouping set (or each element of a
    CUBE / ROLLUP) as indexes into the expressions."""

    __slots__ = ()
    fn_name: ClassVar[str] = ""

    set_indexes: tuple[tuple[int, ...], ...]

    def _sets(self, exprs: tuple[Expression, ...]) -> list[list[Expression]]:
        return [[exprs[i] for i in idx] for idx in self.set_indexes]

    @property
    def selected_group_by_exprs(self) -> list[list[Expression]]:
        """The grouping sets, in Spark's order."""
        raise NotImplementedError

    @property
    def group_by_exprs(self) -> list[Expression]:
        """The expressions the grouping sets choose from."""
        return distinct_group_by_exprs(list(self.children))

    def simple_string(self) -> str:
        idx = ", ".join("Vector(" + ", ".join(map(str, s)) + ")" for s in self.set_indexes)
        kids = ", ".join(c.simple_string() for c in self.children)
        return f"{self.fn_name}({idx}, {kids})" if kids else f"{self.fn_name}({idx})"

    def sql(self) -> str:
        return self.simple_string()


@node
class Cube(BaseGroupingSets):
    """``CUBE(e1, (e2, e3), ...)``: every subset of the elements (``BaseGroupingSets.cubeExprs``:
    the full set first, the empty set last)."""

    set_indexes: tuple[tuple[int, ...], ...]
    exprs: tuple[Expression, ...]
    fn_name: ClassVar[str] = "cube"

    @property
    def selected_group_by_exprs(self) -> list[list[Expression]]:
        out: list[list[Expression]] = [[]]
        for element in reversed(self._sets(self.exprs)):
            out = [element + rest for rest in out] + out
        return out


@node
class Rollup(BaseGroupingSets):
    """``ROLLUP(e1, (e2, e3), ...)``: the prefixes of the elements, longest first
    (``BaseGroupingSets.rollupExprs``)."""

    set_indexes: tuple[tuple[int, ...], ...]
    exprs: tuple[Expression, ...]
    fn_name: ClassVar[str] = "rollup"

    @property
    def selected_group_by_exprs(self) -> list[list[Expression]]:
        sets = self._sets(self.exprs)
        return [[e for s in sets[:k] for e in s] for k in range(len(sets), -1, -1)]


@node
class GroupingSets(BaseGroupingSets):
    """``GROUPING SETS ((a, b), (a), ())``; ``user_given`` are the expressions of Hive's
    ``GROUP BY a, b GROUPING SETS (...)``: the grouping expressions are those first, then the
    sets' others (which Spark accepts too)."""

    set_indexes: tuple[tuple[int, ...], ...]
    flat_sets: tuple[Expression, ...]
    user_given: tuple[Expression, ...] = ()
    fn_name: ClassVar[str] = "groupingsets"

    @property
    def selected_group_by_exprs(self) -> list[list[Expression]]:
        return self._sets(self.flat_sets)

    @property
    def group_by_exprs(self) -> list[Expression]:
        return distinct_group_by_exprs(list(self.user_given) + list(self.flat_sets))


class _GroupingFunction(Expression):
    """Typed once its arguments are resolved; replaced by ResolveGroupingAnalytics, never
    evaluated."""

    __slots__ = ()

    @property
    def nullable(self) -> bool:
        return False

    def eval(self, batch: pa.RecordBatch) -> pa.Array:
        raise InternalError(f"{self.sql()} cannot be evaluated: the analyzer replaces it")


@node
class Grouping(_GroupingFunction):
    """``grouping(col)``: 1 where ``col`` is not part of the row's grouping set, else 0
    (tinyint; Spark's ``Grouping``)."""

    child: Expression

    @property
    def data_type(self) -> T.DataType:
        return T.BYTE

    def simple_string(self) -> str:
        return f"grouping({self.child.simple_string()})"

    def sql(self) -> str:
        return f"grouping({self.child.sql()})"


@node
class GroupingID(_GroupingFunction):
    """``grouping_id(cols...)``: the grouping id (bigint; Spark's ``GroupingID``). Its columns
    must be all the grouping expressions in order, or none."""

    group_by_exprs: tuple[Expression, ...]

    @property
    def data_type(self) -> T.DataType:
        return T.LONG

    def simple_string(self) -> str:
        return f"grouping_id({', '.join(e.simple_string() for e in self.group_by_exprs)})"

    def sql(self) -> str:
        return f"grouping_id({', '.join(e.sql() for e in self.group_by_exprs)})"
