"""Every notebook with the default report's settings at small counts (`conf/report-smoke.yaml`)
on the embedded stack: the record sizes, partition and proxy counts, triggers and point lists
`make demo` uses, so a setting that cannot work on the default stack (2 MB records at Kafka's
1 MB limit, once) fails here rather than in a newcomer's first `make demo`. Quick mode, which
keeps fewer points, is tested by `test_tuning_notebooks.py` and on the foreign cluster."""

from __future__ import annotations

import pytest
from notebook_checks import SMOKE_ENOUGH, SPARK_NOTEBOOKS, check_any_run, check_quick_run

from workbench.config import project_root
from workbench.report import notebooks_dir, run_report
from workbench.stack import Stack

SMOKE = project_root() / "conf" / "report-smoke.yaml"
#: 13 starts a second pair of clusters beside a one-cluster stack: its smoke run is on the
#: `geo` fixture's instead (test_tuning_notebooks.py), so the suite runs one such stack.
NOTEBOOKS = sorted(p.stem for p in notebooks_dir().glob("[0-9][0-9]_*.ipynb") if p.stem != "13_geo_replication")


def _marks(notebook: str) -> pytest.MarkDecorator | tuple[()]:
    """Spark's notebooks share a worker with the others that start Spark (see conftest.py)."""
    return pytest.mark.xdist_group("spark-notebooks") if notebook in SPARK_NOTEBOOKS else ()


@pytest.mark.timeout(900)
@pytest.mark.parametrize("notebook", [pytest.param(n, marks=_marks(n)) for n in NOTEBOOKS])
def test_the_default_reports_settings_work_at_small_counts(stack: Stack, notebook: str) -> None:
    report = run_report(stack.profile, notebooks=[notebook], parameters_file=SMOKE, overrides={"solutions": True})
    (check_quick_run if notebook in SMOKE_ENOUGH else check_any_run)(report, stack.profile, notebook)
