"""ConvertToLocalRelation: Project / Filter / Limit over a LocalRelation computed at optimize time.

Spark 4's rule (top-down)::

    Project [(a#1 + 1) AS b#2] (LocalRelation [a#1], rows)  ==>  LocalRelation [b#2], rows'
    Filter (a#1 > 1) (LocalRelation [a#1], rows)           ==>  LocalRelation [a#1], rows''
    Limit 2 (LocalRelation [a#1], rows)                    ==>  LocalRelation [a#1], rows[:2]

The expressions are evaluated vectorized over the relation's Arrow batches
(:func:`ember.plans.logical.local_evaluation.evaluate_local`).

NOT applied (the plan is left as it is):

- to non-deterministic expressions (``rand()``: Spark evaluates them here with seed partition 0;
  Ember keeps them so they are evaluated once, at run time);
- to expressions that cannot be evaluated here: subqueries, outer references, aggregates,
  Python UDFs (Spark's are Unevaluable: they run in their eval nodes);
- when evaluation raises (``1/0``, an invalid cast under ANSI): the error is raised at run time,
  where Spark would raise it at optimize time -- same error, and none when the plan is never run.

No configuration keys are read (the batch size is the session's).
"""

from __future__ import annotations

import pyarrow as pa

from ember.conf import SQLConf
from ember.errors import EmberError
from ember.expressions.base import Expression, Literal, Unevaluable
from ember.expressions.python_udf import PythonUDF
from ember.optimizer.rule_executor import Rule
from ember.plans.logical.local_evaluation import evaluate_local
from ember.plans.logical.nodes import Filter, Limit, LocalRelation, LogicalPlan, Project
from ember.expressions.aggregates import AggregateExpression, AggregateFunction
from ember.expressions.subquery import OuterReference, SubqueryExpression

__all__ = ["ConvertToLocalRelation"]


def _evaluable(exprs: tuple[Expression, ...]) -> bool:
    bad = (Unevaluable, SubqueryExpression, OuterReference, AggregateExpression,
           AggregateFunction, PythonUDF)
    return all(e.deterministic and e.find(lambda x: isinstance(x, bad)) is None for e in exprs)


def _run(plan: LogicalPlan, conf: SQLConf) -> pa.Table | None:
    try:
        return evaluate_local(plan, conf.batch_size)
    except EmberError:
        return None  # raised again, per row, at run time
    except (ArithmeticError, ValueError, TypeError, pa.ArrowException):
        return None


def _convert(p: LogicalPlan, conf: SQLConf) -> LogicalPlan:
    match p:
        # A LocalRelation of unknown size stands for Spark's LogicalRDD (createDataFrame of
        # Python rows), which ConvertToLocalRelation does not touch.
        case _ if any(isinstance(c, LocalRelation) and c.unknown_size for c in p.children):
            return p
        case Project(project_list=items, child=LocalRelation()) if _evaluable(items):
            table = _run(p, conf)
            return p if table is None else LocalRelation(p.output, table)
        case Limit(limit=Literal(value=int() as n), child=LocalRelation(attrs=attrs) as rel):
            data = rel.data
            if data is None or data.num_rows <= n:
                return LocalRelation(attrs, data)
            return LocalRelation(attrs, data.slice(0, max(n, 0)))
        case Filter(condition=cond, child=LocalRelation(attrs=attrs)) if _evaluable((cond,)):
            table = _run(p, conf)
            return p if table is None else LocalRelation(attrs, table)
        case _:
            return p


class ConvertToLocalRelation(Rule):
    """See the module docstring."""

    rule_name = "ConvertToLocalRelation"
    patterns = (LocalRelation,)

    def apply(self, plan: LogicalPlan, conf: SQLConf) -> LogicalPlan:
        return plan.transform_down(lambda p: _convert(p, conf))
