"""The planning fast paths: per-node caches (children, expressions, resolved, output_set,
deterministic, references), memoized transforms for pure rewrites (``ember.trees``), the
analyzer's per-run memo, and that the optimized plans are those of the plain transforms."""

from __future__ import annotations

import pytest

import ember
from ember import types as T
from ember.analysis.rules._util import transform_up_in_run
from ember.expressions.arithmetic import Add
from ember.expressions.base import AttributeReference, Literal, UnresolvedAttribute, is_resolved
from ember.expressions.predicates import And, EqualTo, GreaterThan, IsNotNull, Not
from ember.optimizer.optimizer import Optimizer
from ember.optimizer.rules.boolean_simplification import BooleanSimplification, simplify_boolean
from ember.optimizer.rules.constant_folding import ConstantFolding, fold_expression
from ember.optimizer.rules.null_propagation import NullPropagation, null_propagation_expr
from ember.plans.logical.dsl import attr, relation
from ember.plans.logical.nodes import Filter, Project
from ember.trees import rewrite_bit, transform_down_memo, transform_up_memo


def _a(name: str, nullable: bool = True) -> AttributeReference:
    return AttributeReference(name, T.INT, nullable)


def _lit(v) -> Literal:
    return Literal(v, T.INT)


# ---------------------------------------------------------------------------------------------
# Per-node caches


def test_children_cached_and_not_inherited_by_copies():
    a, b = _a("a"), _a("b")
    e = Add(a, b)
    assert e.children is e.children  # cached tuple
    assert e.children == (a, b)
    e2 = e.with_children((b, a))
    assert e2.children == (b, a)
    e3 = e.copy(left=_lit(1))
    assert e3.children == (_lit(1), b)
    assert e.with_children((a, b)) is e


def test_copy_and_with_children_equal_plain_dataclass_replace():
    import dataclasses

    a = _a("a")
    e = EqualTo(a, _lit(1))
    assert e.copy(right=_lit(2)) == dataclasses.replace(e, right=_lit(2))
    with pytest.raises(TypeError):
        e.copy(no_such_field=1)


def test_resolved_deterministic_references_cached_per_node():
    a, b = _a("a"), _a("b")
    e = And(GreaterThan(a, _lit(1)), EqualTo(b, _lit(2)))
    assert is_resolved(e) is True and is_resolved(e) is True
    assert e.deterministic is True
    assert e.references == frozenset({a.id, b.id})
    assert e.references is e.references
    u = And(GreaterThan(UnresolvedAttribute(("x",)), _lit(1)), EqualTo(b, _lit(2)))
    assert is_resolved(u) is False
    # rebuilt with a resolved child: a new node, its own answer
    assert is_resolved(u.copy(left=GreaterThan(a, _lit(1)))) is True


def test_plan_caches():
    t = relation("t", a="int", b="int")
    p = Filter(GreaterThan(attr(t, "a"), _lit(1)), t)
    assert p.expressions() is p.expressions()
    assert p.output_set == frozenset(x.id for x in t.output)
    assert p.output_set is p.output_set
    assert p.resolved and p.child_resolved
    unresolved = Filter(GreaterThan(UnresolvedAttribute(("zz",)), _lit(1)), t)
    assert not unresolved.resolved
    proj = Project((attr(t, "a"),), unresolved)
    assert not proj.resolved and not proj.child_resolved


def test_map_expressions_identity_and_nested_tuples():
    t = relation("t", a="int", b="int")
    a, b = attr(t, "a"), attr(t, "b")
    p = Project((a, b), t)
    assert p.map_expressions(lambda e: e) is p
    q = p.map_expressions(lambda e: b if e is a else e)
    assert q.project_list == (b, b) and q is not p
    q2 = p.map_expressions(lambda e: a if e is b else e)
    assert q2.project_list == (a, a)


# ---------------------------------------------------------------------------------------------
# Memoized transforms


def test_transform_up_memo_same_result_and_skips_unchanged_subtrees():
    bit = rewrite_bit("test.double_literals")
    calls: list[object] = []

    def rule(x):
        calls.append(x)
        if isinstance(x, Literal) and x.value == 1:
            return _lit(2)
        return None

    a = _a("a")
    unchanged = GreaterThan(a, _lit(5))
    e = And(unchanged, EqualTo(a, _lit(1)))
    plain = e.transform_up(rule)
    calls.clear()
    memo = transform_up_memo(e, rule, bit)
    assert memo == plain and memo is not e
    first = len(calls)
    # the second run over the same (partly new) tree does not visit the unchanged subtree
    calls.clear()
    again = transform_up_memo(And(unchanged, EqualTo(a, _lit(3))), rule, bit)
    assert unchanged not in [c for c in calls if c is unchanged]
    assert again == And(unchanged, EqualTo(a, _lit(3)))
    assert len(calls) < first
    # a fixed point is returned at once
    calls.clear()
    assert transform_up_memo(unchanged, rule, bit) is unchanged
    assert calls == []


