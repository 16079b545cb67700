"""Ember's DataFrame, Column, GroupedData, DataFrameReader and Session against PySpark 4.3's
classes: every public PySpark method is either there or listed, with its reason, in
:data:`ember.pyspark_api.MISSING`, and a listed one raises ``UNSUPPORTED_FEATURE``."""

from __future__ import annotations

import pytest

import ember
from ember.column import Column
from ember.dataframe import DataFrame, GroupedData
from ember.errors import UnsupportedError
from ember.pyspark_api import MISSING
from ember.readers import DataFrameReader

pyspark_sql = pytest.importorskip("pyspark.sql")


def _public(obj: object) -> set[str]:
    return {n for n in dir(obj) if not n.startswith("_")}


def _pairs(session: ember.Session) -> dict[str, tuple[set[str], object]]:
    df = session.createDataFrame([(1, "x")], "a int, b string")
    return {
        "DataFrame": (_public(pyspark_sql.DataFrame), df),
        "Column": (_public(pyspark_sql.Column), df.a),
        "GroupedData": (_public(pyspark_sql.GroupedData), df.groupBy("a")),
        "DataFrameReader": (_public(pyspark_sql.DataFrameReader), session.read),
        "SparkSession": (_public(pyspark_sql.SparkSession), session),
    }


_CLASSES = {"DataFrame": DataFrame, "Column": Column, "GroupedData": GroupedData,
            "DataFrameReader": DataFrameReader, "SparkSession": ember.Session}


def test_every_pyspark_method_is_there_or_listed_with_its_reason():
    session = ember.Session()
    report = []
    for owner, (names, obj) in _pairs(session).items():
        have = _public(_CLASSES[owner])
        if owner == "SparkSession":  # and its instance attributes (conf, catalog)
            have |= set(vars(obj))
        ours = names & have
        missing = names - ours
        listed = set(MISSING.get(owner, {}))
        assert missing == listed, (
            f"{owner}: not listed in ember.pyspark_api.MISSING: {sorted(missing - listed)}; "
            f"listed but Ember has them now (remove from MISSING): {sorted(listed - missing)}")
        assert all(MISSING[owner][n] for n in listed)
        report.append(f"{owner}: {len(ours)}/{len(names)}")
    print("; ".join(report))


def test_a_missing_method_raises_unsupported_feature_not_attribute_error():
    session = ember.Session()
    for owner, (_, obj) in _pairs(session).items():
        for name in MISSING.get(owner, {}):
            with pytest.raises(UnsupportedError) as e:
                getattr(obj, name)
            assert e.value.error_class == "UNSUPPORTED_FEATURE.PYSPARK_METHOD"
            assert f"{owner}.{name}" in str(e.value)
    # a misspelled name stays PySpark's AttributeError (hasattr and getattr defaults rely on it)
    df = session.createDataFrame([(1,)], "a int")
    assert not hasattr(df, "no_such_method")
    # the UNSUPPORTED_FEATURE error is also an AttributeError: hasattr and getattr defaults work
    assert not hasattr(df, "rdd") and getattr(session, "sparkContext", None) is None
    # (a Column's unknown attribute is a struct field, ``col.field``, as in PySpark)
    assert str(df.a.no_such_field) == str(df.a["no_such_field"])
    assert getattr(session, "no_such_method", None) is None
