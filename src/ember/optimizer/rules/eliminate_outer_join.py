"""EliminateOuterJoin: outer joins whose NULL-padded rows are filtered out anyway become inner.

Spark 4's rule::

    Filter (r.b > 1) (Join LeftOuter (l, r))    ==>  Filter (r.b > 1) (Join Inner (l, r))
    Filter (l.a = r.b) (Join FullOuter (l, r))  ==>  ... Join Inner ...
    Filter (l.a > 1) (Join FullOuter (l, r))    ==>  ... Join LeftOuter ...

A side "has a non-null predicate" when one of the Filter's conjuncts, or an ``isnotnull(x)``
inferred from one (``x`` reached from the conjunct through null-intolerant expressions only, as
Spark's constraint propagation infers), references only that side and evaluates to NULL or false
when all its inputs are NULL (Catalyst's ``canFilterOutNull``, evaluated on a one-row batch of
NULLs).  RightOuter -> Inner if the left side has one, LeftOuter -> Inner if the right side has,
FullOuter -> Inner / LeftOuter / RightOuter accordingly.  Not applied with non-deterministic or
correlated-subquery conjuncts, nor when the evaluation raises.  The inferred ``isnotnull`` are
skipped when ``spark.sql.constraintPropagation.enabled`` is false.

Also Spark 4's Aggregate case: an Aggregate (optionally over a deterministic Project) over
``Join LeftOuter`` that reads only left columns and uses only duplicate-agnostic aggregates
(min, max, first, last; or none: ``GROUP BY`` / ``DISTINCT`` only) drops the join, since a left
outer join only repeats left rows (RightOuter symmetrically)::

    Aggregate [l.a], [l.a] (Join LeftOuter (l, r))   ==>  Aggregate [l.a], [l.a] (l)
"""

from __future__ import annotations

import pyarrow as pa

from ember.conf import CONSTRAINT_PROPAGATION_ENABLED, SQLConf
from ember.expressions.base import AttributeReference, Expression, Unevaluable, bind_references
from ember.expressions.predicate_helper import split_conjunctive_predicates
from ember.optimizer.rule_executor import Rule
from ember.optimizer.rules.null_propagation import scan_null_intolerant_attributes
from ember.plans.logical.join_type import BuildSide, JoinType
from ember.plans.logical.nodes import Aggregate, Filter, Join, LogicalPlan, Project
from ember.expressions.aggregates import AggregateExpression, AggregateFunction
from ember.expressions.predicates import IsNotNull
from ember.expressions.subquery import OuterReference, SubqueryExpression

__all__ = ["EliminateOuterJoin", "can_filter_out_null"]

def can_filter_out_null(e: Expression) -> bool:
    """``e`` is NULL or false when every attribute it reads is NULL."""

    if not e.deterministic:
        return False
    if e.find(lambda x: isinstance(x, (SubqueryExpression, OuterReference, Unevaluable,
                                       AggregateExpression))) is not None:
        return False
    attrs = list({a.id: a for a in e.collect(
        lambda x: x if isinstance(x, AttributeReference) else None)}.values())
    try:
        bound = bind_references(e, attrs)
        arrays = [pa.nulls(1, a.data_type.to_arrow()) for a in attrs]
        if arrays:
            batch = pa.RecordBatch.from_arrays(arrays, names=[f"c{i}" for i in range(len(attrs))])
        else:
            batch = pa.RecordBatch.from_struct_array(pa.array([{}], type=pa.struct([])))
        out = bound.eval(batch)
        if isinstance(out, pa.ChunkedArray):
            out = out.combine_chunks()
        v = out[0].as_py() if len(out) == 1 else True
    except Exception:  # noqa: BLE001 - raises on NULL input: cannot filter out NULLs
        return False
    return v is None or v is False


def _new_join_type(f: Filter, j: Join, conf: SQLConf) -> JoinType:
    conjuncts = split_conjunctive_predicates(f.condition)
    conditions = list(conjuncts)
    if conf.get(CONSTRAINT_PROPAGATION_ENABLED):
        for c in conjuncts:
            if c.deterministic:
                inner = c.child if isinstance(c, IsNotNull) else c
                conditions.extend(IsNotNull(a) for a in scan_null_intolerant_attributes(inner))
    left_set, right_set = j.left.output_set, j.right.output_set

    def has_non_null(side: frozenset[int]) -> bool:
        return any(c.references and c.references <= side and can_filter_out_null(c)
                   for c in conditions)

    jt: JoinType = j.join_type  # type: ignore[assignment]
    # a side's NULL-rejecting conjuncts matter where that side is padded (the other preserved)
    return jt.with_padded_rows_filtered(
        left=jt.pads_unmatched(BuildSide.RIGHT) and has_non_null(left_set),
        right=jt.pads_unmatched(BuildSide.LEFT) and has_non_null(right_set))


def _one_side_kept(j: Join) -> LogicalPlan | None:
    """The input a LeftOuter / RightOuter join keeps every row of (padding the other's), else
    None."""
    jt = j.join_type
    if not isinstance(jt, JoinType):
        return None
    pads_l, pads_r = jt.pads_unmatched(BuildSide.LEFT), jt.pads_unmatched(BuildSide.RIGHT)
    if pads_l == pads_r:
        return None
    return j.left if pads_l else j.right


def _duplicate_agnostic(exprs: tuple[Expression, ...]) -> bool:
    return all(e.find(lambda x: isinstance(x, AggregateFunction) and not x.duplicate_agnostic)
               is None for e in exprs)


def _eliminate(p: LogicalPlan, conf: SQLConf) -> LogicalPlan:
    match p:
        case Filter(condition=cond, child=Join(join_type=JoinType() as jt) as j) if jt.is_outer:
            new = _new_join_type(p, j, conf)
            return p if new is jt else Filter(cond, j.copy(join_type=new))
        case Aggregate(aggregate_expressions=aggs, child=Join() as j) if (
                (side := _one_side_kept(j)) is not None
                and p.references <= side.output_set and _duplicate_agnostic(aggs)):
            return p.copy(child=side)
        case Aggregate(aggregate_expressions=aggs, child=Project(
                project_list=items, child=Join() as j) as proj) if (
                (side := _one_side_kept(j)) is not None
                and all(e.deterministic for e in items) and proj.references <= side.output_set
                and _duplicate_agnostic(aggs)):
            return p.copy(child=proj.copy(child=side))
        case _:
            return p


class EliminateOuterJoin(Rule):
    """See the module docstring."""

    rule_name = "EliminateOuterJoin"
    patterns = (Join,)

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return plan.transform_down(lambda p: _eliminate(p, conf))
