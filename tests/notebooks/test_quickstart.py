"""The quickstart notebook runs under papermill and records its results; its exercise
passes with the reference answer, fails a wrong one with a hint, and shows up in
`workbench course`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from course_outcomes import assert_every_exercise_passes

from workbench import course, results
from workbench.report import ensure_kernel, notebooks_dir, run_report
from workbench.stack import Stack


def test_quickstart_runs_and_records_its_results(stack: Stack, sandbox: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_LEARNER", "ada")
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
    assert "<summary>quickstart (" in report.index.read_text()  # its result table, collapsed on the front page

    assert_every_exercise_passes(report, stack.profile, ["00_quickstart"])
    progress = results.load(course.EXPERIMENT, run_id=report.run_id, profile=stack.profile)
    assert list(progress["learner"]) == ["ada"]
    assert json.loads(progress["measured"].iloc[0]) == {"produce_msg_s": pytest.approx(row["produce_msg_s"])}
    assert "Pass" in html and "<summary>course_progress (" in report.index.read_text()
    shown = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "course", "--learner", "ada"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert shown.returncode == 0, shown.stderr
    assert "00.1" in shown.stdout and "pass (1/1) [solution]" in shown.stdout
    assert f"ada: 1 of {len(course.catalogue())} exercises passed" in shown.stdout


def test_a_wrong_answer_fails_with_a_hint_and_no_traceback(
    stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook = nbformat.read(notebooks_dir() / "00_quickstart.ipynb", as_version=4)
    cell = next(c for c in notebook.cells if "exercise" in c.metadata.get("tags", []))
    cell.source = cell.source.replace("answer = ...", 'answer = "a lot"', 1)  # what a learner might type
    nbformat.write(notebook, tmp_path / "00_quickstart.ipynb")
    for name, value in {
        "WORKBENCH_PROFILE": str(stack.profile.source or stack.profile.name),
        "WORKBENCH_RUN_ID": "wrong-answer",
        "WORKBENCH_LEARNER": "grace",
    }.items():
        monkeypatch.setenv(name, value)
    import papermill

    papermill.execute_notebook(
        str(tmp_path / "00_quickstart.ipynb"),
        str(tmp_path / "executed.ipynb"),
        parameters={"quick": True},
        kernel_name=ensure_kernel(),
        cwd=str(notebooks_dir()),
        progress_bar=False,
    )

    executed = nbformat.read(tmp_path / "executed.ipynb", as_version=4)
    outputs = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    check = next(c for c in executed.cells if c.source.startswith("exercises.check("))
    said = check.outputs[0]["data"]["text/markdown"]
    assert "Not yet" in said and "expected a number of seconds, got the text 'a lot'" in said
    assert "re-read «The experiment" in said
    progress = results.load(course.EXPERIMENT, run_id="wrong-answer", profile=stack.profile)
    assert progress[["learner", "exercise", "outcome", "answer", "attempts"]].to_dict("records") == [
        {"learner": "grace", "exercise": "00.1", "outcome": "fail", "answer": "'a lot'", "attempts": 1}
    ]
