"""Spark's real-time mode on the embedded Kafka: a Kafka -> Kafka query delivers every record
once, in real-time mode and in micro-batches, and only Spark's connector is taken by it."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from workbench.errors import BenchError
from workbench.stack import Stack
from workbench.streaming.ingestion import real_time_latency, real_time_refusal, spark_real_time


def test_every_record_arrives_once_in_real_time_mode_and_in_micro_batches(
    spark: SparkSession, stack: Stack, tmp_path: Path
) -> None:
    rows = real_time_latency(
        spark,
        stack,
        tmp_path,
        rates=[300],
        seconds=6.0,
        triggers=[("real-time", "5 seconds"), ("micro-batch", "0 seconds")],
    )
    assert rows["mode"].tolist() == ["real-time", "micro-batch"]
    for row in rows.to_dict("records"):
        assert row["records"] == row["delivered"] == 1_800, row
        assert row["missing"] == row["duplicates"] == 0
        # The first 5 s of sends are the warm-up: about a sixth of the records are measured.
        assert 0 < row["measured_records"] < row["records"]
        assert row["connector"] == "kafka" and row["spark_version"] == "4.2.0"
        assert 0 <= row["latency_p50_ms"] <= row["latency_p99_ms"] <= row["latency_max_ms"]
        assert math.isnan(row["mb_s"])  # no payload size: not measured


def test_real_time_mode_takes_sparks_connector_and_refuses_a_python_source(
    spark: SparkSession, stack: Stack, tmp_path: Path
) -> None:
    assert real_time_refusal(spark, stack, tmp_path, connector="kafka") is None
    refusal = real_time_refusal(spark, stack, tmp_path, connector="workbench")
    assert refusal is not None and "real-time" in refusal.lower().replace("realtime", "real-time"), refusal


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"mode": "continuous"}, "mode must be one of"),
        ({"trigger": "1 second"}, "checkpoints at least every 5 s"),
        ({"trigger": "soon"}, "not a trigger interval"),
        ({"offered_msg_s": 0}, "offered_msg_s must be between"),
        ({"produce_seconds": 3.0}, "over the 5 s warm-up"),
        ({"topic_partitions": 64}, "topic_partitions must be between"),
    ],
)
def test_bad_parameters_are_one_line_before_any_query(stack: Stack, params: dict[str, object], message: str) -> None:
    with pytest.raises(BenchError, match=message):
        spark_real_time(stack, **params)  # type: ignore[arg-type]


def test_more_partitions_than_task_slots_is_refused_before_it_could_hang(
    spark: SparkSession, stack: Stack, tmp_path: Path
) -> None:
    """Real-time mode would wait for slots that never come free: refused in one line instead."""
    slots = spark.sparkContext.defaultParallelism
    with pytest.raises(
        BenchError, match=f"{slots + 1} partitions need {slots + 1} slots, and this session has {slots}"
    ):
        real_time_latency(
            spark,
            stack,
            tmp_path,
            rates=[100],
            seconds=6.0,
            triggers=[("real-time", "5 seconds")],
            partitions=slots + 1,
        )
