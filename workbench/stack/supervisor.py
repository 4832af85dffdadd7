"""A supervisor for one stack service: restart it when it dies, say so, stop it on request.

`workbench up` leaves its services running after the command returns, so nothing would
notice a proxy killed by the OOM killer, a librdkafka assertion or a stray `kill -9`:
every later call would be refused until someone ran `down` and `up`. A supervised
service runs as the child of this small process instead:

    python -m workbench.stack.supervisor --name proxy-0 --state RUN/proxy-0.supervisor.json -- ARGV...

- the child is restarted when it exits without being asked to, after a back-off that
  doubles from 0.5 s to 10 s (reset once a child has served for a minute); more than
  `MAX_RESTARTS` restarts within `WINDOW_S` means it cannot start, and the supervisor
  exits 1, so `status` shows the service down instead of a restart loop;
- every exit and restart is logged (to the service's log) and recorded in the state
  file, which `workbench status` shows (`restarts`, `last_exit`, `serving_pid`);
- SIGTERM (what `workbench down` sends) is passed to the child, whose own graceful
  shutdown runs to its end; then the supervisor exits;
- SIGHUP asks for a restart (`restart_service`, a rolling restart): the child gets SIGTERM,
  its graceful shutdown runs to its end, and a new child starts at once, counted in
  `requested_restarts` rather than as a failure;
- the child gets SIGTERM if the supervisor itself is killed (Linux `PR_SET_PDEATHSIG`),
  so no orphan is left serving on the port;
- with `--probe URL --unresponsive-s N`, a child that gives no HTTP answer to `GET URL`
  (any status counts) for N seconds is stuck, not busy: the supervisor asks it for its
  threads' stacks (SIGUSR2, which `run_server` hands to `faulthandler`, into its log),
  kills it and starts another, as a liveness probe does in Kubernetes. A process whose
  event loop is blocked answers nothing, not even SIGTERM, and every client would wait on
  it until `down`.
"""

from __future__ import annotations

import argparse
import ctypes
import http.client
import json
import logging
import os
import select
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from workbench.backoff import Backoff

__all__ = [
    "DIRECT_HTTP",
    "FIRST_START_S",
    "MAX_RESTARTS",
    "PROBE_EVERY_S",
    "STATE_SUFFIX",
    "Supervisor",
    "WINDOW_S",
    "answers",
    "facts",
    "main",
    "supervised_command",
]

log = logging.getLogger("workbench.supervisor")

#: Restarts allowed within WINDOW_S before the supervisor gives up.
MAX_RESTARTS = 10
WINDOW_S = 60.0
#: The wait before a restart: 0.5 s, doubling with each quick death, at most 10 s.
_RESTART = Backoff(0.5, 10.0)
#: A first child that exits with an error code sooner than this failed to start: no restart.
FIRST_START_S = 10.0
STATE_SUFFIX = ".supervisor.json"
#: How often a child with a probe URL is asked whether it answers (a third of its
#: `unresponsive_s` when that is shorter).
PROBE_EVERY_S = 5.0
#: How long a stuck child has to write its threads' stacks before it is killed.
_DUMP_S = 2.0


def supervised_command(
    name: str, state: Path, argv: Sequence[str], *, probe: str | None = None, unresponsive_s: float = 0.0
) -> list[str]:
    """The argv that runs `argv` under a supervisor recording to `state`; with `probe` and
    `unresponsive_s` > 0, a child that answers no `GET probe` for that long is restarted."""
    command = [sys.executable, "-m", "workbench.stack.supervisor", "--name", name, "--state", str(state)]
    if probe and unresponsive_s > 0:
        command += ["--probe", probe, "--unresponsive-s", f"{unresponsive_s:g}"]
    return [*command, "--", *argv]


