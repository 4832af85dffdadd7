"""The telemetry pipeline: Spark's windowed aggregation equals pandas over the same readings."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
from pyspark.sql import SparkSession

from workbench.stack import Stack
from workbench.streaming import kafka_source, to_pandas
from workbench.streaming.pipelines import (
    WINDOW_COLUMNS,
    device_windows,
    expected_windows,
    parse_readings,
    stopping,
    write_parquet,
)
from workbench.streaming.telemetry import generate_readings, produce_readings


def test_windowed_aggregation_matches_pandas(
    spark: SparkSession, stack: Stack, topic: Callable[..., str], tmp_path: Path
) -> None:
    # One partition, so each micro-batch is a slice of the produced order and pandas can
    # replay exactly the batches Spark ran, watermark and late drops included.
    name = topic(partitions=1)
    readings = generate_readings(devices=4, seconds=90, start_ms=1_700_000_000_000, late_fraction=0.05, seed=3)
    half = len(readings) // 2
    output, checkpoint = tmp_path / "windows", tmp_path / "checkpoint"
    windows = device_windows(parse_readings(kafka_source(spark, stack, subscribe=name, startingOffsets="earliest")))

    sizes: list[int] = []
    for part in (readings[:half], readings[half:]):
        assert produce_readings(stack.kafka_config("producer"), part, name) == {name: len(part)}
        with stopping(write_parquet(windows, output, checkpoint)) as query:
            query.awaitTermination()
        sizes += [p["numInputRows"] for p in query.recentProgress]
    batches, start = [], 0
    for size in sizes:
        batches.append(readings[start : start + size])
        start += size
    assert start == len(readings)

    expected = expected_windows(batches, window_ms=10_000, watermark_ms=20_000)
    actual = to_pandas(spark.read.parquet(str(output)))
    for column in ("window_start", "window_end"):
        actual[column] = actual[column].dt.tz_localize("UTC")
    actual = actual[WINDOW_COLUMNS].sort_values(["device_id", "window_start"]).reset_index(drop=True)

    assert 0 < expected["readings"].sum() < len(readings)  # late readings dropped, open windows pending
    assert actual[["device_id", "window_start", "readings"]].equals(expected[["device_id", "window_start", "readings"]])
    pd.testing.assert_frame_equal(actual, expected, check_dtype=False, check_exact=False, rtol=1e-9)


def test_spark_python_workers_import_the_installed_pyspark_not_its_source_zip(spark: SparkSession) -> None:
    """The session's JVM runs with the workbench's lean SPARK_HOME (`lean_spark_home`): its
    Python workers find no `python/lib/pyspark.zip` to compile, and import the PySpark
    installed beside them, the same version as the driver's."""
    import pyspark

    def where(rows: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        import pyspark as worker_pyspark

        for _ in rows:
            yield pd.DataFrame({"file": [worker_pyspark.__file__], "version": [worker_pyspark.__version__]})

    found = spark.range(1).mapInPandas(where, "file string, version string").collect()
    assert [(row.file, row.version) for row in found] == [(pyspark.__file__, pyspark.__version__)]
