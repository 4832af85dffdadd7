"""REST proxy load generators against the real embedded proxy: exact counts, clean topics."""

from __future__ import annotations

import pytest

from workbench import kafka
from workbench.bench import BenchError, http_floor, proxy_consume, proxy_produce
from workbench.bench.loadgen import wrk_path
from workbench.stack import Stack


def _bench_topics(stack: Stack) -> list[str]:
    return [t for t in kafka.list_topics(stack.kafka_config("admin")) if t.startswith("bench-")]


@pytest.mark.parametrize(
    "params",
    [
        {"records_per_call": 100, "session_reuse": True, "concurrency": 1, "format": "binary"},
        {"records_per_call": 7, "session_reuse": False, "concurrency": 2, "format": "json"},
    ],
)
def test_proxy_produce_lands_every_record_once(stack: Stack, params: dict[str, object]) -> None:
    row = proxy_produce(stack, records=1_000, record_bytes=64, **params)  # type: ignore[arg-type]
    assert (row["records"], row["acknowledged"], row["landed"], row["failed"]) == (1_000, 1_000, 1_000, 0)
    assert row["calls"] == -(-1_000 // params["records_per_call"])  # type: ignore[operator]
    assert row["proxy_processes"] >= 1 and row["proxy_rss_peak_mb"] > 0
    assert 0 <= row["proxy_cpu_s_max"] <= row["proxy_cpu_s"]
    assert row["latency_of"] == "HTTP produce call"
    assert _bench_topics(stack) == []


def test_proxy_produce_stops_at_max_seconds_and_counts_what_it_sent(stack: Stack) -> None:
    row = proxy_produce(stack, records=10_000_000, records_per_call=1, max_seconds=0.5)
    assert 0 < row["records"] < 10_000_000
    assert row["records"] == row["landed"] == row["calls"]


def test_proxy_produce_refuses_a_bad_format(stack: Stack) -> None:
    with pytest.raises(BenchError, match="format must be 'binary' or 'json', got 'avro'"):
        proxy_produce(stack, records=10, format="avro")


def test_proxy_consume_reads_every_record(stack: Stack) -> None:
    timeline: list[tuple[float, int]] = []
    row = proxy_consume(
        stack,
        records=3_000,
        record_bytes=100,
        partitions=2,
        max_bytes=65_536,
        timeout_ms=500,
        fetch_min_bytes=1,
        timeline=timeline,
    )
    assert (row["records"], row["expected"]) == (3_000, 3_000)
    assert timeline[-1][1] == 3_000
    assert _bench_topics(stack) == []


def test_http_floor_answers_every_call_and_leaves_no_process(stack: Stack) -> None:
    import psutil

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    row = http_floor(stack, records=2_000, record_bytes=100, records_per_call=100, concurrency=2)
    assert (row["records"], row["acknowledged"], row["calls"]) == (2_000, 2_000, 20)
    assert row["proxy_processes"] == 1 and row["proxy_cpu_s"] >= 0  # clock ticks: a tiny run may show 0
    assert {p.pid for p in psutil.Process().children(recursive=True)} == before


needs_wrk = pytest.mark.skipif(wrk_path() is None, reason="wrk is not installed (make setup installs it as root)")


@needs_wrk
def test_proxy_produce_with_wrk_lands_every_acknowledged_record(stack: Stack) -> None:
    row = proxy_produce(stack, records_per_call=50, record_bytes=64, concurrency=2, max_seconds=1, client="wrk")
    assert row["client"] == "wrk" and row["failed"] == 0
    assert row["acknowledged"] == row["records"] == row["calls"] * 50 > 0
    # wrk stops with up to one call per connection in flight: those land without being counted
    assert row["acknowledged"] <= row["landed"] <= row["acknowledged"] + 2 * 50
    assert row["landed"] % 50 == 0
    assert row["client_cpu_s"] > 0 and row["client_saturated"] in (True, False)
    assert row["latency_p50_ms"] > 0
    assert _bench_topics(stack) == []


@needs_wrk
@pytest.mark.parametrize("format", ["binary", "json"])
def test_proxy_consume_with_wrk_reads_every_record(stack: Stack, format: str) -> None:
    row = proxy_consume(
        stack, records=3_000, record_bytes=100, partitions=2, max_bytes=65_536, format=format, client="wrk"
    )
    assert (row["records"], row["expected"]) == (3_000, 3_000)
    assert row["client"] == "wrk" and row["client_cpu_s"] > 0
    assert _bench_topics(stack) == []


@needs_wrk
def test_http_floor_with_wrk_counts_whole_calls(stack: Stack) -> None:
    row = http_floor(stack, records_per_call=100, record_bytes=100, concurrency=2, max_seconds=1, client="wrk")
    assert row["acknowledged"] == row["calls"] * 100 > 0
    assert row["client"] == "wrk"
