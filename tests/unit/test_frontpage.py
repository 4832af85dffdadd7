"""The front page's pure parts: conclusions taken from an executed notebook, the headline table."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pandas as pd

from workbench.frontpage import HEADLINES, Headline, _run_figure, conclusions_html
from workbench.report import notebook_paths


def _executed(tmp_path: Path, cells: list[nbformat.NotebookNode]) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    path = tmp_path / "executed.ipynb"
    nbformat.write(nb, path)
    return path


def test_conclusions_are_the_output_of_the_code_cell_after_the_heading(tmp_path: Path) -> None:
    said = nbformat.v4.new_code_cell("Markdown(...)")
    said.outputs = [nbformat.v4.new_output("execute_result", {"text/markdown": "- **2x** faster", "text/plain": "x"})]
    before = nbformat.v4.new_code_cell("print('not this')")
    before.outputs = [nbformat.v4.new_output("stream", text="not this")]
    path = _executed(tmp_path, [before, nbformat.v4.new_markdown_cell("## What the run says\n\nBelow."), said])
    html = conclusions_html(path)
    assert html is not None and "<strong>2x</strong> faster" in html and "not this" not in html


def test_no_heading_or_no_output_gives_none(tmp_path: Path) -> None:
    assert conclusions_html(_executed(tmp_path, [nbformat.v4.new_code_cell("1")])) is None
    empty = [nbformat.v4.new_markdown_cell("## What the run says"), nbformat.v4.new_code_cell("x = 1")]
    assert conclusions_html(_executed(tmp_path, empty)) is None
    assert conclusions_html(tmp_path / "missing.ipynb") is None


def test_every_headline_names_a_notebook_and_a_table_it_records() -> None:
    sources = {p.stem: "\n".join(c.source for c in nbformat.read(p, as_version=4).cells) for p in notebook_paths()}
    for notebook, headlines in HEADLINES.items():
        assert notebook in sources, notebook
        for headline in headlines:
            assert f'"{headline.table}"' in sources[notebook], (notebook, headline.table)
            assert headline.direction in ("higher", "lower")


def test_a_run_is_summed_up_by_its_best_point_median() -> None:
    rows = pd.DataFrame({"experiment": "e", "params": "x", "x": [1, 1, 1, 2, 2, 2], "msg_s": [10, 11, 90, 20, 21, 22]})
    assert _run_figure(rows, Headline("e", "msg_s", "rate")) == 21.0  # medians 11 and 21
    assert _run_figure(rows, Headline("e", "msg_s", "rate", "lower")) == 11.0
