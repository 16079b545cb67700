"""split_statements: `;` outside quotes and comments, comment-only pieces dropped."""

from ember.sql import split_statements
from ember.sql.splitter import strip_comments


def test_basic_split_and_trailing_semicolon():
    assert split_statements("SELECT 1; SELECT 2;") == ["SELECT 1", "SELECT 2"]


def test_semicolons_inside_quotes_and_comments_do_not_split():
    text = "SELECT ';' AS a, \"x;y\", `c;d` FROM t -- not; here\n; /* a; b */ SELECT 2"
    parts = split_statements(text)
    assert len(parts) == 2
    assert parts[0].startswith("SELECT ';' AS a")
    assert parts[1].endswith("SELECT 2")


def test_comment_only_pieces_are_dropped():
    text = "-- header;\n\nSET a=1;\n-- trailing comment only\n;\n  \n"
    assert split_statements(text) == ["-- header;\n\nSET a=1"]


def test_escaped_quote_inside_string():
    assert split_statements(r"SELECT 'it\'s;'; SELECT 1") == [r"SELECT 'it\'s;'", "SELECT 1"]


def test_hint_comment_is_code():
    assert split_statements("SELECT /*+ BROADCAST(t) */ * FROM t") == [
        "SELECT /*+ BROADCAST(t) */ * FROM t"
    ]


def test_strip_comments_keeps_positions():
    text = "SELECT 1 -- c\n/* x\ny */ , 2"
    out = strip_comments(text)
    assert len(out) == len(text)
    assert out.count("\n") == text.count("\n")
    assert "c" not in out.replace("SELECT", "")
