"""``df.na``: PySpark's ``DataFrameNaFunctions`` (``drop``/``dropna``, ``fill``/``fillna``,
``replace``), built as Spark's ``DataFrameNaFunctions`` builds them: a ``Filter`` on
``AtLeastNNonNulls`` (NULL and NaN both count as missing) and a ``Project`` whose filled columns
are ``coalesce(nanvl(c, NULL), CAST(value AS type(c))) AS c`` / ``CASE c WHEN k THEN v ... END
AS c``.  The argument checks are PySpark's (its error classes)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.arithmetic import Add
from ember.expressions.base import Alias, AttributeReference, Expression, Literal
from ember.expressions.cast import Cast
from ember.expressions.conditional import CaseWhen, Coalesce, If
from ember.expressions.predicates import EqualTo, GreaterThanOrEqual, IsNull, Or
from ember.plans.logical.nodes import Filter, Project

if TYPE_CHECKING:  # pragma: no cover
    from ember.dataframe import DataFrame

__all__ = ["DataFrameNaFunctions"]

_NO_VALUE = object()


def _pyspark_error(error_class: str, message: str, **parameters: str) -> AnalysisError:
    return AnalysisError(message, error_class=error_class, parameters=parameters)


def _is_nan(e: Expression) -> Expression:
    """``e`` is NaN (Spark's NaN = NaN is true, so an equality with NaN tests it)."""
    return EqualTo(e, Literal(float("nan"), e.data_type))


def _missing(a: AttributeReference) -> Expression:
    """NULL, or NaN for a floating-point column (what ``AtLeastNNonNulls`` does not count)."""
    if isinstance(a.data_type, (T.DoubleType, T.FloatType)):
        return Or(IsNull(a), _is_nan(a))
    return IsNull(a)


def _not_expected(arg: str, expected: str, value: Any) -> AnalysisError:
    return _pyspark_error("NOT_EXPECTED_TYPE",
                          f"Argument `{arg}` should be a {expected}, got {type(value).__name__}.",
                          arg_name=arg, expected_type=expected, arg_type=type(value).__name__)


def _subset(subset: Any, expected: str = "list, str or tuple") -> list[str] | None:
    if subset is None:
        return None
    if isinstance(subset, str):
        return [subset]
    if not isinstance(subset, (list, tuple)):
        raise _not_expected("subset", expected, subset)
    return list(subset)


def _lit(v: Any) -> Literal:
    if isinstance(v, bool):
        return Literal(v, T.BOOLEAN)
    if isinstance(v, (int, float)):
        return Literal(float(v), T.DOUBLE)
    if isinstance(v, str):
        return Literal(v, T.STRING)
    return Literal(None, T.NULL)


def _takes(value: object, dt: T.DataType) -> bool:
    """Whether fill / replace with ``value`` applies to a column of type ``dt`` (PySpark: a bool
    to boolean columns, a str to string columns, a number to numeric columns)."""
    if isinstance(value, bool):
        return isinstance(dt, T.BooleanType)
    if isinstance(value, str):
        return isinstance(dt, T.StringType)
    return dt.is_numeric


class DataFrameNaFunctions:
    """``df.na.drop(...)``, ``df.na.fill(...)``, ``df.na.replace(...)``.

    >>> import ember
    >>> df = ember.Session().createDataFrame([(1, None), (None, 2.5)], "a int, b double")
    >>> df.na.fill(0).collect()
    [Row(a=1, b=0.0), Row(a=0, b=2.5)]
    """

    def __init__(self, df: "DataFrame") -> None:
        self.df = df

    def _targets(self, subset: list[str] | None) -> list[AttributeReference]:
        if subset is None:
            return list(self.df.plan.output)
        return [self.df._resolve(n) for n in subset]

    def drop(self, how: str = "any", thresh: int | None = None,
             subset: Any = None) -> "DataFrame":
        """Rows with at least ``thresh`` values that are neither NULL nor NaN among ``subset``
        (default: ``how="any"``, every value; ``how="all"``, one)."""
        if how is not None and how not in ("any", "all"):
            raise _pyspark_error("VALUE_NOT_ALLOWED",
                                 "Value for `how` has to be amongst the following values: "
                                 "['any', 'all'].", arg_name="how",
                                 allowed_values="['any', 'all']")
        names = _subset(subset)
        attrs = self._targets(names)
        if thresh is None:
            thresh = len(attrs) if how == "any" else 1
        present: Expression = Literal(0, T.INT)
        for a in attrs:
            present = Add(present, If(_missing(a), Literal(0, T.INT), Literal(1, T.INT)))
        return self.df._new(Filter(GreaterThanOrEqual(present, Literal(int(thresh), T.INT)),
                                   self.df.plan))

    def fill(self, value: Any, subset: Any = None) -> "DataFrame":
        """NULLs (and NaNs of float/double columns) replaced by ``value``: a number fills the
        numeric columns (cast to each column's type), a string the string columns, a bool the
        boolean ones; a dict maps column names to values (``subset`` is then ignored)."""
        if not isinstance(value, (float, int, str, bool, dict)):
            raise _not_expected("value", "bool, dict, float, int or str", value)
        out = self.df.plan.output
        if isinstance(value, dict):
            chosen = {self.df._resolve(k).id: v for k, v in value.items()}
            items = [self._fill_col(a, chosen[a.id]) if a.id in chosen else a for a in out]
            return self.df._new(Project(tuple(items), self.df.plan))
        targets = {a.id for a in self._targets(_subset(subset, "list or tuple"))}

        items = [self._fill_col(a, value) if a.id in targets and _takes(value, a.data_type) else a
                 for a in out]
        return self.df._new(Project(tuple(items), self.df.plan))

    @staticmethod
    def _fill_col(a: AttributeReference, value: Any) -> Expression:
        """Spark's ``fillCol``: ``coalesce(nanvl(a, NULL), CAST(value AS a's type)) AS a``."""
        replacement = Cast(_lit(value), a.data_type)
        current: Expression = a
        if isinstance(a.data_type, (T.DoubleType, T.FloatType)):
            current = If(_is_nan(a), Literal(None, a.data_type), a)
        return Alias(Coalesce((current, replacement)), a.name)

    def replace(self, to_replace: Any, value: Any = _NO_VALUE,
                subset: Any = None) -> "DataFrame":
        """Values equal to a key of ``to_replace`` replaced (``CASE c WHEN k THEN v ... ELSE c
        END``) in the columns of the keys' kind: numbers in numeric columns, strings in
        string columns, bools in boolean columns."""
        if value is _NO_VALUE:
            if not isinstance(to_replace, dict):
                raise _pyspark_error("ARGUMENT_REQUIRED", "Argument `value` is required when "
                                     "`to_replace` is dict.", arg_name="value",
                                     condition="`to_replace` is dict")
            value = None
        if not isinstance(to_replace, (bool, int, float, str, list, tuple, dict)):
            raise _not_expected("to_replace", "bool, dict, float, int, str or tuple", to_replace)
        if value is not None and not isinstance(to_replace, dict) and not isinstance(
                value, (bool, int, float, str, list, tuple)):
            raise _not_expected("value", "bool, float, int, list, None, str or tuple", value)
        if isinstance(to_replace, (list, tuple)) and isinstance(value, (list, tuple)) and \
                len(to_replace) != len(value):
            raise _pyspark_error(
                "LENGTH_SHOULD_BE_THE_SAME",
                f"to_replace and value should be of the same length, got {len(to_replace)} and "
                f"{len(value)}.", arg1="to_replace", arg2="value",
                arg1_length=str(len(to_replace)), arg2_length=str(len(value)))
        names = _subset(subset)
        if isinstance(to_replace, dict):
            rep = dict(to_replace)
        else:
            keys = list(to_replace) if isinstance(to_replace, (list, tuple)) else [to_replace]
            values = value if isinstance(value, (list, tuple)) else [value] * len(keys)
            rep = dict(zip(keys, values))
        # PySpark's check (a bool is also a number there)
        kinds = (bool, str, (int, float))
        if not any(all(isinstance(x, k) for x in rep)
                   and all(isinstance(x, k) for x in rep.values() if x is not None)
                   for k in kinds):
            raise _pyspark_error("MIXED_TYPE_REPLACEMENT", "Mixed type replacements are not "
                                 "supported.")
        if not rep or names == []:
            return self.df
        first = next(iter(rep))
        targets = {a.id for a in self._targets(names)}

        items = [self._replace_col(a, rep) if a.id in targets and _takes(first, a.data_type) else a
                 for a in self.df.plan.output]
        return self.df._new(Project(tuple(items), self.df.plan))

    @staticmethod
    def _replace_col(a: AttributeReference, rep: dict[Any, Any]) -> Expression:
        """Spark's ``replaceCol``: ``CaseKeyWhen(a, k1, v1, ..., a) AS a``."""
        conds = tuple(EqualTo(a, _lit(k)) for k in rep)
        values = tuple(Cast(_lit(v), a.data_type) for v in rep.values())
        return Alias(CaseWhen(conds, values, a), a.name)
