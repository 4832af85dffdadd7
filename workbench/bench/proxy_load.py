"""REST proxy load generators: what a records array, a session, threads and a format buy.

The topic is created natively (the proxy never auto-creates), the load goes through
`ProxyClient`, and what landed is checked with the true end offsets, so a row's
`acknowledged` and `landed` must agree. A load runs until `records` are sent or
`max_seconds` have passed, whichever is first, so one-record-per-call points stay
short; the rates are computed from what was actually sent.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Sequence
from typing import Any

from workbench import kafka
from workbench.bench._run import TOPIC_PREFIX, bench_topic, result_row, split_topic_settings
from workbench.bench.loadgen import run_wrk
from workbench.bench.native import fill_topic
from workbench.bench.payload import key_pool, value_pool
from workbench.bench.proxy_calls import (
    ProduceJob,
    calls_row,
    check_client,
    client_columns,
    request_bodies,
    run_calls,
    run_in_processes,
    run_wrk_calls,
)
from workbench.errors import BenchError
from workbench.measure.resources import ResourceMonitor
from workbench.measure.timeline import Timeline, timed_reads, timeline_cv
from workbench.proxy import ProxyClient, ProxyConsumer
from workbench.proxy.client import Trace, proxy_urls
from workbench.proxy.wire import V2
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
    trace: Trace = False,
    **topic_settings: Any,
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
        trace: ask the proxy to trace every record (True: `Workbench-Trace: true`, in
            the answer and the records' headers; "answer": in the answer only; the
            workbench's proxy only; wrk sends the header too): what tracing costs, against
            the same point untraced. Listed in the row's `params` only when on, so an
            untraced point stays the point earlier runs measured.
        **topic_settings: the fresh topic's settings, prefixed `topic.`
            (`topic.max.message.bytes`), recorded with the row's parameters.

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
    check_client(client)
    topic_config, unknown = split_topic_settings(topic_settings)
    if unknown:
        raise BenchError(
            f"proxy_produce has no parameter {', '.join(sorted(unknown))}; topic settings start with 'topic.'"
        )
    base_urls = list(urls) if urls else proxy_urls(stack, balanced=balanced)
    calls = math.ceil(records / records_per_call)
    shares = [calls // processes + (1 if i < calls % processes else 0) for i in range(processes)]
    last_size = records - (calls - 1) * records_per_call
    job = ProduceJob(
        base_urls, "", records_per_call, last_size, record_bytes, format, session_reuse, concurrency, max_seconds, trace
    )

    with bench_topic(stack, partitions, topic_prefix, config=topic_config) as topic:
        job = job._replace(topic=topic)
        bodies = request_bodies(job) if client != "wrk" and processes == 1 else None
        with ResourceMonitor(stack.services) as monitor:
            if client == "wrk":
                outcome, seconds = run_wrk_calls(job, processes)
            elif bodies is not None:
                started = time.perf_counter()
                outcome = run_calls(job, calls, bodies)
                seconds = time.perf_counter() - started
            else:
                outcome, seconds = run_in_processes(job, shares)
        landed = sum(kafka.end_offsets(stack.kafka_config("admin"), topic).values())
    return calls_row(
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
            **({"trace": trace} if trace else {}),
            **topic_settings,
        },
        outcome=outcome,
        record_bytes=record_bytes,
        seconds=seconds,
        monitor=monitor,
        client=client,
        processes=processes,
        extra={**outcome.failures.columns(), "landed": landed, "proxy_urls": len(base_urls)},
    )


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
    check_client(client)
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
            keys, values = _json_pools(record_bytes)
            fill_topic(stack, topic, records, record_bytes, keys=keys, values=values)
        else:
            fill_topic(stack, topic, records, record_bytes)
        proxy = ProxyClient.for_stack(stack, balanced=balanced)
        assigned = [(topic, p) for p in range(partitions)]
        group = f"bench-{uuid.uuid4().hex[:8]}"
        # The instance is made (and assigned) inside the measurement, just before the first
        # request: made earlier, its librdkafka consumer prefetched up to 64 MiB untimed.
        consumer = proxy.consumer(group, partitions=assigned, format=format, config=config)
        latency_ms: dict[str, float] = {}
        try:
            with ResourceMonitor(stack.services) as monitor:
                if client == "wrk":
                    consumer.open()
                    count, seconds, child_cpu_s, latency_ms = _consume_with_wrk(
                        consumer, assigned, records, timeout_ms or 0, max_bytes, max_seconds
                    )
                    polls: list[float] = []
                else:
                    count, seconds, polls = timed_reads(
                        lambda _missing: len(consumer.poll(timeout_ms=timeout_ms, max_bytes=max_bytes)),
                        records,
                        max_seconds,
                        sample_interval,
                        samples,
                        start=consumer.open,
                    )
                    child_cpu_s = 0.0
        finally:
            try:
                consumer.close()  # a no-op when it was never opened
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
            **client_columns(client, resources["client_cpu_s"], seconds, 1),
            **latency_ms,
        },
    )


def _json_pools(record_bytes: int) -> tuple[list[bytes], list[bytes]]:
    """Keys and values for `fill_topic` that a json consumer can show: JSON strings, the values
    of exactly `record_bytes` bytes (the payload's text, quotes and line breaks made plain)."""
    width = max(0, record_bytes - 2)
    values = [
        b'"' + v.replace(b'"', b"'").replace(b"\n", b" ").replace(b"\\", b"/")[:width] + b'"'
        for v in value_pool(max(1, width))
    ]
    return [b'"' + key + b'"' for key in key_pool()], values


#: Stops wrk's thread at the first answer without records (or with an error).
_STOP_WHEN_EMPTY = """
response = function(status, headers, body)
  if status ~= 200 then wb_stop(status .. " " .. string.sub(body, 1, 300)) elseif #body <= 2 then wb_stop() end
end
"""


def _consume_with_wrk(
    consumer: ProxyConsumer,
    assigned: list[tuple[str, int]],
    expected: int,
    timeout_ms: int,
    max_bytes: int | None,
    max_seconds: float,
) -> tuple[int, float, float, dict[str, float]]:
    """Read with wrk until every expected record is read: (records, seconds, wrk CPU s, latency columns).

    wrk stops at the first empty answer. One can come before the end: a partition whose
    first fetch is still on its way when the others are drained (seen under load, 1,500
    of 3,000 records over two partitions). So wrk runs again from the positions reached
    until the committed positions say all `expected` records were read or `max_seconds`
    have passed; seconds are summed without each run's closing wait, and the latency
    columns are those of the run that made the most requests."""
    query = "&".join(f"{k}={v}" for k, v in (("timeout", timeout_ms), ("max_bytes", max_bytes)) if v is not None)
    deadline = time.monotonic() + max_seconds
    count, seconds, cpu_s, runs = 0, 0.0, 0.0, []
    while True:
        result = run_wrk(
            f"{consumer.base_uri}/records?{query}",
            headers={"Accept": consumer.records_accept},
            connections=1,
            threads=1,
            seconds=max(1.0, deadline - time.monotonic()),
            lua=_STOP_WHEN_EMPTY,
        )
        if result.bad_status:
            raise BenchError(f"a records request failed: {result.stopped_because}")
        consumer.client.request("POST", f"{consumer.base_uri}/offsets", headers={"Content-Type": V2})  # all returned
        count = sum(consumer.committed(assigned).values())
        seconds += max(result.seconds - timeout_ms / 1000, 1e-9)
        cpu_s += result.client_cpu_s
        runs.append(result)
        if count >= expected or time.monotonic() >= deadline:
            break
    return count, seconds, cpu_s, max(runs, key=lambda run: run.requests).latency_ms
