"""A real Spark cluster, locally: the stack starts Spark's own standalone master and two
workers; a session on it reads a topic through Spark's Kafka connector and through the
workbench source on executors in other JVMs (the connector's jars and the package shipped
with the session), survives a restart exactly once with each, and
`workbench down` leaves no Spark process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
import yaml

from workbench import load_profile, stack
from workbench.config import conf_dir

# In the worker of the shared SparkSession's tests, one after the other: Spark's Python
# workers fail to connect back when several Spark applications start at once on two cores.
pytestmark = pytest.mark.xdist_group("spark")


def test_standalone_cluster_runs_the_source_on_executors_and_restarts_exactly_once(tmp_path: Path) -> None:
    raw = yaml.safe_load((conf_dir() / "local-spark.yaml").read_text())
    raw.update(run_dir=str(tmp_path / "run"), data_dir=str(tmp_path / "data"))
    raw["broker"]["port"] = raw["proxy"]["first_port"] = raw["spark"]["master_port"] = 0
    raw["spark"]["master_ui_port"] = 0
    profile_path = tmp_path / "local-spark.yaml"
    profile_path.write_text(yaml.safe_dump(raw))
    profile = load_profile(str(profile_path))
    assert profile.spark.workers == 2

    active = stack.up(profile)
    try:
        daemons = {n: r for n, r in active.services.items() if r.kind.startswith("spark-")}
        assert sorted(daemons) == ["spark-master", "spark-worker-0", "spark-worker-1"]
        status = stack.status(profile)["services"]
        assert all(status[n]["healthy"] and status[n]["url"].startswith("http://") for n in daemons)
        assert active.spark_master == f"spark://{daemons['spark-master'].address}"

        probe = subprocess.run(
            [
                sys.executable,
                str(Path(__file__).with_name("standalone_probe.py")),
                str(profile_path),
                str(tmp_path / "work"),
            ],
            capture_output=True,
            text=True,
            timeout=540,
            env=os.environ.copy(),
        )
        assert probe.returncode == 0, probe.stderr[-3000:]
        result = json.loads(probe.stdout.strip().splitlines()[-1])
        spark_processes = [r.pid for r in daemons.values()] + [int(pid) for pid in result["executor_jvms"]]
    finally:
        stack.down(profile)

    assert result["master"] == active.spark_master and result["connector"] == "kafka"
    # Spark's own executor list: one executor per worker, and the driver's block manager beside them.
    assert len(result["executor_ids"]) == 2 and len(result["executors"]) == 3
    # Each worker started one executor JVM, and every task ran in one of them, never in the driver's.
    jvms = {int(pid) for pid in result["executor_jvms"]}
    assert sorted(result["executor_jvms"].values()) == ["spark-worker-0", "spark-worker-1"]
    task_jvms = {jvm for _, jvm in result["tasks"]}
    assert task_jvms <= jvms and result["driver_pid"] not in task_jvms
    # The executors imported the workbench from the zip shipped with the session.
    assert all(".zip/workbench/__init__.py" in path for path, _ in result["tasks"])

    # Spark's connector (its jars served to the executors by the driver) and ours: each exactly once.
    for connector in ("kafka", "workbench"):
        restart = result["restart"][connector]
        assert restart["rows"] == restart["distinct_offsets"] == restart["log_records"] == restart["produced"] == 6_000
        assert 0 < restart["landed_before_stop"] < 6_000

    assert [pid for pid in spark_processes if _running(pid)] == []
    leftovers = [p.pid for p in psutil.process_iter(["cmdline"]) if str(tmp_path) in " ".join(p.info["cmdline"] or [])]
    assert leftovers == []


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
