"""CheckAnalysis: what the rules could not resolve or type, reported with Spark's error class.

Checked bottom-up (the deepest problem is reported first, as Spark does):

- unresolved names: ``UNRESOLVED_COLUMN.WITH_SUGGESTION`` (closest input columns first);
- expressions whose ``check_input_types`` fails: ``DATATYPE_MISMATCH.*`` (sub-class and
  parameters from ``ember.expressions.common.TypeCheckFailure``);
- aggregates in WHERE: ``INVALID_WHERE_CONDITION``; nested aggregates:
  ``NESTED_AGGREGATE_FUNCTION``; non-grouped columns: ``MISSING_AGGREGATION`` (or
  ``MISSING_GROUP_BY`` without GROUP BY); aggregates in GROUP BY: ``GROUP_BY_AGGREGATE``;
- windows: ``WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE``, ``DISTINCT_WINDOW_FUNCTION_UNSUPPORTED``,
  ``UNSUPPORTED_EXPR_FOR_WINDOW``, ``MISSING_WINDOW_SPECIFICATION``, the frame and
  specification checks (``ember.analysis.window_checks``), windows in ORDER BY or GROUP BY:
  ``UNSUPPORTED_EXPR_FOR_OPERATOR``;
- set operations: ``NUM_COLUMNS_MISMATCH``, ``INCOMPATIBLE_COLUMN_TYPE``;
- conditions: ``DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN`` (WHERE; a non-predicate HAVING is cast to
  boolean by the parser, as Spark's ``withHavingClause`` does), ``JOIN_CONDITION_IS_NOT_BOOLEAN_TYPE``;
- LIMIT / OFFSET: ``INVALID_LIMIT_LIKE_EXPRESSION.*`` (not constant, not INT, NULL, negative);
- ``grouping()`` / ``grouping_id()`` without GROUPING SETS / CUBE / ROLLUP:
  ``UNSUPPORTED_GROUPING_EXPRESSION``;
- leftover unresolved operators (``UnresolvedHaving``, ``UsingJoin`` ...): ``INTERNAL_ERROR``
  naming the node.
Subquery plans are checked too.
"""

from __future__ import annotations

import pyarrow as pa

from ember import types as T
from ember.analysis.resolution import (
    children_metadata,
    equal_ignoring_aliases,
    pretty_sql,
    qualified_sql,
    to_origin,
    unresolved_column_error,
)
from ember.analysis.rules._util import is_aggregate_expr
from ember.analysis.rules.resolve_grouping_analytics import unsupported_grouping_expression
from ember.analysis.rules.windows_substitution import missing_window_specification
from ember.analysis.window_checks import check_window_types
from ember.expressions.aggregates import AggregateExpression
from ember.expressions.windows import WindowExpression, WindowFunction, WindowSpecReference
from ember.errors import AnalysisError, InternalError
from ember.expressions.grouping import Grouping, GroupingID
from ember.expressions.base import (
    AttributeReference,
    Expression,
    UnresolvedAttribute,
    UnresolvedFunction,
    UnresolvedStar,
    is_resolved,
)
from ember.plans.logical.nodes import (
    Limit,
    Offset,
    Project,
    Window,
    Aggregate,
    Except,
    Filter,
    Distinct,
    Intersect,
    Join,
    LateralJoin,
    LogicalPlan,
    Sort,
    Union,
)
from ember.plans.logical.distinct_keys import max_rows
from ember.expressions.subquery import (
    SubqueryExpression, OuterReference, ScalarSubquery, InSubquery,
)
from ember.expressions.common import sql_type
from ember.expressions.foldable import is_foldable

_ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
             "ninth", "tenth"]


def _ordinal(i: int) -> str:
    return _ORDINALS[i] if i < len(_ORDINALS) else f"{i + 1}th"


def _sql_type(t) -> str:
    return sql_type(t)


