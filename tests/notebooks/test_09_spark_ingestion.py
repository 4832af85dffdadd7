"""Notebook 09 runs under papermill in quick mode and records what it measured."""

from __future__ import annotations

from pathlib import Path

import pytest
from course_outcomes import assert_every_exercise_passes

from workbench import results
from workbench.report import run_report
from workbench.stack import Stack

# Notebook 09 against the embedded stack and against the foreign cluster run in one
# worker, one after the other: two Spark applications at most at any time (see conftest.py).
pytestmark = pytest.mark.xdist_group("spark-notebooks")


def test_spark_ingestion_notebook_runs_and_records_its_results(stack: Stack, tmp_path: Path) -> None:
    report = run_report(
        stack.profile,
        notebooks=["09_spark_ingestion"],
        overrides={"quick": True, "solutions": True, "work_dir": str(tmp_path)},
    )
    assert not report.failed, report.failed[0].error
    assert_every_exercise_passes(report, stack.profile, ["09_spark_ingestion"])

    restart = results.load("spark_restart", run_id=report.run_id, profile=stack.profile)
    assert len(restart) == 1
    row = restart.iloc[0]
    assert row["rows"] == row["distinct_offsets"] == row["log_records"] == row["produced"] == 7_500

    limited = results.load("spark_rate_limit", run_id=report.run_id, profile=stack.profile)
    assert (limited["records"] == 20_000).all()
    bounded = limited.dropna(subset=["max_offsets_per_trigger"])
    assert (bounded["max_batch_rows"] <= bounded["max_offsets_per_trigger"]).all()

    layout = results.load("spark_topic_layout", run_id=report.run_id, profile=stack.profile)
    assert (layout["pickup_new_topic_rows_read"] == layout["pickup_new_topic_rows_produced"]).all()

    html = (report.directory / "09_spark_ingestion.html").read_text()
    assert "nothing lost, nothing duplicated" in html
    assert "Kafka source: <code>workbench_kafka</code>" in html or "workbench_kafka" in html
