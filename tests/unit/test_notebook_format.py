"""Every notebook is committed thin and clean: one tagged parameters cell that papermill
parses without a warning, a `quick` switch and a `profile`, no outputs, the workbench
kernel, no cell longer than a screen, and no host:port written in it."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import nbformat
import pytest
from papermill.translators import PythonTranslator

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_there_are_notebooks() -> None:
    assert len(NOTEBOOKS) >= 10


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_clean(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    notebook = nbformat.read(path, as_version=4)
    assert notebook.metadata["kernelspec"]["name"] == "workbench"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(not cell.get("outputs") and cell.get("execution_count") is None for cell in code)
    tagged = [cell for cell in code if "parameters" in cell.metadata.get("tags", [])]
    assert len(tagged) == 1
    assert "quick: bool = False" in tagged[0].source and 'profile: str = ""' in tagged[0].source
    with caplog.at_level(logging.WARNING, logger="papermill"):
        assert PythonTranslator.inspect({**tagged[0], "source": tagged[0].source})
    assert not caplog.records, [r.getMessage() for r in caplog.records]
    assert max(len(cell.source.splitlines()) for cell in notebook.cells) <= 25
    assert not [c for c in code if re.search(r"(localhost|127\.0\.0\.1):\d{2,5}", c.source)]
