"""A compiled HTTP load generator (wrk) for the proxy benchmarks, so they measure the proxy.

The Python `requests` client spends about as much CPU per MB as the proxy itself, on
the same two cores, so with it a proxy benchmark partly measures its own client. wrk
(Debian package `wrk`) is an event-loop C client: keep-alive connections, a POST body
set once from a Lua script, a few microseconds of CPU per request and an HDR latency
histogram. (h2load needs HTTP/2 or `--h1` and reports no per-process CPU of its own; ab
speaks HTTP/1.0, runs one thread and sends a body only from a file per run.)

The client's CPU is read from the kernel's accounting of the finished wrk process
(`os.wait4`), and a run where it used nearly all of its threads' time is flagged as
`client_saturated`: such a run measured the client, not the proxy.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import BenchError

__all__ = ["CLIENTS", "SATURATED_SHARE", "WrkResult", "is_saturated", "require_wrk", "run_wrk", "wrk_path"]

#: The load generators the proxy benchmarks take as `client`.
CLIENTS = ("python", "wrk")
#: A client busy for this share of its threads' time (or more) was the bottleneck.
SATURATED_SHARE = 0.9
_INSTALL = "sudo apt-get install wrk (Debian/Ubuntu; `make setup` installs it when run as root)"

_REPORT = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\\nWRK-RESULT {"requests": %d, "duration_us": %d, "bytes": %d, "connect": %d, "read": %d, "write": %d, '
    .. '"status": %d, "timeout": %d, "p50_us": %d, "p95_us": %d, "p99_us": %d, "max_us": %d}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max))
end
"""


def wrk_path() -> str | None:
    """The wrk executable, or None when it is not installed."""
    return shutil.which("wrk") or ("/usr/sbin/wrk" if os.access("/usr/sbin/wrk", os.X_OK) else None)


def require_wrk() -> str:
    """The wrk executable; a BenchError saying how to install it when it is missing."""
    path = wrk_path()
    if path is None:
        raise BenchError(
            f"client='wrk' needs the wrk load generator, which is not installed: {_INSTALL}; "
            "or run with client='python'"
        )
    return path


def is_saturated(client_cpu_s: float, seconds: float, cores: int) -> bool:
    """Whether a client used (nearly) all the CPU it could: `cores` busy for `seconds`."""
    usable = min(cores, os.cpu_count() or 1)
    return seconds > 0 and client_cpu_s >= SATURATED_SHARE * usable * seconds


@dataclass(frozen=True)
class WrkResult:
    """What one wrk run did: requests, their latency, errors, and wrk's own CPU."""

    requests: int
    seconds: float
    bytes_read: int
    errors: int
    #: Responses with a status other than 2xx/3xx (counted in `errors` too).
    bad_status: int
    #: What the script passed to `wb_stop(why)` ("" when it did not stop the run).
    stopped_because: str
    latency_ms: dict[str, float]
    client_cpu_s: float
    threads: int

    @property
    def saturated(self) -> bool:
        return is_saturated(self.client_cpu_s, self.seconds, self.threads)


def run_wrk(
    url: str,
    *,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    connections: int = 1,
    threads: int = 1,
    seconds: float = 10.0,
    lua: str = "",
    timeout_s: float = 30.0,
) -> WrkResult:
    """Run wrk against `url` for `seconds` (or until the script stops every thread).

    Args:
        method, body, headers: the one request every connection repeats (keep-alive).
        connections: connections held open, each with one request in flight.
        threads: wrk threads (at most `connections`).
        lua: more Lua for the script, e.g. a `response` function that calls `wb_stop()` to
            end the run early (wrk itself would sit out the rest of `seconds`).
        timeout_s: wrk's per-request timeout (a slower request counts as an error).

    Raises:
        BenchError: wrk is missing, or failed without a result.
    """
    executable = require_wrk()
    threads = max(1, min(threads, connections))
    with tempfile.TemporaryDirectory(prefix="wb-wrk-") as folder:
        script = Path(folder) / "load.lua"
        stop_file = Path(folder) / "stopped"
        lines = [
            f"wrk.method = {_lua_string(method)}",
            f"wb_stop = function(why) wrk.thread:stop(); local f = io.open({_lua_string(str(stop_file))}, 'w'); "
            "f:write(why or ''); f:close() end",
        ]
        if body is not None:
            body_file = Path(folder) / "body"
            body_file.write_bytes(body)
            lines.append(f"local f = io.open({_lua_string(str(body_file))}, 'rb'); wrk.body = f:read('*a'); f:close()")
        for name, value in (headers or {}).items():
            lines.append(f"wrk.headers[{_lua_string(name)}] = {_lua_string(value)}")
        script.write_text("\n".join(lines) + "\n" + lua + _REPORT)
        command = [
            executable,
            "-t",
            str(threads),
            "-c",
            str(connections),
            "-d",
            f"{max(1, round(seconds))}s",
            "--timeout",
            f"{max(1, round(timeout_s))}s",
            "-s",
            str(script),
            url,
        ]
        out = Path(folder) / "out"
        with out.open("wb") as sink:
            started = time.perf_counter()
            proc = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
            status, usage = _wait(proc, stop_file)
            elapsed = time.perf_counter() - started
            proc.returncode = os.waitstatus_to_exitcode(status)
            text = out.read_text(errors="replace")
        why = stop_file.read_text(errors="replace") if stop_file.exists() else ""
    report = next((line for line in text.splitlines() if line.startswith("WRK-RESULT ")), None)
    if report is None:
        raise BenchError(f"wrk gave no result (exit {proc.returncode}): {text.strip()[-300:]}")
    data = json.loads(report.removeprefix("WRK-RESULT "))
    errors = data["connect"] + data["read"] + data["write"] + data["status"] + data["timeout"]
    return WrkResult(
        requests=data["requests"],
        seconds=data["duration_us"] / 1e6 if data["duration_us"] else elapsed,
        bytes_read=data["bytes"],
        errors=errors,
        bad_status=data["status"],
        stopped_because=why,
        latency_ms={
            "latency_p50_ms": data["p50_us"] / 1000,
            "latency_p95_ms": data["p95_us"] / 1000,
            "latency_p99_ms": data["p99_us"] / 1000,
            "latency_max_ms": data["max_us"] / 1000,
        },
        client_cpu_s=usage.ru_utime + usage.ru_stime,
        threads=threads,
    )


def _wait(proc: subprocess.Popen[bytes], stop_file: Path) -> tuple[int, Any]:
    """Wait for wrk, interrupting it (SIGINT: it stops and reports) once the script has
    written `stop_file`; (wait status, resource usage of the process)."""
    interrupted = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return status, usage
        if not interrupted and stop_file.exists():
            proc.send_signal(signal.SIGINT)
            interrupted = True
        time.sleep(0.002)


def _lua_string(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a valid Lua string literal for these values
