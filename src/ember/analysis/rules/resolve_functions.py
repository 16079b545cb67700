"""ResolveFunctions: ``UnresolvedFunction`` -> aggregate or scalar expression.

Before::  'count(distinct 'a)       After::  count(DISTINCT a#1)  (AggregateExpression)

Once every argument (and the ``FILTER`` clause) is resolved, the name is looked up first among
aggregates (``ember.expressions.aggregates.lookup_aggregate``), then among scalar functions
(``ember.expressions.registry.lookup_function``, which raises ``UNRESOLVED_ROUTINE`` for unknown
names).  ``count()`` without arguments raises ``WRONG_NUM_ARGS.WITH_SUGGESTION`` unless
``spark.sql.legacy.allowParameterlessCount``.
"""

from __future__ import annotations

from ember import types as T
from ember.analysis.catalog_model import SESSION_CATALOG
from ember.analysis.resolution import has_unresolved, to_origin
from ember.analysis.rules._util import transform_up_in_run
from ember.conf import ALLOW_PARAMETERLESS_COUNT
from ember.errors import AnalysisError, EmberError
from ember.expressions.base import (
    Alias, Expression, Literal, UnresolvedAlias, UnresolvedFunction, new_expr_id,
)
from ember.expressions.misc import FunctionCall
from ember.plans.logical.nodes import LogicalPlan
from ember.expressions.aggregates import First, Last, lookup_aggregate
from ember.expressions.higher_order import LambdaFunction
from ember.expressions.aggregates.base import AggregateExpression
from ember.expressions.registry import lookup_function, wrong_num_args
from ember.expressions.window_registry import lookup_window_function


#: Spark's ``CurrentDatabase`` (``current_database()`` and ``current_schema()``, both named
#: ``current_schema()``) and ``CurrentCatalog``: the session's current namespace, a constant of
#: the query (Spark's ReplaceCurrentLike folds them at the start of optimization).
_CURRENT_NAMESPACE = {"current_database": "current_schema", "current_schema": "current_schema",
                      "current_catalog": "current_catalog", "current_path": "current_path"}


def _current_namespace(pretty: str, ctx) -> Expression:
    value = SESSION_CATALOG if pretty == "current_catalog" else ctx.catalog.current_database()
    if pretty == "current_path":  # Spark's CurrentPath: the function resolution search path
        value = f"system.builtin,system.session,{SESSION_CATALOG}.{value}"
    return FunctionCall.of(pretty, (), Literal(value, T.STRING))


def resolve_function_call(f: UnresolvedFunction, ctx) -> Expression:
    """The resolved expression for ``f`` (its arguments must be resolved)."""
    name = f.fn_name
    args = tuple(f.arguments)
    python_udf = ctx.catalog.lookup_python_function(name)
    if python_udf is not None:  # spark.udf.register: before the built-ins, as in Spark
        if isinstance(python_udf, AggregateExpression):  # a grouped aggregate pandas UDF
            return python_udf.copy(func=python_udf.func.copy(arguments=args,
                                                             result_id=new_expr_id()),
                                   id=new_expr_id())
        return python_udf.copy(arguments=args, result_id=new_expr_id())
    try:
        if name.lower() in _CURRENT_NAMESPACE:
            if args:
                raise wrong_num_args(name, "0", len(args))
            return _current_namespace(_CURRENT_NAMESPACE[name.lower()], ctx)
        if name.lower() == "count" and not args:
            if ctx.conf.get(ALLOW_PARAMETERLESS_COUNT):
                # Spark's legacy count() counts nothing: 0 per group, like count(NULL)
                args = (Literal(None, T.NULL),)
            else:
                raise AnalysisError(
                    "The `count` requires  >= 1 parameters but the actual number is 0. If you "
                    "have to call this function with 0 parameters, set the legacy configuration "
                    '"spark.sql.legacy.allowParameterlessCount" to "true".',
                    error_class="WRONG_NUM_ARGS.WITH_SUGGESTION",
                    parameters={
                        "functionName": "`count`", "expectedNum": " >= 1", "actualNum": "0",
                        "legacyNum": "0",
                        "legacyConfKey": '"spark.sql.legacy.allowParameterlessCount"',
                        "legacyConfValue": '"true"',
                    },
                )

        agg = lookup_aggregate(name, args, f.is_distinct, f.filter, f.ignore_nulls)
        if agg is not None:
            if f.ignore_nulls and isinstance(agg.func, (First, Last)):
                # Spark copies the function to set IGNORE NULLS and loses the name it was called
                # by: ``first_value(x) IGNORE NULLS`` is named ``first(x)``
                return agg.copy(func=agg.func.copy(fn_name=None))
            return agg
        window_fn = lookup_window_function(name, args, f.ignore_nulls)
        if window_fn is not None:
            return window_fn

        return lookup_function(name, args)
    except EmberError as e:
        origin = to_origin(f.origin)
        if origin is not None:
            e.with_origin(origin)
        raise


def resolve_functions_in(e: Expression, ctx) -> Expression:
    """``e`` with every ``UnresolvedFunction`` whose arguments are resolved looked up."""
    def rule(x: Expression) -> Expression | None:
        if isinstance(x, UnresolvedFunction):
            # a lambda argument is bound by its higher-order function (Spark's
            # ResolveLambdaVariables): only the other arguments must be resolved first
            if any(has_unresolved(a) for a in x.arguments if not (
                    isinstance(a, LambdaFunction) and not a.bound)):
                return None
            if x.filter is not None and has_unresolved(x.filter):
                return None
            return resolve_function_call(x, ctx)
        return None

    return e.transform_up(rule)


def _has_fn(e: Expression) -> bool:
    return e.contains(UnresolvedFunction)


def _legacy_count_alias(e: Expression, ctx) -> Expression | None:
    """Legacy ``count()`` (always 0, like ``count(NULL)``) keeps Spark's column name ``count()``."""
    if (
        isinstance(e, UnresolvedAlias)
        and isinstance(e.child, UnresolvedFunction)
        and e.child.fn_name.lower() == "count"
        and not e.child.arguments
        and ctx.conf.get(ALLOW_PARAMETERLESS_COUNT)
    ):
        return Alias(resolve_function_call(e.child, ctx), "count()")
    return None


def resolve_functions(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with its function calls resolved where their arguments are (see module doc)."""
    def one(e: Expression) -> Expression:
        if not _has_fn(e):
            return e
        return _legacy_count_alias(e, ctx) or resolve_functions_in(e, ctx)

    def rule(p: LogicalPlan) -> LogicalPlan:
        if not any(_has_fn(e) for e in p.expressions()):
            return p
        return p.map_expressions(one)

    return transform_up_in_run(plan, rule, ctx, "ResolveFunctions")
