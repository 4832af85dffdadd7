"""A report with a failing notebook: the HTML is still written, the executed copy kept
(with what ran before a hung cell, too), the failure named, and the command exits non-zero."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from workbench import catalog
from workbench.config import conf_dir, load_profile


def _project_with(tmp_path: Path, notebooks: dict[str, list[str]]) -> Path:
    """A throw-away project: the real profiles plus tiny notebooks, one behaviour each."""
    shutil.copytree(conf_dir(), tmp_path / "conf")
    (tmp_path / "notebooks").mkdir()
    for name, sources in notebooks.items():
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(sources[0], metadata={"tags": ["parameters"]})]
        nb.cells += [nbformat.v4.new_code_cell(source) for source in sources[1:]]
        nbformat.write(nb, tmp_path / "notebooks" / f"{name}.ipynb")
    return tmp_path


def test_failing_notebook_keeps_its_copy_and_fails_the_run(tmp_path: Path) -> None:
    project = _project_with(
        tmp_path,
        {
            "01_passes": ["quick = False", "print('fine', quick)"],
            "02_fails": ["quick = False", "raise ValueError('bad reading: -1')"],
            "03_hangs": ["quick = False", "print('before the hang')", "import time\ntime.sleep(600)"],
            "04_dies": ["quick = False", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"],
            "05_crashes": ["quick = False", "import ctypes\nctypes.string_at(0)"],  # a native library's crash
        },
    )
    env = {
        **os.environ,
        "WORKBENCH_CONF_DIR": str(project / "conf"),
        "WORKBENCH_REPORTS_DIR": str(project / "r"),
        "WORKBENCH_CELL_TIMEOUT": "10",
        "COLUMNS": "1000",  # a failure on one line
    }
    result = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "report", "--quick", "--output", str(project / "out")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 1
    assert "01_passes: ok" in result.stdout
    assert "02_fails: FAILED" in result.stdout and "ValueError" in result.stdout
    assert "03_hangs: FAILED" in result.stdout
    # A kernel that dies says how, not only papermill's "Kernel died".
    assert "04_dies: FAILED" in result.stdout and "killed by SIGKILL" in result.stdout
    # A native crash names its Python frame (faulthandler's dump in the kernel's log).
    crashed = next(line for line in result.stdout.splitlines() if line.startswith("05_crashes: FAILED"))
    assert "Segmentation fault | string_at (ctypes/__init__.py:" in crashed and "killed by SIGSEGV" in crashed
    assert result.stderr.strip().splitlines()[-1].startswith("error: 4 notebook(s) failed")
    assert "Traceback" not in result.stderr

    out = project / "out"
    executed = nbformat.read(out / "executed" / "02_fails.ipynb", as_version=4)
    assert any(o.get("ename") == "ValueError" for c in executed.cells for o in c.get("outputs", []))
    # The executed copy is written once the run ends, however it ends: a cell that timed out
    # leaves what ran before it.
    hung = nbformat.read(out / "executed" / "03_hangs.ipynb", as_version=4)
    assert any("before the hang" in o.get("text", "") for c in hung.cells for o in c.get("outputs", []))
    # What the kernel process itself printed when it was stopped mid-cell is in a log beside
    # the copy, not on the user's terminal.
    assert "Traceback" in (out / "executed" / "03_hangs.kernel.log").read_text()
    assert not (out / "executed" / "01_passes.kernel.log").exists()  # a quiet kernel leaves no log
    index = (out / "index.html").read_text()
    assert "failed: ValueError: bad reading: -1" in index
    assert (out / "01_passes.html").exists() and (out / "02_fails.html").exists()
    assert "fine True" in (out / "01_passes.html").read_text()  # --quick reached the notebook

    # The run is catalogued as failed, with the notebook that failed and why.
    table = catalog.runs(load_profile(), kind="report")
    (entry,) = [row for _, row in table.iterrows() if row["output"] == str(out / "index.html")]
    assert entry["status"] == "failed"
    assert entry["error"].startswith("02_fails: ValueError: bad reading: -1; 03_hangs: CellTimeoutError")
    assert entry["name"] == "01_passes,02_fails,03_hangs,04_dies,05_crashes" and '"quick": true' in entry["parameters"]
    assert entry["run_id"] in index and entry["ended_at"] > entry["started_at"]


def test_report_pages_share_one_plotlyjs(tmp_path: Path) -> None:
    """Two notebooks with figures (one also with a live widget): plotly.js is written once,
    beside the pages that load it, and no widget state is kept."""
    figure = "\n".join(
        ["from workbench import viz", "import plotly.express as px", "viz.configure_renderers()", "px.bar(y=[3, 4])"]
    )
    widget = "import plotly.graph_objects as go\ngo.FigureWidget(go.Scatter(x=[1], y=[2]))"
    project = _project_with(tmp_path, {"01_a": ["quick = False", figure], "02_b": ["quick = False", figure, widget]})
    env = {**os.environ, "WORKBENCH_CONF_DIR": str(project / "conf"), "WORKBENCH_REPORTS_DIR": str(project / "r")}
    result = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "report", "--output", str(project / "out")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    out = project / "out"
    bundle = (out / "plotly.min.js").read_text()
    assert len(bundle) > 1_000_000
    for name in ("01_a", "02_b"):
        page = (out / f"{name}.html").read_text()
        assert '<script src="plotly.min.js"></script>' in page and "Plotly.newPlot" in page
        assert bundle[:2000] not in page
        executed = (out / "executed" / f"{name}.ipynb").read_text()
        assert bundle[:2000] not in executed
        assert "widget-state" not in executed  # a live widget's saved state carries its own plotly bundle
