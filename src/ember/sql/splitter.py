"""Split a SQL script into statements.

Statements are separated by ``;`` outside string literals, quoted identifiers and comments.  Pieces
that hold only whitespace and comments are dropped.  Each returned statement keeps its text exactly
as written (comments included, trailing ``;`` removed, surrounding whitespace stripped), so parse
errors point at the text the user wrote.

Spark's golden-file runner (``SQLQueryTestSuite``) first drops whole-line ``--`` comments and then
splits on ``;``; splitting outside comments gives the same statements for its input files.

>>> split_statements("SELECT 1; -- one\\nSELECT ';' AS s;\\n-- done")
['SELECT 1', "-- one\\nSELECT ';' AS s"]
"""

from __future__ import annotations

__all__ = ["split_statements", "strip_comments"]


def _scan(text: str) -> list[tuple[int, int, str]]:
    """Segments ``(start, end, kind)`` of ``text``; kind is ``code``, ``quote``, ``comment`` or
    ``semicolon``.  Unterminated quotes/comments run to the end of the text."""
    segments: list[tuple[int, int, str]] = []
    i, n = 0, len(text)
    code_start = 0

    def flush(upto: int) -> None:
        if upto > code_start:
            segments.append((code_start, upto, "code"))

    while i < n:
        c = text[i]
        if c in ("'", '"', "`"):
            flush(i)
            j = i + 1
            while j < n:
                if text[j] == "\\" and c != "`":
                    j += 2
                    continue
                if text[j] == c:
                    if c == "`" and j + 1 < n and text[j + 1] == "`":  # `` escapes a backquote
                        j += 2
                        continue
                    break
                j += 1
            end = min(j + 1, n)
            segments.append((i, end, "quote"))
            i = code_start = end
        elif c == "-" and text.startswith("--", i):
            flush(i)
            j = text.find("\n", i)
            end = n if j < 0 else j
            segments.append((i, end, "comment"))
            i = code_start = end
        elif c == "/" and text.startswith("/*", i) and not text.startswith("/*+", i):
            flush(i)
            j = text.find("*/", i + 2)
            end = n if j < 0 else j + 2
            segments.append((i, end, "comment"))
            i = code_start = end
        elif c == ";":
            flush(i)
            segments.append((i, i + 1, "semicolon"))
            i = code_start = i + 1
        else:
            i += 1
    flush(n)
    return segments


def split_statements(text: str) -> list[str]:
    """Split ``text`` on ``;`` outside quotes and comments, dropping comment-only pieces.

    >>> split_statements("SET a=1;\\n-- comment only\\n;\\nSELECT 'x;y'")
    ['SET a=1', "SELECT 'x;y'"]
    """
    out: list[str] = []
    start = 0
    has_code = False
    for s, e, kind in _scan(text):
        if kind == "semicolon":
            if has_code:
                out.append(text[start:s].strip())
            start, has_code = e, False
        elif kind in ("code", "quote"):
            if text[s:e].strip():
                has_code = True
    if has_code:
        out.append(text[start:].strip())
    return out


def strip_comments(text: str) -> str:
    """``text`` with comments replaced by spaces (newlines kept, so positions do not move).

    >>> strip_comments("SET a = 1 -- x")
    'SET a = 1     '
    """
    parts = []
    for s, e, kind in _scan(text):
        piece = text[s:e]
        if kind == "comment":
            piece = "".join(ch if ch == "\n" else " " for ch in piece)
        parts.append(piece)
    return "".join(parts)
