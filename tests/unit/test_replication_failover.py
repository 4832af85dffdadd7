"""consumer_failover's parameters are refused in one line before anything runs."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.config import load_profile
from workbench.errors import BenchError
from workbench.replication import consumer_failover_run
from workbench.stack import Stack


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"records": 99}, "records must be 100 to 1,000,000, got 99"),
        ({"records": 10**12}, "records must be 100 to 1,000,000"),
        ({"records": 100.5}, "records must be a whole number"),
        ({"records": "many"}, "records must be a number"),
        ({"partitions": 0}, "partitions must be 1 to 64"),
        ({"partitions": 1.5}, "partitions must be a whole number"),
        ({"partitions": True}, "partitions must be a number"),
        ({"read_share": float("nan")}, "read_share must be 0 to 1"),
        ({"read_share": 0}, "read_share must leave records to read on a and on b"),
        ({"records": 100, "read_share": 0.001}, "0.001 of 100 leaves 0"),
        ({"read_share": 1}, "read_share must leave records"),
    ],
)
def test_bad_parameters_are_one_line_before_anything_runs(params: dict[str, Any], says: str) -> None:
    with pytest.raises(BenchError, match=says):
        consumer_failover_run(Stack(load_profile("local-geo")), **params)
