"""`workbench up | status | down` as a user runs them, each from a separate process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import yaml

from workbench.config import load_profile


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_up_status_down_round_trip_leaves_no_process(tmp_path: Path) -> None:
    env = {**os.environ, "WORKBENCH_RUN_DIR": str(tmp_path / "run"), "WORKBENCH_BROKER__PORT": "0"}

    started = cli("up", env=env)
    assert started.returncode == 0, started.stderr
    state = json.loads(cli("status", "--json", env=env).stdout)
    broker = state["services"]["broker"]
    assert broker["healthy"] is True
    assert broker["broker"] == "kafka" and broker["version"] == load_profile().broker.version
    assert "wiped by `down`" in broker["data"]
    host, port = broker["address"].rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) > 0
    pid = broker["pid"]
    assert psutil.pid_exists(pid)
    pids = [row["pid"] for row in state["services"].values()]
    ports = [_port_of(row) for row in state["services"].values()]
    data = Path(tmp_path / "run" / "kafka" / "node-1" / "data")
    assert (data / "meta.properties").exists()
    assert _round_trip(broker["address"], 500) == list(range(500))

    again = cli("up", env=env)
    assert "already running" in again.stdout
    assert json.loads(cli("status", "--json", env=env).stdout)["services"]["broker"]["pid"] == pid

    stopped = cli("down", env=env)
    assert stopped.returncode == 0 and f"pid {pid}" in stopped.stdout
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
    assert not [p for p in ports if _listening(p)]
    assert not data.exists(), "the broker's data is wiped by down"
    assert json.loads(cli("status", "--json", env=env).stdout)["services"] == {}
    assert "nothing was running" in cli("down", env=env).stdout


def test_keep_data_keeps_the_logs_for_the_next_up(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "WORKBENCH_RUN_DIR": str(tmp_path / "run"),
        "WORKBENCH_BROKER__PORT": "0",
        "WORKBENCH_BROKER__KEEP_DATA": "true",
        "WORKBENCH_SCHEMA_REGISTRY__ENABLED": "false",
    }
    try:
        assert cli("up", env=env).returncode == 0
        first = json.loads(cli("status", "--json", env=env).stdout)["services"]["broker"]
        assert "kept in" in first["data"]
        assert _round_trip(first["address"], 300, topic="kept") == list(range(300))
        assert "kept in" in cli("down", env=env).stdout
        assert cli("up", env=env).returncode == 0
        second = json.loads(cli("status", "--json", env=env).stdout)["services"]["broker"]
        assert _read(second["address"], "kept") == list(range(300))
    finally:
        cli("down", env=env)


def _port_of(row: dict[str, Any]) -> int:
    return int(str(row["address"]).rsplit(":", 1)[1].strip("/"))


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _round_trip(address: str, count: int, topic: str = "round-trip") -> list[int]:
    """Write `count` numbered records to a new topic and read them back in order."""
    from workbench import kafka

    conf = {"bootstrap.servers": address}
    kafka.create_topic(conf, topic, 1)
    result = kafka.produce(conf, topic, [(None, str(i).encode()) for i in range(count)])
    assert result.acknowledged == count and result.failed == 0
    return _read(address, topic)


def _read(address: str, topic: str) -> list[int]:
    from workbench import kafka

    return [int(r.value or b"-1") for r in kafka.read_records({"bootstrap.servers": address}, topic)]


def test_a_taken_port_is_a_one_line_error(tmp_path: Path, stack: object) -> None:
    from workbench.stack import Stack

    assert isinstance(stack, Stack)
    busy = stack.services["broker"].address.rsplit(":", 1)[1]
    env = {**os.environ, "WORKBENCH_RUN_DIR": str(tmp_path / "run"), "WORKBENCH_BROKER__PORT": busy}
    result = cli("up", env=env)
    assert result.returncode == 1
    assert "already in use" in result.stderr and "Traceback" not in result.stderr
    assert json.loads(cli("status", "--json", env=env).stdout)["services"] == {}


def test_status_of_a_cluster_profile_checks_every_named_service(foreign_cluster: Any, tmp_path: Path) -> None:
    """Each proxy URL, variant, balancer, Spark master and registry is asked; dead ones say why."""
    profile = yaml.safe_load(foreign_cluster.profile_path.read_text())
    dead = f"http://127.0.0.1:{_closed_port()}"
    profile["balancer"] = {"url": foreign_cluster.proxy_urls[0]}
    profile["proxy"]["urls"].append(dead)
    profile["spark"] = {"master": f"spark://127.0.0.1:{_closed_port()}"}
    profile["schema_registry"] = {"url": dead}
    path = tmp_path / "theirs.yaml"
    path.write_text(yaml.safe_dump(profile))

    result = cli("status", "--json", "--profile", str(path), env=dict(os.environ))
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)
    services = status["services"]
    assert status["embedded"] is False and status["proxy"] == profile["proxy"]["urls"]
    assert set(services) == {
        "broker",
        "proxy-0",
        "proxy-1",
        "proxy-2",
        "proxy-unbuffered-0",
        "proxy-buffered-500ms-0",
        "balancer",
        "spark-master",
        "schema-registry",
    }
    healthy = {name for name, row in services.items() if row["healthy"]}
    assert healthy == {"broker", "proxy-0", "proxy-1", "proxy-unbuffered-0", "proxy-buffered-500ms-0", "balancer"}
    assert services["broker"]["address"] == foreign_cluster.bootstrap_servers
    for name in ("proxy-2", "schema-registry", "spark-master"):
        assert services[name]["reason"] and ("refused" in services[name]["reason"].lower()), services[name]
    assert all(row["pid"] is None for row in services.values())

    table = cli("status", "--profile", str(path), env=dict(os.environ))
    assert "proxy-2" in table.stdout and "NO" in table.stdout and "refused" in table.stdout.lower()


def _closed_port() -> int:
    """A port nothing listens on (bound for a moment, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
