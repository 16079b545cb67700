"""TypeCoercion: ANSI implicit casts (Spark's AnsiTypeCoercion rules; with
``spark.sql.ansi.enabled=false`` Spark's TypeCoercion where it differs, see :mod:`ember.coercion`).

Before::  Filter ('a#1:int = 1L)        After::  Filter (cast(a#1 as bigint) = 1)

- Expressions: :func:`ember.coercion.coerce_expression` bottom-up (binary arithmetic and
  comparisons, IN lists, CASE/IF/COALESCE branches ...).
- WidenSetOperationTypes: the columns of Union/Intersect/Except inputs are cast to their wider type
  through a Project per input that keeps the names (``cast(a#1 as bigint) AS a#9``).  When a
  column has no wider type nothing changes and CheckAnalysis raises INCOMPATIBLE_COLUMN_TYPE.
- ``IN (subquery)``: values and subquery columns are cast to their wider types.
- Decimal ``+ - * / %`` and ``pmod`` take ``spark.sql.decimalOperations.allowPrecisionLoss``
  (their ``allow_precision_loss``), which decides their result type.
Casts inserted here are remembered (``ctx.implicit_casts``) so generated names and messages omit
them, as Spark's ``toPrettySQL`` does.

Fast path: the expression rewrite depends on the expression alone, so it runs through
``ember.trees.transform_up_memo``: expressions an earlier iteration of the Resolution batch left
unchanged are not walked again; likewise plan subtrees
(``ember.analysis.rules._util.transform_up_in_run``).
"""

from __future__ import annotations

from ember import types as T
from ember.expressions.base import Alias, AttributeReference, Expression
from ember.plans.logical.nodes import Except, Intersect, LogicalPlan, Project, Union
from ember.trees import rewrite_bit, transform_up_memo
from ember.conf import DECIMAL_ALLOW_PRECISION_LOSS
from ember.coercion import coerce_expression, find_wider_type
from ember.expressions.cast import Cast
from ember.expressions.subquery import InSubquery
from ember.analysis.rules._util import transform_up_in_run

# The rewrite also depends on allowPrecisionLoss and on the ANSI mode (Spark's or the legacy
# coercion rules): one memo bit per combination keeps each pure.
_COERCE_BITS = {(loss, legacy): rewrite_bit(f"TypeCoercion.expression/loss={loss}/legacy={legacy}")
                for loss in (False, True) for legacy in (False, True)}


def _cast(e: Expression, t: T.DataType, ctx) -> Expression:
    if e.data_type == t:
        return e
    return ctx.mark_implicit(Cast(e, t))


def _mark_new_casts(old: Expression, new: Expression, ctx) -> None:
    if new is old:
        return

    before: set[int] = set()
    old.foreach(lambda x: before.add(id(x)) if isinstance(x, Cast) else None)
    new.foreach(
        lambda x: ctx.mark_implicit(x) if isinstance(x, Cast) and id(x) not in before else None
    )


def _coerce_expr(e: Expression, ctx, settings: tuple[bool, bool] | None = None) -> Expression:
    """``e`` with implicit casts; ``settings``: ``_settings(ctx)`` when the caller has it."""
    loss, legacy = _settings(ctx) if settings is None else settings

    def rule(x: Expression) -> Expression:
        if isinstance(x, InSubquery):
            return _coerce_in_subquery(x, ctx)
        if getattr(x, "allow_precision_loss", loss) is not loss:
            # Spark's BinaryArithmetic reads spark.sql.decimalOperations.allowPrecisionLoss when
            # its type is first computed (analysis); children first, so parents see the type.
            x = x.copy(allow_precision_loss=loss)
        return coerce_expression(x, legacy)

    new = transform_up_memo(e, rule, _COERCE_BITS[loss, legacy])
    _mark_new_casts(e, new, ctx)
    return new


def _settings(ctx) -> tuple[bool, bool]:
    """(``spark.sql.decimalOperations.allowPrecisionLoss``, ANSI off) under ``ctx``."""
    return bool(ctx.conf.get(DECIMAL_ALLOW_PRECISION_LOSS)), not ctx.conf.ansi


