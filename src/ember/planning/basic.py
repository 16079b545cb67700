"""BasicOperators and SpecialLimits strategies (Spark's ``BasicOperators`` /
``SpecialLimits``): one physical operator per logical operator.

Limits follow Spark's shapes: at the root, ``ORDER BY ... LIMIT n`` is
``TakeOrderedAndProjectExec`` and ``LIMIT n`` is ``CollectLimitExec``; elsewhere a limit is
``GlobalLimitExec(LocalLimitExec(child))``.  With OFFSET, the physical ``limit`` counts from the
first row (Spark's ``limit + offset``): the operator keeps rows ``[offset, limit)``; -1 = no limit.
"""

from __future__ import annotations

from collections.abc import Callable

from ember.conf import SHUFFLE_PARTITIONS, SQLConf, TOP_K_SORT_FALLBACK_THRESHOLD
from ember.errors import InternalError
from ember.expressions.base import Expression, Literal, and_all
from ember.plans.logical.join_type import JoinType
from ember.physical import nodes as P
from ember.physical.partitioning import HashPartitioning
from ember.plans.logical import nodes as L
from ember.expressions.predicates import EqualNullSafe

PlanLater = Callable[[L.LogicalPlan], P.SparkPlan]


def _int(e: Expression) -> int | None:
    if isinstance(e, Literal) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return e.value
    return None


def _limit_offset(plan: L.LogicalPlan) -> tuple[int, int, L.LogicalPlan] | None:
    """``(limit counted from the first row (-1: none), offset, child)`` of a Limit/Offset stack."""
    match plan:
        case L.Limit(limit=le, child=L.Offset(offset=oe, child=c)) if (
                _int(le) is not None and _int(oe) is not None):
            return _int(le) + _int(oe), _int(oe), c  # type: ignore[operator]
        case L.Offset(offset=oe, child=L.Limit(limit=le, child=c)) if (
                _int(le) is not None and _int(oe) is not None):
            return max(_int(le), _int(oe)), _int(oe), c  # type: ignore[type-var]
        case L.Limit(limit=le, child=c) if _int(le) is not None:
            return _int(le), 0, c  # type: ignore[return-value]
        case L.Offset(offset=oe, child=c) if _int(oe) is not None:
            return -1, _int(oe), c  # type: ignore[return-value]
    return None


def special_limits(plan: L.LogicalPlan, plan_later: PlanLater, conf: SQLConf) -> P.SparkPlan | None:
    """SpecialLimits: only applied to the root of the query."""
    lo = _limit_offset(plan)
    if lo is None:
        return None
    limit, offset, child = lo
    if limit >= 0 and limit < conf.get(TOP_K_SORT_FALLBACK_THRESHOLD):
        match child:
            case L.Sort(order=order, is_global=True, child=c):
                return P.TakeOrderedAndProjectExec(limit, order, c.output, plan_later(c), offset)
            case L.Project(project_list=pl, child=L.Sort(order=order, is_global=True, child=c)):
                return P.TakeOrderedAndProjectExec(limit, order, pl, plan_later(c), offset)
    return P.CollectLimitExec(limit, plan_later(child), offset)


def _distinct_join(left: L.LogicalPlan, right: L.LogicalPlan, jt: JoinType) -> L.LogicalPlan:
    cond = and_all(EqualNullSafe(a, b) for a, b in zip(left.output, right.output))
    return L.Aggregate(left.output, left.output, L.Join(left, right, jt, cond))


def _spark_frame_scan(rel: L.SparkDataFrameRelation,
                      projects: tuple[Expression, ...]) -> P.SparkPlan:
    """The scan of a PySpark DataFrame reading only the columns ``projects`` use (at least
    one, so rows keep their count), as Spark reads only those of a file."""
    refs: set[int] = set()
    for e in projects:
        refs |= e.references
    keep = [i for i, a in enumerate(rel.attrs) if a.id in refs] or list(range(len(rel.attrs)))[:1]
    if len(keep) == len(rel.attrs):
        return P.SparkDataFrameScanExec(rel.frame, rel.attrs)
    return P.SparkDataFrameScanExec(rel.frame, tuple(rel.attrs[i] for i in keep), tuple(keep))


