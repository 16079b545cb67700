"""ResolveGenerate and ExtractGenerator: generators become ``Generate`` nodes (Spark's rules of
the same names).

ResolveGenerate (``LATERAL VIEW [OUTER] explode(a) t AS x``, built by the parser as a
``Generate`` without output)::

    Generate explode('a), false, [] (names [x], qualifier t)
    -> Generate explode(a#1), false, [x#5]           (x#5 qualified by t)

ExtractGenerator (a generator in a select list)::

    Project [id#0, unresolvedalias(explode(a#1))]
    -> Project [id#0, col#5]
       +- Generate explode(a#1), false, [col#5]

The generated columns are named by the user (``AS x``, ``AS (k, v)``, the LATERAL VIEW's column
list) or by the generator (``col``; ``key``, ``value``; ``pos``; struct fields; ``col0`` ...);
``explode_outer`` & co and ``LATERAL VIEW OUTER`` make an outer Generate, whose generated columns
are nullable.  Several generators in one select list nest (Spark 4: the product of their rows per input row).
Errors, as Spark's: a generator inside an expression
(``UNSUPPORTED_GENERATOR.NESTED_IN_EXPRESSIONS``), a name count that does not match
(``UDTF_ALIAS_NUMBER_MISMATCH``), a LATERAL VIEW over a non-generator
(``UNSUPPORTED_GENERATOR.NOT_GENERATOR``).
"""

from __future__ import annotations

from ember.analysis.resolution import has_unresolved
from ember.errors import AnalysisError
from ember.expressions.base import Alias, AttributeReference, Expression, UnresolvedAlias
from ember.expressions.generators import Generator, MultiAlias
from ember.plans.logical.nodes import Generate, LogicalPlan, Project

__all__ = ["resolve_generate", "extract_generator"]


def _output(gen: Generator, names: tuple[str, ...], outer: bool,
            qualifier: tuple[str, ...]) -> tuple[AttributeReference, ...]:
    schema = gen.element_schema
    if names and len(names) != len(schema):
        raise AnalysisError(
            f"The number of aliases supplied in the AS clause does not match the number of "
            f"columns output by the UDTF. Expected {len(schema)} aliases, but got "
            f"{', '.join(names)}.", error_class="UDTF_ALIAS_NUMBER_MISMATCH",
            parameters={"aliasesSize": str(len(schema)), "aliasesNames": ", ".join(names)})
    return tuple(AttributeReference(n, f.data_type, f.nullable or outer, attr_qualifier=qualifier)
                 for n, f in zip(names or tuple(f.name for f in schema), schema))


def resolve_generate(plan: LogicalPlan, ctx) -> LogicalPlan:
    """A LATERAL VIEW's ``Generate`` gets its output once its generator is resolved."""

    def rule(p: LogicalPlan) -> LogicalPlan:
        if not isinstance(p, Generate) or p.generator_output or has_unresolved(p.generator) \
                or not p.child.resolved:
            return p
        g = p.generator
        if not isinstance(g, Generator):
            raise AnalysisError(
                f"The generator is not supported: {g.sql()} is expected to be a generator. "
                "However, its class is not a generator.",
                error_class="UNSUPPORTED_GENERATOR.NOT_GENERATOR",
                parameters={"functionName": f"`{getattr(g, 'fn_name', g.node_name)}`",
                            "classCanonicalName": type(g).__name__})
        if g.check_input_types() is not None:
            return p  # CheckAnalysis reports the type error
        outer = p.outer or g.is_outer
        return p.copy(outer=outer, generator_output=_output(g, p.names, outer, p.qualifier))

    return plan.transform_up(rule)


def _generator_of(item: Expression) -> tuple[Generator, tuple[str, ...]] | None:
    """The generator a select item is (under its alias) and the names given to it."""
    match item:
        case MultiAlias(child=Generator() as g, names=names):
            return g, names
        case Alias(child=Generator() as g, alias_name=name):
            return g, (name,)
        case UnresolvedAlias(child=Generator() as g):
            return g, ()
        case Generator() as g:
            return g, ()
    return None


def _nested_generator(item: Expression) -> Expression | None:
    top = item.child if isinstance(item, (Alias, UnresolvedAlias, MultiAlias)) else item
    if isinstance(top, Generator):
        return None
    return top.find(lambda x: isinstance(x, Generator))


def _check_outside_select(p: LogicalPlan) -> None:
    for e in p.expressions():
        g = e.find(lambda x: isinstance(x, Generator))
        if g is not None and not has_unresolved(g):
            raise AnalysisError(
                f"The generator is not supported: outside the SELECT clause, found: "
                f"{p.simple_string()}.", error_class="UNSUPPORTED_GENERATOR.OUTSIDE_SELECT",
                parameters={"plan": p.simple_string()})


def extract_generator(plan: LogicalPlan, ctx) -> LogicalPlan:
    """A select list's generator becomes a ``Generate`` under the Project (see module doc)."""

    def rule(p: LogicalPlan) -> LogicalPlan:
        if not isinstance(p, (Project, Generate)):
            _check_outside_select(p)
            return p
        if not isinstance(p, Project) or not p.child.resolved:
            return p
        found = [(i, _generator_of(e)) for i, e in enumerate(p.project_list)]
        gens = [(i, g) for i, g in found if g is not None]
        for e in p.project_list:
            inner = _nested_generator(e)
            if inner is not None:
                top = e.child if isinstance(e, (Alias, UnresolvedAlias, MultiAlias)) else e
                shown = f'"{top.sql()}"'
                raise AnalysisError(
                    f"The generator is not supported: nested in expressions {shown}.",
                    error_class="UNSUPPORTED_GENERATOR.NESTED_IN_EXPRESSIONS",
                    parameters={"expression": shown})
        if not gens or any(has_unresolved(g) or g.check_input_types() is not None
                           for _, (g, _) in gens):
            return p
        # several generators nest, the first innermost (Spark 4: each input row yields the
        # product of their rows)
        by_index = dict(gens)
        child = p.child
        new_items: list[Expression] = []
        for i, e in enumerate(p.project_list):
            if i not in by_index:
                new_items.append(e)
                continue
            g, names = by_index[i]
            out = _output(g, names, g.is_outer, ())
            child = Generate(g, g.is_outer, (), names, out, child)
            new_items.extend(out)
        return Project(tuple(new_items), child)

    return plan.transform_up(rule)
