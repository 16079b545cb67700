"""ResolveTableValuedFunctions: a table-valued function in FROM -> its plan.

Before::  'UnresolvedTableValuedFunction [range], [5], false
After::   Range (0, 5, step=1)

``range(end)``, ``range(start, end)``, ``range(start, end, step)`` and ``range(start, end, step,
numSlices)`` (Spark's ``Range`` table function): one ``id bigint`` column. The arguments must be
foldable (``NON_FOLDABLE_ARGUMENT``; a column of a preceding FROM item under ``LATERAL``) and
castable to bigint (int for ``numSlices``; NULL and booleans are ``UNEXPECTED_INPUT_TYPE``); they
are cast with Spark's cast (``range('a')`` is ``CAST_INVALID_INPUT``, ``range(1.5)`` is
``range(1)``). A zero step is ``FAILED_FUNCTION_CALL``, as Spark reports it. ``range(3) AS
t(x)`` renames the column (``NUM_TABLE_VALUE_ALIASES_MISMATCH`` for another number of names).
A Python UDTF registered with ``spark.udtf.register`` is a ``Generate`` of its
``PythonUDTF`` over one row (not under ``LATERAL`` with columns of an earlier FROM item yet).
Spark's other table functions (``explode`` ...) are refused with UNSUPPORTED_FEATURE, unknown
names with ``UNRESOLVABLE_TABLE_VALUED_FUNCTION``.
"""

from __future__ import annotations

import pyarrow as pa

from ember import types as T
from ember.analysis.resolution import has_unresolved
from ember.errors import AnalysisError, UnsupportedError
from ember.expressions.base import Alias, AttributeReference, Expression, UnresolvedAttribute
from ember.expressions.cast import Cast
from ember.expressions.common import sql_type
from ember.expressions.registry import wrong_num_args
from ember.plans.logical.nodes import (Generate, LogicalPlan, OneRowRelation, Project, Range,
                                      UnresolvedTableValuedFunction)

#: Spark's table-valued functions other than ``range`` (``TableFunctionRegistry``).
_SPARK_TABLE_FUNCTIONS = frozenset({
    "explode", "explode_outer", "inline", "inline_outer", "json_tuple", "posexplode",
    "posexplode_outer", "stack", "collations", "sql_keywords", "variant_explode",
    "variant_explode_outer"})

_ONE_ROW = pa.RecordBatch.from_arrays([pa.array([0], pa.int8())], names=["_"])

#: (name, type) of range's parameters in its four-argument form
_RANGE_PARAMS = (("start", T.LONG), ("end", T.LONG), ("step", T.LONG), ("numSlices", T.INT))


def _ordinal(i: int) -> str:
    return ("first", "second", "third")[i] if i < 3 else f"{i + 1}th"


def _non_foldable(index: int) -> AnalysisError:
    name, dtype = _RANGE_PARAMS[index]
    return AnalysisError(
        f"The function `range` requires the parameter `{name}` to be a foldable expression of "
        f"the type \"{sql_type(dtype)}\", but the actual argument is a non-foldable.",
        error_class="NON_FOLDABLE_ARGUMENT",
        parameters={"funcName": "`range`", "paramName": f"`{name}`",
                    "paramType": f'"{sql_type(dtype)}"'})


def _range_value(arg: Expression, index: int) -> int:
    """The value of range's parameter ``index`` (0: start ... 3: numSlices) from ``arg``."""
    name, dtype = _RANGE_PARAMS[index]
    if arg.references or not arg.deterministic:
        raise _non_foldable(index)
    t = arg.data_type
    if isinstance(t, (T.NullType, T.BooleanType)) or not (
            t.is_numeric or isinstance(t, T.StringType)):
        shown = arg.sql() if not isinstance(t, T.NullType) else "NULL"
        raise AnalysisError(
            f"Parameter {_ordinal(index)} of function `range` requires the "
            f"\"{sql_type(dtype)}\" type, however \"{shown}\" has the type \"{sql_type(t)}\".",
            error_class="UNEXPECTED_INPUT_TYPE",
            parameters={"paramIndex": _ordinal(index), "functionName": "`range`",
                        "requiredType": f'"{sql_type(dtype)}"', "inputSql": f'"{shown}"',
                        "inputType": f'"{sql_type(t)}"'})
    return Cast(arg, dtype).eval(_ONE_ROW)[0].as_py()


