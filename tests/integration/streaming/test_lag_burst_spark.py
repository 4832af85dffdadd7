"""A burst read by a Spark micro-batch query: its lag (log ends - the last completed batch's end
offsets) rises and clears where the readings say, every record is counted in the batches, and
the batches are on the run's clock; on the streaming tier's SparkSession."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from workbench import kafka
from workbench.bench.burst import lag_burst_run
from workbench.bench.burst_plan import plan_burst

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # lag_checks, beside the integration tests
from lag_checks import check_burst

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from workbench.stack import Stack


def test_a_spark_querys_lag_rises_and_clears_and_every_row_is_counted(spark: SparkSession, stack: Stack) -> None:
    before = set(kafka.list_topics(stack.kafka_config()))
    # Capacity 200 records/s (200 per 1 s trigger); 2 s at 500 records/s leaves about 600
    # behind, which clears at 150 records/s spare.
    plan = plan_burst(
        consumer="spark",
        normal_msg_s=50.0,
        burst_msg_s=500.0,
        max_offsets_per_trigger=200,
        trigger_s=1.0,
        lead_in_s=3.0,
        warm_up_s=1.0,
        burst_s=2.0,
        interval_s=0.1,
        partitions=2,
    )
    run = lag_burst_run(stack, plan)
    check_burst(run, plan)
    row = run.row
    assert row["consumer"] == "spark" and row["connector"] == "kafka" and row["capacity_msg_s"] == 200.0
    assert row["missing_batches"] == 0 and row["batches"] > 0
    assert row["max_batch_rows"] <= 200  # maxOffsetsPerTrigger held
    assert run.latency is None and row["latency_of"] == ""  # a noop sink shows no record
    batches = run.batches
    assert batches is not None and int(batches["rows"].sum()) == row["read"]
    assert (batches["t_end"] >= batches["t"]).all() and batches["t_end"].max() > plan.burst_window[1]
    assert set(kafka.list_topics(stack.kafka_config())) == before
