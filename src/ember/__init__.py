"""Ember: Spark SQL's join and aggregation machinery in Python."""