def _range(args: tuple[Expression, ...]) -> Range:
    if not 1 <= len(args) <= 4:
        raise wrong_num_args("range", "[1, 2, 3, 4]", len(args))
    first = 1 if len(args) == 1 else 0  # range(end): the end is the second parameter
    values = [_range_value(a, i + first) for i, a in enumerate(args)]
    if len(args) == 1:
        values = [0] + values
    start, end = values[0], values[1]
    step = values[2] if len(values) > 2 else 1
    slices = values[3] if len(values) > 3 else None
    if step == 0:
        raise AnalysisError(
            "Failed preparing of the function `range` for call. Please, double check function's "
            "arguments.", error_class="FAILED_FUNCTION_CALL",
            parameters={"funcName": "`range`"})
    return Range(start, end, step, slices, (AttributeReference("id", T.LONG, False),))


def _build(p: UnresolvedTableValuedFunction) -> LogicalPlan:
    if p.name != "range":
        if p.name in _SPARK_TABLE_FUNCTIONS:
            raise UnsupportedError(
                f"The SQL construct table-valued function {p.name} is not supported by Ember.",
                parameters={"construct": f"table-valued function {p.name}"})
        raise AnalysisError(f"Could not resolve `{p.name}` to a table-valued function.",
                            error_class="UNRESOLVABLE_TABLE_VALUED_FUNCTION",
                            parameters={"name": f"`{p.name}`"})
    return _aliased(p, _range(p.arguments))


def _aliased(p: UnresolvedTableValuedFunction, plan: LogicalPlan) -> LogicalPlan:
    """``plan`` with its columns renamed as ``name(...) AS t(x, y)`` asks."""
    if p.column_aliases:
        out = plan.output
        if len(p.column_aliases) != len(out):
            raise _aliases_mismatch(p, len(out))
        plan = Project(tuple(Alias(a, n) for a, n in zip(out, p.column_aliases)), plan)
    return plan


def _aliases_mismatch(p: UnresolvedTableValuedFunction, width: int) -> AnalysisError:
    return AnalysisError(
        "Number of given aliases does not match number of output columns.",
        error_class="NUM_TABLE_VALUE_ALIASES_MISMATCH",
        parameters={"funcName": f"`{p.name}`", "aliasesNum": str(len(p.column_aliases)),
                    "outColsNum": str(width)})


def resolve_table_valued_functions(plan: LogicalPlan, ctx) -> LogicalPlan:
    """``plan`` with each table-valued function whose arguments are resolved built."""
    def rule(p: LogicalPlan) -> LogicalPlan:
        if not isinstance(p, UnresolvedTableValuedFunction):
            return p
        udtf = ctx.catalog.lookup_python_table_function(p.name)
        if udtf is not None and p.lateral and any(
                a.exists(lambda x: isinstance(x, UnresolvedAttribute)) for a in p.arguments):
            raise UnsupportedError(
                f"The SQL construct LATERAL call of the Python UDTF {p.name} is not supported "
                "by Ember.", parameters={"construct": f"LATERAL {p.name}"})
        if p.lateral and any(a.exists(lambda x: isinstance(x, UnresolvedAttribute))
                             for a in p.arguments):
            # a LATERAL argument reads a column of an earlier FROM item: not foldable
            i = next(i for i, a in enumerate(p.arguments)
                     if a.exists(lambda x: isinstance(x, UnresolvedAttribute)))
            raise _non_foldable(i + (1 if len(p.arguments) == 1 else 0))
        if any(has_unresolved(a) or not a.resolved for a in p.arguments):
            return p
        if udtf is not None:  # spark.udtf.register: a Generate of the UDTF over one row
            width = len(udtf.returnType.fields)
            if p.column_aliases and len(p.column_aliases) != width:
                raise _aliases_mismatch(p, width)
            return Generate(udtf.call(p.arguments), False, (), p.column_aliases, (),
                            OneRowRelation())
        return _build(p)

    return plan.transform_up(rule)
