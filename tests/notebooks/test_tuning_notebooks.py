"""The tuning notebooks that take their own path on the embedded stack run there under
papermill in quick mode and record their results (the others run once, on the foreign
cluster: see `notebook_checks.py`)."""

from __future__ import annotations

import pytest
from notebook_checks import RUN_ONCE, TUNING, check_quick_run

from workbench.report import run_report
from workbench.stack import Stack


@pytest.mark.parametrize("notebook", sorted(set(TUNING) - RUN_ONCE))
def test_notebook_runs_quick_and_records_its_results(stack: Stack, notebook: str) -> None:
    report = run_report(stack.profile, notebooks=[notebook], overrides={"quick": True, "solutions": True})
    check_quick_run(report, stack.profile, notebook)
