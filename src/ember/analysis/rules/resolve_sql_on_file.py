"""ResolveSQLOnFile: ``format.`path``` in FROM reads the files at ``path`` (Spark's
``ResolveSQLOnFile``, under ``spark.sql.runSQLOnFiles``).

Before::  UnresolvedRelation [json, /data/events]
After::   SubqueryAlias json.`/data/events` (Relation [a#1,b#2] json)

It applies only to a two-part name whose first part is a file format Ember reads (``parquet``,
``csv``, ``json``, ``text``) and that names no table or view, so a database called ``json`` still wins.
The relation is built by the file-source factory the surface layer registers
(:func:`register_file_source`; ``ember.readers.file_relation``): the analyzer cannot import the
readers, which sit above it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ember.analysis.rules._util import transform_up_in_run
from ember.conf import RUN_SQL_ON_FILES
from ember.plans.logical.nodes import LogicalPlan, SubqueryAlias, UnresolvedRelation

__all__ = ["resolve_sql_on_file", "register_file_source", "FILE_FORMATS"]

#: formats a ``format.`path``` relation may name
FILE_FORMATS = ("parquet", "csv", "json", "text")

_FACTORY: list[Callable[..., LogicalPlan]] = []


def register_file_source(factory: Callable[..., LogicalPlan]) -> None:
    """Register ``factory(format, paths, options, conf=...) -> FileRelation``."""
    _FACTORY[:] = [factory]


def resolve_sql_on_file(plan: LogicalPlan, ctx: Any) -> LogicalPlan:
    """``plan`` with every ``format.`path``` relation replaced by a relation over the files."""
    if not _FACTORY or not ctx.conf.get(RUN_SQL_ON_FILES):
        return plan

    def rule(p: LogicalPlan) -> LogicalPlan:
        match p:
            case UnresolvedRelation(name_parts=(fmt, path)) if fmt.lower() in FILE_FORMATS \
                    and ctx.catalog.try_lookup((fmt, path)) is None:
                rel = _FACTORY[0](fmt.lower(), [path], {}, conf=ctx.conf)
                return SubqueryAlias((fmt, path), rel)
            case _:
                return p

    return transform_up_in_run(plan, rule, ctx, "ResolveSQLOnFile")
