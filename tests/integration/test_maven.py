"""The broker's jars and Spark's Kafka connector: resolved once, checked at every use, offline
after, one line when they cannot be had.

The first resolution (by `make setup`) reaches Maven Central; these tests copy what it
left in the cache and point the resolver at a repository that refuses every connection,
so anything that still works works offline.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from workbench import maven
from workbench.config import load_profile
from workbench.errors import StackError
from workbench.stack.kafka import kafka_classpath
from workbench.streaming.connector import CONNECTOR_VERSIONS, connector_jars, installed_spark_version

UNREACHABLE = "http://127.0.0.1:9/maven2/"


@pytest.fixture(scope="module")
def resolved() -> Path:
    """The real cache's Kafka jars (resolved from Maven Central the first time)."""
    classpath, version = kafka_classpath(load_profile())
    assert version == load_profile().broker.version and len(classpath) > 10
    return maven.cache_dir()


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A cache of our own, and a repository nobody answers at."""
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("WORKBENCH_MAVEN_REPOSITORY", UNREACHABLE)
    return tmp_path / "cache"


def _set_name() -> str:
    return f"kafka-{load_profile().broker.version}"


def test_a_second_setup_runs_offline_from_the_cache(resolved: Path, offline: Path) -> None:
    shutil.copytree(resolved / "jars" / _set_name(), offline / "jars" / _set_name())
    classpath, _ = kafka_classpath(load_profile())
    assert all(Path(jar).is_relative_to(offline) for jar in classpath)
    assert not (offline / "ivy").exists(), "Ivy was not run"


def test_a_truncated_jar_is_detected_and_retrieved_again_from_ivys_cache(resolved: Path, offline: Path) -> None:
    shutil.copytree(resolved / "jars" / _set_name(), offline / "jars" / _set_name())
    shutil.copytree(resolved / "ivy", offline / "ivy")
    damaged = offline / "jars" / _set_name() / f"kafka_2.13-{load_profile().broker.version}.jar"
    whole = damaged.read_bytes()
    damaged.write_bytes(whole[: len(whole) // 2])
    classpath, _ = kafka_classpath(load_profile())
    assert str(damaged) in classpath and damaged.read_bytes() == whole


def test_a_truncated_jar_with_nowhere_to_fetch_it_from_is_one_line(resolved: Path, offline: Path) -> None:
    shutil.copytree(resolved / "jars" / _set_name(), offline / "jars" / _set_name())
    damaged = next((offline / "jars" / _set_name()).glob("kafka-clients-*.jar"))
    damaged.write_bytes(damaged.read_bytes()[:1000])
    with pytest.raises(maven.ResolutionError) as caught:
        kafka_classpath(load_profile())
    _check_one_line(str(caught.value))


def test_an_unreachable_repository_is_one_line_naming_the_coordinates_and_the_ways_out(offline: Path) -> None:
    started = time.monotonic()
    with pytest.raises(maven.ResolutionError) as caught:
        kafka_classpath(load_profile())
    message = str(caught.value)
    _check_one_line(message)
    assert f"org.apache.kafka:kafka_2.13:{load_profile().broker.version}" in message
    assert "Connection refused" in message and UNREACHABLE in message
    assert time.monotonic() - started < 120  # refused at once, not a hang


def test_an_existing_kafka_installation_is_used_as_it_is(
    resolved: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    libs = tmp_path / "kafka" / "libs"
    libs.mkdir(parents=True)
    for jar in (resolved / "jars" / _set_name()).glob("*.jar"):
        (libs / jar.name).symlink_to(jar)
    monkeypatch.setenv("KAFKA_HOME", str(tmp_path / "kafka"))
    monkeypatch.setenv("WORKBENCH_MAVEN_REPOSITORY", UNREACHABLE)
    assert kafka_classpath(load_profile()) == ([str(libs / "*")], load_profile().broker.version)


def test_a_folder_that_is_not_kafka_is_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "libs").mkdir()
    (tmp_path / "libs" / "kafka_2.13-3.9.1.jar").write_bytes(b"")
    monkeypatch.setenv("KAFKA_HOME", str(tmp_path))
    with pytest.raises(StackError, match=r"holds Kafka 3\.9\.1; the embedded broker needs Kafka 4"):
        kafka_classpath(load_profile())
    (tmp_path / "libs" / "kafka_2.13-3.9.1.jar").unlink()
    with pytest.raises(StackError, match="is not an Apache Kafka installation"):
        kafka_classpath(load_profile())


def _check_one_line(message: str) -> None:
    assert "\n" not in message and "Exception in thread" not in message and "at org.apache" not in message
    assert "KAFKA_HOME" in message and "WORKBENCH_MAVEN_REPOSITORY" in message


# Spark's Kafka connector: four jars on top of PySpark's own, resolved the same way.


def test_the_connector_is_four_jars_without_their_dependencies() -> None:
    """PySpark ships everything else they need (snappy, lz4, zstd, SLF4J), in Spark's versions."""
    version = installed_spark_version()
    clients, pool = CONNECTOR_VERSIONS[version]
    assert sorted(jar.name for jar in connector_jars()) == [
        f"commons-pool2-{pool}.jar",
        f"kafka-clients-{clients}.jar",
        f"spark-sql-kafka-0-10_2.13-{version}.jar",
        f"spark-token-provider-kafka-0-10_2.13-{version}.jar",
    ]


def test_an_unknown_spark_version_is_one_line() -> None:
    with pytest.raises(maven.ResolutionError, match=r"no Kafka connector jars are known for PySpark 9\.9\.9") as caught:
        connector_jars("9.9.9")
    assert "\n" not in str(caught.value) and "spark.connector: workbench" in str(caught.value)


def test_without_the_connector_kafka_is_refused_before_any_jvm_and_auto_falls_back(
    offline: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An empty cache and no repository: `connector: kafka` is one line (and no JVM is
    started for it); `auto` reads with the workbench's source and says why; `workbench`
    needs no jar at all."""
    from workbench.streaming.session import _with_connector

    profile = load_profile()

    def asking(connector: str) -> dict[str, str]:
        chosen = profile.model_copy(update={"spark": profile.spark.model_copy(update={"connector": connector})})
        return _with_connector(chosen, {})

    with pytest.raises(maven.ResolutionError) as caught:
        asking("kafka")
    message = str(caught.value)
    assert "\n" not in message and "spark-sql-kafka-0-10_2.13" in message and "spark.connector: workbench" in message
    with caplog.at_level("WARNING", logger="workbench.streaming"):
        assert asking("auto") == {}
    assert "read with the workbench's source" in caplog.text
    assert asking("workbench") == {}


def test_the_jars_are_added_to_the_users_own(resolved: Path) -> None:
    from workbench.streaming.session import _with_connector

    profile = load_profile()
    added = _with_connector(profile, {"spark.jars": "/opt/extra.jar"})["spark.jars"].split(",")
    assert added[0] == "/opt/extra.jar" and [Path(jar) for jar in added[1:]] == connector_jars()
    packages = {"spark.jars.packages": "org.apache.spark:spark-sql-kafka-0-10_2.13:4.2.0"}
    assert _with_connector(profile, packages) == {}  # the user's own connector, left to them
