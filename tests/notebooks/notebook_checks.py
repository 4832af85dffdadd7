"""What a notebook's quick run must have recorded and said, whichever cluster it ran on.

A notebook whose code takes the same path on every profile runs once in the suite, on
the foreign cluster (`test_foreign_cluster.py`), and that run answers to these checks as
well as to the foreign cluster's own. Running it a second time on the embedded stack
would repeat the same work against a second copy of the same broker and proxy: the
notebooks in `RUN_ONCE` never read `profile.embedded`, and their Spark settings are
the same on both (`local[2]` and `local[*]` are one thing on two cores). A notebook
that does branch on the profile (01's buffer-time variants, 02's durability text, 05's
scale-out, 10's Schema Registry, 00's learner and `workbench course`) runs on both, and
so does one whose results depend on the broker: 06's KIP-848 group joins and 08's live
partition growth happen on Kafka, and on Tansu (the foreign cluster) are refused; 09 reads
Kafka with Spark's connector and ours and runs real-time mode on Kafka, and only with ours
on the foreign cluster. Apart from these quick runs, every notebook runs once more on the
embedded stack with the default report's settings at small counts (`test_full_settings.py`),
and that run answers to `check_any_run`; for a notebook whose own checks hold at any count
(`SMOKE_ENOUGH`), it answers to those too, the smoke run is its embedded run, and its quick
mode runs on the foreign cluster alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from course_outcomes import assert_every_exercise_passes

from workbench import results
from workbench.config import Profile
from workbench.frontpage import conclusions_html
from workbench.report import Report, notebooks_dir

Check = Callable[[Report, Profile], None]

#: Notebooks the suite runs only on the foreign cluster, with these checks added.
RUN_ONCE = frozenset(
    {
        "03_consumer_tuning",
        "04_message_size",
        "07_per_device_topics",
    }
)

#: Notebooks whose embedded quick run would check nothing their smoke run does not: their
#: checks hold whatever the counts, so the smoke run (same stack, the default report's point
#: lists) answers to all of them (`check_quick_run`), and quick mode runs on the foreign
#: cluster alone. 11's share groups exist only on Kafka: its smoke run is their one run.
SMOKE_ENOUGH = frozenset(
    {
        "01_rest_proxy_tuning",
        "05_proxy_scale_out",
        "10_schema_formats",
        "09_spark_ingestion",
        "11_share_groups",
        "12_where_time_goes",
        "14_retention_and_compaction",
    }
)

#: Notebooks that start a Spark session: one worker runs them, one after another (two JVMs on
#: two cores would measure each other).
SPARK_NOTEBOOKS = frozenset({"09_spark_ingestion", "12_where_time_goes", "14_retention_and_compaction"})

#: Tuning notebook → the experiments whose tables its run must have appended rows to.
TUNING = {
    "01_rest_proxy_tuning": [
        "proxy_produce",
        "proxy_buffer_time",
        "latency_waterfall",
        "native_produce",
        "cpu_per_mb",
    ],
    "02_producer_tuning": ["native_produce"],
    "03_consumer_tuning": ["native_consume", "proxy_consume"],
    "04_message_size": ["native_produce", "proxy_produce"],
    "05_proxy_scale_out": ["proxy_scale_out"],
    "06_topics_vs_partitions": ["topics_vs_partitions", "group_join"],
    "08_partition_sizing": ["partition_sizing", "partition_growth", "partition_growth_live"],
    "09_spark_ingestion": ["spark_parallelism", "spark_rate_limit", "spark_real_time", "spark_restart"],
    "10_schema_formats": ["format_produce", "registry_lookups"],
    "11_share_groups": ["share_consume"],
    "12_where_time_goes": ["latency_waterfall", "lag_burst"],
    "14_retention_and_compaction": [
        "retention_deletes",
        "compaction_progress",
        "reader_behind_retention",
        "replay",
    ],
}


def check_quick_run(report: Report, profile: Profile, notebook: str) -> None:
    """The run succeeded, every exercise passed with its reference answer, and the
    notebook recorded and stated what it measured."""
    check_any_run(report, profile, notebook)
    CHECKS[notebook](report, profile)


def check_any_run(report: Report, profile: Profile, notebook: str) -> None:
    """What every run answers to, whatever its settings: it succeeded, every exercise passed
    with its reference answer, its results were recorded (a tuning notebook's tables) and its
    conclusions were said to people."""
    assert not report.failed, report.failed[0].error
    assert_every_exercise_passes(report, profile, [notebook])
    assert_conclusions_speak_to_people(report, notebook)
    for experiment in TUNING.get(notebook, []):
        rows = results.load(experiment, run_id=report.run_id, profile=profile)
        assert len(rows) > 0, f"{notebook} recorded no {experiment!r} rows"
    page = _html(report, notebook)
    assert "nan×" not in page, f"{notebook} shows a ratio of nothing"  # noqa: RUF001
    if "What the run says" in (notebooks_dir() / f"{notebook}.ipynb").read_text():
        assert "What the run says" in page, f"{notebook}'s page lost its conclusions"


#: What a code name looks like in prose: a constant (`READER_SETTINGS`) or one of our modules.
CODE_NAME = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\bworkbench\.[a-z_.]+")


def assert_conclusions_speak_to_people(report: Report, notebook: str) -> None:
    """The "What the run says" cell, as the front page shows it, names no constant or module of ours."""
    (run,) = [r for r in report.runs if r.name == notebook]
    said = re.sub(r"<[^>]+>", " ", conclusions_html(run.executed) or "")
    assert not CODE_NAME.findall(said), f"{notebook}'s conclusions show code names: {CODE_NAME.findall(said)}"


def _parameters(report: Report, notebook: str) -> dict[str, Any]:
    """The parameters the run's notebook was given (papermill writes them into the executed copy)."""
    (run,) = [r for r in report.runs if r.name == notebook]
    return dict(json.loads(run.executed.read_text())["metadata"]["papermill"]["parameters"])


def _html(report: Report, notebook: str) -> str:
    return (report.directory / f"{notebook}.html").read_text()


def _tuning(notebook: str) -> Check:
    def check(report: Report, profile: Profile) -> None:
        for experiment in TUNING[notebook]:
            rows = results.load(experiment, run_id=report.run_id, profile=profile)
            assert len(rows) > 0, f"{notebook} recorded no {experiment!r} rows"
            assert (rows["profile"] == profile.name).all()
        page = _html(report, notebook)
        assert "What the run says" in page and "nan×" not in page  # noqa: RUF001

    return check


def _topics_vs_partitions(report: Report, profile: Profile) -> None:
    rows = results.load("topics_vs_partitions", run_id=report.run_id, profile=profile)
    assert list(rows["topics"]) == [1, 10, 100]
    assert list(rows["assigned"]) == [1, 10, 100]
    assert (rows["records"] == 5_000).all()
    html = _html(report, "06_topics_vs_partitions")
    assert "Each topic added about" in html and "A group joined with a regex over 1 topic(s)" in html
    joins = results.load("group_join", run_id=report.run_id, profile=profile)
    assert list(joins["protocol"]) == ["classic", "consumer"] and (joins["partitions"] == 6).all()
    assert list(joins["outcome"]) == ["joined", "joined"]  # Kafka 4 serves both protocols
    assert (joins["members_assigned"] == 2).all() and (joins["held_twice"] == 0).all() and (joins["unheld"] == 0).all()
    assert "Second member joins: <code>" in html and "were left out: librdkafka refuses them" in html


def _per_device_topics(report: Report, profile: Profile) -> None:
    layouts = results.load("per_device_layouts", run_id=report.run_id, profile=profile)
    assert list(layouts["layout"]) == ["keyed topic", "topic per device", "bucketed topics"]
    assert list(layouts["topics"]) == [1, 30, 8]
    assert (layouts["misplaced"] == 0).all()
    assert (layouts["group_records"] == 600).all() and (layouts["devices_complete"] == 30).all()
    assert (layouts["one_device_records"] == 20).all()
    reads = results.load("per_device_reads", run_id=report.run_id, profile=profile)
    assert len(reads) == 6 and (reads["returned"] == reads["records_per_device"]).all()
    assert "Every record of the 30 devices landed where its layout predicted" in _html(report, "07_per_device_topics")


def _partition_sizing(report: Report, profile: Profile) -> None:
    plan = results.load("partition_sizing", run_id=report.run_id, profile=profile)
    assert len(plan) == 1 and plan["source"].iloc[0] == "measured on this stack"
    assert plan["recommended"].iloc[0] >= plan["minimum"].iloc[0] >= 1
    growth = results.load("partition_growth", run_id=report.run_id, profile=profile)
    assert len(growth) == 8 and (growth["keys"] == 20_000).all()
    doubling = growth[(growth["old_partitions"] == 4) & (growth["new_partitions"] == 8)]
    assert ((doubling["moved_fraction"] - 0.5).abs() < 0.02).all()
    live = results.load("partition_growth_live", run_id=report.run_id, profile=profile)
    assert [(o, n) for o, n in zip(live["old_partitions"], live["new_partitions"], strict=True)] == [
        (4, 5),
        (4, 8),
        (6, 12),
        (12, 16),
    ]
    assert (live["keys"] == 2_000).all() and (live["records_read"] == 4_000).all()
    assert (live["moved"] == live["computed_moved"]).all() and (live["disagreeing"] == 0).all()
    assert (live["misplaced"] == 0).all() and live["agrees"].all()
    html = _html(report, "08_partition_sizing")
    assert "Partitions = max(" in html and "change partition going from 4 to 5" in html
    assert "exactly the keys the partitioner computes" in html and "This stack has 1 broker(s)" in html


def _spark_ingestion(report: Report, profile: Profile) -> None:
    _tuning("09_spark_ingestion")(report, profile)
    limited = results.load("spark_rate_limit", run_id=report.run_id, profile=profile)
    records = int(limited["records"].iloc[0])  # the notebook's `records`: 20,000 in quick mode
    assert (limited["records"] == records).all() and records in (
        20_000,
        _parameters(report, "09_spark_ingestion").get("records"),
    )

    restart = results.load("spark_restart", run_id=report.run_id, profile=profile)
    assert sorted(restart["connector"]) == ["kafka", "workbench"]  # each source restarted exactly once
    assert (restart["rows"] == restart["distinct_offsets"]).all()
    assert (restart["produced"] == records // 4 + records // 8).all()  # the two runs' records
    assert (restart["rows"] == restart["log_records"]).all() and (restart["rows"] == restart["produced"]).all()
    bounded = limited.dropna(subset=["max_offsets_per_trigger"])
    assert (bounded["max_batch_rows"] <= bounded["max_offsets_per_trigger"]).all()

    layout = results.load("spark_topic_layout", run_id=report.run_id, profile=profile)
    assert (layout["pickup_new_topic_rows_read"] == layout["pickup_new_topic_rows_produced"]).all()

    sweep = results.load("spark_parallelism", run_id=report.run_id, profile=profile)
    spark_reads = sweep[~sweep["sink"].str.startswith("plain consumer")]
    assert sorted(spark_reads["connector"].unique()) == ["kafka", "workbench"]
    assert (spark_reads["spark_jvm_cpu_s"] > 0).all()
    assert (spark_reads.loc[spark_reads["connector"] == "workbench", "spark_python_cpu_s"] > 0).all()
    assert (spark_reads["spark_version"] == "4.2.0").all()

    real_time = results.load("spark_real_time", run_id=report.run_id, profile=profile)
    assert sorted(real_time["mode"]) == ["micro-batch", "real-time"]
    assert (real_time["delivered"] == real_time["records"]).all() and (real_time["duplicates"] == 0).all()

    html = _html(report, "09_spark_ingestion")
    assert "nothing lost, nothing duplicated" in html
    assert "µs of CPU</strong>" in html and "of them busy" in html
    assert "Kafka source: <code>kafka</code>" in html and "of Spark's connector's rows/s" in html
    assert "Spark publishes 70 ms at p50" in html


def _share_groups(report: Report, profile: Profile) -> None:
    _tuning("11_share_groups")(report, profile)
    rows = results.load("share_consume", run_id=report.run_id, profile=profile)
    assert set(rows["kind"]) == {"consumer group", "share group"}
    assert rows["complete"].all() and (rows["records"] > 0).all()
    groups = rows[rows["kind"] == "consumer group"]
    assert (groups["keys_out_of_order"] == 0).all()  # a partition is read by one member at a time
    html = _html(report, "11_share_groups")
    assert "share groups: <strong>yes</strong>" in html
    assert "records were accepted, each once" in html and "200 of 200" in html


def _where_time_goes(report: Report, profile: Profile) -> None:
    _tuning("12_where_time_goes")(report, profile)
    rows = results.load("latency_waterfall", run_id=report.run_id, profile=profile)
    counts = rows[["path", "reader", "offered_msg_s", "expected", "lost", "duplicates", "disordered", "failed"]]
    assert (counts[["lost", "duplicates", "disordered"]] == 0).all(axis=None), counts.to_string()
    assert {"native", "proxy", "spark"} <= set(rows["reader"]) and set(rows["path"]) == {"native", "proxy"}
    assert (rows["measured_records"] > 0).all()
    spark = rows[rows["reader"] == "spark"]
    assert spark["read_path"].str.contains("batch_planned → batch_started → consumed").all()
    html = _html(report, "12_where_time_goes")
    assert "Every record offered was read: 0 lost and 0 read twice" in html
    # Which hop linger.ms moves most is the run's finding (sent → appended on an idle machine;
    # under a loaded suite another hop's noise can outgrow it): the sentence must name one.
    assert re.search(r"<code>linger\.ms</code> 0 → 20 moved <strong>[^<]+ → [^<]+</strong>", html), "no linger finding"
    bursts = results.load("lag_burst", run_id=report.run_id, profile=profile)
    assert sorted(bursts["consumer"]) == ["native", "proxy", "spark"]
    assert (bursts["lost"] == 0).all() and (bursts["duplicates"] == 0).all() and bursts["cleared"].all()
    assert (bursts["lag_peak"] > bursts["baseline_lag"]).all()
    if profile.embedded:
        assert "Every hop was split, and every stamp came from this machine's clock." in html
        assert rows["unsplit"].fillna("").eq("").all()


def _geo_replication(report: Report, profile: Profile) -> None:
    rows = results.load("replication_lag", run_id=report.run_id, profile=profile)
    assert len(rows) >= 3, "a run per rate, and the run kept whole"
    assert (rows["replicated"] == rows["records"]).all() and (rows["duplicates"] == 0).all()
    assert (rows["profile"] == profile.name).all()
    moved = results.load("consumer_failover", run_id=report.run_id, profile=profile)
    assert len(moved) == 1 and moved["skipped"].iloc[0] == 0
    html = _html(report, "13_geo_replication")
    assert "What the run says" in html and "MirrorMaker 2 (" in html and "records offered reached b" in html
    assert "skipped no record" in html
    killed = results.load("worker_kill", run_id=report.run_id, profile=profile)
    if profile.embedded:  # the workbench kills only a worker it started
        assert len(killed) == 1 and killed["missing"].iloc[0] == 0 and killed["task_moved"].iloc[0]
        assert "the worker running the flow's task" in html
    lost = results.load("disaster", run_id=report.run_id, profile=profile)
    if profile.embedded:  # and only a cluster it started
        assert len(lost) == 1 and lost["lost_on_a"].iloc[0] == 0 and lost["lost_for_good"].iloc[0] == 0
        assert lost["acked"].iloc[0] + lost["failed"].iloc[0] == lost["offered"].iloc[0]
        assert "records a had acknowledged" in html
    path = results.load("whole_path", run_id=report.run_id, profile=profile)
    assert len(path) == 1 and path["proxy_b_missing"].iloc[0] == 0 and path["proxy_b_twice"].iloc[0] == 0
    assert path["acked"].iloc[0] == path["replicated"].iloc[0] == path["proxy_b_read"].iloc[0]
    both = results.load("active_active", run_id=report.run_id, profile=profile)
    if len(both):  # full mode, or a profile that copies both ways
        assert (both["missing"] == 0).all() and (both["loop_topics"] == 0).all() and both["counts_stable"].all()
        assert (both["pattern_read_a"] == both["records"]).all() and "no loop" in html
    elif profile.embedded:
        assert "quick mode leaves this out" in html


CHECKS: dict[str, Check] = {
    **{notebook: _tuning(notebook) for notebook in TUNING},
    "06_topics_vs_partitions": _topics_vs_partitions,
    "07_per_device_topics": _per_device_topics,
    "08_partition_sizing": _partition_sizing,
    "09_spark_ingestion": _spark_ingestion,
    "11_share_groups": _share_groups,
    "12_where_time_goes": _where_time_goes,
    "13_geo_replication": _geo_replication,
}
