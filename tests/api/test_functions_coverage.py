"""Coverage of ``pyspark.sql.functions`` by ``ember.functions`` (issue 22): every PySpark
function Ember lacks is listed below with the reason, and the test fails on an unlisted one.
``python -m tests.api.test_functions_coverage`` prints the count."""

from __future__ import annotations

import pyspark.sql.functions as P
import pytest

import ember.functions as E
from tests.conformance.ember_adapter import new_session
from tests.differential.compare import norm_value
from tests.spark_session import get_spark

_N = "issue 23: takes or returns ARRAY/MAP/STRUCT"
_SENTENCES = ("sentences: Java's locale-dependent BreakIterator (sentence and word boundaries) has "
              "no vectorized equivalent yet")
_U = "issue 22 item 3: user-defined functions"
_SKETCH = "DataSketches/bitmap/HLL sketch functions: Spark-internal binary sketch formats"
_VARIANT = "VARIANT type: Ember has no VARIANT type"
_TIME = "TIME type (Spark 4.1): Ember has no TIME type"
_GEO = "geospatial types (Spark 4.1): Ember has no GEOMETRY/GEOGRAPHY types"
_XML = "XML functions: Ember has no XML support"
_VECTOR = "vector functions over ARRAY<FLOAT>: issue 23 (nested types)"
_JVM = "calls JVM methods (reflect / java_method): no JVM in the local runtime"
_PARTITION = ("partition transforms (years, months, days, hours, bucket) are only valid in "
              "DataFrameWriterV2.partitionedBy, which Ember does not have")
_AGG = "aggregate function: not in this issue (aggregates issue)"
_SESSION = "session/catalog functions: issue 21"
_TODO = "not implemented yet (issue 22 item 1)"
_AES = ("AES (aes_encrypt/aes_decrypt): needs an AES implementation (the `cryptography` "
        "package), not among the project's dependencies yet")
_COLLATION = "collations (COLLATE, collation()): Ember's strings have the UTF8_BINARY collation only"
_NANOS = ("nanosecond timestamps (TIMESTAMP_LTZ(9) / TIMESTAMP_NTZ(9), Spark 4.3): Ember's "
          "timestamps have microsecond precision")

EXCLUSIONS: dict[str, str] = {}
for _reason, _names in {
    _N: "      "
        "      "
        "      "
        "       "
        "       "
        "    "
        "      "
        "      "
        "      "
        "      "
        "session_window window_time ",
    _SENTENCES: "sentences",
    _U: "  arrow_udtf   unwrap_udt",
    _SKETCH: "bitmap_and_agg bitmap_bit_position bitmap_bucket_number bitmap_construct_agg "
             "bitmap_count bitmap_or_agg hll_sketch_agg hll_sketch_estimate hll_union "
             "hll_union_agg count_min_sketch theta_difference theta_intersection "
             "theta_intersection_agg theta_sketch_agg theta_sketch_estimate theta_union "
             "theta_union_agg " + " ".join(
                 f"kll_{k}_{t}" for k in ("merge_agg", "sketch_agg", "sketch_get_n",
                                          "sketch_get_quantile", "sketch_get_rank",
                                          "sketch_merge", "sketch_to_string")
                 for t in ("bigint", "double", "float")) + " " + " ".join(
                 f"tuple_{k}_{t}" for k in ("difference", "difference_theta",
                                            "intersection_agg", "intersection",
                                            "intersection_theta", "sketch_agg",
                                            "sketch_estimate", "sketch_summary",
                                            "sketch_theta", "union_agg", "union",
                                            "union_theta")
                 for t in ("double", "integer")),
    _VARIANT: "is_valid_variant is_variant_null parse_json schema_of_variant "
              "schema_of_variant_agg to_variant_object try_parse_json try_variant_get "
              "variant_get try_variant_array_append try_variant_insert try_variant_set "
              "variant_array_append variant_delete variant_insert variant_set "
              "variant_strip_nulls",
    _TIME: "current_time make_time time_bucket time_diff time_from_micros time_from_millis "
           "time_from_seconds time_to_micros time_to_millis time_to_seconds time_trunc "
           "to_time try_to_time",
    _GEO: "st_asbinary st_geogfromwkb st_geomfromwkb st_setsrid st_srid",
    _XML: "from_xml schema_of_xml to_xml xpath xpath_boolean xpath_double xpath_float "
          "xpath_int xpath_long xpath_number xpath_short xpath_string",
    _VECTOR: "vector_avg vector_cosine_similarity vector_inner_product vector_l2_distance "
             "vector_norm vector_normalize vector_sum",
    _JVM: "java_method reflect try_reflect",
    _PARTITION: "years months days hours bucket",
    _AGG: "collect_union counter_diff histogram_numeric   "
          "",
    _SESSION: "  ",
    _NANOS: "timestamp_nanos unix_nanos",
    _AES: "aes_decrypt aes_encrypt try_aes_decrypt",
    _COLLATION: "collate collation",
    _TODO: "        "
           "      "
           "      "
           "    "
           " input_file_block_length input_file_block_start input_file_name "
           "    "
           "     "
           "     "
           "    "
           "    "
           "   "
           "      "
           "      "
           "      "
           "to_char to_varchar to_number try_to_number   "
           "       "
           "  ",
}.items():
    for _name in _names.split():
        EXCLUSIONS[_name] = _reason


