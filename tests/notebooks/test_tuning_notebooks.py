"""The tuning notebooks that take their own path on the embedded stack run there under
papermill in quick mode and record their results (the others run once, on the foreign
cluster, and those in `SMOKE_ENOUGH` run on the embedded stack with the default report's
settings only: see `notebook_checks.py`). Notebook 02 runs on the three Kafka nodes instead of
the one: its every section runs there too, and its failover section only there (on the
foreign cluster it takes the path that says what it cannot do). Notebook 13 runs as `make demo`
runs it, with the default report's settings at small counts: on the one-cluster stack, where it
starts `local-geo` beside it (and `local-geo-2way` for its both-ways section) and stops them."""

from __future__ import annotations

import pytest
from notebook_checks import RUN_ONCE, SMOKE_ENOUGH, SPARK_NOTEBOOKS, TUNING, check_quick_run

from workbench import results
from workbench.config import project_root
from workbench.replication import BOTH_WAYS_PROFILE, GEO_PROFILE
from workbench.replication.geo_stack import profile_beside
from workbench.report import run_report
from workbench.stack import Stack, down

ON_THREE_BROKERS = {"02_producer_tuning"}


def _marks(notebook: str) -> pytest.MarkDecorator | tuple[()]:
    """09 shares the worker of the foreign cluster's 09: two Spark applications starting at
    once on two cores lose their Python workers (see conftest.py)."""
    return pytest.mark.xdist_group("spark-notebooks") if notebook in SPARK_NOTEBOOKS else ()


@pytest.mark.parametrize(
    "notebook",
    [pytest.param(n, marks=_marks(n)) for n in sorted(set(TUNING) - RUN_ONCE - ON_THREE_BROKERS - SMOKE_ENOUGH)],
)
def test_notebook_runs_quick_and_records_its_results(stack: Stack, notebook: str) -> None:
    report = run_report(stack.profile, notebooks=[notebook], overrides={"quick": True, "solutions": True})
    check_quick_run(report, stack.profile, notebook)


def test_producer_tuning_kills_a_leader_on_three_brokers(three_brokers: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """Notebook 02's failover section runs where there are brokers to kill, and its rows say
    what happened: with acks=all + idempotence nothing acknowledged is lost or doubled."""
    # The kernels load the profile from its file: the run directory must be the three nodes'.
    monkeypatch.setenv("WORKBENCH_RUN_DIR", str(three_brokers.profile.run_dir))
    report = run_report(
        three_brokers.profile, notebooks=["02_producer_tuning"], overrides={"quick": True, "solutions": True}
    )
    check_quick_run(report, three_brokers.profile, "02_producer_tuning")
    rows = results.load("leader_failover", report.run_id, three_brokers.profile)
    assert sorted(rows["acks"].astype(str)) == ["1", "all"]
    safe = rows[rows["acks"].astype(str) == "all"].iloc[0]
    assert safe["lost"] == safe["duplicates"] == safe["misplaced"] == safe["failed"] == 0
    assert safe["acknowledged"] == 10_000


@pytest.mark.xdist_group("geo-notebook")
def test_geo_replication_measures_two_clusters(stack: Stack) -> None:
    """Notebook 13 on the one-cluster stack with the default report's settings at small counts
    (its smoke run): it starts the two clusters beside it, every rate's run and the kept run
    are recorded, every record offered on a counted once on b, the moved group skipping
    nothing. Its own unit of work, apart from the `geo` tests' worker: the two take about
    five minutes each, one after the other they were the suite's longest unit."""
    smoke = project_root() / "conf" / "report-smoke.yaml"
    try:
        report = run_report(
            stack.profile, notebooks=["13_geo_replication"], parameters_file=smoke, overrides={"solutions": True}
        )
    finally:  # what a notebook that failed half-way left running
        for name in (GEO_PROFILE, BOTH_WAYS_PROFILE):
            down(profile_beside(stack, name))
    check_quick_run(report, profile_beside(stack, GEO_PROFILE), "13_geo_replication")


def test_a_burst_with_no_consumer_that_runs_is_said_and_the_notebook_goes_on(stack: Stack) -> None:
    """Notebook 12 asked for Spark's burst alone in quick mode, which leaves Spark out: the
    burst section says it measured nothing, in one line, and the notebook ends well."""
    report = run_report(stack.profile, notebooks=["12_where_time_goes"],
                        overrides={"quick": True, "burst_consumers": ["spark"]})  # fmt: skip
    assert not report.failed, "\n".join(str(run.error) for run in report.failed)
    page = (report.directory / "12_where_time_goes.html").read_text()
    assert "Not measured: the burst (<code>burst_consumers</code> names no consumer that runs)." in page
    assert results.load("lag_burst", report.run_id, stack.profile).empty
