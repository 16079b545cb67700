"""The base of logical and physical plan nodes: Spark's ``QueryPlan``, for what both share --
the canonical form.

``plan.canonicalized`` (Spark's ``QueryPlan.canonicalized`` / ``doCanonicalize``) is the plan
with everything that does not change its result erased, so two plans computing the same rows
(in the same partitions, for physical plans) compare equal; ``same_result`` / ``semantic_hash``
are Spark's ``sameResult`` / ``semanticHash`` over it.  Per node (Spark's
``normalizeExpressions``):

- the children are replaced by their canonical forms;
- an attribute read from the node's inputs (the children's output; a leaf's own output) gets
  the id ``-1 - i``, ``i`` its ordinal in the inputs, so ids chosen by the analyzer do not
  matter;
- an expression defining a new attribute at the top of a field (an ``Alias``, or an output
  attribute not read from an input) gets the next id of a per-node counter, ``-2**40 - k``;
- then every expression takes its canonical form (``Expression.canonicalized``: names,
  qualifiers and nullability erased, commutative operands ordered);
- fields that take no part in equality (plan ids, cosmetic marks) are left as they are.

Both kinds of id are negative, so they never meet a real expression id.  A node class with
other inputs or fields to normalize overrides :meth:`QueryPlan.canonical_inputs` /
:meth:`QueryPlan.canonicalize_field` (a file scan numbers its columns by the relation's full
column list), or :meth:`QueryPlan.do_canonicalize` altogether (a reused exchange is its
exchange).  The canonical form is computed once and kept on the node (nodes are immutable).
"""

from __future__ import annotations

from typing import Any, Self

from ember.expressions.base import Alias, AttributeReference, Expression
from ember.trees import TreeNode, compare_field_names

__all__ = ["QueryPlan", "INPUT_ID", "NEW_ID"]

#: Normalized ids: an input attribute at ordinal ``i`` is ``INPUT_ID - i``; the ``k``-th
#: attribute a node defines is ``NEW_ID - k`` (both negative: real expression ids are positive).
INPUT_ID = -1
NEW_ID = -(1 << 40)


class QueryPlan(TreeNode):
    """Base of :class:`~ember.plans.logical.nodes.LogicalPlan` and
    :class:`~ember.physical.nodes.SparkPlan` (see the module docstring)."""

    # _canon: ``canonicalized``, computed on first use.
    __slots__ = ("_canon",)

    @property
    def output(self) -> tuple[AttributeReference, ...]:
        raise NotImplementedError

    def own_pattern_bits(self) -> int:
        """A plan's tree-pattern bits (``TreeNode.tree_bits``) take in its expressions', as
        Spark's ``QueryPlan`` does (not the plans of subquery expressions)."""
        bits = 0
        for e in self.expressions():
            bits |= e.tree_bits
        return bits

    @property
    def canonicalized(self) -> Self:
        """This plan in canonical form (Spark's ``QueryPlan.canonicalized``)."""
        try:
            return self._canon  # type: ignore[no-any-return]
        except AttributeError:
            pass
        c = self.do_canonicalize()
        object.__setattr__(self, "_canon", c)
        return c

    def same_result(self, other: "QueryPlan") -> bool:
        """Spark's ``sameResult``: the two plans compute the same rows."""
        return self is other or self.canonicalized == other.canonicalized

    def semantic_hash(self) -> int:
        """Spark's ``semanticHash``: equal for plans with the same result."""
        return hash(self.canonicalized)

    # -- how a node canonicalizes -----------------------------------------------------------
    def canonical_inputs(self) -> tuple[AttributeReference, ...]:
        """The attributes this node's expressions are numbered against: the children's output
        (a leaf: its own output)."""
        kids = self.children
        if not kids:
            return self.output
        return tuple(a for c in kids for a in c.output)

    def canonicalize_field(self, value: Any, normalize: Any) -> Any:
        """The canonical form of a field value that is neither an expression nor a tuple
        (``normalize`` puts an expression of this node in canonical form): a plan's canonical
        form, anything else unchanged."""
        if isinstance(value, QueryPlan):
            return value.canonicalized
        return value

    def do_canonicalize(self) -> Self:
        """Spark's ``doCanonicalize``: this node with canonical children and normalized
        expressions (see the module docstring)."""
        index: dict[int, int] = {}
        for i, a in enumerate(self.canonical_inputs()):
            index.setdefault(a.id, i)
        defined = [0]

        def renumber(x: Expression) -> Expression | None:
            if isinstance(x, AttributeReference):
                i = index.get(x.id)
                return x if i is None else x.copy(id=INPUT_ID - i)
            return None

        def normalize(e: Expression) -> Expression:
            return e.transform_up(renumber).canonicalized

        def top(e: Expression) -> Expression:
            if isinstance(e, Alias):
                k = defined[0]
                defined[0] += 1
                return normalize(e.copy(id=NEW_ID - k))
            if isinstance(e, AttributeReference) and e.id not in index:
                k = defined[0]
                defined[0] += 1
                return AttributeReference("none", e.dtype, True, NEW_ID - k)
            return normalize(e)

        def value(v: Any) -> Any:
            if isinstance(v, Expression):
                return top(v)
            if isinstance(v, tuple):
                return tuple(value(x) for x in v)
            return self.canonicalize_field(v, normalize)

        return self.copy(**{n: value(getattr(self, n)) for n in compare_field_names(type(self))})