def pyspark_functions() -> list[str]:
    """The public functions of ``pyspark.sql.functions`` (not re-exported helpers)."""
    return sorted(n for n in dir(P) if not n.startswith("_") and callable(getattr(P, n))
                  and getattr(getattr(P, n), "__module__", "").startswith(
                      "pyspark.sql.functions"))


def missing() -> list[str]:
    return [n for n in pyspark_functions() if not hasattr(E, n)]


def test_every_missing_function_has_a_reason() -> None:
    unexplained = [n for n in missing() if n not in EXCLUSIONS]
    assert not unexplained, f"PySpark functions missing from ember.functions without a reason: " \
                            f"{unexplained}"


def test_no_stale_exclusions_of_this_issue() -> None:
    """A function this issue implemented leaves the list (other issues' entries are theirs to
    drop when they land)."""
    present = [n for n, why in EXCLUSIONS.items() if why == _TODO and hasattr(E, n)]
    assert not present, f"implemented but still excluded: {present}"


def test_exclusions_name_real_pyspark_functions() -> None:
    names = set(pyspark_functions())
    assert not [n for n in EXCLUSIONS if n not in names]


if __name__ == "__main__":
    total, lacking = len(pyspark_functions()), missing()
    print(f"ember.functions covers {total - len(lacking)} of {total} pyspark.sql.functions")


#: calls made the same way through pyspark.sql.functions and ember.functions (one select each)
CALLS = [
    lambda F: F.acos("d"), lambda F: F.bround("d"), lambda F: F.bround("d", 1),
    lambda F: F.hypot("d", 3.0), lambda F: F.shiftleft("i", 2), lambda F: F.bitwise_not("i"),
    lambda F: F.overlay("s", F.lit("X"), 2), lambda F: F.repeat("s", 2),
    lambda F: F.translate("s", "a", "b"), lambda F: F.substring_index("s", "b", 1),
    lambda F: F.decode(F.encode("s", "UTF-8"), "UTF-8"), lambda F: F.initcap("s"),
    lambda F: F.date_trunc("year", "ts"), lambda F: F.trunc("dt", "MM"),
    lambda F: F.unix_timestamp("ts"), lambda F: F.from_unixtime("i"),
    lambda F: F.from_unixtime("i", "yyyy"), lambda F: F.to_unix_timestamp("ts"),
    lambda F: F.try_add("i", "i"), lambda F: F.try_divide("i", F.lit(0)),
    lambda F: F.typeof("d"), lambda F: F.hash("d", "i", "s"), lambda F: F.xxhash64("s"),
    lambda F: F.md5("s"), lambda F: F.sha2("s", 256), lambda F: F.crc32("s"),
    lambda F: F.rand(3), lambda F: F.randn(3), lambda F: F.monotonically_increasing_id(),
    lambda F: F.spark_partition_id(), lambda F: F.months_between("ts", "dt"),
    lambda F: F.next_day("dt", "Mon"), lambda F: F.make_date("i", "i", "i"),
    lambda F: F.datepart(F.lit("year"), "ts"), lambda F: F.negate("i"),
    lambda F: F.get_json_object(F.lit('{"a": 1}'), "$.a"), lambda F: F.levenshtein("s", F.lit("x")),
    lambda F: F.split_part("s", F.lit("b"), F.lit(1)), lambda F: F.format_number("d", 2),
    lambda F: F.make_dt_interval("i"), lambda F: F.nullifzero("i"), lambda F: F.hex("i"),
]
SOURCE = ("SELECT 1.5D AS d, 2 AS i, 'ab' AS s, TIMESTAMP'2020-03-04 05:06:07' AS ts, "
          "DATE'2020-03-04' AS dt")


@pytest.mark.spark
def test_dataframe_calls_match_pyspark() -> None:
    """The PySpark signatures: the same calls give Spark's column names and values (this
    folder's ``spark`` fixture is an Ember session, so the oracle comes from get_spark)."""
    expected_df = get_spark().sql(SOURCE).select(*[c(P) for c in CALLS])
    actual_df = new_session().sql(SOURCE).select(*[c(E) for c in CALLS])
    assert actual_df.columns == expected_df.columns
    assert norm_value(tuple(actual_df.collect()[0])) == norm_value(tuple(expected_df.collect()[0]))
