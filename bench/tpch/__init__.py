"""TPC-H data generation, the 22 queries in Spark SQL form, and the TPC-H benchmark runner."""