def basic_operators(plan: L.LogicalPlan, plan_later: PlanLater, conf: SQLConf) -> P.SparkPlan | None:
    match plan:
        case L.Project(project_list=pl, child=L.SparkDataFrameRelation() as rel):
            return P.ProjectExec(pl, _spark_frame_scan(rel, pl))
        case L.Project(project_list=pl, child=L.Filter(condition=cond,
                                                       child=L.SparkDataFrameRelation() as rel)):
            return P.ProjectExec(pl, P.FilterExec(cond, _spark_frame_scan(rel, (*pl, cond))))
        case L.Project(project_list=pl, child=c):
            return P.ProjectExec(pl, plan_later(c))
        case L.Filter(condition=cond, child=c):
            return P.FilterExec(cond, plan_later(c))
        case L.Sort(order=order, is_global=g, child=c):
            return P.SortExec(order, g, plan_later(c))
        case L.LocalRelation(attrs=attrs, data=data):
            return P.LocalTableScanExec(attrs, data)
        case L.FileRelation():
            return P.FileSourceScanExec(plan, plan.output)
        case L.SparkDataFrameRelation(attrs=attrs, frame=frame):
            return P.SparkDataFrameScanExec(frame, attrs)
        case L.OneRowRelation():
            return P.OneRowRelationExec()
        case L.Range(start=s, end=e, step=st, num_slices=n):
            return P.RangeExec(s, e, st, n if n is not None else 1, plan.output)
        case L.Expand(projections=ps, attrs=attrs, child=c):
            return P.ExpandExec(ps, attrs, plan_later(c))
        case L.Generate(generator=g, outer=outer, generator_output=out, child=c):
            return P.GenerateExec(g, outer, out, plan_later(c))
        case L.RepartitionByExpression(partition_expressions=es, num_partitions=n, child=c):
            # Spark's BasicOperators: ShuffleExchangeExec(HashPartitioning), REPARTITION_BY_COL
            parts = n if n is not None else conf.get(SHUFFLE_PARTITIONS)
            return P.ShuffleExchangeExec(HashPartitioning(es, parts), plan_later(c),
                                         "REPARTITION_BY_COL")
        case L.Union(inputs=inputs):
            return P.UnionExec(tuple(plan_later(c) for c in inputs))
        case L.Limit() | L.Offset():
            lo = _limit_offset(plan)
            if lo is None:
                raise InternalError(f"non-literal limit in {plan.simple_string()}")
            limit, offset, child = lo
            inner = plan_later(child)
            if limit >= 0:
                inner = P.LocalLimitExec(limit, inner)
            return P.GlobalLimitExec(limit, inner, offset)
        case L.SubqueryAlias(child=c) | L.View(child=c) | L.ResolvedHint(child=c):
            return plan_later(c)
        case L.Distinct(child=c):  # ReplaceDistinctWithAggregate, if the optimizer did not
            return plan_later(L.Aggregate(c.output, c.output, c))
        case L.Intersect(left=l, right=r, is_all=False):  # ReplaceIntersectWithSemiJoin
            return plan_later(_distinct_join(l, r, JoinType.LEFT_SEMI))
        case L.Except(left=l, right=r, is_all=False):  # ReplaceExceptWithAntiJoin
            return plan_later(_distinct_join(l, r, JoinType.LEFT_ANTI))
        case L.Intersect(left=l, right=r, is_all=is_all):
            return P.SetOperationExec("intersect", is_all, plan_later(l), plan_later(r))
        case L.Except(left=l, right=r, is_all=is_all):
            return P.SetOperationExec("except", is_all, plan_later(l), plan_later(r))
    return None
