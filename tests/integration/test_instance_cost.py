"""What consumer instances cost their proxy process (`instance_cost`), on the session's real
proxy and broker: every instance joins, reads and is deleted again; a count above the
proxy's `consumer.instances.max` is the proxy's own 429, in one line. Sizes are measured in
notebooks and `workbench bench instance_cost`, never asserted here."""

from __future__ import annotations

import pytest
import requests

from workbench.bench.instance_cost import instance_cost
from workbench.bench.scale import side_stack
from workbench.errors import BenchError, ProxyError
from workbench.stack import Stack


def _live_instances(stack: Stack) -> float:
    """The proxy's own gauge of live consumer instances (its Prometheus metrics)."""
    url = sorted(r.url for r in stack.services.values() if r.kind == "proxy" and r.url)[0]
    text = requests.get(f"{url}/metrics", timeout=10).text
    line = next(line for line in text.splitlines() if line.startswith("kafka_rest_consumer_instances "))
    return float(line.split()[1])


@pytest.mark.parametrize("kind", ["consumer", "share"])
def test_every_instance_reads_and_none_is_left_behind(stack: Stack, kind: str) -> None:
    before = _live_instances(stack)
    row = instance_cost(stack, instances=3, kind=kind, seconds=2.0, rate=200.0, partitions=1)
    assert row["instances"] == 3 and row["records"] > 0
    assert row["rss_before_mb"] > 0 and row["rss_idle_mb"] > 0
    assert _live_instances(stack) == before, "every instance was deleted again"


def test_kip_848_instances_with_smaller_fetches_read_on_a_proxy_of_their_own(stack: Stack) -> None:
    """The group protocol and fetch sizes are the proxy's settings: a side stack's proxy is
    started with them, its instances read, and the session's proxy holds none of them."""
    before = _live_instances(stack)
    row = instance_cost(
        stack, instances=3, seconds=1.0, rate=200.0, partitions=1, protocol="consumer", fetch_max_bytes=1_048_576
    )
    assert (row["protocol"], row["fetch_max_bytes"], row["instances"]) == ("consumer", 1_048_576, 3)
    assert row["records"] > 0 and row["rss_before_mb"] > 0
    assert _live_instances(stack) == before


def test_more_instances_than_the_proxy_allows_is_its_429_in_one_line(stack: Stack) -> None:
    """A proxy of its own, started with a limit of 2 (the session's allows 500)."""
    with side_stack(stack, proxy_properties={"consumer.instances.max": 2}, label="limit") as small:
        with pytest.raises(ProxyError) as raised:
            instance_cost(small, instances=3, seconds=0.5, rate=200.0, partitions=1)
        assert raised.value.status == 429 and "consumer.instances.max" in str(raised.value)
        assert "\n" not in str(raised.value)
        assert _live_instances(small) == 0, "the two it made were deleted again"


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        ({"instances": 0}, "instances must be from 1 to 1000"),
        ({"kind": "queue"}, "kind must be one of ['consumer', 'share']"),
        ({"rate": float("nan")}, "rate must be from 1 to 1e+06"),
        ({"protocol": "eager"}, "protocol must be one of ['classic', 'consumer'], got 'eager'"),
        ({"fetch_max_bytes": -1}, "fetch_max_bytes must be 0 (librdkafka's default) to 1,000,000,000 bytes, got -1"),
    ],
)
def test_bad_input_is_one_line_before_anything_starts(stack: Stack, settings: dict[str, object], said: str) -> None:
    with pytest.raises(BenchError) as raised:
        instance_cost(stack, **settings)  # type: ignore[arg-type]
    assert said in str(raised.value)
