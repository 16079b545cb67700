"""Streaming benchmarks (issue 6): Ember's micro-batch engine against Spark Structured Streaming."""
