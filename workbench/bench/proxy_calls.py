"""Produce calls to a REST proxy's HTTP API, from threads, client processes or wrk.

`proxy_produce` loads a real proxy with them and `http_floor` a bare HTTP app: the same
calls, the same bodies (built once per size, so a run measures the server, not JSON
encoding) and the same outcome, so the two rows compare.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from workbench.bench._run import result_row
from workbench.bench.loadgen import CLIENTS, is_saturated, require_wrk, run_wrk
from workbench.bench.payload import key_pool, value_pool
from workbench.errors import BenchError, ProxyError
from workbench.measure.failures import FailureTally
from workbench.measure.resources import ResourceMonitor, cpu_seconds
from workbench.proxy import EncodedRecords, ProxyClient, encode_records
from workbench.proxy.client import Trace, trace_header_value
from workbench.proxy.records import TRACE_HEADER
from workbench.proxy.wire import V2_ACCEPT, embedded_type, encode_topic
from workbench.stack import Stack

__all__ = [
    "CallOutcome",
    "ProduceJob",
    "calls_row",
    "check_client",
    "client_columns",
    "request_bodies",
    "run_calls",
    "run_in_processes",
    "run_wrk_calls",
]


class ProduceJob(NamedTuple):
    """The calls of a run: where, how many records a call (`last_size` in the last one),
    their size and format, the client threads, and whether the proxy traces the records
    (`Workbench-Trace: true`); picklable for a spawned process."""

    urls: list[str]
    topic: str
    records_per_call: int
    last_size: int
    record_bytes: int
    format: str
    session_reuse: bool
    concurrency: int
    max_seconds: float
    trace: Trace = False


@dataclass
class CallOutcome:
    """What the calls of a run did: records acknowledged and failed, each call's latency (s),
    and the CPU seconds of client processes measured apart from this one."""

    acknowledged: int = 0
    failures: FailureTally = field(default_factory=FailureTally)
    latencies: list[float] = field(default_factory=list)
    child_cpu_s: float = 0.0
    #: Set by wrk, which reports calls and latency percentiles rather than samples.
    calls: int | None = None
    latency_ms: dict[str, float] | None = None

    @property
    def failed(self) -> int:
        """Records the proxy did not write, whatever the cause (`failures` has the causes)."""
        return self.failures.total

    def add(self, other: CallOutcome) -> None:
        """Add another outcome's counts, latencies and CPU (a client process's)."""
        self.acknowledged += other.acknowledged
        self.failures.merge(other.failures)
        self.latencies.extend(other.latencies)
        self.child_cpu_s += other.child_cpu_s


def check_client(client: str) -> None:
    """Refuse an unknown load generator, and `wrk` where it is not installed (`BenchError`)."""
    if client not in CLIENTS:
        raise BenchError(f"client must be one of {', '.join(CLIENTS)}, got {client!r}")
    if client == "wrk":
        require_wrk()


def client_columns(client: str, client_cpu_s: float, seconds: float, processes: int) -> dict[str, Any]:
    """`client_cpu_share` (cores busy) and `client_saturated`: a Python client process is
    one interpreter (about one core, whatever its threads), wrk one thread per process."""
    return {
        "client_cpu_share": client_cpu_s / seconds if seconds > 0 else float("nan"),
        "client_saturated": is_saturated(client_cpu_s, seconds, processes),
    }


def calls_row(
    stack: Stack,
    *,
    experiment: str,
    params: Mapping[str, Any],
    outcome: CallOutcome,
    record_bytes: int,
    seconds: float,
    monitor: ResourceMonitor,
    client: str,
    processes: int = 1,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The row of a run of produce calls, alike for every server they load, so the rows compare.

    Args:
        outcome, seconds: what the run did and how long it took (`run_calls`, `run_in_processes`,
            `run_wrk_calls`); the records are those acknowledged.
        monitor: the run's monitor; the client processes' CPU is added to `client_cpu_s`.
        client, processes: the load generator, for `client_columns`.
        extra: the experiment's own columns, after `acknowledged`.

    Usage: `calls_row(stack, experiment="http_floor", params=..., outcome=outcome, record_bytes=1000,
    seconds=seconds, monitor=monitor, client="python")`.
    """
    resources = monitor.columns()
    resources["client_cpu_s"] += outcome.child_cpu_s
    sent = outcome.acknowledged
    return result_row(
        stack,
        experiment=experiment,
        params=params,
        records=sent,
        payload_bytes=sent * record_bytes,
        seconds=seconds,
        latencies=outcome.latencies,
        latency_of="HTTP produce call",
        resources=resources,
        extra={
            "acknowledged": sent,
            **(extra or {}),
            "calls": outcome.calls if outcome.calls is not None else len(outcome.latencies),
            **client_columns(client, resources["client_cpu_s"], seconds, processes),
            **(outcome.latency_ms or {}),
        },
    )


def request_bodies(job: ProduceJob, last_is_short: bool = True) -> tuple[EncodedRecords, EncodedRecords]:
    """The body of every call and of the last one, built before a run is timed (a 500-record
    body of 1 KB values takes 18 ms to encode, 4.5 ms of 100 B ones: in the timed run until now)."""
    body = _bodies(job.records_per_call, job.record_bytes, job.format)
    if job.last_size == job.records_per_call or not last_is_short:
        return body, body
    return body, _bodies(job.last_size, job.record_bytes, job.format)


