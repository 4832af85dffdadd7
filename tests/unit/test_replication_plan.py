"""MirrorMaker's properties, flows and names for a replication profile, without a JVM."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.config import load_profile
from workbench.errors import ConfigError
from workbench.java import java_cause
from workbench.replication import NOTEBOOK_INTERVALS, REBALANCE_DELAY_MS, flows, mirror_properties, remote_topic
from workbench.stack import Stack
from workbench.stack.kafka import KafkaCluster, PeerKafkaNode, peer_nodes
from workbench.stack.mirror import MirrorWorker, mirror_cause
from workbench.stack.state import ServiceRecord


def test_the_geo_profile_replicates_a_to_b_with_short_intervals() -> None:
    values = mirror_properties(load_profile("local-geo"), "h:1", "h:2", listener="http://127.0.0.1:9")
    assert values["clusters"] == "a, b"
    assert (values["a.bootstrap.servers"], values["b.bootstrap.servers"]) == ("h:1", "h:2")
    assert (values["a->b.enabled"], values["b->a.enabled"]) == ("true", "false")
    assert values["dedicated.mode.enable.internal.rest"] == "true" and values["listeners"] == "http://127.0.0.1:9"
    assert all(values[key] == value for key, value in NOTEBOOK_INTERVALS.items())
    assert values["b.scheduled.rebalance.max.delay.ms"] == str(REBALANCE_DELAY_MS)  # a worker setting: the target's
    assert values["a->b.replication.factor"] == "1" and values["a->b.offset-syncs.topic.replication.factor"] == "1"
    assert flows(values) == ["a->b"]


def test_each_cluster_s_topics_get_the_replication_its_own_nodes_allow() -> None:
    # Three nodes on b, one on a: what lands on b gets three replicas (a replicated target is
    # what three nodes are asked for), what lands on a (the b -> a worker's own topics and
    # heartbeats, a -> b's offset syncs) the profile's one.
    profile = load_profile("local-geo")
    profile = profile.model_copy(update={"replication": profile.replication.model_copy(update={"target_nodes": 3})})
    values = mirror_properties(profile, "h:1", "h:2")
    on_b = [
        "a->b.replication.factor",
        "a->b.heartbeats.topic.replication.factor",
        "b->a.offset-syncs.topic.replication.factor",
    ]
    on_a = [
        "b->a.replication.factor",
        "b->a.heartbeats.topic.replication.factor",
        "a->b.offset-syncs.topic.replication.factor",
    ]
    assert [values[k] for k in on_b] == ["3"] * 3 and [values[k] for k in on_a] == ["1"] * 3
    assert values["b.config.storage.replication.factor"] == "3" and values["a.config.storage.replication.factor"] == "1"
    assert "replication.factor" not in values and "offset.storage.replication.factor" not in values  # none for both

    # A profile's setting for every cluster and flow is not shadowed by the stack's narrower ones.
    replication = profile.replication.model_copy(update={"properties": {"replication.factor": 2}})
    values = mirror_properties(profile.model_copy(update={"replication": replication}), "h:1", "h:2")
    assert values["replication.factor"] == "2" and "a->b.replication.factor" not in values
    assert values["a->b.checkpoints.topic.replication.factor"] == "3"
    replication = profile.replication.model_copy(
        update={"properties": {"bootstrap.servers": "elsewhere:9", "scheduled.rebalance.max.delay.ms": 1}}
    )
    values = mirror_properties(profile.model_copy(update={"replication": replication}), "h:1", "h:2")
    assert (values["a.bootstrap.servers"], values["b.bootstrap.servers"]) == ("h:1", "h:2"), "the stack's clusters"
    assert values["b.scheduled.rebalance.max.delay.ms"] == str(REBALANCE_DELAY_MS)  # a top-level one is no worker's


def test_the_profile_s_own_properties_go_on_top(monkeypatch: pytest.MonkeyPatch) -> None:
    profile = load_profile("local-geo")
    settings = profile.replication.model_copy(
        update={"properties": {"b->a.enabled": True, "tasks.max": 2, "sync.group.offsets.interval.seconds": 5}}
    )
    values = mirror_properties(profile.model_copy(update={"replication": settings}), "h:1", "h:2")
    assert values["tasks.max"] == "2" and values["sync.group.offsets.interval.seconds"] == "5"
    assert "listeners" not in values  # no REST server asked for
    assert flows(values) == ["a->b", "b->a"]


def test_remote_topics_follow_the_replication_policy() -> None:
    profile = load_profile("local-geo")
    assert remote_topic(profile, "orders") == "a.orders"
    identity = profile.replication.model_copy(
        update={"properties": {"replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"}}
    )
    assert remote_topic(profile.model_copy(update={"replication": identity}), "orders") == "orders"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"WORKBENCH_REPLICATION__SOURCE": "a.b"}, "'a.b' is not a cluster alias"),
        ({"WORKBENCH_REPLICATION__TARGET": "a"}, "both 'a': two aliases"),
        ({"WORKBENCH_REPLICATION__TARGET_NODES": "4"}, "target_nodes"),
    ],
)
def test_a_bad_replication_setting_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, override: dict[str, str], message: str
) -> None:
    for name, value in override.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=message):
        load_profile("local-geo")


def test_a_cluster_profile_with_replication_names_the_second_cluster(tmp_path: Path) -> None:
    path = tmp_path / "geo-cluster.yaml"
    path.write_text("embedded: false\nkafka: {bootstrap.servers: 'x:9092'}\nreplication: {enabled: true}\n")
    with pytest.raises(ConfigError, match=r"replication\.target_bootstrap is required"):
        load_profile(str(path))
    path.write_text(
        "embedded: false\nkafka: {bootstrap.servers: 'x:9092'}\n"
        "replication: {enabled: true, target_bootstrap: 'y:9092'}\n"
    )
    stack = Stack(load_profile(str(path)))
    assert stack.peer_bootstrap_servers == "y:9092"
    assert stack.peer_config("consumer")["bootstrap.servers"] == "y:9092"


def test_the_second_cluster_has_its_own_nodes_folder_and_free_ports(tmp_path: Path) -> None:
    profile = load_profile("local-geo")
    nodes = peer_nodes(profile)
    assert [n.name for n in nodes] == ["b-broker"] and isinstance(nodes[0], PeerKafkaNode)
    cluster = KafkaCluster(profile, alias="b")
    cluster.client_ports, cluster.controller_ports = [40001], [40002]
    assert cluster.node_dir(tmp_path, 0) == (tmp_path / "kafka-b" / "node-1").resolve()
    assert cluster.properties(tmp_path, 0)["listeners"] == "PLAINTEXT://127.0.0.1:40001,CONTROLLER://127.0.0.1:40002"


def test_the_second_cluster_s_address_comes_from_its_nodes() -> None:
    def record(name: str, kind: str, port: int) -> ServiceRecord:
        return ServiceRecord(name=name, kind=kind, pid=1, create_time=0.0, address=f"127.0.0.1:{port}", log="x")

    services = {"broker": record("broker", "broker", 1), "b-broker": record("b-broker", "peer-broker", 2)}
    stack = Stack(load_profile("local-geo"), services)
    assert (stack.bootstrap_servers, stack.peer_bootstrap_servers) == ("127.0.0.1:1", "127.0.0.1:2")


def test_mirror_maker_s_cause_is_the_exception_s_message_without_the_stack(tmp_path: Path) -> None:
    log = tmp_path / "mirror-1.log"
    log.write_text(
        "[2026-11-29 11:09:25,816] ERROR Stopping due to error (org.apache.kafka.connect.mirror.MirrorMaker)\n"
        "org.apache.kafka.connect.errors.ConnectException: Unable to initialize REST server\n"
        "\tat org.apache.kafka.connect.runtime.rest.RestServer.initializeServer(RestServer.java:207)\n"
        "Caused by: java.net.BindException: Address already in use\n"
        "\t... 12 more\n"
    )
    assert mirror_cause(str(log)) == "java.net.BindException: Address already in use"


def test_a_jvm_s_cause_is_its_root_exception_not_the_trace_s_last_line() -> None:
    output = (
        'Exception in thread "main" java.lang.RuntimeException: could not format\n'
        "\tat kafka.tools.StorageTool.main(StorageTool.scala:52)\n"
        "Caused by: java.nio.file.AccessDeniedException: /run/node-3/data\n"
        "\t... 8 more\n"
    )
    assert java_cause(output) == "java.nio.file.AccessDeniedException: /run/node-3/data"
    assert java_cause("") == "no output"


def test_a_worker_gets_a_long_graceful_stop_only_where_its_offsets_outlive_down() -> None:
    profile = load_profile("local-geo")
    kept = profile.model_copy(update={"broker": profile.broker.model_copy(update={"keep_data": True})})
    assert MirrorWorker(profile).stop_grace == 7.0  # down deletes the offsets a graceful stop commits
    assert MirrorWorker(kept).stop_grace == 30.0
