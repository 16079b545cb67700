"""Fixtures for analyzer tests: a catalog with small views built from LocalRelations."""

from __future__ import annotations

import pyarrow as pa
import pytest

from ember import types as T
from ember.analysis.analyzer import Analyzer
from ember.analysis.catalog import Catalog
from ember.conf import SQLConf
from ember.expressions.base import AttributeReference
from ember.plans.logical.nodes import LocalRelation


from tests.analysis.dsl import local


@pytest.fixture
def catalog() -> Catalog:
    c = Catalog()
    c.create_temp_view("nt1", local(k=(T.STRING, ["one", "two", "three"]), v1=(T.INT, [1, 2, 3])))
    c.create_temp_view("nt2", local(k=(T.STRING, ["one", "two", "one"]), v2=(T.INT, [1, 22, 5])))
    c.create_temp_view("testData", local(a=(T.INT, [1, 1, None]), b=(T.INT, [1, 2, None])))
    return c


@pytest.fixture
def analyzer(catalog) -> Analyzer:
    return Analyzer(catalog, SQLConf())