#: The expression rewrite of TypeCoercion, for rules that must match coerced expressions.
coerce_types = _coerce_expr


def _coerce_in_subquery(x, ctx):
    if not x.plan.resolved or not all(v.resolved for v in x.values):
        return x
    out = x.plan.output
    if len(out) != len(x.values):
        return x
    targets = []
    for v, a in zip(x.values, out):
        t = find_wider_type([v.data_type, a.data_type], legacy=not ctx.conf.ansi)
        if t is None:
            return x
        targets.append(t)
    if all(v.data_type == t for v, t in zip(x.values, targets)) and all(
        a.data_type == t for a, t in zip(out, targets)
    ):
        return x
    values = tuple(_cast(v, t, ctx) for v, t in zip(x.values, targets))
    plan = x.plan
    if any(a.data_type != t for a, t in zip(out, targets)):
        plan = Project(
            tuple(a if a.data_type == t else Alias(_cast(a, t, ctx), a.name)
                  for a, t in zip(out, targets)),
            plan,
        )
    return x.copy(values=values, plan=plan)


def widen_set_operation(children: tuple[LogicalPlan, ...], ctx) -> tuple[LogicalPlan, ...] | None:
    """New children with wider column types, or None when nothing changes / cannot widen."""

    n = len(children[0].output)
    if any(len(c.output) != n for c in children):
        return None
    targets: list[T.DataType] = []
    for i in range(n):
        t = find_wider_type([c.output[i].data_type for c in children],
                            legacy=not ctx.conf.ansi)
        if t is None:
            return None
        targets.append(t)
    if all(c.output[i].data_type == targets[i] for c in children for i in range(n)):
        return None
    out = []
    for c in children:
        if all(a.data_type == t for a, t in zip(c.output, targets)):
            out.append(c)
            continue
        items: list[Expression] = [
            a if a.data_type == t else Alias(_cast(a, t, ctx), a.name)
            for a, t in zip(c.output, targets)
        ]
        out.append(Project(tuple(items), c))
    return tuple(out)


def type_coercion(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with implicit casts inserted (see module doc); ``plan`` itself if none needed."""
    # Widening a set operation gives its output new attributes (a cast under a new Alias), so
    # the operators above it must read the new ones (SPARK-32638): old id -> new attribute.
    remapped: dict[int, AttributeReference] = {}

    def remap(e: Expression) -> Expression | None:
        if isinstance(e, AttributeReference) and e.id in remapped:
            return remapped[e.id].with_qualifier(e.qualifier)
        return None

    def widened(p: LogicalPlan, new: LogicalPlan) -> LogicalPlan:
        for old_attr, new_attr in zip(p.output, new.output):
            if old_attr.id != new_attr.id or old_attr.data_type != new_attr.data_type:
                remapped[old_attr.id] = new_attr
        return new

    def rule(p: LogicalPlan) -> LogicalPlan:
        if remapped:
            p = p.transform_expressions(remap)
        if p.children and not all(c.resolved for c in p.children):
            return p
        match p:
            case Union(inputs=inputs) if not p.by_name:
                new = widen_set_operation(inputs, ctx)
                return p if new is None else widened(p, p.copy(inputs=new))
            case Intersect(left=l, right=r) | Except(left=l, right=r):
                new = widen_set_operation((l, r), ctx)
                return p if new is None else widened(p, p.copy(left=new[0], right=new[1]))
            case _:
                pass
        return p.map_expressions(lambda e: _coerce_expr(e, ctx, settings))

    settings = _settings(ctx)  # read once per run of the rule, not per expression
    # A subtree left unchanged earlier in the run is skipped: its result depends on the subtree
    # and the run's settings alone, and ``remapped`` holds ids that only the ancestors of a
    # widened set operation read.
    return transform_up_in_run(plan, rule, ctx, "TypeCoercion")


__all__ = ["type_coercion", "widen_set_operation", "AttributeReference"]
