"""`workbench report --compare-to last --fail-on-regression`: the index page shows the comparison
with the previous run, and the exit status says whether a headline figure got slower with evidence.

The notebook records synthetic repeats whose centre is a parameter, so the answer is known."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from workbench.config import conf_dir

RECORD = """from workbench import results
results.record("gate", [{"msg_s": centre * (1 + 0.01 * i), "repeat": i} for i in (-2, -1, 0, 1, 2)])"""


def _project(tmp_path: Path) -> Path:
    shutil.copytree(conf_dir(), tmp_path / "conf")
    (tmp_path / "notebooks").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("quick = False\ncentre = 1000.0", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(RECORD),
    ]
    nbformat.write(nb, tmp_path / "notebooks" / "01_gate.ipynb")
    return tmp_path


def _report(project: Path, out: str, centre: float, *extra: str) -> subprocess.CompletedProcess[str]:
    params = project / f"{out}.yaml"
    params.write_text(f"defaults: {{centre: {centre}}}\n")
    env = {
        **os.environ,
        "WORKBENCH_CONF_DIR": str(project / "conf"),
        "WORKBENCH_RESULTS_DIR": str(project / "res"),
        "WORKBENCH_REPORTS_DIR": str(project / "r"),
    }
    command = ["report", "--params", str(params), "--output", str(project / out), *extra]
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *command], capture_output=True, text=True, timeout=300, env=env
    )


def test_compare_to_last_and_fail_on_regression(tmp_path: Path) -> None:
    project = _project(tmp_path)
    first = _report(project, "first", 1000.0, "--compare-to", "last", "--fail-on-regression")
    assert first.returncode == 0, first.stderr  # nothing to compare with yet: said on the page, not an error
    assert "no comparison: no earlier report run" in (project / "first" / "index.html").read_text()

    same = _report(project, "same", 1000.0, "--compare-to", "last", "--fail-on-regression")
    assert same.returncode == 0, same.stderr
    page = (project / "same" / "index.html").read_text()
    assert "Compared with run" in page and "no evidence of change" in page and "Mann-Whitney U p &lt; 0.05" in page

    slower = _report(project, "slower", 700.0, "--compare-to", "last", "--fail-on-regression")
    assert slower.returncode == 1
    (line,) = slower.stderr.strip().splitlines()
    assert line.startswith("error: slower than run ") and "gate msg_s x0.70" in line
    assert "<td class='failed'>slower</td>" in (project / "slower" / "index.html").read_text()

    faster = _report(project, "faster", 1000.0, "--compare-to", "last", "--fail-on-regression")
    assert faster.returncode == 0, faster.stderr
    assert "<td class='ok'>faster</td>" in (project / "faster" / "index.html").read_text()


def test_fail_on_regression_needs_a_baseline(tmp_path: Path) -> None:
    result = _report(_project(tmp_path), "x", 1.0, "--fail-on-regression")
    assert result.returncode == 1 and result.stderr.startswith("error: --fail-on-regression needs --compare-to")
