"""EXPLAIN of a DESCRIBE statement, printed as Spark 4 prints the command's plans.

Spark plans ``DESC t`` as ``DescribeTableCommand`` (``DescribeColumnCommand`` for a column,
``DescribeRelationJsonCommand`` for ``AS JSON``) over
the resolved relation (``ResolvedTable`` for a catalog table, ``ResolvedTempView`` for a
temporary view), run by ``ExecutedCommandExec`` (``Execute <command>``)::

    == Physical Plan ==
    Execute DescribeTableCommand
       +- DescribeTableCommand `spark_catalog`.`default`.`t`, false, [col_name#1, ...]
          +- ResolvedTable V2SessionCatalog(spark_catalog), default.t, V1Table(default.t), [a#2]

``EXTENDED`` (and ``COST``) adds the parsed, analyzed and optimized plans, ``FORMATTED`` numbers
the operators and lists their arguments, and ``CODEGEN`` finds no whole-stage code, as in Spark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ember.expressions.base import AttributeReference
from ember.plans.logical import ddl as D
from ember.plans.logical.nodes import Command, DescribeRelation, UnresolvedRelation

if TYPE_CHECKING:  # pragma: no cover
    from ember.session import Session

__all__ = ["explain_describe", "is_describe"]


def is_describe(plan: Command) -> bool:
    """Whether :func:`explain_describe` prints ``plan``'s EXPLAIN."""
    if isinstance(plan, DescribeRelation):
        return isinstance(plan.query, UnresolvedRelation)
    return isinstance(plan, (D.DescribeColumn, D.DescribePartition, D.DescribeTableJson))


def _attrs(attrs) -> str:
    return "[" + ", ".join(f"{a.name}#{a.expr_id}" for a in attrs) + "]"


def _spec(pairs) -> str:
    return "[" + ", ".join(f"{k}={v}" for k, v in pairs) + "]"


def _relation(session: "Session", parts: tuple[str, ...]) -> tuple[str, str | None]:
    """(the command's table argument, the resolved relation's line) for the name ``parts``."""
    catalog = session.session_catalog
    if len(parts) == 1 and catalog.exists(parts[0]):
        name = parts[0]
        return f"`{name}`", f"ResolvedTempView {name}, `{name}`"
    table = catalog.get_table(parts)
    columns = [AttributeReference(f.name, f.data_type, f.nullable) for f in table.schema.fields]
    qualified = f"{table.database}.{table.name}"
    return (f"`spark_catalog`.`{table.database}`.`{table.name}`",
            f"ResolvedTable V2SessionCatalog(spark_catalog), {qualified}, V1Table({qualified}), "
            f"{_attrs(columns)}")


def _command(session: "Session", plan: Command) -> tuple[str, str, str | None]:
    """(the command's name, its argument string, the resolved relation's line or None)."""
    out = _attrs(plan.output)
    match plan:
        case DescribeRelation(query=UnresolvedRelation(name_parts=parts), extended=ext):
            table, child = _relation(session, parts)
            return "DescribeTableCommand", f"{table}, {str(ext).lower()}, {out}", child
        case D.DescribePartition(name_parts=parts, spec=spec, extended=ext):
            table, child = _relation(session, parts)
            return ("DescribeTableCommand", f"{table}, {_spec(spec)}, {str(ext).lower()}, {out}",
                    child)
        case D.DescribeTableJson(name_parts=parts, spec=spec):
            _, child = _relation(session, parts)
            spec_arg = f"{_spec(spec)}, " if spec else ""
            return "DescribeRelationJsonCommand", f"{spec_arg}true, {out}", child
        case D.DescribeColumn(name_parts=parts, column=column, extended=ext):
            table, _ = _relation(session, parts)
            catalog = session.session_catalog
            if len(parts) == 1 and catalog.exists(parts[0]):
                path = [*parts, *column]
            else:
                t = catalog.get_table(parts)
                path = ["spark_catalog", t.database, t.name, *column]
            return ("DescribeColumnCommand",
                    f"{table}, [{', '.join(path)}], {str(ext).lower()}, {out}", None)
    raise TypeError(f"not a DESCRIBE command: {plan.node_name}")


def _parsed(plan: Command) -> str | None:
    """Spark's parsed plan of a DESCRIBE of a name (``'DescribeRelation`` / ``'DescribeColumn``
    over ``'UnresolvedTableOrView``), or None where Ember does not print it."""
    match plan:
        case DescribeRelation(query=UnresolvedRelation(name_parts=parts), extended=ext):
            head = f"'DescribeRelation {str(ext).lower()}, {_attrs(plan.output)}"
        case D.DescribeColumn(name_parts=parts, column=column, extended=ext):
            head = (f"'DescribeColumn '{'.'.join(column)}, {str(ext).lower()}, "
                    f"{_attrs(plan.output)}")
        case _:
            return None
    return (head + f"\n+- 'UnresolvedTableOrView [{', '.join(parts)}], DESCRIBE TABLE, true, "
            "QueryLike")


def explain_describe(session: "Session", plan: Command, mode: str) -> str:
    """``EXPLAIN [mode] <DESCRIBE statement>``'s text (see the module docstring)."""
    name, args, child = _command(session, plan)
    if mode == "codegen":
        return "Found 0 WholeStageCodegen subtrees.\n"
    if mode == "formatted":
        tree = [f"Execute {name} (1)", f"   +- {name} ({3 if child else 2})"]
        details = [f"(1) Execute {name}\nOutput [{len(plan.output)}]: {_attrs(plan.output)}\n"]
        if child:
            tree.append(f"      +- {child.split(' ', 1)[0]} (2)")
            details.append(f"(2) {child.split(' ', 1)[0]}\nArguments: {child.split(' ', 1)[1]}\n")
        details.append(f"({3 if child else 2}) {name}\nArguments: {args}\n")
        return "== Physical Plan ==\n" + "\n".join(tree) + "\n\n\n" + "\n".join(details) + "\n"
    logical = f"{name} {args}" + (f"\n+- {child}" if child else "")
    physical = (f"== Physical Plan ==\nExecute {name}\n   +- {name} {args}"
                + (f"\n      +- {child}" if child else "") + "\n")
    parsed = _parsed(plan)
    if mode in ("extended", "cost") and parsed is not None:
        schema = ", ".join(f"{a.name}: {a.data_type.simple_string()}" for a in plan.output)
        return (f"== Parsed Logical Plan ==\n{parsed}\n\n== Analyzed Logical Plan ==\n{schema}\n"
                f"{logical}\n\n== Optimized Logical Plan ==\n{logical}\n\n{physical}")
    return physical + "\n"
