"""The report's front page leads with each notebook's conclusions and headline figures, with a
trend over earlier report runs once there is one, and the full tables collapsed below.

The notebook records synthetic repeats whose centre is a parameter, so the answer is known."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from workbench.config import conf_dir

RECORD = """from workbench import results
rows = results.record("gate", [{"msg_s": centre * (1 + 0.01 * i), "repeat": i} for i in (-2, -1, 0, 1, 2)])"""
SAYS = """from IPython.display import Markdown
Markdown(f"- The gate passed **{rows.msg_s.median():,.0f} msg/s** (median of {len(rows)} repeats).")"""


def _project(tmp_path: Path) -> Path:
    shutil.copytree(conf_dir(), tmp_path / "conf")
    (tmp_path / "notebooks").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("quick = False\ncentre = 1000.0", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(RECORD),
        nbformat.v4.new_markdown_cell("## What the run says"),
        nbformat.v4.new_code_cell(SAYS),
    ]
    nbformat.write(nb, tmp_path / "notebooks" / "01_gate.ipynb")
    return tmp_path


def _report(project: Path, out: str, centre: float) -> str:
    params = project / f"{out}.yaml"
    params.write_text(f"defaults: {{centre: {centre}}}\n")
    env = {
        **os.environ,
        "WORKBENCH_CONF_DIR": str(project / "conf"),
        "WORKBENCH_RESULTS_DIR": str(project / "res"),
        "WORKBENCH_REPORTS_DIR": str(project / "r"),
    }
    command = ["report", "--params", str(params), "--output", str(project / out)]
    result = subprocess.run(
        [sys.executable, "-m", "workbench.cli", *command], capture_output=True, text=True, timeout=300, env=env
    )
    assert result.returncode == 0, result.stderr
    return (project / out / "index.html").read_text()


def test_front_page_leads_with_conclusions_then_trends_once_a_second_run_exists(tmp_path: Path) -> None:
    project = _project(tmp_path)
    first = _report(project, "first", 1000.0)
    assert "The gate passed <strong>1,000 msg/s</strong> (median of 5 repeats)." in first
    assert first.index("The gate passed") < first.index("Full results")
    assert "<details><summary>gate (5 rows)</summary>" in first  # the full table, collapsed
    assert "first run" in first and "plotly-graph-div" not in first  # one run: no trend yet

    second = _report(project, "second", 1000.0)
    assert second.count("plotly-graph-div") == 1 and '<script src="plotly.min.js"></script>' in second
    assert (project / "second" / "plotly.min.js").exists()
    assert "no evidence of change" in second and "slower with evidence" not in re.sub(
        r"<p class='meta'>.*?</p>", "", second
    )

    third = _report(project, "third", 700.0)
    assert "The gate passed <strong>700 msg/s</strong>" in third
    assert "<td class='failed'>slower at 1 of 1 point(s)</td>" in third
    assert '"slower with evidence"' in third  # the red cross of the trend figure
