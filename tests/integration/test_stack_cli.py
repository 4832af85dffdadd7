"""`workbench up | status | down` as a user runs them, each from a separate process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psutil


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
    host, port = broker["address"].rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) > 0
    pid = broker["pid"]
    assert psutil.pid_exists(pid)

    again = cli("up", env=env)
    assert "already running" in again.stdout
    assert json.loads(cli("status", "--json", env=env).stdout)["services"]["broker"]["pid"] == pid

    stopped = cli("down", env=env)
    assert stopped.returncode == 0 and f"pid {pid}" in stopped.stdout
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert json.loads(cli("status", "--json", env=env).stdout)["services"] == {}
    assert "nothing was running" in cli("down", env=env).stdout


def test_a_taken_port_is_a_one_line_error(tmp_path: Path, stack: object) -> None:
    from workbench.stack import Stack

    assert isinstance(stack, Stack)
    busy = stack.services["broker"].address.rsplit(":", 1)[1]
    env = {**os.environ, "WORKBENCH_RUN_DIR": str(tmp_path / "run"), "WORKBENCH_BROKER__PORT": busy}
    result = cli("up", env=env)
    assert result.returncode == 1
    assert "already in use" in result.stderr and "Traceback" not in result.stderr
    assert json.loads(cli("status", "--json", env=env).stdout)["services"] == {}
