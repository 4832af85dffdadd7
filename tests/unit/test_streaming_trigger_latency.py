"""A trigger-latency run's length and warm-up are checked before any Spark session starts:
out of range, a one-line `BenchError` naming the parameter."""

from __future__ import annotations

import math

import pytest

from workbench.errors import BenchError
from workbench.streaming.ingestion.trigger_latency import _latency_params


def test_a_point_names_its_warm_up_among_its_parameters() -> None:
    params = _latency_params("0 seconds", 2_000, 2.5, 4, 1.0)
    assert params == {
        "trigger": "0 seconds",
        "offered_msg_s": 2_000,
        "produce_seconds": 2.5,
        "topic_partitions": 4,
        "warm_up_s": 1.0,
    }


@pytest.mark.parametrize(
    ("produce_seconds", "warm_up_s", "says"),
    [
        (7.0, -1.0, "warm_up_s must be from 0 to 60 seconds, got -1.0"),
        (7.0, math.nan, "warm_up_s must be from 0 to 60 seconds, got nan"),
        (700.0, 1e9, "warm_up_s must be from 0 to 60 seconds"),
        (1.0, 1.0, "produce_seconds must be over the 1 s warm-up and at most 600"),
        (4.0, 5.0, "produce_seconds must be over the 5 s warm-up"),
        (601.0, 5.0, "at most 600"),
        (math.inf, 5.0, "at most 600"),
    ],
)
def test_a_run_too_short_for_its_warm_up_or_out_of_range_is_refused(
    produce_seconds: float, warm_up_s: float, says: str
) -> None:
    with pytest.raises(BenchError, match=says.replace(".", r"\.")):
        _latency_params("0 seconds", 2_000, produce_seconds, 4, warm_up_s)
