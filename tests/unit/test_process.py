"""Processes are recognised and stopped by PID and start time, never by name."""

from __future__ import annotations

import sys
from pathlib import Path

import psutil
import pytest

from workbench.config import load_profile
from workbench.errors import StackError
from workbench.stack import lifecycle, process
from workbench.stack.state import ServiceRecord, StackState


def test_spawned_process_is_ours_until_stopped(tmp_path: Path) -> None:
    child = process.spawn(
        [sys.executable, "-c", "import time; print('hi', flush=True); time.sleep(60)"], tmp_path / "log"
    )
    created = child.create_time()
    assert process.is_ours(child.pid, created)
    assert process.stop(child.pid, created, grace=5)
    assert not process.is_ours(child.pid, created)
    assert not psutil.pid_exists(child.pid) or psutil.Process(child.pid).create_time() != created


def test_a_reused_pid_is_never_signalled(tmp_path: Path) -> None:
    child = process.spawn([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "log")
    try:
        wrong_start = child.create_time() - 100
        assert not process.is_ours(child.pid, wrong_start)
        assert process.stop(child.pid, wrong_start) is False
        assert child.is_running()
    finally:
        process.stop(child.pid, child.create_time())


def test_a_process_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    code = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    )
    log = tmp_path / "log"
    child = process.spawn([sys.executable, "-c", code], log)
    while "ready" not in (log.read_text() if log.exists() else ""):
        pass
    assert process.stop(child.pid, child.create_time(), grace=0.5)
    assert not process.is_ours(child.pid, child.create_time())


def test_a_process_whose_parent_never_reaps_it_counts_as_stopped_once_it_exits(tmp_path: Path) -> None:
    """What `workbench down` meets: a service is not its child, and exits into a zombie
    until init reaps it. Here its parent never does (a shell that exec'd into `sleep`)."""
    pid_file = tmp_path / "pid"
    parent = process.spawn(["bash", "-c", f"sleep 60 & echo $! > {pid_file}; exec sleep 60"], tmp_path / "log")
    try:
        orphan_pid = None
        while orphan_pid is None:
            text = pid_file.read_text().strip() if pid_file.exists() else ""
            orphan_pid = int(text) if text else None
        service = psutil.Process(orphan_pid)
        assert process.stop(service.pid, service.create_time(), grace=5)
        assert service.status() == psutil.STATUS_ZOMBIE  # exited, and still not reaped by its parent
        assert not process.is_ours(service.pid, service.create_time())
    finally:
        process.stop(parent.pid, parent.create_time())


def test_state_round_trips(tmp_path: Path) -> None:
    record = ServiceRecord("broker", "broker", 123, 1.5, "127.0.0.1:9092", "/tmp/log", None, {"a": 1})
    StackState("local", {"broker": record}).save(tmp_path)
    assert StackState.load(tmp_path) == StackState("local", {"broker": record})
    StackState.remove(tmp_path)
    assert StackState.load(tmp_path) is None


def test_a_run_directory_holding_another_profile_s_stack_is_neither_used_nor_stopped(tmp_path: Path) -> None:
    # `local`'s state file, its "broker" this very process: `up`, `down` and `attach` for
    # another profile named to the same run directory must not take it, nor stop it.
    me = psutil.Process()
    broker = ServiceRecord("broker", "broker", me.pid, me.create_time(), "127.0.0.1:1", str(tmp_path / "log"))
    StackState("local", {"broker": broker}).save(tmp_path)
    geo = load_profile("local-geo").model_copy(update={"run_dir": tmp_path})
    refusal = r"holds the stack of profile 'local', not 'local-geo'.*down --profile local"
    for act in (lifecycle.up, lifecycle.down):
        with pytest.raises(StackError, match=refusal):
            act(geo)
    assert lifecycle.attach(geo) is None
    assert StackState.load(tmp_path) == StackState("local", {"broker": broker}) and me.is_running()


def test_free_port_is_free() -> None:
    port = process.free_port("127.0.0.1")
    assert not process.port_in_use("127.0.0.1", port)


def test_a_free_port_is_chosen_below_the_ephemeral_range_where_no_connection_takes_it() -> None:
    import socket

    low, _ = process._ephemeral_range()
    port = process.free_port("127.0.0.1")
    assert port < low
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # nobody holds it