def _setop_name(p: LogicalPlan) -> str:
    match p:
        case Union():
            return "UNION"
        case Intersect(is_all=a):
            return "INTERSECT ALL" if a else "INTERSECT"
        case Except(is_all=a):
            return "EXCEPT ALL" if a else "EXCEPT"
    return p.node_name.upper()


def _check_set_op(p: LogicalPlan, children: tuple[LogicalPlan, ...]) -> None:
    op = _setop_name(p)
    first = children[0].output
    for i, c in enumerate(children[1:], 1):
        if len(c.output) != len(first):
            raise AnalysisError(
                f"{op} can only be performed on inputs with the same number of columns, but the "
                f"first input has {len(first)} columns and the {_ordinal(i)} input has "
                f"{len(c.output)} columns.",
                error_class="NUM_COLUMNS_MISMATCH",
                parameters={"operator": op, "firstNumColumns": str(len(first)),
                            "invalidOrdinalNum": _ordinal(i),
                            "invalidNumColumns": str(len(c.output))},
            )
    for i, c in enumerate(children[1:], 1):
        for j, (a, b) in enumerate(zip(first, c.output)):
            if a.data_type != b.data_type:
                t1, t2 = _sql_type(b.data_type), _sql_type(a.data_type)
                raise AnalysisError(
                    f"{op} can only be performed on tables with compatible column types. The "
                    f"{_ordinal(j)} column of the {_ordinal(i)} table is {t1} type which is not "
                    f"compatible with {t2} at the same column of the first table..",
                    error_class="INCOMPATIBLE_COLUMN_TYPE",
                    parameters={"operator": op, "columnOrdinalNumber": _ordinal(j),
                                "tableOrdinalNumber": _ordinal(i), "dataType1": t1,
                                "dataType2": t2, "hint": ""},
                )


def _check_expression_types(e: Expression, ctx) -> None:
    """Raise DATATYPE_MISMATCH for the deepest failing expression."""
    failure: list[tuple[Expression, str]] = []

    def visit(x: Expression) -> None:
        if failure:
            return
        for c in x.children:
            visit(c)
        if failure:
            return
        if all(is_resolved(c) for c in x.children):  # cached on the node
            msg = x.check_input_types() or check_window_types(x)
            if msg is not None:
                failure.append((x, msg))

    visit(e)
    if not failure:
        return
    x, msg = failure[0]
    error_class = getattr(msg, "error_class", None) or "DATATYPE_MISMATCH"
    params = dict(getattr(msg, "parameters", {}) or {})
    params.setdefault("sqlExpr", f'"{pretty_sql(x, ctx.implicit_casts)}"')
    raise AnalysisError(
        f'Cannot resolve "{pretty_sql(x, ctx.implicit_casts)}" due to data type mismatch: {msg}',
        error_class=error_class,
        parameters=params,
        origin=to_origin(getattr(x, "origin", None)),
    )


def _is_window(x: Expression) -> bool:
    return isinstance(x, WindowExpression)


def _is_special(x: Expression) -> bool:
    return is_aggregate_expr(x) or isinstance(x, WindowExpression)


#: The classes ``_is_special`` accepts, for ``Expression.contains`` (tree-pattern bits: no walk).
_SPECIAL = (AggregateExpression, WindowExpression)


def _find_kind(e: Expression, *classes: type) -> Expression | None:
    """The first node of ``e`` (pre-order) that is an instance of one of ``classes``; the
    tree-pattern bits answer "none" without walking ``e``."""
    if not e.contains(*classes):
        return None
    return e.find(lambda x: isinstance(x, classes))


