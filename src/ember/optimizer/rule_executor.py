"""Rules and the rule executor: Catalyst's ``Rule`` / ``RuleExecutor`` for logical plans.

A :class:`Rule` is an object with a ``rule_name`` (Spark's simple class name, e.g.
``"ReorderJoin"``) and ``apply(plan, conf) -> plan``.  A rule returns its input *itself* when it
does not apply, so the executor can tell "no change" by identity.

A :class:`Batch` is a named list of rules run :data:`ONCE` or to a :class:`FixedPoint`: the batch
is re-run until an iteration leaves the plan unchanged (the same object, or an equal tree) or the
iteration limit is reached.  After every rule the executor checks that the plan still produces the
same output schema (column names and data types, in order; nullability may change, as
when an outer join becomes inner) and raises ``InternalError`` naming the
rule otherwise; an exception escaping a rule that is not an :class:`~ember.errors.EmberError` is
reported the same way.

A rule whose ``patterns`` names node classes is skipped on a plan holding none of them (Spark's
rule pruning by tree patterns, see ``ember.trees``).

Rules listed in ``spark.sql.optimizer.excludedRules`` (simple or fully qualified names,
comma-separated) are skipped unless the rule is marked ``excludable = False`` (Spark's
"non-excludable" rules that correctness depends on).

Every run records per-rule wall time, invocations and effective invocations in a
:class:`RuleMetrics`, and, when a :class:`PlanChangeLog` is passed, every effective rule
application with the plan before and after (what ``EXPLAIN`` mode ``rules`` prints).

>>> class Noop(Rule):
...     rule_name = "Noop"
...     def apply(self, plan, conf):
...         return plan
>>> from ember.plans.logical.nodes import OneRowRelation
>>> ex = RuleExecutor([Batch("B", FixedPoint(10), (Noop(),))])
>>> ex.execute(OneRowRelation()).simple_string()
'OneRowRelation'
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from ember.errors import EmberError, InternalError
from ember.conf import EXCLUDED_RULES, SQLConf

if TYPE_CHECKING:  # pragma: no cover
    from ember.plans.logical.nodes import LogicalPlan

__all__ = [
    "Rule",
    "Once",
    "ONCE",
    "FixedPoint",
    "Batch",
    "RuleExecutor",
    "RuleMetrics",
    "PlanChange",
    "PlanChangeLog",
    "excluded_rule_names",
]


class Rule:
    """A logical-plan rewrite.  Subclasses set ``rule_name`` and implement :meth:`apply`."""

    rule_name: ClassVar[str] = ""
    #: False for rules that correctness depends on (never skipped by ``excludedRules``).
    excludable: ClassVar[bool] = True
    #: The node classes the rule rewrites (Spark's ``transformWithPruning`` condition on tree
    #: patterns): when set, the executor does not run the rule on a plan that holds none of
    #: them anywhere, subquery plans included (``LogicalPlan.contains_anywhere``).
    patterns: ClassVar[tuple[type, ...]] = ()

    def apply(self, plan: "LogicalPlan", conf: "SQLConf") -> "LogicalPlan":  # pragma: no cover
        raise NotImplementedError

    def __call__(self, plan: "LogicalPlan", conf: "SQLConf | None" = None) -> "LogicalPlan":
        """``rule(plan)``: apply with ``conf`` (default configuration when omitted)."""
        if conf is None:
            conf = SQLConf()
        return self.apply(plan, conf)

    def __repr__(self) -> str:
        return self.rule_name or type(self).__name__


@dataclass(frozen=True, slots=True)
class Once:
    """Run the batch's rules one time."""

    max_iterations: int = 1


ONCE = Once()


@dataclass(frozen=True, slots=True)
class FixedPoint:
    """Re-run the batch until the plan stops changing or ``max_iterations`` is reached."""

    max_iterations: int = 100


@dataclass(frozen=True, slots=True)
class Batch:
    """A named group of rules and how often to run it."""

    name: str
    strategy: Once | FixedPoint
    rules: tuple[Rule, ...]


@dataclass(slots=True)
class _RuleStat:
    time_ns: int = 0
    invocations: int = 0
    effective: int = 0


