"""Three Apache Kafka nodes on loopback (`conf/local-3.yaml`): replication that means something.

A leader is SIGKILLed under `acks=all` load with idempotence: every acknowledged record
is read back exactly once, at the offset the producer was told; the experiment's row
keeps the contract; `down` stops all three nodes and wipes their data.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from contract_points import CHEAP, check_contract

from workbench import kafka
from workbench.bench.failover import leader_failover
from workbench.bench.sweep import sweep
from workbench.errors import BenchError
from workbench.stack import Stack, status


def test_status_lists_every_node_with_its_kind_and_version(three_brokers: Stack) -> None:
    rows = status(three_brokers.profile)["services"]
    nodes = {name: row for name, row in rows.items() if row["kind"] == "broker"}
    assert sorted(nodes) == ["broker-1", "broker-2", "broker-3"]
    assert all(row["healthy"] and row["broker"] == "kafka" for row in nodes.values())
    assert {row["version"] for row in nodes.values()} == {three_brokers.profile.broker.version}
    assert sorted(row["node_id"] for row in nodes.values()) == [1, 2, 3]
    assert len(three_brokers.bootstrap_servers.split(",")) == 3


def test_topics_get_the_profiles_replication(three_brokers: Stack) -> None:
    (name,) = three_brokers.create_topics({f"replicated-{id(three_brokers)}": 3})
    try:
        info = kafka.describe_topic(three_brokers.kafka_config("admin"), name)
        assert all(len(p.replicas) == 3 for p in info.partitions)
        assert len({p.leader for p in info.partitions}) == 3  # the leaders spread over the nodes
    finally:
        three_brokers.delete_topics([name])


def test_a_killed_leader_loses_no_acknowledged_record_with_acks_all_and_idempotence(three_brokers: Stack) -> None:
    row = leader_failover(three_brokers, records=20_000, rate=10_000, acks="all", idempotence=True, kill_at=0.3)
    assert row["acknowledged"] == 20_000 and row["failed"] == 0
    assert row["lost"] == 0 and row["duplicates"] == 0 and row["misplaced"] == 0
    assert row["new_leader_ms"] > 0 and row["stall_ms"] > 0
    # The killed node came back on its own data: the cluster is whole again.
    assert all(r["healthy"] for r in status(three_brokers.profile)["services"].values())


def test_leader_failover_rows_keep_the_contract(three_brokers: Stack) -> None:
    rows = sweep(
        "leader_failover", [CHEAP["leader_failover"]], repeat=2, stack=three_brokers, record=False, progress=False
    )
    check_contract("leader_failover", rows)


def test_leader_failover_says_plainly_what_a_single_node_cannot_do(stack: Stack) -> None:
    with pytest.raises(BenchError, match=r"needs an embedded Kafka stack of two or more nodes \(conf/local-3.yaml\)"):
        leader_failover(stack, records=100)


def test_up_and_down_from_the_command_line_start_and_stop_every_node(tmp_path: Path) -> None:
    """`workbench up --profile local-3` starts three nodes; `down` stops all three, frees their
    ports and wipes their data."""
    env = {
        **os.environ,
        "WORKBENCH_RUN_DIR": str(tmp_path / "run"),
        "WORKBENCH_BROKER__PORT": "0",
        "WORKBENCH_SCHEMA_REGISTRY__ENABLED": "false",
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "workbench.cli", *args, "--profile", "local-3"],
            capture_output=True,
            text=True,
            timeout=180,
            env=env,
        )

    try:
        assert cli("up").returncode == 0
        services = json.loads(cli("status", "--json").stdout)["services"]
        nodes = {name: row for name, row in services.items() if row["kind"] == "broker"}
        assert len(nodes) == 3 and all(row["healthy"] for row in nodes.values())
        pids = [row["pid"] for row in nodes.values()]
        ports = [int(row["address"].rsplit(":", 1)[1]) for row in nodes.values()]
        assert all((tmp_path / "run" / "kafka" / f"node-{i}" / "data").exists() for i in (1, 2, 3))
    finally:
        stopped = cli("down")
    assert stopped.returncode == 0 and stopped.stdout.count("broker-") == 3
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert not [p for p in ports if _listening(p)]
    assert not any((tmp_path / "run" / "kafka" / f"node-{i}").exists() for i in (1, 2, 3))


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0
