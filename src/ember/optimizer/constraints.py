"""Constraint propagation: Catalyst's ``QueryPlanConstraints`` / ``ConstraintHelper``.

A plan's *constraints* are predicates true for every row it outputs.  They are derived bottom-up:

==============================  ==========================================================
operator                        valid constraints (before the common completion below)
==============================  ==========================================================
Filter                          child's + the condition's conjuncts (no correlated subquery)
Project / Aggregate             child's, rewritten through aliases (``getAllValidConstraints``:
                                ``lit AS x`` adds ``x <=> lit``; a deterministic ``e AS x``
                                adds a copy of every constraint with ``e`` replaced by ``x``
                                and ``e <=> x``); Aggregate: non-aggregate items only
Join Inner/Cross                left's + right's (+ the condition's conjuncts)
Join LeftSemi                   left's (+ the condition's conjuncts)
Join LeftAnti / Existence       left's
Join LeftOuter / RightOuter     left's / right's
Join FullOuter                  none
Union                           per child (attributes renamed to the first child's), merged:
                                common constraints, plus ``(A1 AND ..) OR (B1 AND ..)`` per
                                attribute constrained on every side
Intersect / Except              left's + right's (renamed) / left's
Expand, leaves                  none
other unary nodes               child's
==============================  ==========================================================

Every plan's ``constraints`` = valid constraints + those inferred by equality transitivity
(:func:`infer_additional_constraints`) + ``isnotnull`` constraints (:func:`construct_is_not_null`),
keeping only deterministic ones whose references are non-empty and within the plan's output.

Sets of constraints are :class:`ExpressionSet` s: insertion-ordered, deduplicated on
``Expression.canonicalized`` (attribute names/nullability ignored, commutative operands ordered,
``a > b`` == ``b < a``), as Catalyst's ``ExpressionSet``.  With
``spark.sql.constraintPropagation.enabled=false`` every plan's constraints are empty.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from ember.expressions.base import AttributeReference, Expression, Alias, Literal, and_all
from ember.conf import CONSTRAINT_PROPAGATION_ENABLED
from ember.expressions import predicates as P
from ember.expressions.aggregates import AggregateExpression
from ember.expressions.arithmetic import BinaryArithmetic, _UnaryNumeric
from ember.expressions.cast import Cast
from ember.expressions.misc import ScalarFunction
from ember.expressions.predicate_helper import split_conjunctive_predicates
from ember.expressions.predicates import IsNotNull, EqualNullSafe, EqualTo, Or
from ember.expressions.subquery import OuterReference, SubqueryExpression
from ember.plans.logical import nodes as N
from ember.plans.logical.join_type import BuildSide, JoinType

__all__ = [
    "ExpressionSet",
    "is_null_intolerant",
    "scan_null_intolerant_attributes",
    "construct_is_not_null",
    "infer_additional_constraints",
    "ConstraintPropagation",
    "constraint_propagation_enabled",
]


# ---------------------------------------------------------------------------------------------
# ExpressionSet


class ExpressionSet:
    """Insertion-ordered set of expressions deduplicated by canonical form (Catalyst's
    ``ExpressionSet``); non-deterministic expressions are never deduplicated."""

    __slots__ = ("_keys", "_items")

    def __init__(self, exprs: Iterable[Expression] = ()) -> None:
        self._keys: set[Expression] = set()
        self._items: list[Expression] = []
        for e in exprs:
            self.add(e)

    def add(self, e: Expression) -> None:
        if not e.deterministic:
            self._items.append(e)
            return
        c = e.canonicalized
        if c not in self._keys:
            self._keys.add(c)
            self._items.append(e)

    def __contains__(self, e: Expression) -> bool:
        return e.canonicalized in self._keys

    def __iter__(self) -> Iterator[Expression]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def union(self, other: Iterable[Expression]) -> "ExpressionSet":
        # A copy of this (already deduplicated) set, then ``other`` added: the same as
        # ``ExpressionSet(self._items)`` without canonicalizing every item again.
        out = ExpressionSet()
        out._keys = set(self._keys)
        out._items = list(self._items)
        for e in other:
            out.add(e)
        return out

    __or__ = union

    def difference(self, other: Iterable[Expression]) -> "ExpressionSet":
        drop = {e.canonicalized for e in other}
        return ExpressionSet(e for e in self._items if e.canonicalized not in drop)

    __sub__ = difference

    def intersect(self, other: "ExpressionSet") -> "ExpressionSet":
        return ExpressionSet(e for e in self._items if e in other)

    def filter(self, pred: Callable[[Expression], bool]) -> "ExpressionSet":
        return ExpressionSet(e for e in self._items if pred(e))

    def map(self, fn: Callable[[Expression], Expression]) -> "ExpressionSet":
        return ExpressionSet(fn(e) for e in self._items)

    def __repr__(self) -> str:
        return "ExpressionSet(" + ", ".join(e.simple_string() for e in self._items) + ")"


# ---------------------------------------------------------------------------------------------
# ConstraintHelper


def is_null_intolerant(e: Expression) -> bool:
    """Whether ``e`` is NULL whenever any input is NULL (Catalyst's ``nullIntolerant``):
    comparisons other than ``<=>``, NOT, arithmetic, unary minus/plus/abs, CAST, LIKE, and the
    scalar functions whose spec propagates NULL arguments (``upper``, ``length`` ...; ``concat``
    excepted, as in Spark)."""

    if isinstance(e, P.EqualNullSafe):
        return False
    if isinstance(e, ScalarFunction):
        try:
            spec = e.spec
        except KeyError:
            return False
        return spec.null_intolerant and spec.key != "concat"
    return isinstance(e, (P.BinaryComparison, P.Not, BinaryArithmetic, _UnaryNumeric, Cast,
                          P.Like))


def scan_null_intolerant_attributes(e: Expression) -> list[AttributeReference]:
    """The attributes reached from ``e`` through null-intolerant expressions only."""
    if isinstance(e, AttributeReference):
        return [e]
    if is_null_intolerant(e):
        return [a for c in e.children for a in scan_null_intolerant_attributes(c)]
    return []


def _infer_is_not_null(c: Expression) -> list[Expression]:
    target = c.child if isinstance(c, IsNotNull) else c
    return [IsNotNull(a) for a in scan_null_intolerant_attributes(target)]


def construct_is_not_null(constraints: ExpressionSet,
                          output: Iterable[AttributeReference]) -> ExpressionSet:
    """``isnotnull`` constraints implied by ``constraints`` (through null-intolerant
    expressions) and by the non-nullable attributes of ``output``, minus ``constraints``."""

    out = ExpressionSet()
    for c in constraints:
        for x in _infer_is_not_null(c):
            out.add(x)
    for a in output:
        if not a.nullable:
            out.add(IsNotNull(a))
    return out - constraints


def _replace(e: Expression, source: Expression, dest: Expression) -> Expression:
    src = source.canonicalized

    def rule(x: Expression) -> Expression | None:
        if x.deterministic and x.canonicalized == src:
            return dest
        return None

    return e.transform_down(rule)


def infer_additional_constraints(constraints: ExpressionSet) -> ExpressionSet:
    """Constraints implied by attribute equalities: with ``a = b``, every other constraint on
    ``a`` is copied for ``b`` and vice versa; ``cast(a) = b`` copies ``b``'s onto ``cast(a)``."""

    inferred = ExpressionSet()
    predicates = constraints.filter(lambda c: not isinstance(c, IsNotNull))
    for eq in predicates:
        match eq:
            case EqualTo(left=AttributeReference() as l, right=AttributeReference() as r):
                candidates = predicates - [eq, EqualNullSafe(l, r)]
                for c in candidates:
                    inferred.add(_replace(c, l, r))
                for c in candidates:
                    inferred.add(_replace(c, r, l))
            case EqualTo(left=Cast(child=AttributeReference()) as l, right=AttributeReference() as r):
                for c in predicates - [eq]:
                    inferred.add(_replace(c, r, l))
            case EqualTo(left=AttributeReference() as l, right=Cast(child=AttributeReference()) as r):
                for c in predicates - [eq]:
                    inferred.add(_replace(c, l, r))
            case _:
                pass
    return inferred - constraints


def constraint_propagation_enabled(conf) -> bool:
    return bool(conf.get(CONSTRAINT_PROPAGATION_ENABLED)) if conf is not None else True


# ---------------------------------------------------------------------------------------------
# Per-operator constraints


class ConstraintPropagation:
    """Computes (and memoizes, for the plans it has seen) ``constraints`` of plans.

    One instance per rule application: plans are immutable, so a cache keyed by object identity
    (holding the plan alive) is exact.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._cache: dict[int, tuple[object, ExpressionSet]] = {}

    def constraints(self, plan) -> ExpressionSet:
        """Catalyst's ``plan.constraints``."""
        if not self.enabled:
            return ExpressionSet()
        hit = self._cache.get(id(plan))
        if hit is not None and hit[0] is plan:
            return hit[1]
        valid = self.valid_constraints(plan)
        out_ids = plan.output_set
        result = (valid | infer_additional_constraints(valid)
                  | construct_is_not_null(valid, plan.output)).filter(
            lambda c: bool(c.references) and c.references <= out_ids and c.deterministic)
        self._cache[id(plan)] = (plan, result)
        return result

    def valid_constraints(self, plan) -> ExpressionSet:
        """Catalyst's ``validConstraints`` (see the module docstring's table)."""

        match plan:
            case N.Filter(condition=cond, child=child):
                preds = [c for c in split_conjunctive_predicates(cond) if not _has_correlated(c)]
                return self.constraints(child) | preds
            case N.Project(project_list=items, child=child):
                return self._with_aliases(self.constraints(child), items)
            case N.Aggregate(aggregate_expressions=items, child=child):
                non_agg = [e for e in items
                           if not e.exists(lambda x: isinstance(x, AggregateExpression))]
                return self._with_aliases(self.constraints(child), non_agg)
            case N.Join(left=left, right=right, join_type=jt, condition=cond):
                # Spark's Join.validConstraints: those of the sides output unpadded, and the
                # condition's when only matched pairs come out
                out = ExpressionSet()
                if not isinstance(jt, JoinType):
                    return out
                if jt.outputs_unpadded(BuildSide.LEFT):
                    out = out | self.constraints(left)
                if jt.outputs_unpadded(BuildSide.RIGHT):
                    out = out | self.constraints(right)
                if jt.emits_matches_only:
                    out = out | split_conjunctive_predicates(cond)
                return out
            case N.Union(inputs=inputs):
                first = inputs[0].output
                sets = [_rewrite(first, c.output, self.constraints(c)) for c in inputs]
                out = sets[0]
                for s in sets[1:]:
                    out = _merge(out, s)
                return out
            case N.Intersect(left=left, right=right):
                return self.constraints(left) | _rewrite(left.output, right.output,
                                                         self.constraints(right))
            case N.Except(left=left):
                return self.constraints(left)
            case N.Expand():
                return ExpressionSet()
            case _:
                kids = plan.children
                if len(kids) == 1 and not isinstance(plan, N.Expand):
                    return self.constraints(kids[0])
                return ExpressionSet()

    @staticmethod
    def _with_aliases(child: ExpressionSet, items) -> ExpressionSet:
        """UnaryNode.getAllValidConstraints."""

        out = ExpressionSet(child)
        for a in items:
            match a:
                case Alias(child=Literal() as lit):
                    out.add(EqualNullSafe(a.to_attribute(), lit))
                case Alias(child=e) if e.deterministic:
                    attr = a.to_attribute()
                    for c in list(out):
                        out.add(_replace(c, e, attr))
                    out.add(EqualNullSafe(e, attr))
                case _:
                    pass
        return out


def _has_correlated(e: Expression) -> bool:
    def correlated(x: Expression) -> bool:
        if isinstance(x, SubqueryExpression):
            return bool(getattr(x, "outer_attrs", ())) or x.plan.exists(
                lambda p: any(q.exists(lambda y: isinstance(y, OuterReference))
                              for q in p.expressions()))
        return False

    return e.exists(correlated)


def _rewrite(reference, original, constraints: ExpressionSet) -> ExpressionSet:
    """Constraints over ``original`` attributes restated over ``reference`` (by position)."""
    mapping = {o.id: r for o, r in zip(original, reference)}

    def rule(x: Expression) -> Expression | None:
        if isinstance(x, AttributeReference):
            return mapping.get(x.id, x)
        return None

    return constraints.map(lambda c: c.transform_up(rule))


def _merge(a: ExpressionSet, b: ExpressionSet) -> ExpressionSet:
    """Union's constraint merge: common ones, plus ``(A1 AND ..) OR (B1 AND ..)`` for every
    single attribute constrained (alone) on both sides."""

    common = a.intersect(b)

    def by_ref(s: ExpressionSet) -> dict[int, list[Expression]]:
        groups: dict[int, list[Expression]] = {}
        for c in s - common:
            if len(c.references) == 1:
                groups.setdefault(next(iter(c.references)), []).append(c)
        return groups

    ga, gb = by_ref(a), by_ref(b)
    out = ExpressionSet(common)
    for ref in ga:
        if ref in gb:
            out.add(Or(and_all(ga[ref]), and_all(gb[ref])))
    return out
