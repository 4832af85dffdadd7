"""Someone else's cluster: every notebook runs against a broker and REST proxies the
workbench did not start (plain subprocesses, see the `foreign_cluster` fixture), named by
a profile with `embedded: false`, and leaves none of its topics behind.

One test per notebook, so that the parallel workers share them out (each worker that
runs one starts its own foreign cluster); within a worker they run one after another
on that worker's cluster, so "nothing left behind" holds after every notebook.

A notebook in `notebook_checks.RUN_ONCE` takes the same path on every profile and runs
only here, so its run also answers to the checks its embedded run would have made."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml
from course_outcomes import exercise_labels, exercise_outcomes
from notebook_checks import RUN_ONCE, SPARK_NOTEBOOKS, check_quick_run

from workbench import kafka, load_profile, results
from workbench.kafka.offsets import END_PROBE_ENV
from workbench.report import notebooks_dir, run_report
from workbench.stack.log_ends import MEMORY_FILE

#: notebook → an experiment whose table it must have appended rows to (None: one that
#: measures nothing on this cluster and says why in one line).
RECORDS: dict[str, str | None] = {
    "00_quickstart": "quickstart",
    "01_rest_proxy_tuning": "proxy_buffer_time",
    "02_producer_tuning": "native_produce",
    "03_consumer_tuning": "proxy_consume",
    "04_message_size": "proxy_produce",
    "05_proxy_scale_out": "proxy_scale_out",
    "06_topics_vs_partitions": "topics_vs_partitions",
    "07_per_device_topics": "per_device_layouts",
    "08_partition_sizing": "partition_sizing",
    "09_spark_ingestion": "spark_restart",
    "10_schema_formats": "format_produce",  # binary and JSON: "their" cluster has no Schema Registry
    "11_share_groups": "share_consume",  # consumer groups only: Tansu has no share groups
    "12_where_time_goes": "latency_waterfall",  # Tansu keeps no log-append time: those hops are one
    "13_geo_replication": None,  # no second cluster in the profile, and not this machine's to start
    "14_retention_and_compaction": "replay",
}


def _group(notebook: str) -> str:
    """Each notebook its own unit of work, spread over the workers (09's group name keeps
    it out of the worker that runs the shared Spark session's tests: see conftest.py)."""
    return "spark-notebooks" if notebook in SPARK_NOTEBOOKS else f"foreign-{notebook}"


def test_every_notebook_is_covered() -> None:
    names = sorted(p.stem for p in notebooks_dir().glob("[0-9][0-9]_*.ipynb"))
    assert names == sorted(RECORDS)


@pytest.mark.timeout(900)  # one notebook: under a minute alone, more on a machine shared with other runs
@pytest.mark.parametrize(
    "notebook", [pytest.param(n, marks=pytest.mark.xdist_group(_group(n))) for n in sorted(RECORDS)]
)
def test_notebook_runs_on_a_cluster_the_workbench_did_not_start(foreign_cluster: Any, notebook: str) -> None:
    profile = load_profile(str(foreign_cluster.profile_path))
    assert not profile.embedded

    report = run_report(profile, notebooks=[notebook], overrides={"quick": True, "solutions": True})
    assert not report.failed, "\n".join(str(run.error) for run in report.failed)  # whole: a str is not cut
    recorded = RECORDS[notebook]
    rows = results.load(recorded, run_id=report.run_id, profile=profile) if recorded else pd.DataFrame()
    if recorded is None:
        assert "names no second cluster" in (report.directory / f"{notebook}.html").read_text()
    else:
        assert len(rows) > 0, f"{notebook} recorded no {recorded!r} rows"
        assert (rows["profile"] == profile.name).all() and (rows["replication_factor"] == 1).all()

    if notebook == "05_proxy_scale_out":
        assert sorted(rows["proxy_instances"].unique()) == [1, 2]  # the two URLs the profile lists
        html = (report.directory / "05_proxy_scale_out.html").read_text()
        assert "the workbench restarts only proxies it started" in html  # said once, and the notebook went on
    if notebook == "01_rest_proxy_tuning":
        assert sorted(rows["proxy.producer.linger.ms"]) == [0, 500]  # the two variants
        assert set(rows["proxy_setup"]) == {"variant unbuffered", "variant buffered-500ms"}
    if notebook == "04_message_size":
        assert "Not sent through the proxy" in (report.directory / "04_message_size.html").read_text()
    if notebook == "06_topics_vs_partitions":  # Tansu has no KIP-848 groups: said in one line, classic measured
        joins = results.load("group_join", run_id=report.run_id, profile=profile)
        outcomes = dict(zip(joins["protocol"], joins["outcome"], strict=True))
        assert len(joins) == 2 and outcomes["classic"] == "joined"
        assert outcomes["consumer"].startswith("no assignment within")  # a bounded wait, once
        html = (report.directory / "06_topics_vs_partitions.html").read_text()
        assert "group.protocol=consumer</code>: every run stopped short on this broker" in html
    if notebook == "14_retention_and_compaction":  # Tansu 0.6 deletes and compacts nothing: each said in one line
        text = _text(report.directory / "14_retention_and_compaction.html")
        assert "No run saw a record deleted" in text and "No run saw the topic shrink" in text
        assert "and deleted nothing (Tansu 0.6 never does)" in text, "the returning reader says why it cannot run"
        assert "did not land on" not in text, "a replay that missed says where it landed and why"
    if notebook == "08_partition_sizing":  # Tansu has no CreatePartitions: said in one line, computed table kept
        html = (report.directory / "08_partition_sizing.html").read_text()
        assert "Not grown on this cluster, so the computed movement above stands alone" in html
        assert "CreatePartitions" in html
        assert len(results.load("partition_growth", run_id=report.run_id, profile=profile)) == 8
    if notebook in RUN_ONCE:
        check_quick_run(report, profile, notebook)  # every exercise passes, as on the embedded stack
    outcomes = exercise_outcomes(report, profile)  # what their cluster cannot measure is skipped, not failed
    assert set(outcomes) == exercise_labels([notebook]) and set(outcomes.values()) <= {"pass", "skipped"}, outcomes
    if notebook == "10_schema_formats":
        assert outcomes["10.1"] == "skipped"  # the schema formats need a Schema Registry
    if notebook == "11_share_groups":  # said in one line; the consumer-group side measured
        assert set(rows["kind"]) == {"consumer group"}
        assert "this broker has no share groups" in (report.directory / "11_share_groups.html").read_text()
    admin = {**profile.kafka.for_role("admin"), "bootstrap.servers": foreign_cluster.bootstrap_servers}
    assert kafka.list_topics(admin) == []  # nothing the notebook wrote is left on "their" cluster


@pytest.mark.timeout(900)
@pytest.mark.xdist_group(_group("00_quickstart"))
def test_a_profile_that_does_not_name_its_short_reporting_broker_still_runs(
    foreign_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue #40 item 7: without `broker.kind`, the notebook's kernel finds Tansu's ends short
    (`stack.log_ends`) and reads them from the log, so 00's counts add up."""
    raw = yaml.safe_load(foreign_cluster.profile_path.read_text())
    del raw["broker"]
    path = tmp_path / "unnamed.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    monkeypatch.delenv(END_PROBE_ENV, raising=False)  # nothing declared to the kernel from outside
    monkeypatch.setenv("WORKBENCH_RUN_DIR", str(tmp_path / "run"))  # nothing remembered: the kernel checks
    profile = load_profile(str(path))
    assert "kind" not in profile.broker.model_fields_set

    report = run_report(profile, notebooks=["00_quickstart"], overrides={"quick": True, "solutions": True})
    assert not report.failed, "\n".join(str(run.error) for run in report.failed)  # whole: a str is not cut
    remembered = json.loads((tmp_path / "run" / MEMORY_FILE).read_text())[foreign_cluster.bootstrap_servers]
    assert remembered["short"] is True
    rows = results.load("quickstart", run_id=report.run_id, profile=profile)
    assert (rows["acknowledged"] == rows["end_offsets_total"]).all() and (rows["read_back"] == rows["records"]).all()


def _text(page: Path) -> str:
    """A report page's words: tags out, entities decoded, whitespace single."""
    import html
    import re

    words = re.sub(r"<(script|style)\b.*?</\1>", " ", page.read_text(), flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", words)))
