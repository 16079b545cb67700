"""One error taxonomy for Ember.

Every error Ember raises derives from :class:`EmberError`.  Errors that Spark reports with an error
class carry the same class (``UNRESOLVED_COLUMN.WITH_SUGGESTION``, ``DIVIDE_BY_ZERO`` ...), so code
and tests can match on ``err.error_class`` exactly as they would on a PySpark exception's
``getErrorClass()``.

- :class:`ParseError`      SQL text that does not parse; carries line/column and a caret.
- :class:`AnalysisError`   a well-formed query that cannot be resolved or type-checked.
- :class:`ExecutionError`  a runtime failure Spark reports too (ANSI overflow, invalid cast ...).
- :class:`InternalError`   a bug in Ember; names the rule or operator that failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Origin:
    """Where in the SQL text an error points: 1-based line, 0-based column (Spark's convention)."""

    line: int | None = None
    start_position: int | None = None
    stop_position: int | None = None
    sql_text: str | None = None

    def context(self) -> str:
        """Spark-like query context: the line of SQL with a caret under the start position."""
        if self.sql_text is None or self.line is None:
            return ""
        lines = self.sql_text.splitlines() or [""]
        text = lines[min(self.line, len(lines)) - 1]
        col = self.start_position or 0
        return f"\n{text}\n{' ' * col}^"


class EmberError(Exception):
    """Base class of every Ember error.

    ``error_class`` is Spark's error class when one exists (``None`` otherwise);
    ``parameters`` are the message parameters Spark would report.
    """

    default_error_class: str | None = None

    def __init__(
        self,
        message: str,
        *,
        error_class: str | None = None,
        parameters: dict[str, str] | None = None,
        origin: Origin | None = None,
    ) -> None:
        self.error_class = error_class or self.default_error_class
        self.parameters = dict(parameters or {})
        self.origin = origin
        self.message = message
        super().__init__(self._format())

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled by its parts (the Spark runtime ships task errors to the driver): rebuilding
        # from ``args`` would format the message twice.
        return _rebuild_error, (type(self), self.message), dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.args = (self._format(),)

    def _format(self) -> str:
        head = f"[{self.error_class}] " if self.error_class else ""
        pos = ""
        if self.origin is not None and self.origin.line is not None:
            pos = f" (line {self.origin.line}, pos {self.origin.start_position})"
            pos += self.origin.context()
        return f"{head}{self.message}{pos}"

    def with_origin(self, origin: Origin) -> "EmberError":
        """The same error, pointing at ``origin`` (only if it had no position yet)."""
        if self.origin is None or self.origin.line is None:
            self.origin = origin
            self.args = (self._format(),)
        return self


def _rebuild_error(cls: type, message: str) -> EmberError:
    err = Exception.__new__(cls)
    err.message = message  # type: ignore[attr-defined]
    return err  # type: ignore[return-value]


class ParseError(EmberError):
    """SQL text that does not parse (Spark: ParseException)."""

    default_error_class = "PARSE_SYNTAX_ERROR"


class AnalysisError(EmberError):
    """The query cannot be resolved or type-checked (Spark: AnalysisException)."""


class ExecutionError(EmberError):
    """A runtime failure that Spark reports as well, e.g. ANSI arithmetic overflow."""


class ArithmeticError_(ExecutionError):
    """ANSI arithmetic errors: ``DIVIDE_BY_ZERO``, ``ARITHMETIC_OVERFLOW``,
    ``NUMERIC_VALUE_OUT_OF_RANGE``."""


class CastError(ExecutionError):
    """ANSI cast failures: ``CAST_INVALID_INPUT``, ``CAST_OVERFLOW``."""


class PythonException(ExecutionError):
    """A user-defined Python function raised (Spark's ``PythonException``): the message holds
    the Python traceback of the user's function."""


class UnsupportedError(EmberError):
    """A valid Spark feature Ember does not implement yet; the message says which."""

    default_error_class = "UNSUPPORTED_FEATURE"


class InternalError(EmberError):
    """A bug in Ember.  The message names the rule or operator that failed."""

    default_error_class = "INTERNAL_ERROR"