def _unsupported_in_operator(p: LogicalPlan, exprs, ctx) -> None:
    """Spark's ``UNSUPPORTED_EXPR_FOR_OPERATOR``: window or aggregate expressions where the
    operator cannot compute them (ORDER BY without an Aggregate below, GROUP BY)."""
    bad = [a for e in exprs for a in e.collect(lambda x: x if _is_special(x) else None)]
    sqls = ", ".join(f'"{pretty_sql(a, ctx.implicit_casts)}"' for a in bad)
    op = p.node_name
    raise AnalysisError(
        f"The query operator `{op}` contains one or more unsupported expressions. Consider "
        "to rewrite it to avoid window functions, aggregate functions, and generator "
        f"functions in the {op} operator.\nInvalid expressions: [{sqls}]",
        error_class="UNSUPPORTED_EXPR_FOR_OPERATOR",
        parameters={"operator": op, "invalidExprSqls": sqls},
    )


def _check_windows(e: Expression, ctx) -> None:
    """Spark's window checks of CheckAnalysis, bottom-up: a window function without OVER
    (``WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE``), a window reference no WINDOW clause defined
    (``MISSING_WINDOW_SPECIFICATION``), DISTINCT over a window
    (``DISTINCT_WINDOW_FUNCTION_UNSUPPORTED``), a function that is neither an aggregate nor a
    window function over a window (``UNSUPPORTED_EXPR_FOR_WINDOW``)."""
    if not e.contains(WindowExpression, WindowFunction):
        return  # nothing below to check

    def visit(x: Expression) -> None:
        for c in x.children:
            visit(c)
        if not isinstance(x, WindowExpression):
            wf = next((c for c in x.children if isinstance(c, WindowFunction)), None)
            if wf is not None and all(c.resolved for c in wf.children):
                text = f'"{pretty_sql(wf)}"'
                raise AnalysisError(f"Window function {text} requires an OVER clause.",
                                    error_class="WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE",
                                    parameters={"funcName": text},
                                    origin=to_origin(getattr(e, "origin", None)))
            return
        if isinstance(x.window_spec, WindowSpecReference):
            raise missing_window_specification(x.window_spec.name)
        fn = x.window_function
        if isinstance(fn, AggregateExpression) and fn.is_distinct:
            text = f'"{pretty_sql(x, ctx.implicit_casts)}"'
            raise AnalysisError(f"Distinct window functions are not supported: {text}.",
                                error_class="DISTINCT_WINDOW_FUNCTION_UNSUPPORTED",
                                parameters={"windowExpr": text})
        if not isinstance(fn, (AggregateExpression, WindowFunction)) and fn.resolved:
            text = f'"{pretty_sql(fn, ctx.implicit_casts)}"'
            raise AnalysisError(f"Expression {text} not supported within a window function.",
                                error_class="UNSUPPORTED_EXPR_FOR_WINDOW",
                                parameters={"sqlExpr": text})

    visit(e)


def _check_aggregate(agg: Aggregate, ctx) -> None:
    groups = agg.grouping_expressions
    for g in groups:
        if g.exists(is_aggregate_expr):
            agg_sql = qualified_sql(g.find(is_aggregate_expr))
            raise AnalysisError(
                f"Aggregate functions are not allowed in GROUP BY, but found {agg_sql}.",
                error_class="GROUP_BY_AGGREGATE",
                parameters={"sqlExpr": agg_sql},
            )

    def check(e: Expression) -> None:
        if is_aggregate_expr(e):
            for c in e.children:
                if c.exists(is_aggregate_expr):
                    raise AnalysisError(
                        "It is not allowed to use an aggregate function in the argument of "
                        "another aggregate function. Please use the inner aggregate function in a "
                        "sub-query.",
                        error_class="NESTED_AGGREGATE_FUNCTION",
                    )
            return
        if isinstance(e, AttributeReference):
            if not groups:
                raise AnalysisError(
                    "The query does not include a GROUP BY clause. Add GROUP BY or turn it into "
                    "the window functions using OVER clauses.",
                    error_class="MISSING_GROUP_BY",
                )
            if not any(equal_ignoring_aliases(g, e) for g in groups):
                expr = f'"{pretty_sql(e)}"'
                any_value = f'"any_value({pretty_sql(e)})"'
                raise AnalysisError(
                    f"The non-aggregating expression {expr} is based on columns which are not "
                    "participating in the GROUP BY clause.\nAdd the columns or the expression to "
                    "the GROUP BY, aggregate the expression, or use "
                    f"{any_value} if you do not care which of the values within a group is "
                    "returned.",
                    error_class="MISSING_AGGREGATION",
                    parameters={"expression": expr, "expressionAnyValue": any_value},
                )
            return
        if any(equal_ignoring_aliases(g, e) for g in groups):
            return
        if isinstance(e, (OuterReference, SubqueryExpression)):
            return
        for c in e.children:
            check(c)

    for item in agg.aggregate_expressions:
        check(item)


