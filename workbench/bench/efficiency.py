"""The proxy against the native client in one run: MB/s and CPU per MB as ratios.

A ratio of two figures measured minutes apart on a shared machine says as much about
the load at each moment as about the proxy, so `proxy_vs_native` measures the native
client, the bare HTTP app (produce only) and the proxy back to back on the same stack,
with the same records, and returns one row holding all three and their ratios:

- `mb_s_ratio`: the proxy's MB/s over the native client's;
- `cpu_ratio`: the proxy's CPU per MB over what a proxy at the floor would spend, the
  native client's CPU per MB plus (produce) the bare app's: the producer's work plus
  HTTP's, which no proxy avoids. Consume has no bare app, so there it is the proxy's
  CPU per MB over the native consumer's.

    workbench bench proxy_vs_native --param direction=produce --param format=json --repeat 3
    workbench bench proxy_vs_native --grid g.yaml   # direction: [produce, consume], format: [json, binary]
"""

from __future__ import annotations

from typing import Any

from workbench.bench._run import TOPIC_PREFIX, result_row
from workbench.bench.http_floor import http_floor
from workbench.bench.native import native_consume, native_produce
from workbench.bench.proxy_load import proxy_consume, proxy_produce
from workbench.errors import BenchError
from workbench.measure.contract import NOT_MEASURED, is_measured
from workbench.stack import Stack

__all__ = ["proxy_vs_native"]

#: The resource columns of the proxy's row that the combined row keeps as its own.
_RESOURCE_SUFFIXES = ("_cpu_s", "_cpu_s_max", "_rss_peak_mb", "_processes")


def proxy_vs_native(
    stack: Stack,
    *,
    direction: str = "produce",
    format: str = "json",
    records: int = 500_000,
    record_bytes: int = 1000,
    records_per_call: int = 500,
    concurrency: int = 4,
    partitions: int = 4,
    max_seconds: float = 8.0,
    client: str = "wrk",
    topic_prefix: str = TOPIC_PREFIX,
) -> dict[str, Any]:
    """Measure the native client, the bare HTTP app (produce) and the proxy in a row.

    Args:
        direction: "produce" (native producer, `http_floor`, `proxy_produce`) or
            "consume" (native consumer, `proxy_consume` at the proxy's largest
            `max_bytes`).
        format: the proxy's embedded format, "json" or "binary".
        records: records the native client writes or reads (and the proxy reads); the
            proxy and the bare app produce for `max_seconds` with wrk. 500 MB at 1 KB:
            the native consumer reads 150 MB in about 0.3 s, and the proxy's first
            answer's start weighed on 150 MB (0.31-0.39 of native, 0.38-0.49 on 500 MB).
        record_bytes, records_per_call, concurrency, partitions: as in `proxy_produce`
            (records_per_call and concurrency apply to produce).
        client: the proxy's load generator, "wrk" (default: it costs the least CPU) or
            "python".

    Returns:
        One row whose standard metrics are the proxy's, with `native_*`, `floor_*` and
        the proxy's own `*_ms_per_mb` (CPU ms per MB of payload: `native_client` is the
        native producer or consumer, `*_broker` the broker during each path), plus
        `mb_s_ratio` and `cpu_ratio` (see the module docstring) and the client columns
        of the proxy's run (`client_saturated` flags a run that measured its client).

    Usage: `proxy_vs_native(stack, direction="produce", format="binary")`.
    """
    if direction not in ("produce", "consume"):
        raise BenchError(f"direction must be 'produce' or 'consume', got {direction!r}")
    if format not in ("binary", "json"):
        raise BenchError(f"format must be 'binary' or 'json', got {format!r}")
    floor: dict[str, Any] | None = None
    if direction == "produce":
        native = native_produce(
            stack, records=records, record_bytes=record_bytes, partitions=partitions, topic_prefix=topic_prefix
        )
        floor = http_floor(
            stack,
            records=records,
            record_bytes=record_bytes,
            records_per_call=records_per_call,
            concurrency=concurrency,
            format=format,
            max_seconds=max_seconds,
            client=client,
        )
        proxy = proxy_produce(
            stack,
            records=10**9 if client == "wrk" else records,
            record_bytes=record_bytes,
            records_per_call=records_per_call,
            concurrency=concurrency,
            format=format,
            partitions=partitions,
            max_seconds=max_seconds,
            topic_prefix=topic_prefix,
            client=client,
        )
    else:
        native = native_consume(
            stack, records=records, record_bytes=record_bytes, partitions=partitions, topic_prefix=topic_prefix
        )
        proxy = proxy_consume(
            stack,
            records=records,
            record_bytes=record_bytes,
            partitions=partitions,
            format=format,
            topic_prefix=topic_prefix,
            client=client,
        )

    native_ms = _ms_per_mb(native, "client_cpu_s")
    floor_ms = _ms_per_mb(floor, "proxy_cpu_s") if floor is not None else NOT_MEASURED
    proxy_ms = _ms_per_mb(proxy, "proxy_cpu_s")
    at_floor = native_ms + (floor_ms if is_measured(floor_ms) else 0.0)
    extra: dict[str, Any] = {
        "native_mb_s": native["mb_s"],
        "floor_mb_s": floor["mb_s"] if floor is not None else NOT_MEASURED,
        "native_client_ms_per_mb": native_ms,
        "native_broker_ms_per_mb": _ms_per_mb(native, "broker_cpu_s"),
        "floor_ms_per_mb": floor_ms,
        "proxy_ms_per_mb": proxy_ms,
        "proxy_broker_ms_per_mb": _ms_per_mb(proxy, "broker_cpu_s"),
        "proxy_client_ms_per_mb": _ms_per_mb(proxy, "client_cpu_s"),
        "mb_s_ratio": proxy["mb_s"] / native["mb_s"] if native["mb_s"] else NOT_MEASURED,
        "cpu_ratio": proxy_ms / at_floor if at_floor else NOT_MEASURED,
        "client_cpu_share": proxy["client_cpu_share"],
        "client_saturated": proxy["client_saturated"],
    }
    for name in ("acknowledged", "landed", "failed", "expected", "calls"):
        if name in proxy:
            extra[name] = proxy[name]
    latencies = {name: proxy[name] for name in proxy if name.startswith("latency_") and name != "latency_of"}
    row = result_row(
        stack,
        experiment="proxy_vs_native",
        params={
            "direction": direction,
            "format": format,
            "records": records,
            "record_bytes": record_bytes,
            "records_per_call": records_per_call,
            "concurrency": concurrency,
            "partitions": partitions,
            "client": client,
        },
        records=proxy["records"],
        payload_bytes=proxy["bytes"],
        seconds=proxy["seconds"],
        latency_of=proxy["latency_of"],
        resources={name: value for name, value in proxy.items() if name.endswith(_RESOURCE_SUFFIXES)},
        extra=extra,
    )
    # The proxy's percentiles as it measured them (wrk reports percentiles, not samples).
    row.update(latencies, latency_of=proxy["latency_of"])
    return row


def _ms_per_mb(row: dict[str, Any] | None, column: str) -> float:
    """CPU ms per MB of payload of one process role in `row` (NaN when not measured)."""
    if row is None:
        return NOT_MEASURED
    seconds, megabytes = row.get(column, NOT_MEASURED), row["bytes"] / 1e6
    return seconds / megabytes * 1000 if is_measured(seconds) and megabytes else NOT_MEASURED
