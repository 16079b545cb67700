"""Store assignment: an INSERT's (or saveAsTable's) rows fitted to the target table's columns.

Spark's ``TableOutputResolver`` with ``PreprocessTableInsertion`` and the static-partition part of
``DataSourceAnalysis``, for a table of the catalog:

1. The partition spec is normalized to the table's partition columns (``PARTITIONS_NOT_FOUND``;
   when given, it must name every partition column, ``_LEGACY_ERROR_TEMP_1169``; static values
   must come before dynamic ones, ``_LEGACY_ERROR_TEMP_1147``).
2. A column list ``(c1, c2)`` renames the query's columns to the table's (``COLUMN_ALREADY_EXISTS``,
   ``UNRESOLVED_COLUMN``, arity errors) and makes the insert by name.
3. The query's columns are matched to the table's columns minus the static partition columns,
   by position (arity errors ``INSERT_COLUMN_ARITY_MISMATCH.*``) or by name (``BY NAME``, a
   column list, DataFrame appends; missing columns are NULL, ``INCOMPATIBLE_DATA_FOR_TABLE.*``
   for extra or ambiguous ones).  With static partitions an arity error is reported as
   ``INSERT_PARTITION_COLUMN_ARITY_MISMATCH`` (with the arity error's message, as Spark does).
4. Each value is cast to its column's type under ``spark.sql.storeAssignmentPolicy``:
   ``ANSI`` (default) allows the casts of ``Cast.canANSIStoreAssign`` (numeric to numeric,
   anything atomic to string, datetime to datetime, nested types element-wise) as ANSI casts,
   whose overflow raises ``CAST_OVERFLOW_IN_TABLE_INSERT`` naming the column
   (:class:`~ember.expressions.cast.CheckOverflowInTableInsert`); ``STRICT`` allows only
   ``Cast.canUpCast``; ``LEGACY`` casts anything as a non-ANSI cast does.  A cast that is not
   allowed is ``INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST`` naming the (nested) column.
   ``BY NAME`` matches nested struct fields by name too (``CANNOT_FIND_DATA``,
   ``EXTRA_STRUCT_FIELDS`` naming the nested column).
5. Static partition values (strings, as parsed) are appended as casts to the partition
   column's type after the data columns, followed by the dynamic partition columns; ``p =
   NULL`` is a NULL (written as ``p=__HIVE_DEFAULT_PARTITION__``), an empty string
   ``INVALID_PARTITION_SPEC``.

The result is the query to write, with exactly the table's columns in the table's order::

    prepared = prepare_insert(table, query, conf, partition_spec=(("p", "1"),))
    prepared.query.output   # a, p (p = CAST('1' AS INT))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ember import types as T
from ember.coercion import decimal_for_integral
from ember.conf import PARTITION_OVERWRITE_MODE, STORE_ASSIGNMENT_POLICY, SQLConf
from ember.errors import AnalysisError, Origin
from ember.expressions.base import Alias, AttributeReference, Expression, Literal
from ember.expressions.cast import Cast, CheckOverflowInTableInsert
from ember.expressions.common import sql_type
from ember.expressions.reorder_fields import ReorderStructFields
from ember.plans.logical.insert import NULL_PARTITION_VALUE, InsertIntoStatement
from ember.plans.logical.nodes import FileRelation, LogicalPlan, Project
from ember.plans.logical.writes import (InsertIntoHadoopFsRelationCommand, SaveMode,
                                        qualified_path)
from ember.analysis.catalog import table_not_found
from ember.analysis.resolution import quote, quote_parts, unresolved_column_error

__all__ = ["PreparedInsert", "prepare_insert", "resolve_output_columns", "can_up_cast",
           "can_ansi_store_assign", "insert_command", "table_write_command"]

_NUMERIC_PRECEDENCE = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType,
                       T.DoubleType)


# ---------------------------------------------------------------------------------------------
# Which casts a policy allows


def _precedence(t: T.DataType) -> int:
    for i, cls in enumerate(_NUMERIC_PRECEDENCE):
        if type(t) is cls:
            return i
    return -1


def _as_decimal(t: T.DataType) -> T.DecimalType | None:
    if isinstance(t, T.DecimalType):
        return t
    if isinstance(t, T.IntegralType):
        return decimal_for_integral(t)
    return None


def _wider(d: T.DecimalType, other: T.DataType) -> bool:
    """Spark's ``DecimalType.isWiderThan``."""
    o = _as_decimal(other)
    return o is not None and d.precision - d.scale >= o.precision - o.scale and d.scale >= o.scale