#: Opens URLs of this machine's services directly: an `http_proxy` in the environment (and no
#: `no_proxy` naming 127.0.0.1) would answer for them, or refuse them.
DIRECT_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def answers(url: str, timeout: float) -> bool:
    """Whether `GET url` gets an HTTP answer within `timeout`: any status, a 401 too (the
    process serves requests); a refused or silent connection is no answer. Asked directly,
    never through an `http_proxy` of the environment, which would answer for it."""
    try:
        with DIRECT_HTTP.open(url, timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True
    except (OSError, http.client.HTTPException):
        return False


def facts(state: Path) -> dict[str, Any]:
    """What the supervisor recorded: `restarts`, `requested_restarts`, `last_exit`, `serving_pid`
    (empty if none)."""
    try:
        data = json.loads(state.read_text())
    except (OSError, ValueError):
        return {}
    return {key: data.get(key) for key in ("restarts", "requested_restarts", "last_exit", "serving_pid")}


def _exit_reason(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with code {returncode}"


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the supervisor goes (Linux only)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class _ExitWatch:
    """Sleeps until a process exits or a timeout passes, without polling: a pidfd (Linux
    5.3+) is readable once the process has exited; elsewhere, naps of half a second."""

    def __init__(self, pid: int) -> None:
        try:
            self.fd: int | None = os.pidfd_open(pid)
        except (AttributeError, OSError):
            self.fd = None

    def __enter__(self) -> _ExitWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)

    def wait(self, timeout: float) -> None:
        if self.fd is None:
            time.sleep(min(timeout, 0.5))
        else:
            select.select([self.fd], [], [], timeout)


class Supervisor:
    """Runs one child, restarts it on unexpected exits, stops it on SIGTERM."""

    def __init__(
        self, name: str, state: Path, argv: list[str], *, probe: str | None = None, unresponsive_s: float = 0.0
    ) -> None:
        self.name = name
        self.state = state
        self.argv = argv
        self.probe = probe
        self.unresponsive_s = unresponsive_s
        #: Why the supervisor killed the child it waits on (None: it did not).
        self.killed_for: str | None = None
        self.child: subprocess.Popen[bytes] | None = None
        self.stopping = False
        self.restart_requested = False
        self.requested_restarts = 0
        self.restarts = 0
        self.last_exit: str | None = None
        self.recent: list[float] = []

    def _save(self) -> None:
        data = {
            "name": self.name,
            "supervisor_pid": os.getpid(),
            "restarts": self.restarts,
            "requested_restarts": self.requested_restarts,
            "last_exit": self.last_exit,
            "serving_pid": self.child.pid if self.child else None,
        }
        tmp = self.state.with_name(f".{self.state.name}.tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(self.state)

    def _stop(self, signum: int, _frame: Any) -> None:
        self.stopping = True
        if self.child is not None and self.child.poll() is None:
            self.child.send_signal(signal.SIGTERM)

    def _restart(self, signum: int, _frame: Any) -> None:
        if self.child is not None and self.child.poll() is None and not self.stopping:
            self.restart_requested = True
            self.child.send_signal(signal.SIGTERM)

    def _start_child(self) -> None:
        self.child = subprocess.Popen(self.argv, preexec_fn=_die_with_parent)  # the supervisor runs no threads
        self._save()

    def _wait(self) -> int:
        """The child's exit code, once it exits; with a probe, a child that answers nothing
        for `unresponsive_s` is made to dump its threads and killed first."""
        assert self.child is not None
        if not self.probe or self.unresponsive_s <= 0:
            return self.child.wait()
        every = min(PROBE_EVERY_S, self.unresponsive_s / 3)
        answered = time.monotonic()  # starting counts as answering: `up` waits for the start
        next_probe = answered + every
        with _ExitWatch(self.child.pid) as exited:
            while (returncode := self.child.poll()) is None:
                if time.monotonic() >= next_probe and not (self.stopping or self.restart_requested):
                    if answers(self.probe, timeout=every):
                        answered = time.monotonic()
                    elif time.monotonic() - answered >= self.unresponsive_s:
                        self._kill_stuck(time.monotonic() - answered)
                    next_probe = time.monotonic() + every
                exited.wait(max(0.0, next_probe - time.monotonic()))
        return returncode

    def _kill_stuck(self, silent_s: float) -> None:
        """Dump the stuck child's threads into its log (SIGUSR2, `faulthandler`), then kill it:
        a graceful stop would need the event loop that no longer runs."""
        assert self.child is not None
        self.killed_for = f"answered no request for {silent_s:.0f} s (GET {self.probe}); killed"
        log.error(
            "%s (pid %d) %s: the stacks of its threads follow, then a new one starts",
            self.name,
            self.child.pid,
            self.killed_for.removesuffix("; killed"),
        )
        self.child.send_signal(signal.SIGUSR2)
        time.sleep(_DUMP_S)
        self.child.kill()

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGHUP, self._restart)
        failures = 0
        self._start_child()
        while True:
            assert self.child is not None
            started = time.monotonic()
            returncode = self._wait()
            if self.stopping:
                return 0 if returncode in (0, -signal.SIGTERM) else returncode
            if self.restart_requested:
                self.restart_requested = False
                self.requested_restarts += 1
                reason = _exit_reason(returncode)
                log.info("%s (pid %d) %s as asked; starting it again", self.name, self.child.pid, reason)
                self._start_child()
                continue
            self.last_exit, self.killed_for = self.killed_for or _exit_reason(returncode), None
            now = time.monotonic()
            if self.restarts == 0 and returncode > 0 and now - started < FIRST_START_S:
                log.error("%s %s while starting; not restarting it (see the lines above)", self.name, self.last_exit)
                self.child = None
                self._save()
                return returncode  # a start-up error (port taken, bad settings): `up` reports it at once
            if now - started > WINDOW_S:
                failures = 0
            failures += 1
            backoff = _RESTART.delay(failures)
            self.recent = [t for t in self.recent if now - t < WINDOW_S] + [now]
            if len(self.recent) > MAX_RESTARTS:
                log.error(
                    "%s %s; %d restarts within %.0f s: giving up", self.name, self.last_exit, MAX_RESTARTS, WINDOW_S
                )
                self.child = None
                self._save()
                return 1
            log.warning(
                "%s (pid %d) %s; restarting it in %.1f s (restart %d)",
                self.name,
                self.child.pid,
                self.last_exit,
                backoff,
                self.restarts + 1,
            )
            deadline = time.monotonic() + backoff
            while time.monotonic() < deadline and not self.stopping:
                time.sleep(0.05)
            if self.stopping:
                return 0
            self.restarts += 1
            self._start_child()


def main(args: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workbench.stack.supervisor")
    parser.add_argument("--name", required=True)
    parser.add_argument("--state", required=True, type=Path)
    parser.add_argument("--probe", help="a URL the child answers while it serves")
    parser.add_argument("--unresponsive-s", type=float, default=0.0, help="restart after this long without an answer")
    parser.add_argument("argv", nargs=argparse.REMAINDER)
    options = parser.parse_args(args)
    argv = options.argv[1:] if options.argv[:1] == ["--"] else options.argv
    if not argv:
        parser.error("the command to supervise follows `--`")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return Supervisor(
        options.name, options.state, argv, probe=options.probe, unresponsive_s=options.unresponsive_s
    ).run()


if __name__ == "__main__":
    sys.exit(main())
