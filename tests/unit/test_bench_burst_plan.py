"""A burst scenario's settings are checked before anything runs: hostile ones are one line each."""

from __future__ import annotations

import math
from typing import Any

import pytest

from workbench.bench.burst_plan import plan_burst
from workbench.errors import BenchError


def test_a_plan_states_its_capacity_and_what_it_promises() -> None:
    native = plan_burst(consumer="native", normal_msg_s=200, burst_msg_s=2_000, burst_s=5, process_ms=1.0)
    assert native.capacity_msg_s == 1_000
    assert native.burst_window == (8.0, 13.0)
    assert native.predicted_clear_s == pytest.approx((2_000 - 1_000) * 5 / (1_000 - 200))
    assert native.params()["trigger_s"] is None and native.params()["process_ms"] == 1.0
    spark = plan_burst(consumer="spark", max_offsets_per_trigger=300, trigger_s=0.5, normal_msg_s=100)
    assert spark.capacity_msg_s == 600
    assert spark.params()["process_ms"] is None and spark.params()["trigger_s"] == 0.5
    schedule = spark.schedule()
    assert [p.name for p in schedule.phases] == ["lead-in", "burst", "after"]
    assert schedule.window("burst") == spark.burst_window


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"consumer": "kafka-streams"}, "consumer must be one of"),
        ({"normal_msg_s": -5}, "normal_msg_s must be above 0"),
        ({"normal_msg_s": 0}, "normal_msg_s must be above 0"),
        ({"burst_msg_s": math.nan}, "burst_msg_s must be a finite number"),
        ({"burst_msg_s": math.inf}, "burst_msg_s must be a finite number"),
        ({"burst_msg_s": 1e12}, "burst_msg_s must be above 0 and at most 100,000"),
        ({"burst_msg_s": "fast"}, "burst_msg_s must be a finite number"),
        ({"burst_msg_s": True}, "burst_msg_s must be a finite number"),
        ({"burst_msg_s": 400}, "must be above the consumer's capacity"),
        ({"normal_msg_s": 1_000}, "must be below the consumer's capacity"),
        ({"process_ms": 0}, "process_ms must be above 0"),
        ({"process_ms": -1}, "process_ms must be above 0"),
        ({"burst_s": 0.3, "interval_s": 0.25}, "burst_s .* must cover at least two lag readings"),
        ({"burst_s": 0}, "burst_s must be above 0"),
        ({"lead_in_s": 5.2}, "lead_in_s .* must exceed warm_up_s"),
        ({"warm_up_s": -1}, "warm_up_s must be at least 0"),
        ({"interval_s": 0.001}, "interval_s must be at least 0.05"),
        ({"interval_s": math.nan}, "interval_s must be a finite number"),
        ({"clear_deadline_s": 1}, "takes at least 16.7 s to clear"),
        ({"partitions": 0}, "partitions must be at least 1"),
        ({"partitions": 2.5}, "partitions must be a whole number"),
        ({"record_bytes": 4}, "record_bytes must be at least 8"),
        ({"trigger_s": 0.01, "consumer": "spark"}, "trigger_s must be at least 0.1"),
        ({"max_offsets_per_trigger": 0, "consumer": "spark"}, "max_offsets_per_trigger must be at least 1"),
        (
            {"normal_msg_s": 900, "burst_msg_s": 1_100, "process_ms": 1, "lead_in_s": 600, "clear_deadline_s": 3_600},
            "the limit is 2,000,000 records",
        ),
        ({"record_bytes": 1_000_000, "burst_s": 10}, r"MB\); the limit"),
        ({"interval_s": 0.05, "partitions": 64, "clear_deadline_s": 3_600}, "would pass the sampler's cap"),
    ],
)
def test_hostile_settings_are_refused_in_one_line(params: dict[str, Any], message: str) -> None:
    with pytest.raises(BenchError, match=message) as refused:
        plan_burst(**params)
    assert "\n" not in str(refused.value)
