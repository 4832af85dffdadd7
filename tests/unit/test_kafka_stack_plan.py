"""The embedded Kafka cluster's plan and words, without starting a JVM."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.bench.failover import failover_conclusion
from workbench.config import load_profile
from workbench.errors import ConfigError
from workbench.stack import data_fate
from workbench.stack.kafka import KafkaCluster, _cluster_id
from workbench.stack.state import ServiceRecord


def _cluster(nodes: int, monkeypatch: pytest.MonkeyPatch) -> KafkaCluster:
    monkeypatch.setenv("WORKBENCH_BROKER__NODES", str(nodes))
    monkeypatch.setenv("WORKBENCH_BROKER__PORT", "29092")
    cluster = KafkaCluster(load_profile("local-3" if nodes == 3 else "local"))
    cluster.client_ports = [29092 + i for i in range(nodes)]
    cluster.controller_ports = [39100 + i for i in range(nodes)]
    return cluster


def test_three_nodes_share_one_static_quorum_and_replicate_internal_topics(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cluster = _cluster(3, monkeypatch)
    second = cluster.properties(tmp_path, 1)
    assert second["node.id"] == "2" and second["process.roles"] == "broker,controller"
    assert second["controller.quorum.voters"] == "1@127.0.0.1:39100,2@127.0.0.1:39101,3@127.0.0.1:39102"
    assert second["listeners"] == "PLAINTEXT://127.0.0.1:29093,CONTROLLER://127.0.0.1:39101"
    assert second["advertised.listeners"] == "PLAINTEXT://127.0.0.1:29093"
    assert second["offsets.topic.replication.factor"] == "3" and second["transaction.state.log.min.isr"] == "2"
    assert second["default.replication.factor"] == "3" and second["min.insync.replicas"] == "2"
    assert second["log.dirs"].endswith("kafka/node-2/data")


def test_one_node_keeps_its_internal_topics_at_one_replica(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    single = _cluster(1, monkeypatch).properties(tmp_path, 0)
    assert single["share.coordinator.state.topic.replication.factor"] == "1"
    assert single["share.coordinator.state.topic.min.isr"] == "1"
    assert single["group.initial.rebalance.delay.ms"] == "0"


def test_profile_properties_come_last_and_must_be_lines(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WORKBENCH_BROKER__PROPERTIES", "{num.io.threads: 4, auto.create.topics.enable: false}")
    props = _cluster(1, monkeypatch).properties(tmp_path, 0)
    assert props["num.io.threads"] == "4" and props["auto.create.topics.enable"] == "false"
    monkeypatch.setenv("WORKBENCH_BROKER__PROPERTIES", '{"log.dirs": "a\\nb"}')
    with pytest.raises(ConfigError, match="one line"):
        load_profile()


def test_tansu_is_one_node(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_BROKER__NODES", "3")
    with pytest.raises(ConfigError, match="Tansu runs as one node"):
        load_profile("local-tansu")


def test_a_cluster_id_is_kafkas_form() -> None:
    ids = {_cluster_id() for _ in range(200)}
    assert len(ids) == 200 and all(len(i) == 22 and not i.startswith("-") for i in ids)


def test_the_data_fate_says_what_down_does_and_did() -> None:
    def record(**extra: object) -> ServiceRecord:
        return ServiceRecord(
            name="broker", kind="broker", pid=1, create_time=0.0, address="h:1", log="l", extra=dict(extra)
        )

    assert "wiped by `down`" in data_fate(record(broker="kafka", data_dir="/d"))
    assert data_fate(record(broker="kafka", data_dir="/d"), stopped=True).startswith("wiped from /d")
    assert "kept in /d" in data_fate(record(broker="kafka", data_dir="/d", keep_data=True), stopped=True)
    assert "memory only" in data_fate(record(broker="tansu"))


def test_the_failover_conclusion_is_computed_from_the_rows() -> None:
    rows = [
        {
            "acks": "1",
            "idempotence": False,
            "stall_ms": 812.0,
            "new_leader_ms": 640.0,
            "lost": 37,
            "duplicates": 0,
            "failed": 0,
        },
        {
            "acks": "all",
            "idempotence": True,
            "stall_ms": 1210.4,
            "new_leader_ms": 655.0,
            "lost": 0,
            "duplicates": 0,
            "failed": 2,
        },
    ]
    first, second = failover_conclusion(rows).splitlines()
    assert first == (
        "- acks=1: the producer's acknowledgements stopped for up to 812 ms after the kill (a new leader "
        "showed in the metadata after 640 ms); 37 acknowledged records were missing from the log, "
        "none twice."
    )
    assert second.startswith("- acks=all + idempotence: the producer's acknowledgements stopped for up to 1,210 ms")
    assert "every acknowledged record was read back, none twice; 2 were reported failed to the producer." in second
