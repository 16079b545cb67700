"""CheckAnalysis: resolved attributes the operator's input does not produce (Spark's
``MISSING_ATTRIBUTES``), as the DataFrame API can build them (``df1.where(df2.c > 1)``)."""

import pytest

from ember import types as T
from ember.errors import AnalysisError
from ember.expressions.base import AttributeReference, Literal
from ember.expressions.predicates import EqualTo
from ember.plans.logical.nodes import Filter, Project

from tests.analysis.dsl import local


def test_attribute_of_another_relation(analyzer):
    rel = local(id=(T.INT, [1]))
    stray = AttributeReference("loc", T.INT)
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(Filter(EqualTo(stray, Literal(1, T.INT)), rel))
    assert e.value.error_class == "MISSING_ATTRIBUTES.RESOLVED_ATTRIBUTE_MISSING_FROM_INPUT"


def test_same_name_other_id(analyzer):
    rel = local(id=(T.INT, [1]))
    with pytest.raises(AnalysisError) as e:
        analyzer.analyze(Project((AttributeReference("id", T.INT),), rel))
    assert e.value.error_class == "MISSING_ATTRIBUTES.RESOLVED_ATTRIBUTE_APPEAR_IN_OPERATION"


def test_own_attributes_are_fine(analyzer):
    rel = local(id=(T.INT, [1]))
    plan = analyzer.analyze(Filter(EqualTo(rel.output[0], Literal(1, T.INT)), rel))
    assert plan.output == rel.output