def _tighter(d: T.DecimalType, other: T.DataType) -> bool:
    """Spark's ``DecimalType.isTighterThan``."""
    o = _as_decimal(other)
    return o is not None and d.precision - d.scale <= o.precision - o.scale and d.scale <= o.scale


def _resolvable_nullability(from_null: bool, to_null: bool) -> bool:
    return to_null or not from_null


def can_up_cast(f: T.DataType, t: T.DataType) -> bool:
    """Spark's ``UpCastRule.canUpCast``: casts that can never lose information or fail."""
    if f == t or isinstance(f, T.NullType):
        return True
    if isinstance(t, T.DecimalType) and isinstance(f, T.NumericType) and _wider(t, f):
        return True
    if isinstance(f, T.DecimalType) and isinstance(t, T.NumericType) and _tighter(f, t):
        return True
    pf, pt = _precedence(f), _precedence(t)
    if 0 <= pf < pt:
        return True
    if isinstance(f, T.DateType) and isinstance(t, T.TimestampType):
        return True
    if isinstance(f, T.AtomicType) and isinstance(t, T.StringType):
        return True
    if isinstance(f, T.TimestampType) and isinstance(t, T.LongType):
        return True
    if isinstance(f, T.LongType) and isinstance(t, T.TimestampType):
        return True
    if isinstance(f, T.ArrayType) and isinstance(t, T.ArrayType):
        return (_resolvable_nullability(f.contains_null, t.contains_null)
                and can_up_cast(f.element_type, t.element_type))
    if isinstance(f, T.StructType) and isinstance(t, T.StructType):
        return len(f.fields) == len(t.fields) and all(
            _resolvable_nullability(a.nullable, b.nullable)
            and can_up_cast(a.data_type, b.data_type)
            for a, b in zip(f.fields, t.fields))
    if isinstance(f, T.DayTimeIntervalType) and isinstance(t, T.DayTimeIntervalType):
        return True
    return isinstance(f, T.YearMonthIntervalType) and isinstance(t, T.YearMonthIntervalType)


def can_ansi_store_assign(f: T.DataType, t: T.DataType) -> bool:
    """Spark's ``Cast.canANSIStoreAssign``: the casts an ANSI insert allows."""
    if f == t or isinstance(f, T.NullType):
        return True
    if isinstance(f, T.NumericType) and isinstance(t, T.NumericType):
        return True
    if isinstance(f, T.AtomicType) and isinstance(t, T.StringType):
        return True
    datetime = (T.DateType, T.TimestampType)
    if isinstance(f, datetime) and isinstance(t, datetime):
        return True
    if isinstance(f, T.ArrayType) and isinstance(t, T.ArrayType):
        return (_resolvable_nullability(f.contains_null, t.contains_null)
                and can_ansi_store_assign(f.element_type, t.element_type))
    if isinstance(f, T.StructType) and isinstance(t, T.StructType):
        return len(f.fields) == len(t.fields) and all(
            _resolvable_nullability(a.nullable, b.nullable)
            and can_ansi_store_assign(a.data_type, b.data_type)
            for a, b in zip(f.fields, t.fields))
    return False


# ---------------------------------------------------------------------------------------------
# Errors (Spark's QueryCompilationErrors)


def _ids(names: Sequence[str]) -> str:
    return ", ".join(quote(n) for n in names)


def _arity_error(table_name: str, table_cols: Sequence[str], data_cols: Sequence[str],
                 too_many: bool) -> AnalysisError:
    reason = "too many data columns" if too_many else "not enough data columns"
    sub = "TOO_MANY_DATA_COLUMNS" if too_many else "NOT_ENOUGH_DATA_COLUMNS"
    return AnalysisError(
        f"Cannot write to {table_name}, the reason is {reason}:\n"
        f"Table columns: {_ids(table_cols)}.\nData columns: {_ids(data_cols)}.",
        error_class=f"INSERT_COLUMN_ARITY_MISMATCH.{sub}",
        parameters={"tableName": table_name, "tableColumns": _ids(table_cols),
                    "dataColumns": _ids(data_cols)},
    )