def run_calls(job: ProduceJob, calls: int, bodies: tuple[EncodedRecords, EncodedRecords]) -> CallOutcome:
    """Send `calls` produce calls of `bodies` (`request_bodies`) from `job.concurrency`
    threads; stop at `job.max_seconds`."""
    body, last_body = bodies
    lock = threading.Lock()
    outcome = CallOutcome()
    issued = [0]
    errors: list[BaseException] = []
    deadline = time.perf_counter() + job.max_seconds

    def worker() -> None:
        client = ProxyClient(job.urls, session_reuse=job.session_reuse, pool_size=1)
        try:
            while True:
                with lock:
                    if issued[0] >= calls or time.perf_counter() > deadline or errors:
                        return
                    issued[0] += 1
                    chosen = last_body if issued[0] == calls else body
                before = time.perf_counter()
                try:
                    result = client.produce(job.topic, chosen, trace=job.trace)
                except ProxyError as refused:
                    if refused.status != 413:  # only a size limit is the run's finding; the rest end it
                        raise
                    with lock:
                        outcome.failures.add(refused.error_code, refused.message, chosen.count)
                    continue
                elapsed = time.perf_counter() - before
                with lock:
                    outcome.latencies.append(elapsed)
                    outcome.acknowledged += result.acknowledged
                    for error in result.errors if result.failed else ():
                        outcome.failures.add(error.error_code, error.error or "")
        except BaseException as exc:
            errors.append(exc)
        finally:
            client.close()

    threads = [threading.Thread(target=worker, name=f"proxy-load-{i}") for i in range(job.concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return outcome


def run_in_processes(job: ProduceJob, shares: list[int]) -> tuple[CallOutcome, float]:
    """Run the shares in spawned processes, timed from a common start to the last result.

    Spawned, not forked: the parent holds librdkafka threads, which a fork would copy
    in an undefined state.
    """
    import multiprocessing as mp

    context = mp.get_context("spawn")
    ready, results, start = context.Queue(), context.Queue(), context.Event()
    procs = [
        context.Process(
            target=_client_process, args=(job, share, i == len(shares) - 1, ready, start, results), daemon=True
        )
        for i, share in enumerate(shares)
    ]
    for proc in procs:
        proc.start()
    try:
        for _ in procs:
            ready.get(timeout=60)
        started = time.perf_counter()
        start.set()
        total = CallOutcome()
        for _ in procs:
            item = results.get(timeout=job.max_seconds + 120)
            if isinstance(item, BaseException):
                raise item
            total.add(item)
        seconds = time.perf_counter() - started
    finally:
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
    return total, seconds


def _client_process(job: ProduceJob, calls: int, last_is_short: bool, ready: Any, start: Any, results: Any) -> None:
    """A client process: build its bodies, say it is ready, wait for the start, run, report."""
    try:
        bodies = request_bodies(job, last_is_short)
        ready.put(True)
        start.wait()
        before = cpu_seconds(os.getpid())
        outcome = run_calls(job, calls, bodies)
        outcome.child_cpu_s = cpu_seconds(os.getpid()) - before  # the load's CPU only, not the start-up imports
        results.put(outcome)
    except BaseException as exc:
        results.put(BenchError(f"client process failed: {type(exc).__name__}: {exc}"))


def run_wrk_calls(job: ProduceJob, processes: int) -> tuple[CallOutcome, float]:
    """Produce with wrk: `job.concurrency` keep-alive connections repeating one body for
    `job.max_seconds`; only 2xx answers count as acknowledged (per-record errors in them
    show as landed < acknowledged)."""
    body = _bodies(job.records_per_call, job.record_bytes, job.format)
    headers = {"Content-Type": embedded_type(body.format), "Accept": V2_ACCEPT}
    if job.trace:
        headers[TRACE_HEADER] = trace_header_value(job.trace)
    url = f"{job.urls[0].rstrip('/')}/topics/{encode_topic(job.topic)}"
    result = run_wrk(
        url,
        method="POST",
        body=body.body,
        headers=headers,
        connections=job.concurrency * processes,
        threads=processes,
        seconds=job.max_seconds,
    )
    good = result.requests - result.bad_status
    failures = FailureTally()
    if result.bad_status:  # wrk counts the answers, not what they said
        failures.add("non-2xx", "wrk counted answers outside 2xx", result.bad_status * job.records_per_call)
    outcome = CallOutcome(
        acknowledged=good * job.records_per_call,
        failures=failures,
        child_cpu_s=result.client_cpu_s,
        calls=result.requests,
        latency_ms=result.latency_ms,
    )
    return outcome, result.seconds


def _bodies(count: int, record_bytes: int, format: str) -> EncodedRecords:
    """One call's body, built once: a benchmark measures the proxy, not JSON encoding."""
    values = value_pool(record_bytes, distinct=min(1024, count))
    keys = key_pool()
    if format == "json":
        items: list[Any] = [
            {"key": keys[i % len(keys)].decode(), "value": values[i % len(values)].decode()} for i in range(count)
        ]
    else:
        items = [(keys[i % len(keys)], values[i % len(values)]) for i in range(count)]
    return encode_records(items, format)  # type: ignore[arg-type]
