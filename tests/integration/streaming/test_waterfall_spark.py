"""The latency waterfall into Spark: a micro-batch query's planning, its start in the sink and the
rows written are stamps on each record's path, in order, and every record is read once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from workbench.bench import waterfall_run
from workbench.stack import Stack

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # waterfall_checks, beside the integration tests
from waterfall_checks import check_stamps

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_spark_batches_are_stamps_on_each_records_path(spark: SparkSession, stack: Stack) -> None:
    run = waterfall_run(stack, offered_msg_s=300, offered_seconds=6, reader="spark", trigger="200 milliseconds")
    check_stamps(run, ["scheduled", "sent", "appended", "batch_planned", "batch_started", "consumed"])
    row = run.row
    assert row["connector"] == stack.profile.spark.connector or row["connector"] in ("kafka", "workbench")
    assert row["spark_version"] == "4.2.0"
    assert row["params"].endswith(",connector")
    # A batch's rows share its stamps: fewer distinct start times than records.
    counted = run.stamps[run.counted]
    assert counted["batch_started"].nunique() < len(counted)