def _incompatible(table_name: str, sub: str, detail: str, **params: str) -> AnalysisError:
    return AnalysisError(
        f"Cannot write incompatible data for the table {table_name}: {detail}.",
        error_class=f"INCOMPATIBLE_DATA_FOR_TABLE.{sub}",
        parameters={"tableName": table_name, **params},
    )


def _cannot_safely_cast(table_name: str, col_path: Sequence[str], src: T.DataType,
                        dst: T.DataType) -> AnalysisError:
    col = quote_parts(col_path)
    return _incompatible(table_name, "CANNOT_SAFELY_CAST",
                         f"Cannot safely cast {col} {sql_type(src)} to {sql_type(dst)}",
                         colName=col, srcType=sql_type(src), targetType=sql_type(dst))


# ---------------------------------------------------------------------------------------------
# TableOutputResolver


def _check_write(table_name: str, src: T.DataType, dst: T.DataType, path: tuple[str, ...],
                 policy: str) -> None:
    """Spark's ``DataTypeUtils.canWrite`` for the ANSI and STRICT policies: raises the first
    incompatibility, naming the nested column (``s``.``x``)."""
    if isinstance(src, T.StructType) and isinstance(dst, T.StructType):
        if len(src.fields) < len(dst.fields):
            missing = _ids([f.name for f in dst.fields[len(src.fields):]])
            raise _incompatible(table_name, "STRUCT_MISSING_FIELDS",
                                f"Struct {quote_parts(path)} missing fields: {missing}",
                                colName=quote_parts(path), missingFields=missing)
        if len(src.fields) > len(dst.fields):
            extra = _ids([f.name for f in src.fields[len(dst.fields):]])
            raise _incompatible(table_name, "EXTRA_STRUCT_FIELDS",
                                f"Cannot write extra fields {extra} to the struct "
                                f"{quote_parts(path)}",
                                colName=quote_parts(path), extraFields=extra)
        for a, b in zip(src.fields, dst.fields):
            _check_write(table_name, a.data_type, b.data_type, path + (b.name,), policy)
        return
    if isinstance(src, T.ArrayType) and isinstance(dst, T.ArrayType):
        _check_write(table_name, src.element_type, dst.element_type, path + ("element",), policy)
        return
    allowed = can_up_cast(src, dst) if policy == "STRICT" else can_ansi_store_assign(src, dst)
    if policy == "STRICT" and isinstance(src, T.NullType) and src != dst:
        allowed = False  # Spark's canWrite: only ANSI lets a NULL-typed value through
    if not allowed:
        raise _cannot_safely_cast(table_name, path, src, dst)


def _may_overflow(cast: Cast) -> bool:
    """Spark's ``canCauseCastOverflow``: the target holds integral or decimal values and the
    cast is not an up-cast."""

    def integral_or_decimal(t: T.DataType) -> bool:
        if isinstance(t, (T.IntegralType, T.DecimalType)):
            return True
        if isinstance(t, T.ArrayType):
            return integral_or_decimal(t.element_type)
        if isinstance(t, T.StructType):
            return any(integral_or_decimal(f.data_type) for f in t.fields)
        return False

    return integral_or_decimal(cast.to_type) and not can_up_cast(cast.child.data_type,
                                                                  cast.to_type)


def _cast(e: Expression, to: T.DataType, policy: str, column: str, time_zone: str) -> Expression:
    if policy == "LEGACY":
        return Cast(e, to, ansi=False, time_zone=time_zone, legacy=True)
    cast = Cast(e, to, ansi=True, time_zone=time_zone)
    if policy == "ANSI" and _may_overflow(cast):
        return CheckOverflowInTableInsert(cast, column)
    return cast


