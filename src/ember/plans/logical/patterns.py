"""Named extractors of plan shapes shared by the optimizer, the planner and the runtime.

Spark's ``ExtractEquiJoinKeys``, ``ExtractSingleColumnNullAwareAntiJoin`` and
``ExtractFiltersAndInnerJoins`` (Catalyst's ``planning/patterns.scala``).  Nothing else should
re-derive these shapes inline, so each is recognized the same way everywhere; a rewrite that
*builds* one of them uses the builder next to its extractor
(:func:`null_aware_anti_join_condition`), so the two cannot drift apart.

- :func:`split_join_condition` is the native form used by Ember's kernels: key pairs with a
  ``null_safe`` flag per pair (``<=>`` stays one pair).
- :func:`extract_equi_join_keys` is Spark's form: each ``a <=> b`` becomes the two pairs
  ``(coalesce(a, default), coalesce(b, default))`` and ``(isnull(a), isnull(b))``, so that
  plans print like Spark's.
"""

from __future__ import annotations

import datetime
import decimal
from dataclasses import dataclass
from typing import Any

from ember import types as T
from ember.expressions.base import Expression, Literal, and_all, split_conjuncts
from ember.plans.logical.join_type import JoinType
from ember.plans.logical.nodes import Filter, Join, LogicalPlan
from ember.expressions.conditional import Coalesce
from ember.expressions.predicates import EqualNullSafe, EqualTo, IsNull, Or


@dataclass(frozen=True, slots=True)
class JoinKeys:
    """Equi-join keys of a join condition.

    ``left_keys[i]`` (over the left child) is compared with ``right_keys[i]`` (over the right
    child) with ``<=>`` when ``null_safe[i]``, else ``=``.  ``residual`` is the AND of the other
    conjuncts (None when there are none); ``key_condition`` the AND of the key conjuncts.
    """

    left_keys: tuple[Expression, ...]
    right_keys: tuple[Expression, ...]
    null_safe: tuple[bool, ...]
    residual: Expression | None
    key_condition: Expression | None


def _evaluable(e: Expression, output_ids: frozenset[int]) -> bool:
    # Spark quirk: an expression without references is evaluable on every plan.
    return e.references <= output_ids


def split_join_condition(
    condition: Expression | None, left: LogicalPlan, right: LogicalPlan
) -> JoinKeys | None:
    """Split ``condition`` of a join of ``left`` and ``right`` (plans) into key pairs and a
    residual; None when no conjunct is an equality between the two sides (ExtractEquiJoinKeys)."""

    left_ids = left.output_set
    right_ids = right.output_set
    lkeys: list[Expression] = []
    rkeys: list[Expression] = []
    null_safe: list[bool] = []
    key_preds: list[Expression] = []
    other: list[Expression] = []
    for pred in split_conjuncts(condition):
        pair: tuple[Expression, Expression] | None = None
        match pred:
            case EqualTo(left=a, right=b) if not a.references or not b.references:
                pair = None
            case EqualTo(left=a, right=b) | EqualNullSafe(left=a, right=b):
                if _evaluable(a, left_ids) and _evaluable(b, right_ids):
                    pair = (a, b)
                elif _evaluable(b, left_ids) and _evaluable(a, right_ids):
                    pair = (b, a)
            case _:
                pair = None
        if pair is None or not pred.deterministic:
            other.append(pred)
            continue
        lkeys.append(pair[0])
        rkeys.append(pair[1])
        null_safe.append(isinstance(pred, EqualNullSafe))
        key_preds.append(pred)
    if not lkeys:
        return None
    return JoinKeys(tuple(lkeys), tuple(rkeys), tuple(null_safe), and_all(other),
                    and_all(key_preds))


def default_literal(t: T.DataType) -> Literal:
    """The zero value of a type, used to coalesce ``<=>`` keys (Spark's ``Literal.default``)."""
    match t:
        case T.BooleanType():
            v: Any = False
        case T.ByteType() | T.ShortType() | T.IntegerType() | T.LongType():
            v = 0
        case T.FloatType() | T.DoubleType():
            v = 0.0
        case T.DecimalType():
            v = decimal.Decimal(0)
        case T.StringType():
            v = ""
        case T.BinaryType():
            v = b""
        case T.DateType():
            v = datetime.date(1970, 1, 1)
        case T.TimestampType():
            v = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        case T.ArrayType():
            v = []
        case T.StructType(fields=fs):
            v = {f.name: default_literal(f.data_type).value for f in fs}
        case _:
            v = None
    return Literal(v, t)


