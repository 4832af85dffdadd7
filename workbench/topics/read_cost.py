"""What reading one device's history costs in each topic layout, as the data grows.

A topic per device reads only that device; a keyed topic makes the reader scan its
partition (other devices included) or, done naively, the whole topic. `device_read`
measures one of these ways as a result row (the registered experiment), and
`device_read_cost` all of them over growing data, for notebook 07.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from workbench.errors import KafkaError
from workbench.stack import Stack
from workbench.topics.device_io import read_device, write_devices
from workbench.topics.errors import TopicDesignError
from workbench.topics.strategies import KeyedTopic, TopicPerDevice, TopicStrategy, device_ids

__all__ = ["READ_METHODS", "device_read", "device_read_cost"]

#: The ways `device_read` reads one device's history.
READ_METHODS = ("own topic", "keyed: its partition", "keyed: whole topic")


def device_read(
    stack: Stack,
    *,
    method: str = "own topic",
    records_per_device: int = 100,
    devices: int = 50,
    partitions: int = 4,
    value_bytes: int = 100,
    topic_prefix: str = "wb-read",
) -> dict[str, Any]:
    """Read one device's history one way, one result row (the registered experiment `device_read`).

    It writes `records_per_device` records for each of `devices` devices in the layout
    `method` reads (a topic per device, or a keyed topic of `partitions` partitions),
    then reads device 0's history: from its own topic, from its partition of the keyed
    topic (filtering out other devices), or from the whole keyed topic.

    Returns:
        A contract row: `records` = records read (`scanned`), `msg_s` = records read per
        second, `returned` (the device's own records), `total_records`.

    Raises:
        TopicDesignError: an unknown method, or a count below 1.
        KafkaError: not every record written was acknowledged.
    """
    if method not in READ_METHODS:
        raise TopicDesignError(f"method must be one of {list(READ_METHODS)}, got {method!r}")
    if devices < 1 or partitions < 1 or records_per_device < 1:
        raise TopicDesignError(
            f"devices, partitions and records_per_device must be ≥ 1, got {devices!r}, "
            f"{partitions!r}, {records_per_device!r}"
        )
    run = uuid.uuid4().hex[:8]
    layout: TopicStrategy = (
        TopicPerDevice(f"{topic_prefix}-{run}-")
        if method == "own topic"
        else KeyedTopic(f"{topic_prefix}-{run}", partitions)
    )
    ids = device_ids(devices, width=5)
    with stack.temporary_topics(layout.topics(ids)):
        _write_all(stack, layout, ids, records_per_device, value_bytes)
        return _read_row(stack, layout, ids, method, records_per_device, partitions, value_bytes)


def _write_all(stack: Stack, layout: TopicStrategy, ids: list[str], size: int, value_bytes: int) -> None:
    written = write_devices(stack.kafka_config("producer"), layout, ids, size, value_bytes=value_bytes)
    if written.acknowledged != size * len(ids):
        raise KafkaError(f"{written.acknowledged} of {size * len(ids)} records acknowledged")


def _read_row(
    stack: Stack, layout: TopicStrategy, ids: list[str], method: str, size: int, partitions: int, value_bytes: int
) -> dict[str, Any]:
    from workbench.measure.contract import result_row
    from workbench.measure.resources import ResourceMonitor

    with ResourceMonitor(stack.services) as monitor:
        read = read_device(stack.kafka_config("consumer"), layout, ids[0], full_scan=method == "keyed: whole topic")
    params = {
        "method": method,
        "records_per_device": size,
        "devices": len(ids),
        "partitions": partitions,
        "value_bytes": value_bytes,
    }
    return result_row(
        stack,
        experiment="device_read",
        params=params,
        records=read.scanned,
        payload_bytes=read.scanned * value_bytes,
        seconds=read.seconds,
        resources=monitor.columns(),
        extra={"total_records": size * len(ids), "returned": len(read.records), "scanned": read.scanned},
    )


def device_read_cost(
    stack: Stack,
    *,
    devices: int = 50,
    records_per_device: Sequence[int] = (100, 1_000),
    partitions: int = 4,
    value_bytes: int = 100,
) -> list[dict[str, Any]]:
    """Read one device's history three ways as the data grows; one contract row per way and size.

    For each size it writes the same records twice, once to a keyed topic of
    `partitions` partitions and once to one topic per device, then reads device 0's
    history each way of `READ_METHODS` (see `device_read`, which does one of them).

    Returns:
        Rows with `method`, `records_per_device`, `total_records`, `returned`,
        `scanned`, `seconds` and `msg_s` (scanned records per second).

    Usage: `pd.DataFrame(device_read_cost(stack, devices=20))`.
    """
    if devices < 1 or partitions < 1:
        raise TopicDesignError(f"devices and partitions must be ≥ 1, got {devices!r} and {partitions!r}")
    ids = device_ids(devices, width=5)
    rows = []
    for size in records_per_device:
        run = uuid.uuid4().hex[:8]
        keyed = KeyedTopic(f"wb-keyed-{run}", partitions)
        per_device = TopicPerDevice(f"wb-dev-{run}-")
        topics = {**keyed.topics(ids), **per_device.topics(ids)}
        with stack.temporary_topics(topics):
            for written_layout in (keyed, per_device):
                _write_all(stack, written_layout, ids, size, value_bytes)
            for method in READ_METHODS:
                layout = per_device if method == "own topic" else keyed
                rows.append(_read_row(stack, layout, ids, method, size, partitions, value_bytes))
    return rows