def _check_node(p: LogicalPlan, ctx) -> None:
    # unresolved names / functions
    for e in p.expressions():
        u = _find_kind(e, UnresolvedAttribute, UnresolvedStar)
        if isinstance(u, UnresolvedAttribute):
            cands: tuple[AttributeReference, ...] = ()
            for c in p.children:
                if c.resolved:
                    cands += c.output
            raise unresolved_column_error(u.name_parts, cands, u.origin)
        if isinstance(u, UnresolvedStar):
            raise AnalysisError(f"Invalid usage of '*' in expression {e.sql()}.",
                                error_class="INVALID_USAGE_OF_STAR_OR_REGEX",
                                parameters={"elem": "'*'", "prettyName": "expression"})
        f = _find_kind(e, UnresolvedFunction)
        if f is not None:
            raise InternalError(f"Function {f.fn_name} was not resolved in {p.simple_string()}")
        if e.contains(Grouping, GroupingID):
            # left by ResolveGroupingAnalytics: no GROUPING SETS / CUBE / ROLLUP below
            raise unsupported_grouping_expression()
    # subqueries
    for e in p.expressions():
        if not e.contains(SubqueryExpression):
            continue
        for sq in e.collect(lambda x: x if isinstance(x, SubqueryExpression) else None):
            _check_plan(sq.plan, ctx)
            _check_subquery_shape(sq)
    if isinstance(p, LateralJoin):
        _check_lateral_join(p, ctx)
    if isinstance(p, Aggregate) and any(
            g.find(lambda x: isinstance(x, OuterReference)) is not None
            for g in p.grouping_expressions):
        # Spark's checkCorrelationsInSubquery: no outer column in a subquery's GROUP BY
        exprs = [e for e in (*p.grouping_expressions, *p.aggregate_expressions)
                 if e.find(lambda x: isinstance(x, OuterReference)) is not None]
        shown = ",".join(f'"{e.sql()}"' for e in exprs)
        raise AnalysisError(
            "Unsupported subquery expression: Expressions referencing the outer query are not "
            f"supported outside of WHERE/HAVING clauses: {shown}.",
            error_class="UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.CORRELATED_REFERENCE",
            parameters={"sqlExprs": shown})
    match p:
        case Filter(condition=cond) if cond.resolved and cond.data_type != T.BOOLEAN and not (
            cond.contains(AggregateExpression)
        ):
            e_sql = f'"{pretty_sql(cond, ctx.implicit_casts)}"'
            t = _sql_type(cond.data_type)
            raise AnalysisError(
                f"Cannot resolve {e_sql} due to data type mismatch: Filter expression {e_sql} of "
                f"type {t} is not a boolean.",
                error_class="DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN",
                parameters={"sqlExpr": e_sql, "filter": e_sql, "type": t},
            )
        case Filter(condition=cond):
            aggs = cond.collect(lambda x: x if is_aggregate_expr(x) else None)
            if aggs:
                cond_sql = f'"{pretty_sql(cond, ctx.implicit_casts)}"'
                lst = ", ".join(qualified_sql(a) for a in aggs)
                raise AnalysisError(
                    f"The WHERE condition {cond_sql} contains invalid expressions: {lst}.\n"
                    "Rewrite the query to avoid window functions, aggregate functions, and "
                    "generator functions in the WHERE clause.",
                    error_class="INVALID_WHERE_CONDITION",
                    parameters={"condition": cond_sql, "expressionList": lst},
                )
        case Sort(order=order) if any(o.contains(*_SPECIAL) for o in order):
            # an aggregate ORDER BY no Aggregate below could take, or a window function (Spark's
            # specialExpressionsInUnsupportedOperator)
            _unsupported_in_operator(p, order, ctx)
        case Aggregate(grouping_expressions=groups) if any(g.contains(WindowExpression)
                                                           for g in groups):
            _unsupported_in_operator(p, groups, ctx)
        case Join(condition=cond) if cond is not None and cond.contains(*_SPECIAL):
            # an aggregate or a window in ON (Spark's specialExpressionsInUnsupportedOperator)
            _unsupported_in_operator(p, (cond,), ctx)
        case _ if not isinstance(p, (Project, Aggregate, Window)) and any(
                e.contains(WindowExpression) for e in p.expressions()):
            # a window anywhere else (a join condition ...)
            _unsupported_in_operator(p, p.expressions(), ctx)
        case Limit(limit=e) | Offset(offset=e):
            _check_limit_like("limit" if isinstance(p, Limit) else "offset", e, ctx)
        case Distinct() | Intersect() | Except() if any(
                not a.data_type.is_orderable for a in p.output):
            # Spark's CheckAnalysis mapColumnInSetOperation
            a = next(a for a in p.output if not a.data_type.is_orderable)
            t = f'"{a.data_type.sql()}"'
            raise AnalysisError(
                "The feature is not supported: Cannot have MAP type columns in a set operation "
                f"(INTERSECT, EXCEPT, etc.), but the type of column `{a.name}` is {t}.",
                error_class="UNSUPPORTED_FEATURE.SET_OPERATION_ON_MAP_TYPE",
                parameters={"colName": f"`{a.name}`", "dataType": t})
        case Union(inputs=inputs):
            _check_set_op(p, inputs)
        case Intersect(left=l, right=r) | Except(left=l, right=r):
            _check_set_op(p, (l, r))
        case _:
            pass
    for e in p.expressions():
        _check_windows(e, ctx)
        _check_expression_types(e, ctx)
    match p:
        case Join(condition=cond) if cond is not None and cond.data_type != T.BOOLEAN:
            # Spark checks the operator after its expressions: ``ON a.x = b.y AND a.x`` is
            # DATATYPE_MISMATCH first, ``ON a.s || b.s`` this one
            c_sql = f'"{pretty_sql(cond, ctx.implicit_casts)}"'
            t = _sql_type(cond.data_type)
            raise AnalysisError(
                f"The join condition {c_sql} has the invalid type {t}, expected \"BOOLEAN\".",
                error_class="JOIN_CONDITION_IS_NOT_BOOLEAN_TYPE",
                parameters={"joinCondition": c_sql, "conditionType": t},
            )
        case _:
            pass
    if isinstance(p, Aggregate):
        _check_aggregate(p, ctx)
    _check_missing_input(p)
    if not p.resolved:
        raise InternalError(f"Unresolved operator after analysis: {p.simple_string()}")


