"""Analyzer rules, one per module, named after Spark's rules (see ``ember.analysis.analyzer``)."""
