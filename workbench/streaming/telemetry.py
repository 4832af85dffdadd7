"""Device telemetry: realistic readings, some out of order and some late, produced into Kafka.

Real devices do not report in order: a reading can overtake another on its way (out of
order by a second or two), and a device that lost its connection delivers a backlog
tens of seconds later (late). An event-time pipeline must cope with both, so the
generator makes both, deterministically from a seed, so that a test can compute the
expected aggregates from the very same list.

The list returned is in *arrival* order: the order the readings are produced in.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from workbench.config import KafkaConf
from workbench.errors import KafkaError
from workbench.kafka.clients import producer
from workbench.kafka.producing import DeliveryTally, Outgoing, send
from workbench.topics.strategies import TopicPerDevice, TopicStrategy, device_ids

__all__ = ["Reading", "TopicChoice", "device_ids", "device_topics", "encode", "generate_readings", "produce_readings"]

#: One reading: device_id, event_ms (event time, ms since epoch), seq, temperature, humidity, battery.
Reading = dict[str, Any]
#: Where a reading goes: one topic, a device → topic mapping, a topic strategy (its route
#: for the reading's device), or a function of the reading.
TopicChoice = str | Mapping[str, str] | TopicStrategy | Callable[[Reading], str]


def device_topics(prefix: str, devices: int | Iterable[str]) -> dict[str, str]:
    """Device id → its topic `<prefix>-<device id>` under the per-device strategy (`TopicPerDevice`)."""
    strategy = TopicPerDevice(f"{prefix}-")
    ids = device_ids(devices) if isinstance(devices, int) else list(devices)
    return {device: strategy.topic_for(device) for device in ids}


def generate_readings(
    *,
    devices: int = 10,
    seconds: int = 60,
    interval_ms: int = 1000,
    start_ms: int | None = None,
    out_of_order_fraction: float = 0.1,
    late_fraction: float = 0.02,
    late_by_ms: tuple[int, int] = (20_000, 60_000),
    seed: int = 0,
) -> list[Reading]:
    """Readings of `devices` devices every `interval_ms` for `seconds`, in arrival order.

    Args:
        devices: how many devices report.
        seconds: how long each reports (event time).
        interval_ms: each device's reporting interval; each reading jitters by ±10%.
        start_ms: event time of the first reading; default now, rounded down to a second.
        out_of_order_fraction: share of readings delayed by up to 3 intervals, so they
            arrive after later readings of the same device.
        late_fraction: share delayed by `late_by_ms` (a device reconnecting), usually
            past an event-time watermark.
        late_by_ms: range of the late readings' delay.
        seed: the same seed gives the same readings.

    Returns:
        `devices x seconds x 1000 / interval_ms` readings, sorted by arrival.

    Usage: `readings = generate_readings(devices=20, seconds=120, seed=7)`.
    """
    rng = random.Random(seed)
    start = start_ms if start_ms is not None else int(time.time()) * 1000
    per_device = max(1, seconds * 1000 // interval_ms)
    arrivals: list[tuple[int, int, Reading]] = []
    for number, device in enumerate(device_ids(devices)):
        temperature = 18.0 + 8.0 * rng.random()
        battery = 100.0 - 20.0 * rng.random()
        phase = rng.randrange(interval_ms)
        for seq in range(per_device):
            jitter = int(interval_ms * 0.1 * (2 * rng.random() - 1))
            event_ms = start + phase + seq * interval_ms + jitter
            temperature += rng.gauss(0.0, 0.2)
            battery = max(0.0, battery - 0.01 * rng.random())
            reading = {
                "device_id": device,
                "event_ms": event_ms,
                "seq": seq,
                "temperature": round(temperature, 3),
                "humidity": round(40.0 + 20.0 * rng.random(), 2),
                "battery": round(battery, 3),
            }
            draw = rng.random()
            if draw < late_fraction:
                delay = rng.randint(*late_by_ms)
            elif draw < late_fraction + out_of_order_fraction:
                delay = rng.randint(interval_ms, 3 * interval_ms)
            else:
                delay = rng.randint(5, 50)  # the network
            arrivals.append((event_ms + delay, number, reading))
    arrivals.sort(key=lambda item: (item[0], item[1]))
    return [reading for _, _, reading in arrivals]


def encode(reading: Reading, value_bytes: int | None = None) -> bytes:
    """Compact JSON; padded with a `pad` field to exactly `value_bytes` when given."""
    text = json.dumps(reading, separators=(",", ":"))
    if value_bytes is None:
        return text.encode()
    overhead = len(text) + len(',"pad":""')
    if overhead > value_bytes:
        raise ValueError(f"a reading takes {len(text)} B as JSON; value_bytes={value_bytes} is too small")
    return (text[:-1] + ',"pad":"' + "x" * (value_bytes - overhead) + '"}').encode()


def produce_readings(
    conf: KafkaConf,
    readings: Sequence[Reading],
    topic: TopicChoice,
    *,
    value_bytes: int | None = None,
    settings: KafkaConf | None = None,
    flush_timeout: float = 60.0,
) -> dict[str, int]:
    """Produce readings in order, keyed by device id, and wait for every acknowledgement.

    Args:
        conf: producer settings (`stack.kafka_config("producer")`).
        readings: from `generate_readings`, in the order to produce them.
        topic: one topic for all, a device → topic mapping (`device_topics`), a topic
            strategy (`TopicPerDevice`, ...: the topic of its route), or a function of
            the reading. The topics must exist.
        value_bytes: pad each JSON value to this size (benchmarks use 200 B records).
        settings: producer settings on top of `conf` (`linger.ms`, ...).
        flush_timeout: seconds to wait for the last acknowledgements.

    Returns:
        Acknowledged records per topic.

    Raises:
        KafkaError: a record was refused or not acknowledged in time; says how many.
    """
    route = _router(topic)
    client = producer(conf, {"linger.ms": 5, **(settings or {})})
    tally = DeliveryTally()
    outgoing = (Outgoing(route(r), encode(r, value_bytes), r["device_id"]) for r in readings)
    sent = send(client, outgoing, on_delivery=tally, flush_timeout_s=flush_timeout)
    if sent.unsent or tally.failed:
        first = tally.first_error or "none refused"
        raise KafkaError(
            f"{sent.unsent} readings not acknowledged within {flush_timeout:.0f} s and {tally.failed} "
            f"refused (first: {first})"
        )
    return dict(sorted(tally.by_topic.items()))


def _router(topic: TopicChoice) -> Callable[[Reading], str]:
    if isinstance(topic, str):
        return lambda _reading: topic
    if isinstance(topic, TopicStrategy):
        strategy = topic
        known: dict[str, str] = {}  # a route hashes the key: once per device, not per reading

        def by_strategy(reading: Reading) -> str:
            device = reading["device_id"]
            if device not in known:
                known[device] = strategy.route(device).topic
            return known[device]

        return by_strategy
    if isinstance(topic, Mapping):
        mapping = topic

        def by_device(reading: Reading) -> str:
            try:
                return mapping[reading["device_id"]]
            except KeyError:
                raise KafkaError(f"no topic for device {reading['device_id']!r} in the mapping") from None

        return by_device
    return topic
