"""The report parameter files name real parameters: the thorough report's long sweeps, and
the smoke file that keeps every setting of the default report at small counts."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import nbformat
import pytest

from workbench.report import notebooks_dir, read_parameters

CONF = Path(__file__).resolve().parents[2] / "conf"
NOTEBOOKS = sorted(p.stem for p in notebooks_dir().glob("[0-9][0-9]_*.ipynb"))


def _parameters(notebook: str) -> dict[str, Any]:
    """The notebook's parameters cell as {name: default value}."""
    book = nbformat.read(notebooks_dir() / f"{notebook}.ipynb", as_version=4)
    (cell,) = [c for c in book.cells if "parameters" in c.metadata.get("tags", [])]
    values = {}
    for node in ast.parse(cell.source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            values[node.target.id] = ast.literal_eval(node.value)
    return values


@pytest.mark.parametrize("name", ["report-smoke.yaml", "report-thorough.yaml"])
def test_every_value_names_a_parameter_of_its_notebook(name: str) -> None:
    defaults, per_notebook = read_parameters(CONF / name)
    assert defaults == {"quick": False}
    for notebook, values in per_notebook.items():
        assert notebook in NOTEBOOKS, notebook
        known = _parameters(notebook)
        assert set(values) <= set(known), (notebook, sorted(set(values) - set(known)))
        for key, value in values.items():
            assert type(value) is type(known[key]) or {type(value), type(known[key])} == {int, float}, (notebook, key)


def test_the_smoke_file_covers_every_notebook_and_shrinks_only_numbers() -> None:
    _, per_notebook = read_parameters(CONF / "report-smoke.yaml")
    assert sorted(per_notebook) == NOTEBOOKS
    for notebook, values in per_notebook.items():
        known = _parameters(notebook)
        lists = [key for key in values if isinstance(known[key], list)]
        assert not lists, f"{notebook}: {lists} name the default report's points; the smoke file keeps them"
        for key, value in values.items():
            assert isinstance(value, int | float) and value <= known[key], (notebook, key, value)


def test_the_thorough_file_only_grows_the_default_report() -> None:
    _, per_notebook = read_parameters(CONF / "report-thorough.yaml")
    for notebook, values in per_notebook.items():
        known = _parameters(notebook)
        for key, value in values.items():
            if isinstance(value, list):
                assert all(point in value for point in known[key]), (notebook, key)  # a superset of the points
            else:
                assert value >= known[key], (notebook, key)