#: One row, no columns: what a constant LIMIT / OFFSET expression is evaluated over.
_ONE_ROW = pa.RecordBatch.from_struct_array(pa.array([{}], type=pa.struct([])))


def _check_limit_like(name: str, e: Expression, ctx) -> None:
    """Spark's ``checkLimitLikeClause``: a LIMIT / OFFSET must be a constant INT, not NULL and
    not negative (``INVALID_LIMIT_LIKE_EXPRESSION.*``; BIGINT and NULL literals are DATA_TYPE)."""
    if not e.resolved:
        return
    e_sql = f'"{pretty_sql(e, ctx.implicit_casts)}"'
    params = {"name": name, "expr": e_sql}

    def fail(sub: str, detail: str, **extra: str) -> AnalysisError:
        return AnalysisError(f"The limit like expression {e_sql} is invalid. {detail}",
                             error_class=f"INVALID_LIMIT_LIKE_EXPRESSION.{sub}",
                             parameters={**params, **extra})

    if not is_foldable(e):
        raise fail("IS_UNFOLDABLE", f"The {name} expression must evaluate to a constant value.")
    if e.data_type != T.INT:
        t = _sql_type(e.data_type)
        raise fail("DATA_TYPE", f"The {name} expression must be integer type, but got {t}.",
                   dataType=t)
    value = e.eval(_ONE_ROW)
    if isinstance(value, pa.ChunkedArray):
        value = value.combine_chunks()
    v = value.as_py() if isinstance(value, pa.Scalar) else value[0].as_py()
    if v is None:
        raise fail("IS_NULL", f"The evaluated {name} expression must not be null.")
    if v < 0:
        raise fail("IS_NEGATIVE",
                   f"The {name} expression must be equal to or greater than 0, but got {v}.",
                   v=str(v))


