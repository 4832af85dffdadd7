"""The tuning notebooks run under papermill in quick mode and record their results."""

from __future__ import annotations

import pytest
from course_outcomes import assert_every_exercise_passes

from workbench import results
from workbench.report import run_report
from workbench.stack import Stack

#: notebook → the experiments whose tables it must have appended rows to.
NOTEBOOKS = {
    "01_rest_proxy_tuning": [
        "proxy_produce",
        "proxy_buffer_time",
        "end_to_end_latency",
        "native_produce",
        "cpu_per_mb",
    ],
    "02_producer_tuning": ["native_produce"],
    "03_consumer_tuning": ["native_consume", "proxy_consume"],
    "04_message_size": ["native_produce", "proxy_produce"],
    "05_proxy_scale_out": ["proxy_scale_out"],
    "10_schema_formats": ["format_produce", "registry_lookups"],
}


@pytest.mark.parametrize("notebook", sorted(NOTEBOOKS))
def test_notebook_runs_quick_and_records_its_results(stack: Stack, notebook: str) -> None:
    report = run_report(stack.profile, notebooks=[notebook], overrides={"quick": True, "solutions": True})
    assert not report.failed, report.failed[0].error
    assert_every_exercise_passes(report, stack.profile, [notebook])
    for experiment in NOTEBOOKS[notebook]:
        rows = results.load(experiment, run_id=report.run_id, profile=stack.profile)
        assert len(rows) > 0, f"{notebook} recorded no {experiment!r} rows"
        assert (rows["profile"] == stack.profile.name).all()
    page = (report.directory / f"{notebook}.html").read_text()
    assert "What the run says" in page and "nan×" not in page  # noqa: RUF001
