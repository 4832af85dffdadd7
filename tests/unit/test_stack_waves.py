"""`up` starts services wave by wave: a wave's services side by side and awaited together, the
next wave only once they answer, and the first failure ends the start without waiting out the
others. Stand-in services record what happens; no process is started."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

import pytest

from workbench.config import load_profile
from workbench.errors import StackError
from workbench.stack.lifecycle import _start_in_waves, services_for
from workbench.stack.services import Service
from workbench.stack.state import ServiceRecord, StackState

#: Seconds a stand-in waits for its partner before it gives up (only a broken start waits that long).
PATIENCE_S = 30.0


class _StandIn(Service):
    """A service whose start is a record and whose readiness is a function the test gives."""

    def __init__(self, name: str, wave: int, ready: threading.Event, log: list[str]) -> None:
        super().__init__(load_profile("local"), name)
        self.wave, self.ready, self.log = wave, ready, log

    def listen_on(self) -> tuple[str, int]:
        return "127.0.0.1", 0

    def command(self, host: str, port: int, run_dir: Path, started: Mapping[str, ServiceRecord]) -> list[str]:
        return []

    def is_healthy(self, address: str) -> bool:
        return True

    def start(self, run_dir: Path, started: Mapping[str, ServiceRecord]) -> ServiceRecord:
        self.log.append(f"start {self.name} after {sorted(started)}")
        return ServiceRecord(name=self.name, kind="stand-in", pid=0, create_time=0.0, address="-", log="-")

    def wait_ready(self, record: ServiceRecord, timeout: float) -> None:
        self.log.append(f"wait {self.name}")
        self.answer()

    def answer(self) -> None:
        self.ready.set()


class _Partner(_StandIn):
    """Answers only once `other` has been started and is being waited for: a sequential start hangs."""

    def __init__(self, name: str, wave: int, ready: threading.Event, log: list[str], other: threading.Event) -> None:
        super().__init__(name, wave, ready, log)
        self.other = other

    def answer(self) -> None:
        self.ready.set()
        if not self.other.wait(PATIENCE_S):
            raise StackError(f"{self.name}: its partner was never waited for")


class _Broken(_StandIn):
    def answer(self) -> None:
        raise StackError(f"{self.name} did not answer")


def test_a_wave_starts_side_by_side_and_the_next_waits_for_it(tmp_path: Path) -> None:
    log: list[str] = []
    a_ready, b_ready, proxy_ready = threading.Event(), threading.Event(), threading.Event()
    services = [
        _StandIn("proxy", 2, proxy_ready, log),
        _Partner("broker-a", 0, a_ready, log, b_ready),
        _Partner("broker-b", 0, b_ready, log, a_ready),
    ]
    state = StackState(profile="local")
    _start_in_waves(services, tmp_path, state)
    assert list(state.services) == ["broker-a", "broker-b", "proxy"], "start order: by wave, then as listed"
    assert log.index("start broker-b after ['broker-a']") < log.index("wait broker-a"), "a wave starts before it waits"
    assert log[-2:] == ["start proxy after ['broker-a', 'broker-b']", "wait proxy"]


def test_the_first_failure_ends_the_start_without_waiting_for_the_rest(tmp_path: Path) -> None:
    log: list[str] = []
    never, released = threading.Event(), threading.Event()
    services = [_Partner("slow", 0, threading.Event(), log, released), _Broken("broken", 0, never, log)]
    state = StackState(profile="local")
    try:
        with pytest.raises(StackError, match="broken did not answer"):
            _start_in_waves(services, tmp_path, state)
        assert not released.is_set(), "raised while the other was still waiting"
        assert set(state.services) == {"slow", "broken"}, "both recorded, so the caller stops both"
    finally:
        released.set()


def test_the_geo_profile_starts_both_clusters_first_and_its_workers_with_the_proxies() -> None:
    waves = {service.name: service.wave for service in services_for(load_profile("local-geo"))}
    assert waves == {"broker": 0, "b-broker": 0, "proxy-0": 2, "b-proxy": 2, "mirror-1": 2, "mirror-2": 2}