def test_transform_down_memo_same_result():
    bit = rewrite_bit("test.fold_down")

    def rule(x):
        if isinstance(x, Add) and all(isinstance(c, Literal) for c in x.children):
            return _lit(x.left.value + x.right.value)
        return None

    a = _a("a")
    e = And(GreaterThan(a, Add(_lit(1), _lit(2))), EqualTo(a, _a("b")))
    assert transform_down_memo(e, rule, bit) == e.transform_down(rule)
    assert transform_down_memo(e.right, rule, bit) is e.right


def test_bits_are_independent():
    b1, b2 = rewrite_bit("test.one"), rewrite_bit("test.two")
    assert b1 != b2 and rewrite_bit("test.one") == b1
    e = EqualTo(_a("a"), _lit(1))
    assert transform_up_memo(e, lambda x: None, b1) is e
    # fixed for b1 says nothing about b2
    out = transform_up_memo(e, lambda x: _lit(7) if isinstance(x, Literal) else None, b2)
    assert out == EqualTo(e.left, _lit(7))


def test_expression_rules_match_plain_transforms():
    a, n = _a("a"), _a("n", nullable=False)
    exprs = [
        And(Literal(True, T.BOOLEAN), GreaterThan(a, _lit(1))),
        Not(Not(GreaterThan(a, Add(_lit(1), _lit(2))))),
        IsNotNull(n),
        And(GreaterThan(a, Literal(None, T.INT)), EqualTo(a, a)),
    ]
    from ember.optimizer.rules.boolean_simplification import _simplify
    from ember.optimizer.rules.constant_folding import _fold
    from ember.optimizer.rules.null_propagation import _propagate

    for e in exprs:
        for _ in range(2):  # the second call takes the memoized path
            assert simplify_boolean(e) == e.transform_up(_simplify)
            assert null_propagation_expr(e) == e.transform_up(_propagate)
            assert fold_expression(e) == e.transform_down(_fold)


def test_rules_return_self_when_nothing_applies_twice():
    t = relation("t", a="int", b="int")
    p = Filter(GreaterThan(attr(t, "a"), _lit(1)), t)
    for rule in (BooleanSimplification(), NullPropagation(), ConstantFolding()):
        assert rule(p) is p
        assert rule(p) is p


# ---------------------------------------------------------------------------------------------
# Analyzer per-run memo


class _Ctx:
    def __init__(self, memo):
        self.run_memo = memo


def test_transform_up_in_run_without_memo_is_plain():
    t = relation("t", a="int")
    p = Filter(GreaterThan(attr(t, "a"), _lit(1)), t)
    seen = []
    out = transform_up_in_run(p, lambda n: seen.append(n) or n, _Ctx(None), "X")
    assert out is p and len(seen) == 2


def test_transform_up_in_run_skips_within_one_run_only():
    t = relation("t", a="int")
    p = Filter(GreaterThan(attr(t, "a"), _lit(1)), t)
    seen: list[object] = []

    def rule(n):
        seen.append(n)
        return n

    ctx = _Ctx({})
    assert transform_up_in_run(p, rule, ctx, "X") is p
    assert len(seen) == 2
    seen.clear()
    assert transform_up_in_run(p, rule, ctx, "X") is p
    assert seen == []  # same run: skipped
    assert transform_up_in_run(p, rule, _Ctx({}), "X") is p
    assert len(seen) == 2  # a new run walks again
    seen.clear()
    transform_up_in_run(p, rule, ctx, "Y")  # another rule: its own memo
    assert len(seen) == 2


def test_analyzer_memo_dropped_after_analysis():
    s = ember.Session()
    df = s.sql("SELECT a + 1 AS b FROM VALUES (1), (2) AS t(a) WHERE a > 0")
    assert sorted(r[0] for r in df.collect()) == [2, 3]


# ---------------------------------------------------------------------------------------------
# Same optimized plans as the plain transforms


def test_optimizer_plan_unchanged_by_memo(monkeypatch):
    import ember.trees as trees

    s = ember.Session()
    sql = ("SELECT k, sum(v) FROM VALUES (1, 2), (1, NULL), (2, 3) AS t(k, v) "
           "WHERE (k > 0 AND true) OR (k > 0 AND v IS NOT NULL) GROUP BY k")
    qe = s.sql(sql)._qe
    fast = qe.optimized.tree_string()

    def plain_up(node, rule, bit):
        return node.transform_up(rule)

    def plain_down(node, rule, bit):
        return node.transform_down(rule)

    import ember.optimizer.rules.boolean_simplification as bs
    import ember.optimizer.rules.column_pruning as cp
    import ember.optimizer.rules.constant_folding as cf
    import ember.optimizer.rules.null_propagation as np_
    import ember.optimizer.rules.push_down_predicates as pdp
    import ember.optimizer.rules.rewrite_subquery as rs

    for mod in (bs, cp, cf, np_, pdp, rs, trees):
        if hasattr(mod, "transform_up_memo"):
            monkeypatch.setattr(mod, "transform_up_memo", plain_up)
        if hasattr(mod, "transform_down_memo"):
            monkeypatch.setattr(mod, "transform_down_memo", plain_down)
    slow = Optimizer().execute(qe.analyzed, s.sql_conf).tree_string()
    assert fast == slow
    assert sorted(tuple(r) for r in s.sql(sql).collect()) == [(1, 2), (2, 3)]
