"""The run catalogue on its own: entries with facts, failures, filters, lookups by id."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from workbench import catalog
from workbench.config import Profile, load_profile
from workbench.errors import ConfigError


@pytest.fixture
def profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Profile:
    monkeypatch.setenv("WORKBENCH_RESULTS_DIR", str(tmp_path / "results"))
    return load_profile()


def test_a_run_is_catalogued_with_its_facts(profile: Profile) -> None:
    with catalog.track("bench", "native_produce", profile, {"repeat": 3}, run_id="r1") as entry:
        entry.output = "somewhere"
    (row,) = catalog.runs(profile).to_dict("records")
    assert row["run_id"] == "r1" and row["status"] == "ok" and row["error"] == "" and row["output"] == "somewhere"
    assert row["parameters"] == '{"repeat": 3}' and row["profile"] == profile.name
    assert row["cpu_cores"] >= 1 and row["memory_gib"] > 0 and row["load_avg_1m"] >= 0
    assert row["librdkafka"] and row["pyspark"] and row["python"] and row["git_revision"]
    assert row["broker"].startswith("kafka 4.") and row["proxy"].startswith("workbench restproxy ")
    assert row["spark_connector"] == "kafka"
    assert row["ended_at"] >= row["started_at"]
    assert catalog.catalog_path(profile).parent.name == "catalog"  # not among the experiments' tables


def test_an_exception_catalogues_the_run_as_failed_and_is_raised_on(profile: Profile) -> None:
    with pytest.raises(ValueError), catalog.track("report", "01_a,02_b", profile, run_id="r2"):
        raise ValueError("bad reading: -1")
    assert catalog.show("r2", profile)["error"] == "ValueError: bad reading: -1"
    assert catalog.show("r2", profile)["status"] == "failed"


def test_filters_by_notebook_kind_and_date(profile: Profile) -> None:
    for run_id, kind, name in (("a1", "report", "01_a,02_b"), ("a2", "bench", "native_produce")):
        with catalog.track(kind, name, profile, run_id=run_id):
            pass
    assert list(catalog.runs(profile, notebook="02_b")["run_id"]) == ["a1"]
    assert list(catalog.runs(profile, notebook="02")["run_id"]) == []  # a whole name, not a part
    assert list(catalog.runs(profile, kind="bench")["run_id"]) == ["a2"]
    assert list(catalog.runs(profile, profile_name="other")["run_id"]) == []
    today = dt.datetime.now(dt.UTC).date()
    assert len(catalog.runs(profile, since=today)) == 2
    assert len(catalog.runs(profile, since=str(today + dt.timedelta(days=1)))) == 0
    with pytest.raises(ConfigError, match="expected a date"):
        catalog.runs(profile, since="yesterday")


def test_show_takes_a_unique_prefix(profile: Profile) -> None:
    for run_id in ("20261123-0900", "20261123-1000"):
        with catalog.track("bench", "x", profile, run_id=run_id):
            pass
    assert catalog.show("20261123-09", profile)["run_id"] == "20261123-0900"
    with pytest.raises(ConfigError, match="matches 2 runs"):
        catalog.show("20261123", profile)
    with pytest.raises(ConfigError, match="no catalogued run 'nope'"):
        catalog.show("nope", profile)


def test_an_empty_catalogue_lists_nothing(profile: Profile) -> None:
    assert catalog.runs(profile).empty


def _append_runs(results_dir: str, prefix: str) -> None:
    os.environ["WORKBENCH_RESULTS_DIR"] = results_dir
    profile = load_profile()
    for i in range(10):
        with catalog.track("bench", "x", profile, run_id=f"{prefix}{i}"):
            pass


def test_two_processes_appending_together_both_land(profile: Profile) -> None:
    import multiprocessing

    results_dir = os.environ["WORKBENCH_RESULTS_DIR"]
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_runs, args=(results_dir, p)) for p in ("p", "q")]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0]
    assert sorted(catalog.runs(profile)["run_id"]) == sorted(f"{p}{i}" for p in "pq" for i in range(10))
