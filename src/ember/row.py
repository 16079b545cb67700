"""``Row``: one result row, a tuple with named fields (PySpark's ``pyspark.sql.Row``).

>>> r = Row(a=1, b="x")
>>> r.a, r["b"], r[0], r.asDict()
(1, 'x', 1, {'a': 1, 'b': 'x'})

Rows returned by ``DataFrame.collect()`` keep the result's column order and may repeat a name
(``SELECT a, a``), as in Spark; key and attribute access then return the first match.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Row", "make_row"]


class Row(tuple):
    """A tuple whose fields also have names.

    ``Row(a=1, b=2)`` builds a row; ``Row("a", "b")`` builds a row *class* that is then called with
    values, as in PySpark: ``Point = Row("x", "y"); Point(1, 2) == Row(x=1, y=2)``.
    """

    # Not slotted: a tuple subclass cannot have non-empty __slots__, and the field names must live
    # on the instance (PySpark keeps them in ``__fields__`` the same way).

    def __new__(cls, *args: Any, **kwargs: Any) -> "Row":
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        if kwargs:
            row = tuple.__new__(cls, tuple(kwargs.values()))
            row.__dict__["__fields__"] = list(kwargs)
            return row
        return tuple.__new__(cls, args)

    def asDict(self, recursive: bool = False) -> dict[str, Any]:  # noqa: N802 (PySpark name)
        """The row as ``{name: value}``; nested Rows/lists/dicts converted when ``recursive``.

        >>> Row(a=1, b=Row(c=2)).asDict(recursive=True)
        {'a': 1, 'b': {'c': 2}}
        """
        if "__fields__" not in self.__dict__:
            raise TypeError("Cannot convert a Row class into dict")

        def conv(v: Any) -> Any:
            if isinstance(v, Row) and "__fields__" in v.__dict__:
                return v.asDict(True)
            if isinstance(v, list):
                return [conv(x) for x in v]
            if isinstance(v, dict):
                return {k: conv(x) for k, x in v.items()}
            return v

        if recursive:
            return {n: conv(v) for n, v in zip(self.__fields__, self)}
        return dict(zip(self.__fields__, self))

    def __contains__(self, item: object) -> bool:
        if "__fields__" in self.__dict__:
            return item in self.__fields__
        return tuple.__contains__(self, item)

    def __call__(self, *values: Any) -> "Row":
        """``Row("a", "b")(1, 2)`` -> ``Row(a=1, b=2)``."""
        if len(values) > len(self):
            raise ValueError(
                f"Can not create Row with fields {self}, expected {len(self)} values "
                f"but got {values}"
            )
        return make_row(tuple(values), tuple(self))

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, (int, slice)):
            return tuple.__getitem__(self, item)
        fields = self.__dict__.get("__fields__")
        if fields is None:
            raise KeyError(item)
        try:
            return tuple.__getitem__(self, fields.index(item))
        except ValueError:
            raise KeyError(item) from None

    def __getattr__(self, item: str) -> Any:
        if item.startswith("__"):
            raise AttributeError(item)
        fields = self.__dict__.get("__fields__")
        if fields is None or item not in fields:
            raise AttributeError(item)
        return tuple.__getitem__(self, fields.index(item))

    def __setattr__(self, key: str, value: Any) -> None:
        raise RuntimeError("Row is read-only")

    def __reduce__(self) -> Any:
        fields = self.__dict__.get("__fields__")
        if fields is None:
            return (Row, tuple(self))
        return (make_row, (tuple(self), tuple(fields)))

    def __repr__(self) -> str:
        fields = self.__dict__.get("__fields__")
        if fields is None:
            return "<Row(" + ", ".join(repr(v) for v in self) + ")>"
        return "Row(" + ", ".join(f"{n}={v!r}" for n, v in zip(fields, self)) + ")"

    __str__ = __repr__


def make_row(values: tuple[Any, ...], names: tuple[str, ...] | list[str]) -> Row:
    """A Row holding ``values`` under ``names`` (names may repeat, as in query results)."""
    row = tuple.__new__(Row, values)
    row.__dict__["__fields__"] = list(names)
    return row
