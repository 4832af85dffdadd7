"""One SparkSession for every streaming test: starting a JVM costs seconds, a query far less."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from workbench.stack import Stack
    from workbench.streaming import Connector


def pytest_configure(config: pytest.Config) -> None:
    # PySpark 4.2 warns at import that it has not been certified with pandas 3; the
    # workbench only moves small result frames through pandas.
    config.addinivalue_line("filterwarnings", "ignore:PySpark does not yet fully support pandas:FutureWarning")


def _spark_scope(fixture_name: str, config: pytest.Config) -> str:
    """One session for the whole run on local[2]; per module on a standalone cluster, whose
    cores one application holds until it stops (notebook 09, later, needs them too)."""
    from workbench.config import load_profile

    return "module" if load_profile().spark.workers else "session"


@pytest.fixture(scope=_spark_scope)  # type: ignore[arg-type]
def spark(stack: Stack) -> Iterator[SparkSession]:
    """local[2] (this machine has 2 cores), 2 shuffle partitions, no UI; or, when the profile
    asks for standalone workers (`WORKBENCH_SPARK__WORKERS=2`), the stack's own Spark cluster."""
    from workbench.streaming import spark_session, stop_spark

    master = None if stack.profile.spark.workers else "local[2]"
    session = spark_session(stack.profile, master=master, shuffle_partitions=2, app_name="workbench-tests")
    yield session
    stop_spark(session)  # the JVM too: the suite leaves no process behind


@pytest.fixture(params=["kafka", "workbench"])
def connector(request: pytest.FixtureRequest) -> Connector:
    """Spark's own Kafka connector, then the workbench's source: a test taking this runs with each."""
    chosen: Connector = request.param
    return chosen


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    """A fresh checkpoint folder for one query."""
    return tmp_path / "checkpoint"