def _check_missing_input(p: LogicalPlan) -> None:
    """Spark's ``MISSING_ATTRIBUTES``: an operator reads a resolved attribute its children do not
    produce (e.g. ``df1.where(df2.c > 1)`` in the DataFrame API)."""
    if not p.children or not p.resolved:
        return
    existence = getattr(p, "existence_attr", None)
    missing = p.missing_input - ({existence.id} if existence is not None else set())
    if not missing:
        return

    attrs: dict[int, AttributeReference] = {}
    for e in p.expressions():
        for a in e.collect(lambda x: x if isinstance(x, AttributeReference) else None):
            if a.id in missing:
                attrs.setdefault(a.id, a)
        # the outer columns a subquery reads are inputs of this operator too
        for sq in e.collect(lambda x: x if isinstance(x, SubqueryExpression) else None):
            for a in getattr(sq, "outer_attrs", ()):
                if isinstance(a, AttributeReference) and a.id in missing:
                    attrs.setdefault(a.id, a)
    if not attrs:
        return
    inputs = [a for c in p.children for a in c.output]
    input_names = {a.name.lower() for a in inputs}
    missing_s = ", ".join(f'"{a.name}"' for a in attrs.values())
    input_s = ", ".join(f'"{a.name}"' for a in inputs)
    op = p.simple_string()
    if any(a.name.lower() in input_names for a in attrs.values()):
        same = ", ".join(f'"{a.name}"' for a in attrs.values() if a.name.lower() in input_names)
        raise AnalysisError(
            f"Resolved attribute(s) {missing_s} missing from {input_s} in operator {op}. "
            f"Attribute(s) with the same name appear in the operation: {same}.\nPlease check if "
            "the right attribute(s) are used.",
            error_class="MISSING_ATTRIBUTES.RESOLVED_ATTRIBUTE_APPEAR_IN_OPERATION",
            parameters={"missingAttributes": missing_s, "input": input_s, "operator": op,
                        "operation": same})
    raise AnalysisError(
        f"Resolved attribute(s) {missing_s} missing from {input_s} in operator {op}.",
        error_class="MISSING_ATTRIBUTES.RESOLVED_ATTRIBUTE_MISSING_FROM_INPUT",
        parameters={"missingAttributes": missing_s, "input": input_s, "operator": op})


def _plan_deterministic(plan: LogicalPlan) -> bool:
    return plan.find(lambda q: any(not e.deterministic for e in q.expressions())) is None