def extract_equi_join_keys(
    join: Join,
) -> tuple[tuple[Expression, ...], tuple[Expression, ...], Expression | None] | None:
    """Spark's ``ExtractEquiJoinKeys`` on a ``Join``: ``(left_keys, right_keys, residual)`` or
    None.  ``a <=> b`` yields the pairs ``(coalesce(a, d), coalesce(b, d))`` and
    ``(isnull(a), isnull(b))``.

    >>> # Join(l, r, INNER, (a#1 = b#2) AND (c#3 > 1))  ->  ((a#1,), (b#2,), (c#3 > 1))
    """
    keys = split_join_condition(join.condition, join.left, join.right)
    if keys is None:
        return None
    lk: list[Expression] = []
    rk: list[Expression] = []
    for a, b, ns in zip(keys.left_keys, keys.right_keys, keys.null_safe):
        if not ns:
            lk.append(a)
            rk.append(b)
            continue

        lk.append(Coalesce((a, default_literal(a.data_type))))
        rk.append(Coalesce((b, default_literal(b.data_type))))
        lk.append(IsNull(a))
        rk.append(IsNull(b))
    return tuple(lk), tuple(rk), keys.residual


def null_aware_anti_join_condition(left_key: Expression, right_key: Expression) -> Expression:
    """The condition of a LeftAnti join for ``left_key NOT IN (SELECT right_key ...)``:
    ``(l = r) OR isnull(l = r)`` (a row is dropped when some comparison is TRUE *or NULL*).
    :func:`extract_null_aware_anti_join_keys` recognizes exactly this shape.

    >>> # null_aware_anti_join_condition(a#1, b#2)  ->  ((a#1 = b#2) OR isnull((a#1 = b#2)))
    """

    eq = EqualTo(left_key, right_key)
    return Or(eq, IsNull(eq))


def extract_null_aware_anti_join_keys(join: Join) -> tuple[Expression, Expression] | None:
    """Spark's ``ExtractSingleColumnNullAwareAntiJoin``: for a LeftAnti join whose whole condition
    is ``(x = y) OR isnull(x = y)`` (single-column NOT IN), ``(left_key, right_key)``; else None.
    The caller checks ``spark.sql.optimizeNullAwareAntiJoin``."""

    if join.join_type is not JoinType.LEFT_ANTI:
        return None
    match join.condition:
        case Or(left=EqualTo(left=a, right=b) as eq, right=IsNull(child=eq2)) if eq == eq2:
            left_ids = join.left.output_set
            right_ids = join.right.output_set
            if a.references <= left_ids and b.references <= right_ids:
                return a, b
            if b.references <= left_ids and a.references <= right_ids:
                return b, a
            return None
        case _:
            return None


def _is_flattenable_join(p: LogicalPlan) -> bool:
    return (isinstance(p, Join) and isinstance(p.join_type, JoinType)
            and p.join_type.is_inner_like and p.hint.is_empty)


def flatten_join(
    plan: LogicalPlan, parent_join_type: JoinType = JoinType.INNER
) -> tuple[list[tuple[LogicalPlan, JoinType]], list[Expression]]:
    """Spark's ``ExtractFiltersAndInnerJoins.flattenJoin``: ``(items, conjuncts)``.

    An Inner/Cross join without hints contributes its left side flattened (with the join's type
    as the parent type), then ``(right, join_type)``, then the conjuncts of its condition; a
    Filter directly over such a join contributes the join flattened, then its own conjuncts;
    anything else is one item ``(plan, parent_join_type)``.  Only the LEFT side is descended into
    (left-deep trees), so a Project, a hinted join or a join on the right side stops it.

    >>> # Filter(c, Join(Join(t1, t1, CROSS), t2, INNER))
    >>> #   -> ([(t1, Cross), (t1, Cross), (t2, Inner)], [c])
    """
    match plan:
        case Join(left=left, right=right, join_type=jt, condition=cond) if _is_flattenable_join(
                plan):
            items, conds = flatten_join(left, jt)
            return items + [(right, jt)], conds + split_conjuncts(cond)
        case Filter(condition=cond, child=child) if _is_flattenable_join(child):
            items, conds = flatten_join(child)
            return items, conds + split_conjuncts(cond)
        case _:
            return [(plan, parent_join_type)], []


def extract_filters_and_inner_joins(
    plan: LogicalPlan,
) -> tuple[list[tuple[LogicalPlan, JoinType]], list[Expression]] | None:
    """Spark's ``ExtractFiltersAndInnerJoins.unapply``: :func:`flatten_join` of a Filter directly
    over an Inner/Cross join without hints, or of any Join without hints (a non-inner join is then
    a single item ``(join, Inner)``, which ReorderJoin's "more than two items" guard ignores);
    None for anything else.  Items are ``(plan, join_type)`` pairs: the bottom-left plan (typed
    as the lowest join above it) and the right sides, in FROM order.  Filter conditions are not
    required to be deterministic (as in Spark: ReorderJoin keeps a non-deterministic conjunct out
    of join conditions, in a Filter on top).

    >>> # Filter(a = c, Join(Join(t1, t2, INNER), t3, CROSS))
    >>> #   -> ([(t1, Inner), (t2, Inner), (t3, Cross)], [a = c])
    """
    match plan:
        case Filter(child=child) if _is_flattenable_join(child):
            return flatten_join(plan)
        case Join(join_type=JoinType(), hint=hint) if hint.is_empty:
            return flatten_join(plan)
        case _:
            return None
