"""`ingestion.cpu_per_row` and `cpu_sentence`: where a read's CPU went, per row, from sweep rows."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from workbench.streaming import ingestion

pytestmark = pytest.mark.unit

NAN = float("nan")


def _sweep(broker: float = 0.4) -> pd.DataFrame:
    common = {"topic_partitions": 1, "records": 1_000_000, "min_partitions": NAN}
    return pd.DataFrame(
        [
            {
                **common,
                "sink": "noop",
                "wall_s": 2.0,
                "spark_jvm_cpu_s": 0.8,
                "spark_python_cpu_s": 1.3,
                "broker_cpu_s": broker,
                "client_cpu_s": 0.01,
            },
            {**common, "sink": "plain consumer, GC paused", "wall_s": 1.0, "client_cpu_s": 0.6, "broker_cpu_s": broker},
        ]
    )


def test_cpu_per_row_charges_each_read_with_its_own_processes() -> None:
    cpu = ingestion.cpu_per_row(_sweep()).set_index("sink")
    spark, plain = cpu.loc["noop"], cpu.loc["plain consumer, GC paused"]
    assert spark["Spark JVM"] == pytest.approx(0.8) and spark["Spark Python workers"] == pytest.approx(1.3)
    assert spark["broker"] == pytest.approx(0.4) and math.isnan(spark["plain consumer"])  # the driver only waits
    assert spark["total"] == pytest.approx(2.5) and spark["cores_busy"] == pytest.approx(2.5 / 2.0)
    assert plain["plain consumer"] == pytest.approx(0.6) and plain["cores_busy"] == pytest.approx(1.0)


def test_cpu_sentence_names_the_figures_and_the_ratio() -> None:
    sentence = ingestion.cpu_sentence(ingestion.cpu_per_row(_sweep()), cores=2)
    assert "**2.50 µs of CPU**" in sentence and "Spark JVM 0.80" in sentence and "plain consumer 0.60" in sentence
    assert "**2.5x** the plain consumer's 1.00 µs" in sentence and "kept 1.2 of them busy" in sentence


def test_cpu_sentence_leaves_out_what_a_foreign_cluster_cannot_measure() -> None:
    sentence = ingestion.cpu_sentence(ingestion.cpu_per_row(_sweep(broker=NAN)), cores=2)
    assert "broker" not in sentence and "**2.10 µs of CPU**" in sentence
