"""Prometheus metrics of one proxy process, served at `GET /metrics`.

Each app has its own registry (no module globals), so two apps in one test process do
not collide. Labels use the route template, never the raw path, so a topic or
consumer name cannot blow up the label set.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTENT_TYPE_LATEST", "Metrics"]


class Metrics:
    """The proxy's counters, histogram and gauges."""

    def __init__(self, queue_depth: Callable[[], float], consumers: Callable[[], float]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "kafka_rest_requests",
            "HTTP requests by route, method and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "kafka_rest_request_seconds",
            "HTTP request latency by route",
            ["method", "route"],
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=self.registry,
        )
        self.records_produced = Counter(
            "kafka_rest_records_produced", "records acknowledged by Kafka", ["api"], registry=self.registry
        )
        self.bytes_produced = Counter(
            "kafka_rest_bytes_produced", "key + value bytes acknowledged by Kafka", ["api"], registry=self.registry
        )
        self.records_consumed = Counter(
            "kafka_rest_records_consumed", "records returned to consumers", registry=self.registry
        )
        self.bytes_consumed = Counter(
            "kafka_rest_bytes_consumed", "key + value bytes returned to consumers", registry=self.registry
        )
        depth = Gauge(
            "kafka_rest_producer_queue_depth",
            "records in the producer queue, not yet acknowledged",
            registry=self.registry,
        )
        depth.set_function(queue_depth)
        live = Gauge("kafka_rest_consumer_instances", "live consumer instances", registry=self.registry)
        live.set_function(consumers)

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        self.requests.labels(method, route, str(status)).inc()
        self.latency.labels(method, route).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
