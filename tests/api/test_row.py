import pickle

import pytest

from ember import Row
from ember.row import make_row


def test_row_access_like_pyspark():
    r = Row(a=1, b="x")
    assert (r.a, r["b"], r[0], r[1:]) == (1, "x", 1, ("x",))
    assert r == (1, "x")
    assert repr(r) == "Row(a=1, b='x')"
    assert r.asDict() == {"a": 1, "b": "x"}
    assert "a" in r and "z" not in r
    with pytest.raises(AttributeError):
        r.z
    with pytest.raises(KeyError):
        r["z"]


def test_row_class_and_nested_as_dict():
    Point = Row("x", "y")
    p = Point(1, 2)
    assert p.x == 1 and p.asDict() == {"x": 1, "y": 2}
    assert Row(a=1, b=Row(c=2)).asDict(recursive=True) == {"a": 1, "b": {"c": 2}}


def test_duplicate_names_and_pickle():
    r = make_row((1, 2), ("a", "a"))
    assert r.a == 1 and r[1] == 2
    assert pickle.loads(pickle.dumps(Row(a=1))) == Row(a=1)
    assert pickle.loads(pickle.dumps(Row(a=1))).a == 1


def test_row_is_read_only():
    with pytest.raises(RuntimeError):
        Row(a=1).a = 2
