"""The optimizer: logical rewrites between the analyzer and the physical planner.

``optimizer.py`` lists Spark's rule batches (:class:`~ember.optimizer.optimizer.Optimizer`, and
``MinimalOptimizer`` for ``ember.optimizer.enabled=false``), run by ``rule_executor.py``; ``rules/``
has one module per rule.
"""
