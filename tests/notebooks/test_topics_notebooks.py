"""Notebooks 06-08 run in quick mode under papermill, record their results and state their conclusions."""

from __future__ import annotations

from pathlib import Path

import pytest
from course_outcomes import assert_every_exercise_passes

from workbench import results
from workbench.report import Report, run_report
from workbench.stack import Stack

NOTEBOOKS = ["06_topics_vs_partitions", "07_per_device_topics", "08_partition_sizing"]


@pytest.fixture(scope="module")
def report(stack: Stack, sandbox: Path) -> Report:
    """One quick report over the three topic notebooks."""
    return run_report(stack.profile, notebooks=NOTEBOOKS, overrides={"quick": True, "solutions": True})


def _html(report: Report, name: str) -> str:
    return (report.directory / f"{name}.html").read_text()


def test_all_three_notebooks_run_without_error(report: Report) -> None:
    assert not report.failed, report.failed[0].error
    assert [run.name for run in report.runs] == NOTEBOOKS


def test_every_exercise_of_the_three_passes_with_its_reference_answer(stack: Stack, report: Report) -> None:
    assert_every_exercise_passes(report, stack.profile, NOTEBOOKS)


def test_topics_vs_partitions_measures_each_quick_count(stack: Stack, report: Report) -> None:
    rows = results.load("topics_vs_partitions", run_id=report.run_id, profile=stack.profile)
    assert list(rows["topics"]) == [1, 10, 100]
    assert list(rows["assigned"]) == [1, 10, 100]
    assert (rows["records"] == 5_000).all()
    html = _html(report, "06_topics_vs_partitions")
    assert "Each topic added about" in html and "A group joined with a regex over 1 topic(s)" in html


def test_per_device_topics_finds_every_record_in_every_layout(stack: Stack, report: Report) -> None:
    layouts = results.load("per_device_layouts", run_id=report.run_id, profile=stack.profile)
    assert list(layouts["layout"]) == ["keyed topic", "topic per device", "bucketed topics"]
    assert list(layouts["topics"]) == [1, 30, 8]
    assert (layouts["misplaced"] == 0).all()
    assert (layouts["group_records"] == 600).all() and (layouts["devices_complete"] == 30).all()
    assert (layouts["one_device_records"] == 20).all()
    reads = results.load("per_device_reads", run_id=report.run_id, profile=stack.profile)
    assert len(reads) == 6 and (reads["returned"] == reads["records_per_device"]).all()
    assert "Every record of the 30 devices landed where its layout predicted" in _html(report, "07_per_device_topics")


def test_partition_sizing_plans_from_live_rates_and_computes_key_movement(stack: Stack, report: Report) -> None:
    plan = results.load("partition_sizing", run_id=report.run_id, profile=stack.profile)
    assert len(plan) == 1 and plan["source"].iloc[0] == "measured on this stack"
    assert plan["recommended"].iloc[0] >= plan["minimum"].iloc[0] >= 1
    growth = results.load("partition_growth", run_id=report.run_id, profile=stack.profile)
    assert len(growth) == 8 and (growth["keys"] == 20_000).all()
    doubling = growth[(growth["old_partitions"] == 4) & (growth["new_partitions"] == 8)]
    assert ((doubling["moved_fraction"] - 0.5).abs() < 0.02).all()
    html = _html(report, "08_partition_sizing")
    assert "Partitions = max(" in html and "change partition going from 4 to 5" in html