def _fit(table_name: str, value: Expression, col: AttributeReference, policy: str,
         time_zone: str) -> Expression:
    """``value`` as the column ``col`` (Spark's ``checkField``): itself when name and type
    already agree, else cast and renamed."""
    if policy != "LEGACY":
        _check_write(table_name, value.data_type, col.data_type, (col.name,), policy)
    if value.data_type == col.data_type:
        if getattr(value, "name", None) == col.name:
            return value
        return Alias(_unaliased(value), col.name)
    return Alias(_cast(_unaliased(value), col.data_type, policy, quote(col.name), time_zone),
                 col.name)


def _unaliased(e: Expression) -> Expression:
    return e.child if isinstance(e, Alias) else e


def _field_order(table_name: str, src: T.DataType, dst: T.DataType, path: tuple[str, ...],
                 key: Any, policy: str) -> Any:
    """How a ``src`` value's nested struct fields are taken by name to fit ``dst`` (the order
    spec of :class:`~ember.expressions.reorder_fields.ReorderStructFields`; None: as it is),
    raising Spark's errors in Spark's order (``reorderColumnsByName``: each table field in
    turn -- ``CANNOT_FIND_DATA``, ``AMBIGUOUS_COLUMN_NAME``, its own checks --, then
    ``EXTRA_STRUCT_FIELDS``)."""
    if isinstance(src, T.StructType) and isinstance(dst, T.StructType):
        items = []
        matched: set[int] = set()
        for d in dst.fields:
            sub_path = path + (d.name,)
            hits = [i for i, f in enumerate(src.fields) if key(f.name) == key(d.name)]
            if not hits:
                raise _incompatible(table_name, "CANNOT_FIND_DATA",
                                    f"Cannot find data for the output column "
                                    f"{quote_parts(sub_path)}", colName=quote_parts(sub_path))
            if len(hits) > 1:
                raise _incompatible(table_name, "AMBIGUOUS_COLUMN_NAME",
                                    f"Ambiguous column name in the input data "
                                    f"{quote_parts(sub_path)}", colName=quote_parts(sub_path))
            matched.add(hits[0])
            items.append((hits[0], d.name, _field_order(
                table_name, src.fields[hits[0]].data_type, d.data_type, sub_path, key, policy)))
        extra = [f.name for i, f in enumerate(src.fields) if i not in matched]
        if extra:
            raise _incompatible(table_name, "EXTRA_STRUCT_FIELDS",
                                f"Cannot write extra fields {_ids(extra)} to the struct "
                                f"{quote_parts(path)}",
                                colName=quote_parts(path), extraFields=_ids(extra))
        if all(i == k and src.fields[i].name == name and sub is None
               for k, (i, name, sub) in enumerate(items)):
            return None
        return ("struct", tuple(items))
    if isinstance(src, T.ArrayType) and isinstance(dst, T.ArrayType):
        sub = _field_order(table_name, src.element_type, dst.element_type, path + ("element",),
                           key, policy)
        return None if sub is None else ("array", sub)
    if policy != "LEGACY":
        _check_write(table_name, src, dst, path, policy)
    return None


def _by_name(table_name: str, value: Expression, col: AttributeReference, key: Any,
             policy: str) -> Expression:
    """``value`` with its nested struct fields in ``col``'s order, by name."""
    order = _field_order(table_name, value.data_type, col.data_type, (col.name,), key, policy)
    return value if order is None else ReorderStructFields(_unaliased(value), order)


