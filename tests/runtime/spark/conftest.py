"""Tests against a real Spark standalone cluster (Master + Worker JVMs on loopback).

Registers the ``spark_cluster`` marker (``-m spark_cluster`` selects these tests, ``-m "not
spark_cluster"`` skips them) and provides the session-scoped ``spark_cluster`` fixture: a started
:class:`tests.spark_cluster.StandaloneCluster` shared by every module that asks for it (one
cluster start per run), stopped at the end of the session. Drivers must run in a
subprocess (``spark_cluster.run_script(text)``): this process already owns the oracle SparkContext.
"""

from __future__ import annotations

import pytest

from tests.spark_cluster import StandaloneCluster


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "spark_cluster: starts a Spark standalone cluster (Master + Worker JVMs)"
    )


@pytest.fixture(scope="session")
def spark_cluster():
    """A running standalone cluster (1 worker, 2 cores, 2g) shared by the tests of the session."""
    with StandaloneCluster() as cluster:
        yield cluster
