"""Shared pytest configuration.

* ``spark`` (session scope): the one PySpark oracle session of the run (``local[2]``, UI off,
  2 shuffle partitions, UTC, 2g driver, ERROR logs); see :mod:`tests.spark_session`.
  Every test that uses it is marked ``spark`` automatically (``-m "not spark"`` skips them).
* ``--regenerate-goldens``: recompute ``tests/conformance/golden/*.json`` from Spark before the
  tests are collected (same as ``python tools/generate_goldens.py``).
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regenerate-goldens",
        action="store_true",
        default=False,
        help="Regenerate tests/conformance/golden/*.json from PySpark before running the tests.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "spark: needs the PySpark oracle (a SparkSession)")
    config.addinivalue_line("markers", "conformance: Spark SQL golden-file conformance tests")
    config.addinivalue_line("markers", "differential: random queries compared with Spark")


def pytest_sessionstart(session: pytest.Session) -> None:
    if session.config.getoption("--regenerate-goldens"):
        from tests.conformance.generate import generate_all
        from tests.spark_session import get_spark

        generate_all(get_spark())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark():
    """The PySpark oracle session (started once per test run)."""
    from tests.spark_session import get_spark

    session = get_spark()
    yield session
    session.stop()