def resolve_output_columns(table_name: str, expected: Sequence[AttributeReference],
                           query: LogicalPlan, by_name: bool, conf: SQLConf,
                           fill_missing: bool = True,
                           nested_by_name: bool | None = None) -> LogicalPlan:
    """Spark's ``TableOutputResolver.resolveOutputColumns``: ``query`` projected to the
    ``expected`` columns (names, types, order) under the store-assignment policy.
    ``fill_missing``: by name, a column the query lacks is NULL (Spark's default values of
    columns without a DEFAULT) instead of ``CANNOT_FIND_DATA``.  ``nested_by_name`` (default
    ``by_name``): struct fields inside the columns are matched by name too (``BY NAME``; a
    column list matches only the top-level columns by name)."""
    if nested_by_name is None:
        nested_by_name = by_name
    policy = conf.get(STORE_ASSIGNMENT_POLICY)
    time_zone = conf.time_zone
    out = list(query.output)
    names = [e.name for e in expected]
    if len(expected) < len(out):
        raise _arity_error(table_name, names, [a.name for a in out], too_many=True)
    resolved: list[Expression] = []
    if by_name:
        key = (lambda s: s) if conf.case_sensitive else str.lower
        matched: set[str] = set()
        for col in expected:
            hits = [a for a in out if key(a.name) == key(col.name)]
            if len(hits) > 1:
                raise _incompatible(table_name, "AMBIGUOUS_COLUMN_NAME",
                                    f"Ambiguous column name in the input data {quote(col.name)}",
                                    colName=quote(col.name))
            if not hits:
                if not fill_missing:
                    raise _incompatible(table_name, "CANNOT_FIND_DATA",
                                        f"Cannot find data for the output column "
                                        f"{quote(col.name)}", colName=quote(col.name))
                resolved.append(Alias(Literal(None, col.data_type), col.name))
                continue
            matched.add(hits[0].name)
            value: Expression = hits[0]
            if nested_by_name:
                value = _by_name(table_name, value, col, key, policy)
            resolved.append(_fit(table_name, value, col, policy, time_zone))
        extra = [a.name for a in out if a.name not in matched]
        if extra:
            raise _incompatible(table_name, "EXTRA_COLUMNS",
                                f"Cannot write extra columns {_ids(extra)}",
                                extraColumns=_ids(extra))
    else:
        if len(expected) > len(out):
            raise _arity_error(table_name, names, [a.name for a in out], too_many=False)
        resolved = [_fit(table_name, a, col, policy, time_zone) for a, col in zip(out, expected)]
    if all(r is a for r, a in zip(resolved, out)) and len(resolved) == len(out):
        return query
    return Project(tuple(resolved), query)


# ---------------------------------------------------------------------------------------------
# PreprocessTableInsertion + DataSourceAnalysis (static partitions)


@dataclass(frozen=True)
class PreparedInsert:
    """An insert ready for the write engine: ``query`` outputs the table's columns in the
    table's order (data columns, then partition columns); ``static_partitions`` are the
    PARTITION (k = v) values by the table's partition column names, in the table's order
    (None for ``k = NULL``)."""

    query: LogicalPlan
    static_partitions: tuple[tuple[str, str | None], ...]
    partition_columns: tuple[str, ...]


def _partition_error(table_name: str, key: str) -> AnalysisError:
    return AnalysisError(
        f"The partition(s) {quote(key)} cannot be found in table {table_name}.\n"
        "Verify the partition specification and table name.\n"
        "To tolerate the error on drop use ALTER TABLE \u2026 DROP IF EXISTS PARTITION.",
        error_class="PARTITIONS_NOT_FOUND",
        parameters={"partitionList": quote(key), "tableName": table_name},
    )


def _column_list_query(table_name: str, columns: Sequence[AttributeReference],
                       user_cols: Sequence[str], query: LogicalPlan, conf: SQLConf,
                       origin: Any) -> LogicalPlan:
    """Spark's ``createProjectForByNameQuery``: the query's columns renamed to the listed table
    columns."""
    key = (lambda s: s) if conf.case_sensitive else str.lower
    seen: set[str] = set()
    for c in user_cols:
        if key(c) in seen:
            raise AnalysisError(
                f"The column {quote(c.lower() if not conf.case_sensitive else c)} already "
                "exists. Choose another name or rename the existing column.",
                error_class="COLUMN_ALREADY_EXISTS",
                parameters={"columnName": quote(c.lower() if not conf.case_sensitive else c)})
        seen.add(key(c))
    out = query.output
    if len(user_cols) != len(out):
        raise _arity_error(table_name, user_cols, [a.name for a in out],
                           too_many=len(user_cols) < len(out))
    items: list[Expression] = []
    for c, a in zip(user_cols, out):
        target = next((t for t in columns if key(t.name) == key(c)), None)
        if target is None:
            raise unresolved_column_error((c,), columns, origin)
        items.append(Alias(a, target.name))
    return Project(tuple(items), query)


