"""``session.tvf``: Spark's table-valued functions as DataFrames (PySpark's
``TableValuedFunction``): ``session.tvf.explode(F.array(F.lit(1), F.lit(2)))`` is
``SELECT * FROM explode(array(1, 2))``, a generator over one row.

>>> session.tvf.range(3).count()                                 # doctest: +SKIP
3
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember.column import Column, _col_or_name
from ember.errors import UnsupportedError
from ember.expressions.base import UnresolvedFunction
from ember.plans.logical.nodes import OneRowRelation

if TYPE_CHECKING:  # pragma: no cover
    from ember.dataframe import DataFrame
    from ember.session import Session

__all__ = ["TableValuedFunction"]


class TableValuedFunction:
    """``session.tvf`` (PySpark's ``TableValuedFunction``)."""

    def __init__(self, session: "Session") -> None:
        self._session = session

    def _generate(self, name: str, *args: Any) -> "DataFrame":
        one_row = self._session._dataframe(OneRowRelation())
        return one_row.select(Column(UnresolvedFunction(
            name, tuple(_col_or_name(a) for a in args))))

    def range(self, start: int, end: int | None = None, step: int = 1,  # noqa: A003
              numPartitions: int | None = None) -> "DataFrame":  # noqa: N803
        return self._session.range(start, end, step, numPartitions)

    def explode(self, collection: Any) -> "DataFrame":
        return self._generate("explode", collection)

    def explode_outer(self, collection: Any) -> "DataFrame":
        return self._generate("explode_outer", collection)

    def posexplode(self, collection: Any) -> "DataFrame":
        return self._generate("posexplode", collection)

    def posexplode_outer(self, collection: Any) -> "DataFrame":
        return self._generate("posexplode_outer", collection)

    def inline(self, input: Any) -> "DataFrame":  # noqa: A002
        return self._generate("inline", input)

    def inline_outer(self, input: Any) -> "DataFrame":  # noqa: A002
        return self._generate("inline_outer", input)

    def json_tuple(self, input: Any, *fields: Any) -> "DataFrame":  # noqa: A002
        return self._generate("json_tuple", input, *fields)

    def stack(self, n: Any, *fields: Any) -> "DataFrame":
        return self._generate("stack", n, *fields)

    def __getattr__(self, name: str) -> Any:
        if name in ("collations", "sql_keywords", "variant_explode", "variant_explode_outer",
                    "python_worker_logs"):
            raise UnsupportedError(
                f"The feature is not supported: the table-valued function {name}.",
                parameters={"feature": f"tvf.{name}"})
        raise AttributeError(f"'TableValuedFunction' object has no attribute '{name}'")
