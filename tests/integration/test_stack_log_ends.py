"""A cluster profile that does not name its broker: the cluster is checked once for log ends
reported short of what it acknowledged. Tansu's are (found, declared, announced in one line,
remembered); Apache Kafka's are not (nothing declared). The check leaves no topic behind."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
import yaml

from workbench import kafka
from workbench.config import Profile, load_profile
from workbench.kafka import offsets
from workbench.kafka.offsets import END_PROBE_ENV, end_probe_env, needs_end_probe
from workbench.stack import Stack, log_ends, up
from workbench.stack.log_ends import MEMORY_FILE, EndsCheck, warning_line


def _unnamed(servers: str, tmp_path: Path) -> Profile:
    """A cluster profile without `broker.kind`, remembering its answers in the test's own run directory."""
    path = tmp_path / "theirs.yaml"
    raw = {
        "embedded": False,
        "kafka": {"bootstrap.servers": servers, "common": {"allow.auto.create.topics": False}},
        "topics": {"replication_factor": 1, "min_insync_replicas": 1},
    }
    path.write_text(yaml.safe_dump(raw))
    profile = load_profile(str(path)).model_copy(update={"run_dir": tmp_path / "run"})
    assert log_ends.needs_check(profile)
    return profile


@pytest.fixture(autouse=True)
def _unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """No cluster declared or settled in this process yet: another test of the worker may have
    made a stack of the same cluster (`foreign_cluster`'s profile declares Tansu)."""
    monkeypatch.delenv(END_PROBE_ENV, raising=False)
    monkeypatch.setattr(offsets, "_declared_here", set())
    monkeypatch.setattr(log_ends, "_settled", {})


@pytest.mark.xdist_group("foreign-00_quickstart")  # with notebook 00's runs on the same cluster
def test_tansu_is_found_short_declared_and_remembered(
    foreign_cluster: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    servers = foreign_cluster.bootstrap_servers
    profile = _unnamed(servers, tmp_path)
    with caplog.at_level(logging.INFO, logger="workbench.stack.log_ends"):
        found = up(profile)
        up(profile)  # settled in this process: not checked again
    short = EndsCheck(acknowledged=6, reported_end=4)  # two batches of three: the last one's base + 1
    assert [r.getMessage() for r in caplog.records] == [warning_line(servers, short)]
    assert needs_end_probe(found.kafka_config()) and end_probe_env() == {END_PROBE_ENV: json.dumps([servers])}
    remembered = json.loads((tmp_path / "run" / MEMORY_FILE).read_text())
    assert {k: v for k, v in remembered[servers].items() if k != "checked_at"} == {
        "acknowledged": 6,
        "reported_end": 4,
        "short": True,
    }
    assert kafka.list_topics(found.kafka_config()) == []  # the check's topic is gone


def test_apache_kafka_is_found_right_and_left_as_it_reports(
    stack: Stack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    servers = stack.bootstrap_servers
    profile = _unnamed(servers, tmp_path)
    before = set(kafka.list_topics(stack.kafka_config()))
    with caplog.at_level(logging.INFO, logger="workbench.stack.log_ends"):
        found = up(profile)
    assert caplog.records == []
    assert not needs_end_probe(found.kafka_config()) and log_ends.checked(servers) == EndsCheck(6, 6)
    remembered = json.loads((tmp_path / "run" / MEMORY_FILE).read_text())
    assert remembered[servers]["short"] is False
    assert set(kafka.list_topics(stack.kafka_config())) == before