def prepare_insert(table: Any, query: LogicalPlan, conf: SQLConf, *,
                   partition_spec: Sequence[tuple[str, str | None]] = (),
                   user_columns: Sequence[str] = (), by_name: bool = False,
                   origin: Any = None) -> PreparedInsert:
    """Fit the analyzed ``query`` to catalog table ``table`` (an
    :class:`~ember.analysis.catalog_model.CatalogTable`) for ``INSERT [PARTITION (spec)]
    [(user_columns) | BY NAME]`` (see the module docstring)."""
    table_name = table.quoted_name()
    key = (lambda s: s) if conf.case_sensitive else str.lower
    part_cols = tuple(table.partition_columns)
    normalized: dict[str, str | None] = {}
    for k, v in partition_spec:
        col = next((p for p in part_cols if key(p) == key(k)), None)
        if col is None:
            raise _partition_error(table_name, k)
        normalized[col] = v
    static = {k: v for k, v in normalized.items() if v is not None}
    columns = [AttributeReference(f.name, f.data_type, f.nullable) for f in table.schema.fields]
    expected = [c for c in columns if c.name not in static]

    has_list = bool(user_columns)
    source = (_column_list_query(table_name, columns, user_columns, query, conf, origin)
              if has_list else query)
    try:
        resolved = resolve_output_columns(table_name, expected, source, has_list or by_name,
                                          conf, nested_by_name=by_name)
    except AnalysisError as e:
        if static and e.error_class in ("INSERT_COLUMN_ARITY_MISMATCH.NOT_ENOUGH_DATA_COLUMNS",
                                        "INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS"):
            params = dict(e.parameters, tableColumns=_ids([c.name for c in columns]),
                          staticPartCols=_ids(sorted(static)))
            raise AnalysisError(e.message, error_class="INSERT_PARTITION_COLUMN_ARITY_MISMATCH",
                                parameters=params) from e
        raise

    if normalized and len(normalized) != len(part_cols):
        raise AnalysisError(
            f"Requested partitioning does not match the table {table_name}:\n"
            f"Requested partitions: {','.join(normalized)}.\n"
            f"Table partitions: {','.join(part_cols)}.",
            error_class="_LEGACY_ERROR_TEMP_1169",
            parameters={"tableName": table_name, "normalizedPartSpec": ",".join(normalized),
                        "partColNames": ",".join(part_cols)})
    first_dynamic = next((i for i, p in enumerate(part_cols) if p not in static), len(part_cols))
    if any(p in static for p in part_cols[first_dynamic:]):
        listed = "[" + ",".join(part_cols) + "]"
        raise AnalysisError(
            f"The ordering of partition columns is {listed}. All partition columns having "
            "constant values need to appear before other partition columns that do not have an "
            "assigned constant value.",
            error_class="_LEGACY_ERROR_TEMP_1147", parameters={"partColumns": listed})

    if any(v == "" for v in static.values()):
        shown = "[" + ", ".join(
            f"{k}={'None' if v is None else f'Some({_spec_text(v)})'}"
            for k, v in normalized.items()) + "]"
        details = f"The spec ({shown}) contains an empty partition column value"
        raise AnalysisError(f"Partition spec is invalid. {details}.",
                            error_class="INVALID_PARTITION_SPEC",
                            parameters={"details": details})
    if static:
        policy = conf.get(STORE_ASSIGNMENT_POLICY)
        out = list(resolved.output)
        n_data = len(columns) - len(part_cols)
        values: list[Expression] = []
        for p in part_cols:
            if p in static:
                col = next(c for c in columns if c.name == p)
                lit = Literal(_spec_value(static[p]), T.STRING)
                value = (Cast(lit, col.data_type, ansi=False, time_zone=conf.time_zone,
                              legacy=True) if policy == "LEGACY"
                         else Cast(lit, col.data_type, ansi=True, time_zone=conf.time_zone))
                values.append(Alias(value, p))
        resolved = Project(tuple(out[:n_data]) + tuple(values) + tuple(out[n_data:]), resolved)
    ordered_static = tuple((p, _spec_value(static[p])) for p in part_cols if p in static)
    return PreparedInsert(resolved, ordered_static, part_cols)


