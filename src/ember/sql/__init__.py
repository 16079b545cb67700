"""SQL text -> Ember's unresolved logical plan (an adapter over sqlglot's Spark dialect).

Modules, one concern each:

- :mod:`ember.sql.splitter`    scripts -> statements (``;`` outside quotes and comments)
- :mod:`ember.sql.dialect`     the sqlglot dialect that keeps Spark SQL as written
- :mod:`ember.sql.statements`  SET / CREATE VIEW / DROP VIEW / EXPLAIN / DESCRIBE front-ends
- :mod:`ember.sql.ast_builder` sqlglot AST -> logical plan and expressions (Spark's AstBuilder)
- :mod:`ember.sql.literals`    Spark's literal typing; :mod:`ember.sql.datatypes` type names
- :mod:`ember.sql.parser`      the public functions below

>>> from ember.sql import parse_statement, split_statements
>>> [type(parse_statement(s)).__name__ for s in split_statements("SET a=1; SELECT 1")]
['SetCommand', 'Project']
"""

from ember.sql.parser import parse_data_type, parse_expression, parse_query, parse_statement
from ember.sql.splitter import split_statements

__all__ = ["parse_statement", "parse_query", "parse_expression", "parse_data_type",
           "split_statements"]
