"""The Spark prerequisites are checked before a JVM is started, with a way out in the message."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.errors import StackError
from workbench.java import java_version

MODULES = [
    "workbench.streaming",
    "workbench.streaming.connector",
    "workbench.streaming.ingestion",
    "workbench.streaming.ingestion.aggregation",
    "workbench.streaming.ingestion.ceiling",
    "workbench.streaming.ingestion.read_cpu",
    "workbench.streaming.ingestion.reads",
    "workbench.streaming.ingestion.real_time",
    "workbench.streaming.ingestion.restart",
    "workbench.streaming.ingestion.runs",
    "workbench.streaming.ingestion.topic_layout",
    "workbench.streaming.ingestion.trigger_latency",
    "workbench.streaming.offsets",
    "workbench.streaming.options",
    "workbench.streaming.pipelines",
    "workbench.streaming.progress",
    "workbench.streaming.session",
    "workbench.streaming.source",
    "workbench.streaming.telemetry",
]


def test_this_machine_has_a_java_spark_4_supports() -> None:
    major, path = java_version()
    assert major in (17, 21)
    assert Path(path).exists()


def test_a_missing_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-such-jdk"))
    with pytest.raises(StackError, match=r"Spark 4 needs Java 17 or 21 and none was found.*openjdk-17"):
        java_version()


def test_an_unsupported_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "jdk" / "bin" / "java"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk"))
    with pytest.raises(StackError, match="is Java 11; Spark 4 runs on Java 17 or 21"):
        java_version()


@pytest.mark.parametrize("name", MODULES)
def test_public_names_are_sorted_and_exist(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__all__ == sorted(module.__all__)
    assert all(hasattr(module, item) for item in module.__all__)


def test_importing_the_package_does_not_import_pyspark() -> None:
    code = "import sys, workbench.streaming, workbench.streaming.telemetry; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("connector", ["Kafka", "x" * 10_000, "kafka\x00"])
def test_an_unknown_connector_is_one_line_before_spark_is_asked(connector: str) -> None:
    from workbench.config import load_profile
    from workbench.errors import ConfigError
    from workbench.streaming import choose_connector

    with pytest.raises(ConfigError, match="must be 'auto', 'kafka' or 'workbench'") as caught:
        choose_connector(None, load_profile(), connector)  # type: ignore[arg-type]
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 400