def _check_lateral_join(p: LateralJoin, ctx) -> None:
    """Spark's CheckAnalysis of a ``LateralJoin``: a non-deterministic subquery only over at most
    one outer row; a deterministic join condition."""
    if not _plan_deterministic(p.right.plan) and (max_rows(p.left) or 2) > 1:  # type: ignore[attr-defined]
        tree = p.tree_string()
        raise AnalysisError(
            "Unsupported subquery expression: Non-deterministic lateral subqueries are not "
            f"supported when joining with outer relations that produce more than one row:\n{tree}",
            error_class="UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY."
                        "NON_DETERMINISTIC_LATERAL_SUBQUERIES",
            parameters={"treeNode": tree})
    if p.condition is not None and not p.condition.deterministic:
        cond = pretty_sql(p.condition, ctx.implicit_casts)
        raise AnalysisError(
            f"Unsupported subquery expression: Lateral join condition cannot be "
            f"non-deterministic: {cond}.",
            error_class="UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY."
                        "LATERAL_JOIN_CONDITION_NON_DETERMINISTIC",
            parameters={"condition": cond})


def _check_subquery_shape(sq) -> None:


    if isinstance(sq, InSubquery) and len(sq.values) != len(sq.plan.output):
        left = ", ".join(f'"{pretty_sql(v)}"' for v in sq.values)
        right = ", ".join(f'"{a.name}"' for a in sq.plan.output)
        sql = f'"{pretty_sql(sq)}"'
        raise AnalysisError(
            f"Cannot resolve {sql} due to data type mismatch: The number of columns in the left "
            "hand side of an IN subquery does not match the number of columns in the output of "
            f"subquery. Left hand side columns(length: {len(sq.values)}): [{left}], right hand "
            f"side columns(length: {len(sq.plan.output)}): [{right}].",
            error_class="DATATYPE_MISMATCH.IN_SUBQUERY_LENGTH_MISMATCH",
            parameters={"sqlExpr": sql, "leftColumns": left, "leftLength": str(len(sq.values)),
                        "rightColumns": right, "rightLength": str(len(sq.plan.output))},
        )
    if isinstance(sq, InSubquery) and any(
        v.data_type != a.data_type for v, a in zip(sq.values, sq.plan.output)
    ):
        # TypeCoercion found no wider type for some pair (e.g. int vs date)
        bad = [(v, a) for v, a in zip(sq.values, sq.plan.output) if v.data_type != a.data_type]
        mismatched = ", ".join(
            f"({'.'.join(getattr(v, 'qualifier', ()) + (pretty_sql(v),))}:{v.data_type.simple_string()}, "
            f"{'.'.join(a.qualifier + (a.name,))}:{a.data_type.simple_string()})" for v, a in bad)
        left_t = ", ".join(v.data_type.simple_string() for v in sq.values)
        right_t = ", ".join(a.data_type.simple_string() for a in sq.plan.output)
        sql = f'"{pretty_sql(sq)}"'
        raise AnalysisError(
            f"Cannot resolve {sql} due to data type mismatch: The data type of one or more "
            "elements in the left hand side of an IN subquery is not compatible with the data "
            f"type of the output of the subquery. Mismatched columns: [{mismatched}], left side: "
            f"[{left_t}], right side: [{right_t}].",
            error_class="DATATYPE_MISMATCH.IN_SUBQUERY_DATA_TYPE_MISMATCH",
            parameters={"sqlExpr": sql, "mismatchedColumns": f"[{mismatched}]",
                        "leftType": f"[{left_t}]", "rightType": f"[{right_t}]"},
        )
    if isinstance(sq, ScalarSubquery) and len(sq.plan.output) != 1:
        n = len(sq.plan.output)
        raise AnalysisError(
            f"Invalid subquery: Scalar subquery must return only one column, but got {n}.",
            error_class="INVALID_SUBQUERY_EXPRESSION.SCALAR_SUBQUERY_RETURN_MORE_THAN_ONE_OUTPUT_COLUMN",
            parameters={"number": str(n)},
        )


def _check_plan(plan: LogicalPlan, ctx) -> None:
    for c in plan.children:
        _check_plan(c, ctx)
    _check_node(plan, ctx)


def check_analysis(plan: LogicalPlan, ctx) -> None:
    """Raise Spark's analysis error for the first problem in ``plan`` (bottom-up)."""
    _check_plan(plan, ctx)


__all__ = ["check_analysis", "children_metadata"]
