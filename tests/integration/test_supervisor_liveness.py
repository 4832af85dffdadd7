"""The supervisor's liveness probe, on real processes: a child whose only thread is stuck in
a request answers nothing; the supervisor has it write its threads' stacks into its log,
kills it and starts another, and says why in its state file."""

from __future__ import annotations

import contextlib
import http.server
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
import requests

from workbench.stack import process, supervisor

#: A one-thread HTTP server: `/stick` blocks it for good; any other path answers 200.
CHILD = """
import faulthandler, signal, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer

faulthandler.register(signal.SIGUSR2, file=sys.stderr, all_threads=True)

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/stick":
            stuck_in_a_request()
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass

def stuck_in_a_request():
    time.sleep(3600)

HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def test_a_child_that_answers_nothing_is_dumped_killed_and_started_again(tmp_path: Path) -> None:
    port = process.free_port("127.0.0.1")
    url = f"http://127.0.0.1:{port}"
    (tmp_path / "child.py").write_text(CHILD)
    state, log = tmp_path / "child.supervisor.json", tmp_path / "child.log"
    argv = supervisor.supervised_command(
        "child", state, [sys.executable, str(tmp_path / "child.py"), str(port)], probe=f"{url}/", unresponsive_s=3
    )
    with log.open("wb") as out:
        watcher = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    try:
        first = _serving(state, url)
        with contextlib.suppress(requests.exceptions.ReadTimeout):  # it took it and answers no more
            requests.get(f"{url}/stick", timeout=0.5)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and supervisor.facts(state).get("restarts") != 1:
            time.sleep(0.2)
        facts = supervisor.facts(state)
        assert facts["restarts"] == 1, facts
        assert "answered no request for" in facts["last_exit"] and "killed" in facts["last_exit"], facts
        second = _serving(state, url)
        assert second != first and _gone(first), "the stuck child was killed, another serves"
        text = log.read_text()
        assert "answered no request" in text, "the supervisor says why, in the child's log"
        assert "stuck_in_a_request" in text and "do_GET" in text, "the stuck thread's stack is in the log"
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(30)
    assert _gone(second), "nothing left behind"


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _serving(state: Path, url: str) -> int:
    """The serving child's pid, once it answers."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if supervisor.answers(f"{url}/", timeout=1.0) and supervisor.facts(state).get("serving_pid"):
            return int(supervisor.facts(state)["serving_pid"])
        time.sleep(0.1)
    raise AssertionError(f"the child never answered on {url}")


def test_services_of_this_machine_are_asked_directly_whatever_http_proxy_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """With `http_proxy` naming a port where nothing listens (a proxy meant for the internet,
    no `no_proxy`), a local service still answers its supervisor's probe: `workbench up`
    failed its health checks this way until they went direct."""
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for name in ("http_proxy", "HTTP_PROXY"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{process.free_port('127.0.0.1')}")
        monkeypatch.delenv("no_proxy", raising=False)
        monkeypatch.delenv("NO_PROXY", raising=False)
        assert supervisor.answers(f"http://127.0.0.1:{server.server_port}/", timeout=5.0)
    finally:
        server.shutdown()
        server.server_close()