@dataclass(slots=True)
class RuleMetrics:
    """Per-rule time (ns), invocations and effective invocations (plan changed)."""

    stats: dict[str, _RuleStat] = field(default_factory=dict)

    def record(self, name: str, elapsed_ns: int, changed: bool) -> None:
        s = self.stats.get(name)
        if s is None:
            s = self.stats[name] = _RuleStat()
        s.time_ns += elapsed_ns
        s.invocations += 1
        s.effective += int(changed)

    @property
    def total_ns(self) -> int:
        return sum(s.time_ns for s in self.stats.values())

    def report(self) -> str:
        """A table of rules by descending time, as Spark's ``RuleExecutor.dumpTimeSpent``."""
        rows = sorted(self.stats.items(), key=lambda kv: -kv[1].time_ns)
        lines = [f"Total time: {self.total_ns / 1e9:.6f} seconds",
                 f"{'Rule':<45} {'Effective Time / Total Time':>28} "
                 f"{'Effective Runs / Total Runs':>28}"]
        for name, s in rows:
            lines.append(f"{name:<45} {s.time_ns:>28} {f'{s.effective} / {s.invocations}':>28}")
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class PlanChange:
    """One effective rule application."""

    batch: str
    rule: str
    before: "LogicalPlan"
    after: "LogicalPlan"


@dataclass(slots=True)
class PlanChangeLog:
    """Collects every effective rule application (for ``EXPLAIN`` mode ``rules``)."""

    changes: list[PlanChange] = field(default_factory=list)


def excluded_rule_names(conf: "SQLConf") -> frozenset[str]:
    """Simple names of the rules in ``spark.sql.optimizer.excludedRules``."""

    raw = str(conf.get(EXCLUDED_RULES) or "")
    return frozenset(p.strip().rsplit(".", 1)[-1] for p in raw.split(",") if p.strip())


def _same_output(a: "LogicalPlan", b: "LogicalPlan") -> bool:
    oa, ob = a.output, b.output
    return len(oa) == len(ob) and all(
        x.name == y.name and x.data_type == y.data_type for x, y in zip(oa, ob))


def _describe_output(p: "LogicalPlan") -> str:
    return ", ".join(a.simple_string() + ": " + a.data_type.simple_string() for a in p.output)


class RuleExecutor:
    """Runs batches of rules over a plan.

    ``batches`` may be a sequence, or a callable taking the configuration and returning one
    (so batch contents can depend on settings, as Spark's optimizer's do).
    """

    def __init__(self, batches: Sequence[Batch] | None = None) -> None:
        self._batches = tuple(batches or ())

    def batches(self, conf: "SQLConf") -> Sequence[Batch]:
        """The batches to run under ``conf`` (override to make them configuration-dependent)."""
        return self._batches

    def execute(
        self,
        plan: "LogicalPlan",
        conf: "SQLConf | None" = None,
        *,
        metrics: RuleMetrics | None = None,
        changes: PlanChangeLog | None = None,
    ) -> "LogicalPlan":
        """``plan`` after every batch; see the module docstring for the checks made."""
        if conf is None:
            conf = SQLConf()
        excluded = excluded_rule_names(conf)
        for batch in self.batches(conf):
            rules = [r for r in batch.rules if r.excludable is False or r.rule_name not in excluded]
            iteration = 0
            while True:
                iteration += 1
                start_of_iteration = plan
                for rule in rules:
                    plan = self._apply(rule, batch.name, plan, conf, metrics, changes)
                if plan is start_of_iteration or plan == start_of_iteration:
                    break
                if iteration >= batch.strategy.max_iterations:
                    break
        return plan

    @staticmethod
    def _apply(rule: Rule, batch: str, plan: "LogicalPlan", conf: "SQLConf",
               metrics: RuleMetrics | None, changes: PlanChangeLog | None) -> "LogicalPlan":
        start = time.perf_counter_ns()
        if rule.patterns and not plan.contains_anywhere(*rule.patterns):
            if metrics is not None:
                metrics.record(rule.rule_name, time.perf_counter_ns() - start, False)
            return plan
        try:
            result = rule.apply(plan, conf)
        except (EmberError, RecursionError):  # too deep: ember.guard.call_deep runs it again
            raise
        except Exception as exc:  # a bug in the rule: name it
            raise InternalError(
                f"Optimizer rule {rule.rule_name} (batch {batch!r}) failed: "
                f"{type(exc).__name__}: {exc}") from exc
        elapsed = time.perf_counter_ns() - start
        changed = result is not plan and result != plan
        if metrics is not None:
            metrics.record(rule.rule_name, elapsed, changed)
        if not changed:
            return plan
        if not _same_output(plan, result):
            raise InternalError(
                f"Optimizer rule {rule.rule_name} (batch {batch!r}) changed the plan's output "
                f"from [{_describe_output(plan)}] to [{_describe_output(result)}]")
        if changes is not None:
            changes.changes.append(PlanChange(batch, rule.rule_name, plan, result))
        return result
