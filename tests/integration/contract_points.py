"""The cheapest point of every registered experiment, and the check that its rows keep the contract.

Shared by tests/integration/test_experiment_contract.py and its Spark half in
tests/integration/streaming. Sizes are the smallest that still measure something: the
tests check the shape of the rows, not the speed.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from workbench.measure.contract import STANDARD_METRICS, contract_problems

#: The cheapest point of each experiment; a new experiment needs a line here (see the first test).
CHEAP: dict[str, dict[str, Any]] = {
    "native_round_trip": {"records": 300, "partitions": 1},
    "native_produce": {"records": 300, "partitions": 1},
    "native_consume": {"records": 300, "partitions": 1},
    "proxy_produce": {"records": 300, "partitions": 1, "max_seconds": 5.0},
    "proxy_consume": {"records": 300, "partitions": 1, "max_seconds": 10.0},
    "http_floor": {"records": 500, "concurrency": 1, "max_seconds": 5.0},
    "proxy_vs_native": {"records": 300, "partitions": 1, "concurrency": 1, "max_seconds": 2.0, "client": "python"},
    "format_produce": {"records": 200, "format": "avro"},
    "instance_cost": {"instances": 2, "seconds": 0.5, "rate": 200.0, "partitions": 1},
    "registry_lookups": {"lookups": 50, "schemas": 2},
    "latency_waterfall": {"offered_msg_s": 200.0, "offered_seconds": 5.5},
    "leader_failover": {"records": 2_000, "rate": 4_000},
    "lag_burst": {
        "normal_msg_s": 100.0,
        "burst_msg_s": 800.0,
        "process_ms": 2.0,
        "lead_in_s": 1.5,
        "warm_up_s": 0.5,
        "burst_s": 1.0,
        "interval_s": 0.1,
        "partitions": 2,
    },
    "topic_count": {"topics": 3, "records": 300, "metadata_samples": 1},
    "device_read": {"method": "keyed: its partition", "records_per_device": 5, "devices": 4, "partitions": 2},
    "spark_ingest": {"records": 500, "sink": "noop"},
    "spark_aggregate": {"records": 500, "shuffle_partitions": 2, "topic_partitions": 1, "devices": 5},
    "spark_trigger_latency": {"offered_msg_s": 200, "produce_seconds": 6.0, "topic_partitions": 1},
    "spark_topic_layout": {"layout": "topic per device", "devices": 2, "readings_seconds": 20},
    "spark_restart": {"first": 400, "second": 200, "topic_partitions": 1},
    "spark_real_time": {"offered_msg_s": 200, "produce_seconds": 6.0, "topic_partitions": 1},
    "retention_deletes": {"rate": 100.0, "write_s": 1.5, "retention.ms": 1000, "segment.ms": 250, "settle_s": 2.0},
    "compaction_progress": {"keys": 10, "rate": 100.0, "write_s": 1.5, "deleted_keys": 2, "settle_s": 1.0},
    "reader_behind_retention": {
        "records": 60,
        "read_first": 20,
        "rate": 200.0,
        "retention_ms": 1500,
        "segment_ms": 100,
    },
    "replay": {"records": 500, "to": "timestamp"},
    "share_consume": {"kind": "share group", "members": 2, "processing_ms": 1.0, "records": 200, "topic_partitions": 2},
    "replication_lag": {"rate": 500.0, "seconds": 2.0, "partitions": 2},
    "consumer_failover": {"records": 2_000, "partitions": 2},
    "offset_shift": {"records": 400, "deleted": 50, "aborted": 50, "transaction": 50},
    "cut_link": {"rate": 300.0, "before_s": 1.0, "cut_s": 1.5, "after_s": 1.5, "partitions": 2},
    "worker_kill": {"rate": 300.0, "before_s": 1.0, "after_s": 2.0, "partitions": 2},
    "disaster": {"rate": 300.0, "before_s": 2.0, "partitions": 2},
    "active_active": {"rate": 300.0, "seconds": 1.0, "partitions": 2},
    "whole_path": {"records": 300, "partitions": 2, "batch": 100, "spark": False},
    "rolling_restart": {"proxies": 2, "rate": 200, "partitions": 2, "settle_s": 0.5, "between_s": 1.0},
}

#: Metrics each experiment does not measure: they must be NaN, never 0.0 or None.
NOT_MEASURED = {
    "native_round_trip": ["latency_p50_ms"],
    "registry_lookups": ["bytes", "mb_s"],
    "topic_count": ["latency_p50_ms"],
    "device_read": ["latency_p99_ms"],
    "spark_aggregate": ["bytes", "mb_s", "latency_p50_ms"],
    "spark_restart": ["seconds", "msg_s", "mb_s", "latency_p99_ms", "client_cpu_s"],
    "spark_real_time": ["bytes", "mb_s", "client_cpu_s"],
    "share_consume": ["bytes", "mb_s", "latency_p50_ms"],
    "consumer_failover": ["seconds", "msg_s", "mb_s", "latency_p50_ms"],
    "offset_shift": ["seconds", "msg_s", "mb_s", "latency_p50_ms"],
}


def check_contract(name: str, rows: pd.DataFrame, repeats: int = 2) -> None:
    """`repeats` repeats of one point (two, unless one run takes most of a minute), each a
    contract row, with the not-measured rule kept."""
    assert rows["repeat"].tolist() == list(range(repeats))
    for row in rows.to_dict("records"):
        assert contract_problems(row) == [], (name, contract_problems(row))
        assert row["experiment"] == name
        assert all(isinstance(row[m], int | float) for m in STANDARD_METRICS)
        for metric in NOT_MEASURED.get(name, []):
            assert math.isnan(row[metric]), f"{name}: {metric} = {row[metric]!r}, expected NaN (not measured)"
        assert row["records"] > 0
