import pytest

import ember


@pytest.fixture
def spark():
    s = ember.Session()
    yield s
    s.stop()


@pytest.fixture
def kv(spark):
    a = spark.createDataFrame([(1, "x"), (2, "y")], "k int, v string")
    b = spark.createDataFrame([(1, "p"), (3, "q")], "k int, w string")
    return a, b
