"""The telemetry generator and the pandas model of Spark's windowed aggregation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from workbench.streaming.pipelines import expected_windows
from workbench.streaming.telemetry import device_topics, encode, generate_readings


def test_readings_are_deterministic_complete_and_not_in_event_order() -> None:
    readings = generate_readings(devices=5, seconds=30, start_ms=0, seed=1)
    assert readings == generate_readings(devices=5, seconds=30, start_ms=0, seed=1)
    assert len(readings) == 150
    assert sorted((r["device_id"], r["seq"]) for r in readings) == [
        (f"device-{d:03d}", s) for d in range(5) for s in range(30)
    ]
    times = [r["event_ms"] for r in readings]
    assert times != sorted(times)  # out of order and late readings exist


def test_late_readings_arrive_after_much_newer_ones() -> None:
    readings = generate_readings(devices=10, seconds=120, start_ms=0, late_fraction=0.05, seed=2)
    newest_so_far, late = 0, 0
    for reading in readings:
        late += reading["event_ms"] < newest_so_far - 15_000
        newest_so_far = max(newest_so_far, reading["event_ms"])
    assert late > 0


def test_encode_pads_to_the_exact_size() -> None:
    reading = generate_readings(devices=1, seconds=1, start_ms=0)[0]
    value = encode(reading, 200)
    assert len(value) == 200
    assert {k: v for k, v in json.loads(value).items() if k != "pad"} == reading
    with pytest.raises(ValueError, match="too small"):
        encode(reading, 20)


def test_device_topics_name_one_topic_per_device() -> None:
    assert device_topics("tele", 2) == {"device-000": "tele-device-000", "device-001": "tele-device-001"}


def _reading(device: str, event_ms: int, temperature: float = 20.0) -> dict[str, Any]:
    return {
        "device_id": device,
        "event_ms": event_ms,
        "seq": 0,
        "temperature": temperature,
        "humidity": 50.0,
        "battery": 90.0,
    }


def test_the_model_emits_closed_windows_and_drops_late_readings() -> None:
    first = [_reading("d", 1_000, 10.0), _reading("d", 2_000, 20.0), _reading("d", 45_000)]
    # Watermark after the first batch: 45 s - 20 s = 25 s, so window [0, 10 s) closes;
    # a reading for it in the next batch is late and dropped.
    second = [_reading("d", 3_000, 99.0), _reading("d", 26_000)]
    result = expected_windows([first, [], second, []], window_ms=10_000, watermark_ms=20_000)
    assert result["readings"].tolist() == [2]
    assert result["avg_temperature"].tolist() == [15.0]
    assert str(result["window_end"][0]) == "1970-01-01 00:00:10+00:00"
