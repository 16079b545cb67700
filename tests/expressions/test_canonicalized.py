"""The one canonical form: ``Expression.canonicalized`` / ``semantic_equals`` / ``semantic_hash``
(Spark's) and ``QueryPlan.canonicalized`` / ``same_result`` on logical and physical plans."""

from __future__ import annotations

from ember import types as T
from ember.expressions.arithmetic import Add, Multiply, Subtract
from ember.expressions.base import Alias, AttributeReference, Literal
from ember.expressions.predicates import (
    And,
    EqualNullSafe,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    LessThan,
    LessThanOrEqual,
    Not,
    Or,
)
from ember.physical.nodes import FilterExec, LocalTableScanExec, ProjectExec
from ember.plans.logical.dsl import attr, relation
from ember.plans.logical.nodes import Filter, Project

from ..optimizer.rules._pdp_util import NonDet


def _a(name: str, nullable: bool = True) -> AttributeReference:
    return AttributeReference(name, T.LONG, nullable)


def _lit(v: int) -> Literal:
    return Literal(v, T.LONG)


# -- expressions --------------------------------------------------------------------------------


def test_commutative_operands_are_ordered():
    a, b = _a("a"), _a("b")
    for cls in (Add, Multiply, EqualTo, EqualNullSafe, And, Or):
        x, y = (GreaterThan(a, b), LessThan(a, b)) if cls in (And, Or) else (a, b)
        assert cls(x, y).canonicalized == cls(y, x).canonicalized, cls
        assert cls(x, y).semantic_equals(cls(y, x))
        assert cls(x, y).semantic_hash() == cls(y, x).semantic_hash()
    # a non-commutative operator keeps its operand order
    assert not Subtract(a, b).semantic_equals(Subtract(b, a))


def test_and_or_chains_ordered_whatever_their_shape():
    p, q, r = GreaterThan(_a("a"), _lit(1)), EqualTo(_a("b"), _lit(2)), LessThan(_a("c"), _lit(3))
    assert And(And(p, q), r).semantic_equals(And(r, And(q, p)))
    assert Or(p, Or(q, r)).semantic_equals(Or(Or(r, p), q))
    assert not And(p, q).semantic_equals(Or(p, q))


def test_comparisons_flip_and_not_of_a_comparison_is_the_opposite_comparison():
    a, b = _a("a"), _a("b")
    assert GreaterThan(a, b).semantic_equals(LessThan(b, a))
    assert GreaterThanOrEqual(b, a).semantic_equals(LessThanOrEqual(a, b))
    assert Not(GreaterThan(a, b)).semantic_equals(LessThanOrEqual(a, b))
    assert Not(LessThan(a, b)).semantic_equals(LessThanOrEqual(b, a))
    assert not GreaterThan(a, b).semantic_equals(GreaterThan(b, a))


def test_attribute_names_qualifiers_nullability_erased_id_and_type_kept():
    a = _a("a")
    renamed = a.copy(attr_name="x", is_nullable=False, attr_qualifier=("t",))
    assert a.semantic_equals(renamed)
    assert Add(a, _lit(1)).semantic_equals(Add(_lit(1), renamed))
    assert not a.semantic_equals(_a("a"))  # another id: another column
    assert not a.semantic_equals(a.copy(dtype=T.INT))


def test_alias_name_is_cosmetic_its_id_is_not():
    a = _a("a")
    x = Alias(Add(a, _lit(1)), "x")
    assert x.semantic_equals(x.copy(alias_name="y", child=Add(_lit(1), a)))
    assert not x.semantic_equals(Alias(Add(a, _lit(1)), "x"))  # a fresh id
    assert x.canonicalized.name == "none"


def test_non_deterministic_expressions_never_semantically_equal():
    n = NonDet(1)
    assert not n.semantic_equals(n)
    assert not And(n, GreaterThan(_a("a"), _lit(1))).semantic_equals(
        And(n, GreaterThan(_a("a"), _lit(1))))
    # their chains keep the written order (evaluating them in another order could differ)
    p = GreaterThan(_a("a"), _lit(1))
    assert And(n, p).canonicalized != And(p, n).canonicalized
    assert And(n, p).canonicalized.left == n


def test_canonical_form_cached_on_the_node_and_idempotent():
    a, b = _a("a"), _a("b")
    e = And(EqualTo(b, a), Not(GreaterThan(b, _lit(3))))
    c = e.canonicalized
    assert e.canonicalized is c
    assert c.canonicalized is c
    assert e.copy(left=EqualTo(a, b)).canonicalized == c


# -- plans --------------------------------------------------------------------------------------


def _filter_project(t):
    a = attr(t, "a")
    return Project((Alias(Add(a, _lit(1)), "y"),), Filter(GreaterThan(a, _lit(5)), t))


def test_logical_plans_same_result_up_to_ids_and_names():
    t1 = relation("t", a="bigint", b="bigint")
    t2 = relation("u", a="bigint", b="bigint")  # the same shape, other ids and names
    p, q = _filter_project(t1), _filter_project(t2)
    assert p.same_result(q)
    assert p.semantic_hash() == q.semantic_hash()
    assert p.canonicalized is p.canonicalized
    other = Project(p.project_list, Filter(GreaterThan(attr(t1, "a"), _lit(6)), t1))
    assert not p.same_result(other)
    # reading the other column is another result
    b = attr(t1, "b")
    assert not p.same_result(Project((Alias(Add(b, _lit(1)), "y"),),
                                     Filter(GreaterThan(b, _lit(5)), t1)))


def test_physical_plans_number_attributes_by_position_in_the_child_output():
    def plan(names):
        out = tuple(AttributeReference(n, T.LONG) for n in names)
        scan = LocalTableScanExec(out, None)
        return ProjectExec((Alias(Multiply(out[1], out[0]), "z"),),
                           FilterExec(LessThan(_lit(0), out[0]), scan))

    assert plan("ab").same_result(plan("xy"))
    c = plan("ab").canonicalized
    assert c.project_list[0].child.references <= {-1, -2}  # ordinals in the child output
