"""The topic notebooks are committed thin and clean: tagged parameters, no outputs, the workbench kernel."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAMES = ["06_topics_vs_partitions", "07_per_device_topics", "08_partition_sizing"]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_committed_clean_with_a_tagged_parameters_cell(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    assert notebook.metadata["kernelspec"]["name"] == "workbench"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(not cell.get("outputs") and cell.get("execution_count") is None for cell in code)
    tagged = [cell for cell in code if "parameters" in cell.metadata.get("tags", [])]
    assert len(tagged) == 1
    assert "quick: bool = False" in tagged[0].source and 'profile: str = ""' in tagged[0].source
    assert max(len(cell.source.splitlines()) for cell in notebook.cells) <= 25  # no cell longer than a screen
