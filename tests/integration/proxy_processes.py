"""Proxy and nginx processes a test starts for itself, on free ports, and stops by PID.

A test that may crash a proxy must own that proxy: a crash then shows up as a dead
process (and its log) instead of breaking the session's stack for every other test.
The approach is the one of `test_restproxy_lifecycle.py`'s `start_proxy` fixture:
`workbench proxy` with the project's properties, extra settings as `KAFKA_REST_*`
environment variables, ready once `GET /` answers 200.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from workbench.stack import process

PROPERTIES = Path(__file__).resolve().parents[2] / "conf" / "kafka-rest.properties"

__all__ = ["PROPERTIES", "Nginx", "ProxyProcess", "proxy_command", "start_nginx", "start_plain_proxy", "start_proxy"]


@dataclass
class ProxyProcess:
    """One `workbench proxy` process this test started; `log` holds its output."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def address(self) -> str:
        return self.url.removeprefix("http://")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int | None:
        """Signal the process (if still running) and reap it; returns its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                return self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait(timeout=timeout)


def proxy_command(bootstrap_servers: str, port: int, config: Path = PROPERTIES) -> list[str]:
    """The `workbench proxy` command line on 127.0.0.1:`port`, with `config` as its properties."""
    return [
        sys.executable,
        "-m",
        "workbench.cli",
        "proxy",
        "--config",
        str(config),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--bootstrap-servers",
        bootstrap_servers,
    ]


def start_proxy(bootstrap_servers: str, log_dir: Path, ready_timeout: float = 45.0, **env: str) -> ProxyProcess:
    """Start a proxy on a free port with `env` on top of ours; returns once `GET /` is 200.

    Raises:
        AssertionError: the process died or did not answer in time (with its log).
    """
    port = process.free_port("127.0.0.1")
    return _started(proxy_command(bootstrap_servers, port), port, log_dir, ready_timeout, env)


def start_plain_proxy(bootstrap_servers: str, log_dir: Path, ready_timeout: float = 45.0) -> ProxyProcess:
    """`workbench proxy --config FILE` and nothing else, FILE holding only `bootstrap.servers`
    and a listener on a free port: a proxy as a user starts one on its own, without the
    project's properties or the command line's overrides."""
    port = process.free_port("127.0.0.1")
    log_dir.mkdir(parents=True, exist_ok=True)
    config = log_dir / f"plain-{port}.properties"
    config.write_text(f"bootstrap.servers={bootstrap_servers}\nlisteners=http://127.0.0.1:{port}\n")
    command = [sys.executable, "-m", "workbench.cli", "proxy", "--config", str(config)]
    return _started(command, port, log_dir, ready_timeout, {})


def _started(command: list[str], port: int, log_dir: Path, ready_timeout: float, env: dict[str, str]) -> ProxyProcess:
    """Run `command` (a proxy listening on `port`) with `env` on top of ours; returns once
    `GET /` is 200, or stops it and fails with its log."""
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"proxy-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env={**os.environ, **env}
        )
    started = ProxyProcess(f"http://127.0.0.1:{port}", proc, log, dict(env))
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"proxy on {port} exited with {proc.returncode}:\n{started.log_tail()}")
        try:
            if requests.get(f"{started.url}/", timeout=1).status_code == 200:
                return started
        except requests.RequestException:
            pass
        time.sleep(0.1)
    started.stop(signal.SIGKILL)
    raise AssertionError(f"proxy on {port} did not answer within {ready_timeout:.0f} s:\n{started.log_tail()}")


@dataclass
class Nginx:
    """nginx balancing round-robin over proxies, with the stack's generated config."""

    url: str
    proc: subprocess.Popen[bytes]

    def stop(self, timeout: float = 30.0) -> None:
        """SIGQUIT (graceful: the master waits for its workers), SIGKILL after `timeout`."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc.wait(timeout=timeout)


def start_nginx(run_dir: Path, upstreams: list[str], ready_timeout: float = 20.0) -> Nginx:
    """nginx (foreground master, `daemon off`) on a free port in front of `upstreams` (host:port)."""
    from workbench.stack.nginx import find_nginx, write_config

    binary = find_nginx()
    if binary is None:
        import pytest

        pytest.skip("nginx is not installed (apt-get install nginx)")
    port = process.free_port("127.0.0.1")
    config = write_config(run_dir, "127.0.0.1", port, upstreams)
    error_log = (run_dir / "logs" / "nginx-error.log").resolve()
    proc = subprocess.Popen(
        [binary, "-c", str(config), "-p", str(config.parent), "-e", str(error_log)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    balancer = Nginx(f"http://127.0.0.1:{port}", proc)
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, error_log.read_text(errors="replace") if error_log.exists() else "nginx exited"
        try:
            if requests.get(f"{balancer.url}/", timeout=1).status_code == 200:
                return balancer
        except requests.RequestException:
            pass
        time.sleep(0.1)
    balancer.stop()
    raise AssertionError(f"nginx on {port} did not answer within {ready_timeout:.0f} s")
