"""REST proxy load generators: what a records array, a session, threads and a format buy.

The topic is created natively (the proxy never auto-creates), the load goes through
`ProxyClient`, and what landed is checked with the true end offsets, so a row's
`acknowledged` and `landed` must agree. A load runs until `records` are sent or
`max_seconds` have passed, whichever is first, so one-record-per-call points stay
short; the rates are computed from what was actually sent.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from workbench import kafka
from workbench.bench._run import TOPIC_PREFIX, bench_topic, result_row, timed_reads
from workbench.bench.errors import BenchError
from workbench.bench.loadgen import CLIENTS, is_saturated, require_wrk, run_wrk
from workbench.bench.native import Timeline, fill_topic, timeline_cv
from workbench.bench.payload import key_pool, value_pool
from workbench.bench.resources import ResourceMonitor
from workbench.proxy import EncodedRecords, ProxyClient, encode_records
from workbench.proxy.client import V2, V2_ACCEPT, encode_topic, proxy_urls
from workbench.stack import Stack

__all__ = ["proxy_consume", "proxy_produce"]


def proxy_produce(
    stack: Stack,
    *,
    records: int = 50_000,
    record_bytes: int = 100,
    records_per_call: int = 100,
    session_reuse: bool = True,
    concurrency: int = 1,
    processes: int = 1,
    format: str = "binary",
    partitions: int = 4,
    max_seconds: float = 10.0,
    balanced: bool = True,
    urls: Sequence[str] | None = None,
    topic_prefix: str = TOPIC_PREFIX,
    client: str = "python",
) -> dict[str, Any]:
    """Produce through the REST proxy with `processes` x `concurrency` client threads.

    Args:
        records: records to send at most.
        record_bytes: size of each value (before base64 for binary).
        records_per_call: records in each call's array (the MapR article's first advice).
        session_reuse: reuse connections (one pooled session per thread) or not.
        concurrency: client threads per process, each with its own `ProxyClient`.
        processes: client processes (1: this one). Python threads share one core's worth
            of interpreter, so loading several proxies needs several client processes.
        format: "binary" or "json" embedded format.
        partitions: partitions of the fresh topic.
        max_seconds: stop issuing calls after this long.
        balanced: through the balancer when the stack has one (else every proxy URL,
            rotated by the client).
        urls: base URLs to use instead of the stack's.
        client: "python" (`ProxyClient` threads) or "wrk" (the compiled load generator,
            `concurrency` connections on one wrk thread per client process; it runs for
            `max_seconds`, whatever `records` says, and `acknowledged` counts the
            records of its 2xx answers).

    Returns:
        One row; latency is one HTTP call's round trip; `client_cpu_s` includes the
        client processes, and `client_saturated` flags a run where the client used
        (nearly) all the CPU it could, so measured itself more than the proxy.

    Usage: `proxy_produce(stack, records_per_call=500, session_reuse=True)`.
    """
    if records_per_call < 1 or concurrency < 1 or records < 1 or processes < 1:
        raise BenchError("records, records_per_call, concurrency and processes must each be at least 1")
    if format not in ("binary", "json"):
        raise BenchError(f"format must be 'binary' or 'json', got {format!r}")
    _check_client(client)
    base_urls = list(urls) if urls else proxy_urls(stack, balanced=balanced)
    calls = math.ceil(records / records_per_call)
    shares = [calls // processes + (1 if i < calls % processes else 0) for i in range(processes)]
    last_size = records - (calls - 1) * records_per_call
    job = _Job(
        base_urls, "", records_per_call, last_size, record_bytes, format, session_reuse, concurrency, max_seconds
    )

    with bench_topic(stack, partitions, topic_prefix) as topic:
        job = job._replace(topic=topic)
        with ResourceMonitor(stack.services) as monitor:
            if client == "wrk":
                outcome, seconds = _run_wrk(job, processes)
            elif processes == 1:
                started = time.perf_counter()
                outcome = _run_calls(job, calls)
                seconds = time.perf_counter() - started
            else:
                outcome, seconds = _run_in_processes(job, shares)
        landed = sum(kafka.end_offsets(stack.kafka_config("admin"), topic).values())
    resources = monitor.columns()
    resources["client_cpu_s"] += outcome.child_cpu_s
    sent = outcome.acknowledged
    client_columns = _client_columns(client, resources["client_cpu_s"], seconds, processes)
    return result_row(
        stack,
        experiment="proxy_produce",
        params={
            "records": records,
            "record_bytes": record_bytes,
            "records_per_call": records_per_call,
            "session_reuse": session_reuse,
            "concurrency": concurrency,
            "processes": processes,
            "format": format,
            "partitions": partitions,
            "client": client,
        },
        records=sent,
        payload_bytes=sent * record_bytes,
        seconds=seconds,
        latencies=outcome.latencies,
        latency_of="HTTP produce call",
        resources=resources,
        extra={
            "acknowledged": sent,
            "failed": outcome.failed,
            "landed": landed,
            "calls": outcome.calls if outcome.calls is not None else len(outcome.latencies),
            "proxy_urls": len(base_urls),
            **client_columns,
            **(outcome.latency_ms or {}),
        },
    )


def _check_client(client: str) -> None:
    if client not in CLIENTS:
        raise BenchError(f"client must be one of {', '.join(CLIENTS)}, got {client!r}")
    if client == "wrk":
        require_wrk()


def _client_columns(client: str, client_cpu_s: float, seconds: float, processes: int) -> dict[str, Any]:
    """`client_cpu_share` (cores busy) and `client_saturated`: a Python client process is
    one interpreter (about one core, whatever its threads), wrk one thread per process."""
    return {
        "client_cpu_share": client_cpu_s / seconds if seconds > 0 else float("nan"),
        "client_saturated": is_saturated(client_cpu_s, seconds, processes),
    }


def _run_wrk(job: _Job, processes: int) -> tuple[_Outcome, float]:
    """Produce with wrk: `job.concurrency` keep-alive connections repeating one body for
    `job.max_seconds`; only 2xx answers count as acknowledged (per-record errors in them
    show as landed < acknowledged)."""
    body = _bodies(job.records_per_call, job.record_bytes, job.format)
    headers = {"Content-Type": f"application/vnd.kafka.{body.format}.v2+json", "Accept": V2_ACCEPT}
    url = f"{job.urls[0].rstrip('/')}/topics/{encode_topic(job.topic)}"
    result = run_wrk(url, method="POST", body=body.body, headers=headers, connections=job.concurrency * processes,
                     threads=processes, seconds=job.max_seconds)  # fmt: skip
    good = result.requests - result.bad_status
    outcome = _Outcome(
        acknowledged=good * job.records_per_call,
        failed=result.bad_status * job.records_per_call,
        child_cpu_s=result.client_cpu_s,
        calls=result.requests,
        latency_ms=result.latency_ms,
    )
    return outcome, result.seconds


class _Job(NamedTuple):
    """What a client process needs to run its share of calls (picklable for spawn)."""

    urls: list[str]
    topic: str
    records_per_call: int
    last_size: int
    record_bytes: int
    format: str
    session_reuse: bool
    concurrency: int
    max_seconds: float


@dataclass
class _Outcome:
    acknowledged: int = 0
    failed: int = 0
    latencies: list[float] = field(default_factory=list)
    child_cpu_s: float = 0.0
    #: Set by wrk, which reports calls and latency percentiles rather than samples.
    calls: int | None = None
    latency_ms: dict[str, float] | None = None


def _run_calls(job: _Job, calls: int, last_is_short: bool = True) -> _Outcome:
    """Send `calls` produce calls from `job.concurrency` threads; stop at `job.max_seconds`."""
    body = _bodies(job.records_per_call, job.record_bytes, job.format)
    last_body = (
        body
        if job.last_size == job.records_per_call or not last_is_short
        else _bodies(job.last_size, job.record_bytes, job.format)
    )
    lock = threading.Lock()
    outcome = _Outcome()
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
                result = client.produce(job.topic, chosen)
                elapsed = time.perf_counter() - before
                with lock:
                    outcome.latencies.append(elapsed)
                    outcome.acknowledged += result.acknowledged
                    outcome.failed += result.failed
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


def _client_process(job: _Job, calls: int, last_is_short: bool, ready: Any, start: Any, results: Any) -> None:
    """A client process: build its bodies, say it is ready, wait for the start, run, report."""
    import psutil

    try:
        ready.put(True)
        start.wait()
        before = psutil.Process().cpu_times()
        outcome = _run_calls(job, calls, last_is_short)
        after = psutil.Process().cpu_times()  # the load's CPU only, not the start-up imports
        outcome.child_cpu_s = (after.user + after.system) - (before.user + before.system)
        results.put(outcome)
    except BaseException as exc:
        results.put(BenchError(f"client process failed: {type(exc).__name__}: {exc}"))


def _run_in_processes(job: _Job, shares: list[int]) -> tuple[_Outcome, float]:
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
        total = _Outcome()
        for _ in procs:
            item = results.get(timeout=job.max_seconds + 120)
            if isinstance(item, BaseException):
                raise item
            total.acknowledged += item.acknowledged
            total.failed += item.failed
            total.latencies.extend(item.latencies)
            total.child_cpu_s += item.child_cpu_s
        seconds = time.perf_counter() - started
    finally:
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
    return total, seconds


def proxy_consume(
    stack: Stack,
    *,
    records: int = 50_000,
    record_bytes: int = 100,
    partitions: int = 4,
    max_bytes: int | None = None,
    timeout_ms: int | None = None,
    fetch_min_bytes: int | None = None,
    request_timeout_ms: int | None = None,
    format: str = "binary",
    max_seconds: float = 60.0,
    balanced: bool = True,
    timeline: Timeline | None = None,
    sample_interval: float = 0.1,
    topic_prefix: str = TOPIC_PREFIX,
    client: str = "python",
) -> dict[str, Any]:
    """Fill a topic natively, then read it all through one proxy consumer instance.

    The instance is assigned the partitions (no group join) and deleted afterwards.

    Args:
        max_bytes: `max_bytes` of each records request (None: the proxy's 64 MiB cap).
        timeout_ms: `timeout` of each records request.
        fetch_min_bytes: the instance's `fetch.min.bytes` (the proxy returns early once
            it holds that much; -1 makes every request wait its full timeout).
        request_timeout_ms: the instance's `consumer.request.timeout.ms`.
        timeline: receives (seconds, records so far) samples, for throughput over time.
        client: "python" (`ProxyConsumer.poll`, which parses and decodes every record) or
            "wrk" (one connection repeating the records request, reading the answers
            without parsing them: the proxy's side alone). wrk stops at the first empty
            answer, which waited `timeout_ms` (default 200 with wrk) for records that
            never came; that wait is taken off the seconds. The records read are the
            positions the instance reached, committed and read back. No timeline.

    Returns:
        One row; latency is one records request; `client_cpu_s`, `client_cpu_share` and
        `client_saturated` as in `proxy_produce`.
    """
    _check_client(client)
    if client == "wrk" and timeout_ms is None:
        timeout_ms = 200
    config: dict[str, Any] = {}
    if fetch_min_bytes is not None:
        config["fetch.min.bytes"] = fetch_min_bytes
    if request_timeout_ms is not None:
        config["consumer.request.timeout.ms"] = request_timeout_ms
    samples: Timeline = timeline if timeline is not None else []
    with bench_topic(stack, partitions, topic_prefix) as topic:
        if format == "json":
            _fill_with_json(stack, topic, records, record_bytes)
        else:
            fill_topic(stack, topic, records, record_bytes)
        proxy = ProxyClient.for_stack(stack, balanced=balanced)
        assigned = [(topic, p) for p in range(partitions)]
        group = f"bench-{uuid.uuid4().hex[:8]}"
        try:
            with proxy.consumer(group, partitions=assigned, format=format, config=config) as consumer:
                latency_ms: dict[str, float] = {}
                with ResourceMonitor(stack.services) as monitor:
                    if client == "wrk":
                        count, seconds, child_cpu_s, latency_ms = _consume_with_wrk(
                            consumer, assigned, timeout_ms or 0, max_bytes, max_seconds
                        )
                        polls: list[float] = []
                    else:
                        count, seconds, polls = timed_reads(
                            lambda: len(consumer.poll(timeout_ms=timeout_ms, max_bytes=max_bytes)),
                            records, max_seconds, sample_interval, samples,
                        )  # fmt: skip
                        child_cpu_s = 0.0
        finally:
            proxy.close()
    resources = monitor.columns()
    resources["client_cpu_s"] += child_cpu_s
    return result_row(
        stack,
        experiment="proxy_consume",
        params={
            "records": records,
            "record_bytes": record_bytes,
            "partitions": partitions,
            "max_bytes": max_bytes,
            "timeout_ms": timeout_ms,
            "fetch_min_bytes": fetch_min_bytes,
            "request_timeout_ms": request_timeout_ms,
            "format": format,
            "client": client,
        },
        records=count,
        payload_bytes=count * record_bytes,
        seconds=seconds,
        latencies=polls,
        latency_of="records request returning records",
        resources=resources,
        extra={
            "expected": records,
            "msg_s_cv": timeline_cv(samples) if samples else float("nan"),
            **_client_columns(client, resources["client_cpu_s"], seconds, 1),
            **latency_ms,
        },
    )


def _fill_with_json(stack: Stack, topic: str, records: int, record_bytes: int) -> None:
    """Like `fill_topic`, with keys and values a json consumer can show: JSON strings, the
    values of exactly `record_bytes` bytes (the payload's text, quotes and line breaks made plain)."""
    width = max(0, record_bytes - 2)
    values = [b'"' + v.replace(b'"', b"'").replace(b"\n", b" ").replace(b"\\", b"/")[:width] + b'"'
              for v in value_pool(max(1, width))]  # fmt: skip
    keys = [b'"' + key + b'"' for key in key_pool()]
    result = kafka.produce(
        stack.kafka_config("producer"),
        topic,
        ((keys[i % len(keys)], values[i % len(values)]) for i in range(records)),
        settings={"linger.ms": 20, "batch.size": 1_000_000, "message.max.bytes": max(1_000_000, record_bytes + 10_000)},
    )
    if result.acknowledged != records:
        raise BenchError(f"filling {topic!r}: {result.acknowledged} of {records} acknowledged ({result.first_error})")


#: Stops wrk's thread at the first answer without records (or with an error).
_STOP_WHEN_EMPTY = """
response = function(status, headers, body)
  if status ~= 200 then wb_stop(status .. " " .. string.sub(body, 1, 300)) elseif #body <= 2 then wb_stop() end
end
"""


def _consume_with_wrk(consumer: Any, assigned: list[tuple[str, int]], timeout_ms: int, max_bytes: int | None,
                      max_seconds: float) -> tuple[int, float, float, dict[str, float]]:  # fmt: skip
    """Read with wrk until an empty answer: (records, seconds, wrk CPU s, latency columns)."""
    query = "&".join(f"{k}={v}" for k, v in (("timeout", timeout_ms), ("max_bytes", max_bytes)) if v is not None)
    result = run_wrk(f"{consumer.base_uri}/records?{query}", headers={"Accept": consumer._accept}, connections=1,
                     threads=1, seconds=max_seconds, lua=_STOP_WHEN_EMPTY)  # fmt: skip
    if result.bad_status:
        raise BenchError(f"a records request failed: {result.stopped_because}")
    consumer.client.request("POST", f"{consumer.base_uri}/offsets", headers={"Content-Type": V2})  # all returned
    count = sum(consumer.committed(assigned).values())
    return count, max(result.seconds - timeout_ms / 1000, 1e-9), result.client_cpu_s, result.latency_ms


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
