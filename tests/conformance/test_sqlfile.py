"""Unit tests of the golden-file machinery (no Spark, no Ember needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conformance.generate import GOLDEN_ROOT, golden_path
from tests.conformance.normalize import normalize_table, rows_equal, sorted_rows, values_equal
from tests.conformance.sqlfile import (INPUTS_ROOT, all_input_files, config_sets, list_input_files,
                                       parse_sql_file, split_comments_and_code, split_statements)


def _split(text: str) -> list[str]:
    _, code = split_comments_and_code(text)
    return split_statements(code)


def test_split_on_semicolons_anywhere_and_drop_comments() -> None:
    text = "-- header\nSELECT 1; SELECT 2;\n  -- indented comment\nSELECT\n  3 -- inline stays\n;\n"
    assert _split(text) == ["SELECT 1", "SELECT 2", "SELECT\n  3 -- inline stays"]


def test_escaped_semicolon_does_not_split() -> None:
    assert _split("SELECT 'a\\;b';\nSELECT 2;") == ["SELECT 'a\\;b'", "SELECT 2"]


def test_comment_after_semicolon_is_dropped() -> None:
    assert _split("SELECT 1 -- trailing\n;\nSELECT 2; -- after\n") == ["SELECT 1 -- trailing", "SELECT 2"]


def test_statement_without_final_semicolon_is_kept() -> None:
    assert _split("SELECT 1;\nSELECT 2\n") == ["SELECT 1", "SELECT 2"]


def test_query_delimiter_blocks() -> None:
    text = "SELECT 1;\n--QUERY-DELIMITER-START\nSELECT 'x;y';\n--QUERY-DELIMITER-END\nSELECT 3;"
    assert _split(text) == ["SELECT 1", "SELECT 'x;y'", "SELECT 3"]


def test_directives(tmp_path: Path) -> None:
    f = tmp_path / "x.sql"
    f.write_text("--SET a=1,b=2\n--SET a=3\n--CONFIG_DIM1 c=1\n--CONFIG_DIM1 c=2\n"
                 "--CONFIG_DIM2 d=x=y\n--ONLY_IF spark\nSELECT 1;\n")
    tf = parse_sql_file(f, root=tmp_path)
    assert tf.settings == ((("a", "1"), ("b", "2")), (("a", "3"),))
    assert tf.only_if == ("spark",)
    assert tf.config_sets() == (
        (("a", "1"), ("b", "2"), ("c", "1"), ("d", "x=y")),
        (("a", "1"), ("b", "2"), ("c", "2"), ("d", "x=y")),
        (("a", "3"), ("c", "1"), ("d", "x=y")),
        (("a", "3"), ("c", "2"), ("d", "x=y")),
    )
    assert config_sets((), ()) == ((),)


def test_known_input_statement_counts() -> None:
    counts = {parse_sql_file(p).name: len(parse_sql_file(p).statements) for p in list_input_files()}
    assert len(counts) == 14
    assert counts["join-empty-relation.sql"] == 24
    assert counts["outer-join.sql"] == 6
    nt = parse_sql_file(INPUTS_ROOT / "subquery/in-subquery/not-in-unit-tests-single-column.sql")
    assert len(nt.config_sets()) == 2
    assert nt.statements[2].endswith("WHERE  d > 10.0) -- (empty subquery)")


@pytest.mark.parametrize("root,path", all_input_files(),
                         ids=[p.relative_to(r).as_posix() for r, p in all_input_files()])
def test_golden_is_up_to_date(root: Path, path: Path) -> None:
    """Each input has a golden made from the same text and the same statement split."""
    tf = parse_sql_file(path, root)
    gp = golden_path(tf.name)
    assert gp.exists(), f"missing golden {gp}; run python tools/generate_goldens.py"
    doc = json.loads(gp.read_text())
    assert doc["source_sha256"] == tf.sha256, "input changed; regenerate goldens"
    assert [s["sql"] for s in doc["statements"]] == list(tf.statements)
    assert doc["config_sets"] == [[list(kv) for kv in c] for c in tf.config_sets()]
    assert gp.resolve().is_relative_to(GOLDEN_ROOT)


def test_normalize_values() -> None:
    import datetime as dt
    from decimal import Decimal

    import pyarrow as pa

    t = pa.table({
        "i": pa.array([1, None], pa.int32()),
        "f": pa.array([float("nan"), -0.0]),
        "m": pa.array([Decimal("1.50"), Decimal("0.00")], pa.decimal128(5, 2)),
        "d": pa.array([dt.date(2020, 1, 2), None]),
        "ts": pa.array([dt.datetime(2020, 1, 1, 12, tzinfo=dt.timezone.utc), None],
                       pa.timestamp("us", tz="UTC")),
        "b": pa.array([b"\x0a", None]),
        "st": pa.array([{"x": 1, "y": "a"}, None]),
        "inf": pa.array([float("inf"), float("-inf")]),
    })
    assert normalize_table(t) == [
        [1, "NaN", "1.50", "2020-01-02", "2020-01-01T12:00:00+00:00", "0a", [1, "a"], "Infinity"],
        [None, -0.0, "0.00", None, None, None, None, "-Infinity"],
    ]


def test_comparison_rules() -> None:
    assert values_equal("NaN", "NaN")
    assert values_equal(0.1 + 0.2, 0.3)
    assert not values_equal(1.0, 1.0001)
    assert not values_equal(-0.0, 0.0)
    assert values_equal(-0.0, 0.0, strict_zero_sign=False)
    assert not values_equal(True, 1)
    assert not values_equal(None, 0)
    assert rows_equal([[1], [None]], [[None], [1]], ordered=False)
    assert not rows_equal([[1], [None]], [[None], [1]], ordered=True)
    assert not rows_equal([[1], [1]], [[1]], ordered=False)
    assert not rows_equal([[1], [1], [2]], [[1], [2], [2]], ordered=False)
    assert sorted_rows([[None], ["b"], [2], [1.5]]) == [[None], [2], [1.5], ["b"]]