def _spec_value(v: Any) -> str | None:
    """A static partition value: its string, None for ``p = NULL``."""
    return None if v is NULL_PARTITION_VALUE else v


def _spec_text(v: Any) -> str:
    return "null" if v is NULL_PARTITION_VALUE else v


# ---------------------------------------------------------------------------------------------
# The INSERT statement -> the write engine's command (Spark's DataSourceAnalysis)


def _expect_table(name: str) -> AnalysisError:
    return AnalysisError(
        f"'INSERT' expects a table but {name} is a view. ",
        error_class="EXPECT_TABLE_NOT_VIEW.NO_ALTERNATIVE",
        parameters={"viewName": name, "operation": "INSERT"})


def _reads_location(plan: LogicalPlan, location: str) -> bool:
    """Whether ``plan`` reads files under ``location`` (Spark's ``verifyNotReadPath``)."""
    root = location.rstrip("/")
    for p in plan.collect(lambda n: n if isinstance(n, FileRelation) else None):
        for path in p.paths:
            path = path[len("file:"):] if path.startswith("file:") else path
            if path.rstrip("/") == root or path.startswith(root + "/"):
                return True
    return False


def insert_command(stmt: InsertIntoStatement, query: LogicalPlan, catalog: Any,
                   conf: SQLConf) -> InsertIntoHadoopFsRelationCommand:
    """The write command of ``INSERT ... query`` (``query`` analyzed) into the catalog table
    ``stmt`` names: ``TABLE_OR_VIEW_NOT_FOUND``, ``EXPECT_TABLE_NOT_VIEW`` for a view, the
    store assignment of :func:`prepare_insert`, and ``UNSUPPORTED_OVERWRITE.TABLE`` when an
    overwrite reads the table it replaces."""
    parts = stmt.name_parts
    origin = None if stmt.origin is None else Origin(*stmt.origin)
    if len(parts) == 1 and catalog.exists(parts[0]):
        raise _expect_table(quote(parts[0]))
    table = catalog.get_table(parts)
    if table is None:
        raise table_not_found(parts, origin)
    if table.is_view:
        raise _expect_table(table.quoted_name())
    prepared = prepare_insert(table, query, conf, partition_spec=stmt.partition_spec,
                              user_columns=stmt.user_specified_cols, by_name=stmt.by_name,
                              origin=origin)
    return table_write_command(table, prepared, conf, overwrite=stmt.overwrite,
                               if_partition_not_exists=stmt.if_partition_not_exists)


def table_write_command(table: Any, prepared: PreparedInsert, conf: SQLConf, *,
                        overwrite: bool, if_partition_not_exists: bool = False
                        ) -> InsertIntoHadoopFsRelationCommand:
    """``InsertIntoHadoopFsRelationCommand`` writing ``prepared`` into ``table``'s directory:
    mode Overwrite or Append; an overwrite with dynamic partition columns replaces only the
    partitions written when ``spark.sql.sources.partitionOverwriteMode`` (or the table's
    ``partitionOverwriteMode`` option) is DYNAMIC."""
    location = table.location
    if overwrite and _reads_location(prepared.query, location):
        raise AnalysisError(
            "Can't overwrite the target that is also being read from. The target table is "
            f"{table.quoted_name()}.", error_class="UNSUPPORTED_OVERWRITE.TABLE",
            parameters={"table": table.quoted_name()})
    out = prepared.query.output
    key = {p.lower() for p in prepared.partition_columns}
    part_attrs = tuple(a for a in out if a.name.lower() in key)
    options = {k.lower(): v for k, v in table.options.items()}
    mode_name = options.get("partitionoverwritemode", conf.get(PARTITION_OVERWRITE_MODE))
    dynamic = (overwrite and str(mode_name).upper() == "DYNAMIC"
               and len(prepared.static_partitions) < len(part_attrs))
    shown = tuple(table.options.items()) + (("path", qualified_path(location)),)
    return InsertIntoHadoopFsRelationCommand(
        location, prepared.static_partitions, if_partition_not_exists, part_attrs,
        table.provider, shown, prepared.query, SaveMode.OVERWRITE if overwrite else SaveMode.APPEND,
        table, tuple(f.name for f in table.schema.fields), dynamic)
