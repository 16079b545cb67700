"""Every statement of every Spark conformance input file parses."""

from pathlib import Path

import pytest

from ember.plans.logical.nodes import LogicalPlan
from ember.sql import parse_statement, split_statements

INPUTS = Path("/work/shared/conformance/spark-sql-tests/inputs")
FILES = sorted(INPUTS.rglob("*.sql"))


def test_all_input_files_found():
    assert len(FILES) == 14


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(INPUTS)))
def test_every_statement_parses(path: Path):
    statements = split_statements(path.read_text())
    assert statements
    for stmt in statements:
        plan = parse_statement(stmt)
        assert isinstance(plan, LogicalPlan), stmt
