"""Child processes of the stack: start detached, recognise again by PID, stop by PID.

A PID alone can be reused by the system after a process ends, so every record keeps
the process's start time too; a PID whose start time differs is not ours and is
never signalled.
"""

from __future__ import annotations

import atexit
import os
import random
import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import psutil

__all__ = ["GRACE_SECONDS", "free_port", "is_ours", "port_in_use", "spawn", "stop"]

#: How long a service gets to exit on SIGTERM before it is killed.
GRACE_SECONDS = 10.0

#: Children started by this Python process, kept so they can be reaped when stopped
#: (and so Python does not warn about a Popen dropped while its process runs).
_children: dict[int, subprocess.Popen[bytes]] = {}


@atexit.register
def _settle_exited_children() -> None:
    """At exit, take the exit status of every child that has ended without `stop` (killed by
    an experiment, a MirrorMaker worker or a node SIGKILLed and started again): Python warns
    "subprocess N is still running" of any Popen never waited on, though it ended long ago.
    Children still running are services left running on purpose (`workbench up`)."""
    for popen in list(_children.values()):
        popen.poll()


def spawn(command: Sequence[str], log: Path, env: Mapping[str, str] | None = None) -> psutil.Process:
    """Start `command` in its own session, output appended to `log`.

    Its own session means Ctrl-C in the shell that ran `workbench up` does not reach it,
    and it outlives that shell, so `workbench down` from another shell can stop it.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        popen = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
    _children[popen.pid] = popen
    return psutil.Process(popen.pid)


def is_ours(pid: int, create_time: float) -> bool:
    """True when `pid` is alive and is the very process that was recorded."""
    try:
        process = psutil.Process(pid)
        return abs(process.create_time() - create_time) < 0.01 and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def stop(pid: int, create_time: float, grace: float = GRACE_SECONDS) -> bool:
    """SIGTERM, wait up to `grace` seconds, then SIGKILL. False if it was not running."""
    child = _children.get(pid)
    if child is not None and child.poll() is not None:  # our child, already exited: reaped now
        del _children[pid]
        return False
    if not is_ours(pid, create_time):
        return False
    try:
        process = psutil.Process(pid)
        process.terminate()
        if not _exited(process, child, grace):
            process.kill()
            _exited(process, child, grace)
    except psutil.NoSuchProcess:
        pass  # it ended on its own meanwhile
    if child is not None:
        del _children[pid]
        child.poll()  # reaped already; this settles the Popen object
    return True


#: Where `free_port` looks: below the kernel's ephemeral range (32768-60999 by default).
_PORTS = range(20_000, 32_768)


def free_port(host: str) -> int:
    """A port nobody listens on right now, chosen below the ephemeral range.

    The OS's own choice (binding port 0) is an ephemeral port, the kind every outgoing
    connection takes its local port from: between choosing it and the service binding
    it, a client's connection could take it, and a busy machine (a test run with three
    Kafka clusters) saw a Kafka node's controller port answered by something else. Ports
    below the range are only ever taken by a listener that asked for them.
    """
    low, high = _ephemeral_range()
    candidates = [p for p in random.sample(_PORTS, 64) if not low <= p <= high]
    for port in candidates:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:  # a crowded range: the OS's choice
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32_768, 60_999


def port_in_use(host: str, port: int) -> bool:
    """True when something already accepts connections on host:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def _exited(process: psutil.Process, child: subprocess.Popen[bytes] | None, timeout: float) -> bool:
    """Wait up to `timeout` s until `process` has exited (and reap it if it is our `child`);
    True if it did.

    An exited process that is not our child stays a zombie until its parent, usually
    init, reaps it, and psutil's `wait` waits for that. Where init reaps every 2 s (the
    machine the workbench is built on), `workbench down` spent 2 s per service: 6.4 s for
    the default stack, 0.8 s now. So a zombie counts as exited, once its last thread is
    gone too: a JVM's main thread shows as a zombie while its other threads still exit.
    """
    if child is not None:
        try:
            child.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    deadline = time.monotonic() + timeout
    while True:
        try:
            if process.status() == psutil.STATUS_ZOMBIE and process.num_threads() <= 1:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
