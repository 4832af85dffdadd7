"""The front page's pure parts: conclusions taken from an executed notebook, the headline table."""

from __future__ import annotations

import math
from pathlib import Path

import nbformat
import pandas as pd
import pytest

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


#: What a latency headline pins, per table: the path (or trigger) and the offered rate, or the
#: cache it measures. A new latency headline names its table here.
PINNED = {
    "latency_waterfall": {"path", "reader", "offered_msg_s"},
    "spark_trigger_latency": {"trigger", "offered_msg_s"},
    "spark_real_time": {"mode", "trigger", "offered_msg_s"},
    "registry_lookups": {"cached"},
}


def test_every_declared_headline_is_taken_at_a_stated_point() -> None:
    for notebook, headlines in HEADLINES.items():
        for headline in headlines:
            assert headline.point, (notebook, headline.label)  # never "the best over every row"
            if headline.direction == "lower":
                assert PINNED[headline.table] <= set(headline.point), (notebook, headline.label)
    assert HEADLINES["01_rest_proxy_tuning"][1].point == {"path": "proxy", "reader": "native", "offered_msg_s": 1000}


def _sweep() -> pd.DataFrame:
    """An end-to-end sweep: native at 200 msg/s is the least latency; the proxy at 1,000 is the stated point."""
    points = [
        ("native", 200, [10.0, 11, 12]),
        ("native", 1000, [12.0, 13, 14]),
        ("proxy", 200, [15.0, 16, 17]),
        ("proxy", 1000, [18.0, 19, 90]),
    ]
    return pd.DataFrame(
        [
            {
                "experiment": "latency_waterfall",
                "params": "path,reader,offered_msg_s",
                "path": path,
                "reader": "native",
                "offered_msg_s": rate,
                "latency_p99_ms": value,
                "msg_s": rate * 0.99,
            }
            for path, rate, values in points
            for value in values
        ]
    )


def test_a_latency_headline_is_the_median_at_its_point_not_the_least_over_the_sweep() -> None:
    assert _run_figure(_sweep(), HEADLINES["01_rest_proxy_tuning"][1]) == 19.0  # not native's 11


def test_a_latency_filter_leaving_several_points_gives_no_figure() -> None:
    loose = Headline("latency_waterfall", "latency_p99_ms", "p99", {"path": "proxy"}, "lower")
    assert math.isnan(_run_figure(_sweep(), loose))


def test_a_throughput_filter_leaving_several_points_gives_the_best_of_them() -> None:
    rows = pd.DataFrame({"experiment": "e", "params": "x", "x": [1, 1, 1, 2, 2, 2], "msg_s": [10, 11, 90, 20, 21, 22]})
    assert _run_figure(rows, Headline("e", "msg_s", "rate", {"experiment": "e"})) == 21.0  # medians 11 and 21
    assert _run_figure(rows, Headline("e", "msg_s", "rate", {"x": 1})) == 11.0
    assert math.isnan(_run_figure(rows, Headline("e", "msg_s", "rate", {"y": 1})))  # a column it lacks: no figure


def test_the_front_page_label_states_the_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench import results
    from workbench.config import load_profile
    from workbench.frontpage import headline_section

    monkeypatch.setenv("WORKBENCH_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("WORKBENCH_RUN_ID", "r1")
    profile = load_profile()
    results.record("latency_waterfall", _sweep(), profile)
    page, _ = headline_section("01_rest_proxy_tuning", [], "r1", ["r1"], profile)
    assert "end-to-end latency p99 ms through the proxy at 1,000 msg/s" in page
    assert "latency_p99_ms at path=proxy, reader=native, offered_msg_s=1,000" in page
    assert "<td>19</td>" in page  # the median at that point
