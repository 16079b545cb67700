"""Result normalisation shared by the differential tests (Ember vs PySpark)."""

from __future__ import annotations

import datetime as _dt
import math
from decimal import Decimal
from typing import Any


class Failed:
    """A program's failure: its error class (or the Python exception type without one)."""

    def __init__(self, cls: str, message: str) -> None:
        self.cls, self.message = cls, message

    def __repr__(self) -> str:
        return f"error {self.cls}: {self.message[:300]}"


def norm_value(v: Any) -> Any:
    """A value both engines render alike: floats to 10 significant digits, NaN as a string,
    decimals normalised, naive datetimes, Rows as tuples."""
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v) or v == 0:
            return v
        return float(f"{v:.10g}")
    if isinstance(v, Decimal):
        return v.normalize() if v == v else "NaN"
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, tuple):  # Rows included
        return tuple(norm_value(x) for x in v)
    if isinstance(v, list):
        return [norm_value(x) for x in v]
    if isinstance(v, dict):
        return {k: norm_value(x) for k, x in v.items()}
    if isinstance(v, _dt.datetime):
        return v.replace(tzinfo=None)
    return v


def sort_key(row: tuple) -> tuple:
    """Total order over rows of mixed types and NULLs (for multiset comparison)."""
    return tuple((x is None, type(x).__name__, str(x)) for x in row)


def sql_outcome(run: Any, sql: str, *, is_spark: bool, ordered: bool = False,
                normalize: bool = True) -> Any:
    """``run(sql)`` (PySpark's or Ember's ``session.sql``) as comparable data: the schema
    (name, ``simpleString`` type, nullable) and the rows (a sorted multiset unless ``ordered``;
    values through :func:`norm_value` unless not ``normalize``, rows then plain tuples), or a
    :class:`Failed` with the error class."""
    try:
        df = run(sql)
        if is_spark:
            schema = [(f.name, f.dataType.simpleString(), f.nullable) for f in df.schema.fields]
        else:
            schema = [(f.name, f.data_type.simple_string(), f.nullable) for f in df.schema.fields]
        rows = [norm_value(tuple(r)) if normalize else tuple(r) for r in df.collect()]
        if not ordered:
            rows.sort(key=sort_key)
        return {"schema": schema, "rows": rows}
    except Exception as e:  # noqa: BLE001 - failures are compared by error class
        cls = (e.getCondition() if is_spark and hasattr(e, "getCondition")
               else getattr(e, "error_class", None))
        return Failed(str(cls or f"python:{type(e).__name__}"), str(e))
