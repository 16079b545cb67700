"""Window function names -> the window function classes (Spark's ``FunctionRegistry`` entries
of the ``window_funcs`` group): ``row_number``, ``rank``, ``dense_rank``, ``percent_rank``,
``cume_dist``, ``ntile``, ``lag``, ``lead``, ``nth_value``.

``lag(input[, offset[, default[, ignoreNulls]]])`` and ``lead`` default to offset 1 and a NULL
default; ``nth_value(input, offset[, ignoreNulls])``.  The ``ignoreNulls`` argument must be a
boolean literal (``_LEGACY_ERROR_TEMP_1210`` otherwise, as for ``first``); ``lag(x) IGNORE
NULLS`` sets it too, and is refused for the ranking functions
(``INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX``).  ``rank`` / ``dense_rank`` /
``percent_rank`` accept arguments and ignore them (the window's order replaces them).  :func:`lookup_window_function` returns None for other names.
"""

from __future__ import annotations

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.base import Expression, Literal
from ember.expressions.registry import wrong_num_args
from ember.expressions.windows import (
    CumeDist, DenseRank, Lag, Lead, NTile, NthValue, PercentRank, Rank, RowNumber,
)

__all__ = ["lookup_window_function", "WINDOW_FUNCTION_NAMES"]

_NO_ARGS = {"row_number": RowNumber, "cume_dist": CumeDist}
_RANK_LIKE = {"rank": Rank, "dense_rank": DenseRank, "percent_rank": PercentRank}

#: Every name :func:`lookup_window_function` resolves.
WINDOW_FUNCTION_NAMES = frozenset(_NO_ARGS) | frozenset(_RANK_LIKE) | {
    "ntile", "lag", "lead", "nth_value"}


def _flag(e: Expression, fn: str) -> bool:
    if isinstance(e, Literal) and isinstance(e.dtype, T.BooleanType) and e.value is not None:
        return bool(e.value)
    raise AnalysisError(f"The second argument in {fn} should be a boolean literal.",
                        error_class="_LEGACY_ERROR_TEMP_1210", parameters={"funcName": fn})


def lookup_window_function(name: str, args: tuple[Expression, ...], ignore_nulls: bool = False
                           ) -> Expression | None:
    """The window function ``name(args)``, or None when ``name`` is not one."""
    key = name.lower()
    n = len(args)
    if ignore_nulls and (key in _NO_ARGS or key == "ntile"):
        raise AnalysisError(
            f"Invalid SQL syntax: Function `{key}` doesn't support IGNORE NULLS.",
            error_class="INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX",
            parameters={"prettyName": f"`{key}`", "syntax": "IGNORE NULLS"})
    if key in _RANK_LIKE:
        # Spark's RankLike takes any arguments; the window's order replaces them
        return _RANK_LIKE[key]()
    if key in _NO_ARGS:
        if n:
            raise wrong_num_args(key, "0", n)
        return _NO_ARGS[key]()
    if key == "ntile":
        if n != 1:
            raise wrong_num_args(key, "1", n)
        return NTile(args[0])
    if key in ("lag", "lead"):
        if not 1 <= n <= 4:
            raise wrong_num_args(key, "[1, 2, 3, 4]", n)
        offset = args[1] if n > 1 else Literal(1, T.INT)
        default = args[2] if n > 2 else Literal(None, T.NULL)
        flag = _flag(args[3], key) if n > 3 else False
        cls = Lag if key == "lag" else Lead
        return cls(args[0], offset, default, flag or ignore_nulls)
    if key == "nth_value":
        if not 2 <= n <= 3:
            raise wrong_num_args(key, "[2, 3]", n)
        flag = _flag(args[2], key) if n > 2 else False
        return NthValue(args[0], args[1], flag or ignore_nulls)
    return None
