"""Unit tests of the conformance comparison (no Spark, no Ember session needed)."""

from __future__ import annotations

from tests.conformance.ember_adapter import Outcome, arrow_type_to_simple_string, check_outcome
from tests.conformance.test_conformance import (distinct_config_indexes, exclusion_reason,
                                                expected_for)

OK = {"command": False, "ordered": False, "schema": [["a", "int"]], "rows": [[1], [None]]}
ERR = {"command": False, "error": {"error_class": "DIVIDE_BY_ZERO", "message": "x"}}


class _E(Exception):
    pass


def test_matching_result_passes_in_any_order_unless_ordered() -> None:
    assert check_outcome(OK, Outcome(schema=[["a", "int"]], rows=[[None], [1]])) is None
    ordered = {**OK, "ordered": True}
    assert check_outcome(ordered, Outcome(schema=[["a", "int"]], rows=[[None], [1]])) is not None


def test_schema_and_rows_must_match() -> None:
    assert "schema" in check_outcome(OK, Outcome(schema=[["a", "bigint"]], rows=[[1], [None]]))
    assert "schema" in check_outcome(OK, Outcome(schema=[["b", "int"]], rows=[[1], [None]]))
    assert "rows differ" in check_outcome(OK, Outcome(schema=[["a", "int"]], rows=[[1], [1]]))
    assert "rows differ" in check_outcome(OK, Outcome(schema=[["a", "int"]], rows=[[1]]))


def test_errors_compare_by_class() -> None:
    assert check_outcome(ERR, Outcome(error_class="DIVIDE_BY_ZERO", error=_E())) is None
    assert check_outcome(ERR, Outcome(error_class="CAST_INVALID_INPUT", error=_E())) is not None
    assert check_outcome(ERR, Outcome(schema=[["a", "int"]], rows=[])) is not None
    assert check_outcome(ERR, Outcome(crash="Traceback ...")) is not None
    assert check_outcome(OK, Outcome(error_class="DIVIDE_BY_ZERO", error=_E())) is not None
    assert check_outcome(OK, Outcome(crash="Traceback ...")) is not None


def test_commands_without_schema_need_no_rows() -> None:
    cmd = {"command": True, "ordered": False, "schema": [], "rows": []}
    assert check_outcome(cmd, Outcome(schema=[], rows=[])) is None
    assert check_outcome(cmd, Outcome(schema=[["x", "int"]], rows=[])) is None
    assert check_outcome(cmd, Outcome(schema=[["x", "int"]], rows=[[1]])) is not None


def test_ordered_zero_sign_can_be_relaxed() -> None:
    ordered = {"command": False, "ordered": True, "schema": [["d", "double"]], "rows": [[-0.0], [0.0]]}
    swapped = Outcome(schema=[["d", "double"]], rows=[[0.0], [-0.0]])
    assert check_outcome(ordered, swapped) is not None
    assert check_outcome(ordered, swapped, strict_zero_sign=False) is None


def test_per_config_results_and_config_dedup() -> None:
    stmt = {**OK, "results_by_config": [OK, ERR]}
    assert expected_for(stmt, 1) is ERR
    assert expected_for(OK, 3) is OK
    sets = [[["spark.sql.autoBroadcastJoinThreshold", "-1"], ["spark.sql.codegen.wholeStage", "true"]],
            [["spark.sql.autoBroadcastJoinThreshold", "-1"], ["spark.sql.codegen.wholeStage", "false"]],
            [["spark.sql.autoBroadcastJoinThreshold", "10"], ["spark.sql.codegen.wholeStage", "true"]]]
    assert distinct_config_indexes(sets) == [0, 2]


def test_exclusions_match_by_prefix(tmp_path, monkeypatch) -> None:
    import tests.conformance.test_conformance as conformance

    excl = tmp_path / "exclusions.toml"
    excl.write_text('[[exclude]]\nfile = "count.sql"\n'
                    'sql_prefix = "SELECT count(distinct 0.8), percentile_approx(distinct a, 0.8)"\n'
                    'reason = "percentile_approx excluded"\n')
    monkeypatch.setattr(conformance, "EXCLUSIONS_FILE", excl)
    conformance.load_exclusions.cache_clear()  # earlier tests cached the real file's entries
    try:
        sql = "SELECT count(distinct 0.8),\n   percentile_approx(distinct a, 0.8) FROM testData"
        assert "percentile_approx" in exclusion_reason("count.sql", 12, sql)
        assert exclusion_reason("count.sql", 1, "SELECT count(*) FROM testData") is None
        assert exclusion_reason("other.sql", 12, sql) is None
    finally:
        conformance.load_exclusions.cache_clear()  # later tests read the real file again


def test_arrow_type_fallback() -> None:
    import pyarrow as pa

    assert arrow_type_to_simple_string(pa.large_string()) == "string"
    assert arrow_type_to_simple_string(pa.decimal128(10, 2)) == "decimal(10,2)"
    assert arrow_type_to_simple_string(pa.struct([("a", pa.int32())])) == "struct<a:int>"
    assert arrow_type_to_simple_string(pa.timestamp("us", tz="UTC")) == "timestamp"
