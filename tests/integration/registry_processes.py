"""Schema Registry processes a test starts for itself, on free ports, stopped by PID.

Each test module gets its own `_schemas` topic (`SCHEMA_REGISTRY_KAFKASTORE_TOPIC`), so
restarts and several instances can be tried without touching the stack's registry.
The processes are stopped before their topic is deleted: a librdkafka consumer whose
topic is deleted on the embedded broker crashes its process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import requests

from workbench.stack import process

__all__ = ["RegistryProcess", "start_registry"]


@dataclass
class RegistryProcess:
    """One `python -m workbench.registry` this test started."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait(timeout=timeout)


def start_registry(bootstrap_servers: str, topic: str, log_dir: Path, ready_timeout: float = 60.0) -> RegistryProcess:
    """Start a registry on a free port over `topic`; returns once `GET /` answers 200."""
    port = process.free_port("127.0.0.1")
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"registry-{port}.log"
    argv = [
        sys.executable,
        "-m",
        "workbench.registry",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--bootstrap-servers",
        bootstrap_servers,
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "SCHEMA_REGISTRY_KAFKASTORE_TOPIC": topic},
        )
    started = RegistryProcess(f"http://127.0.0.1:{port}", proc, log)
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"registry on {port} exited with {proc.returncode}:\n{started.log_tail()}")
        try:
            if requests.get(f"{started.url}/", timeout=1).status_code == 200:
                return started
        except requests.RequestException:
            pass
        time.sleep(0.1)
    started.stop()
    raise AssertionError(f"registry on {port} did not answer within {ready_timeout:.0f} s:\n{started.log_tail()}")
