"""The quickstart notebook runs under papermill and records its results."""

from __future__ import annotations

from pathlib import Path

from workbench import results
from workbench.report import run_report
from workbench.stack import Stack


def test_quickstart_runs_and_records_its_results(stack: Stack, sandbox: Path) -> None:
    report = run_report(stack.profile, notebooks=["00_quickstart"], overrides={"quick": True, "solutions": True})
    assert not report.failed, report.failed[0].error
    assert report.index.exists() and (report.directory / "00_quickstart.html").exists()

    rows = results.load("quickstart", run_id=report.run_id, profile=stack.profile)
    assert len(rows) == 1
    row = rows.iloc[0]
    assert row["records"] == row["acknowledged"] == row["read_back"] == row["end_offsets_total"] == 20_000
    html = (report.directory / "00_quickstart.html").read_text()
    assert "every record is there, once" in html
    assert "plotly" in html.lower()
    assert "Results: quickstart" in report.index.read_text()
