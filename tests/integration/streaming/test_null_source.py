"""The null Python source behind notebook 09's second floor: it is a real streaming
source, so what it costs a batch is what any Python source pays; its rows come once each."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from workbench.streaming.ingestion import trigger_floor
from workbench.streaming.null_source import NULL_FORMAT, NullSource
from workbench.streaming.pipelines import stopping


def test_null_source_yields_each_row_once_in_order(spark: SparkSession, checkpoint: Path) -> None:
    spark.dataSource.register(NullSource)
    frame = spark.readStream.format(NULL_FORMAT).option("rowsPerSecond", 2000).load()
    query = frame.writeStream.format("memory").queryName("null_rows").option("checkpointLocation", str(checkpoint))
    running = query.trigger(processingTime="0 seconds").start()
    with stopping(running):
        deadline = time.monotonic() + 120
        while len([p for p in running.recentProgress if p["numInputRows"]]) < 3 and time.monotonic() < deadline:
            assert running.exception() is None, running.exception()
            time.sleep(0.05)
    values = [row.value for row in spark.table("null_rows").collect()]
    assert len(values) > 0 and sorted(values) == list(range(len(values)))


def test_both_floors_name_their_figures(spark: SparkSession, tmp_path: Path) -> None:
    rate = trigger_floor(spark, tmp_path, trigger="0 seconds", rate=1000, batches=2)
    python = trigger_floor(spark, tmp_path, trigger="0 seconds", rate=1000, batches=2, source="python")
    assert rate["floor_ms"] > 0 and "floor_addBatch_ms" in rate
    assert python["python_floor_ms"] > 0 and "python_floor_addBatch_ms" in python


def test_a_bad_rows_per_second_is_refused_when_the_frame_is_defined(spark: SparkSession) -> None:
    spark.dataSource.register(NullSource)
    for bad in ["", "abc", "0", "-5", "nan", "inf", "1e12", "x" * 10_000]:
        with pytest.raises(Exception, match="rowsPerSecond: must be a number above 0") as caught:
            spark.readStream.format(NULL_FORMAT).option("rowsPerSecond", bad).load()
        assert len(str(caught.value).splitlines()[0]) < 2_000, bad  # the 10,000-character value is clipped
