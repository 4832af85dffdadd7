"""The course's checks, with measured-looking rows: the reference answer passes, a wrong one
fails with a hint naming the section to re-read, junk never raises, a measurement the
profile could not make is a skip; every check is a progress row `workbench course` shows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import Result

from workbench import course, load_profile
from workbench.config import Profile
from workbench.topics import partitions_needed


@pytest.fixture
def profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Profile:
    monkeypatch.setenv("WORKBENCH_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("WORKBENCH_LEARNER", "ada")
    return load_profile("local")


def _grid(keys: list[str], points: list[tuple[Any, ...]], metrics: list[str]) -> pd.DataFrame:
    return pd.DataFrame([dict(zip([*keys, *metrics], p, strict=True)) for p in points])


PER_CALL = _grid(
    ["records_per_call", "concurrency", "mb_s"],
    [(1, 1, 0.1), (10, 1, 0.8), (100, 1, 3.0), (500, 1, 5.0), (1000, 1, 5.2)],
    [],
)
THREADS = _grid(
    ["records_per_call", "concurrency", "mb_s"], [(100, 1, 3.0), (100, 2, 4.5), (100, 4, 5.5), (100, 8, 5.6)], []
)
BATCHING = _grid(
    ["linger.ms", "batch.size"],
    [
        (0, 16_384, 100_000, 10.0),
        (5, 1_000_000, 300_000, 20.0),
        (20, 1_000_000, 320_000, 45.0),
        (100, 1_000_000, 350_000, 120.0),
    ],
    ["msg_s", "latency_p99_ms"],
)
FETCHES = _grid(
    ["max.partition.fetch.bytes", "fetch.min.bytes"],
    [(16_384, 1, 40_000), (1_048_576, 1, 95_000), (8_388_608, 1_000_000, 100_000)],
    ["msg_s"],
)
VIA_PROXY = _grid(
    ["max_bytes", "fetch_min_bytes"], [(65_536, -1, 900), (1_048_576, 1, 20_000), (16_777_216, 1, 21_000)], ["msg_s"]
)
PROXIED = _grid(["record_bytes"], [(100, 1.0), (10_000, 15.0), (1_000_000, 20.0)], ["mb_s"])
TOPICS = pd.DataFrame({"topics": [1, 10, 100], "metadata_bytes": [200, 1_100, 10_100], "create_s": [0.01, 0.05, 0.5]})
READS = pd.DataFrame(
    [
        {"method": m, "records_per_device": n, "devices": 10, "partitions": 8, "scanned": s}
        for n in (20, 200)
        for m, s in (("own topic", n), ("keyed: its partition", 2 * n), ("keyed: whole topic", 10 * n))
    ]
)
LIMITED = pd.DataFrame(
    {"max_offsets_per_trigger": [None, 5_000], "max_batch_rows": [20_000, 5_000], "median_batch_ms": [1_700.0, 650.0]}
)
SHUFFLES = _grid(["shuffle_partitions"], [(1, 5_000.0), (8, 3_000.0)], ["msg_s"])
GROUPS = pd.DataFrame(
    {
        "kind": ["consumer group", "consumer group", "share group"],
        "members": [4, 8, 8],
        "processing_ms": [50.0, 50.0, 50.0],
        "topic_partitions": [4, 4, 4],
        "msg_s": [78.0, 80.0, 150.0],
    }
)
REAL_TIME = pd.DataFrame(
    {
        "mode": ["real-time", "real-time", "micro-batch", "micro-batch", "micro-batch"],
        "offered_msg_s": [1_000, 10_000, 1_000, 1_000, 10_000],
        "latency_p50_ms": [40.0, 80.0, 200.0, 900.0, 400.0],
    }
)
FORMATS = pd.DataFrame(
    {
        "point_label": [f"native · {f}" for f in ("binary", "json", "avro", "jsonschema", "protobuf")],
        "wire_bytes": [200, 200, 120, 205, 110],
        "steady_msg_s": [50e3, 48e3, 30e3, 20e3, 35e3],
    }
)
KEYS = [f"device-{i}" for i in range(3_000)]

CUT = pd.DataFrame(
    [
        {"rate": 1000, "cut_measured_s": 5.005, "backlog": 5_006},
        {"rate": 1000, "cut_measured_s": 2.001, "backlog": 2_010},
    ]
)
REPLICATED = pd.DataFrame(
    [
        {"rate": 200, "latency_p50_ms": 11.0},
        {"rate": 1000, "latency_p50_ms": 8.0},
        {"rate": 1000, "latency_p50_ms": None},
    ]
)
RETAINED = pd.DataFrame(
    [{"retention.ms": "3000", "segment.ms": "1000", "survival_max_s": 4.4, "check_interval_ms": 1000}]
)
BEHIND = pd.DataFrame(
    [
        {
            "reset": "earliest",
            "committed": 100,
            "log_start_at_resume": 153,
            "log_end_at_resume": 520,
            "first_read_after": 153,
        },
        {
            "reset": "latest",
            "committed": 100,
            "log_start_at_resume": 259,
            "log_end_at_resume": 600,
            "first_read_after": 600,
        },
    ]
)

#: (notebook, exercise, measured inputs, reference answer, a wrong answer, words the failure must say)
#: A burst's rows: the native consumer cleared 7.5 s after the burst (its capacity promised 6.7 s).
BURSTS = pd.DataFrame(
    [
        {
            "consumer": "native",
            "capacity_msg_s": 500.0,
            "normal_msg_s": 200.0,
            "burst_msg_s": 1_500.0,
            "burst_s": 2.0,
            "cleared": True,
            "clear_s": 7.5,
            "predicted_clear_s": 6.67,
        }
    ]
)
#: Waterfall rows at two linger.ms values: the wait lands on "sent → appended".
LINGER = pd.DataFrame(
    [
        {
            "offered_msg_s": 1_000,
            "linger.ms": linger,
            "read_path": "scheduled → sent → appended → consumed",
            **{f"hop_{hop}_{stat}": value for stat in ("mean_ms", "p50_ms") for hop, value in hops.items()},
        }
        for linger, hops in (
            (0, {"scheduled_sent": 0.1, "sent_appended": 3.0, "appended_consumed": 1.0}),
            (20, {"scheduled_sent": 0.1, "sent_appended": 13.0, "appended_consumed": 1.2}),
        )
    ]
)
INSTANCES = pd.DataFrame(
    {
        "kind": ["consumer", "consumer", "share"],
        "instances": [10, 50, 50],
        "rss_before_mb": [100.0, 100.0, 100.0],
        "idle_mb_per_instance": [0.6, 0.4, 0.3],
        "fetching_mb_per_instance": [0.7, 0.5, 0.2],
    }
)
CASES = [
    ("00", "million_seconds", ({"produce_msg_s": 250_000.0},), 4.0, 100, "too high"),
    (
        "01",
        "proxy_share",
        (PER_CALL, THREADS, {"mb_s": 30.0}),
        {"records_per_call": 500, "concurrency": 1},
        {"records_per_call": 1, "concurrency": 1},
        "of native",
    ),
    (
        "01",
        "buffer_floor",
        (_grid(["proxy.producer.linger.ms"], [(0, 3.0), (500, 505.0)], ["latency_p50_ms"]),),
        505.0,
        5,
        "too low",
    ),
    (
        "02",
        "double_default",
        (BATCHING,),
        {"linger.ms": 20, "batch.size": 1_000_000},
        {"linger.ms": 100, "batch.size": 1_000_000},
        "bound 50 ms",
    ),
    ("02", "linger_ten", (BATCHING, {"msg_s": 310_000.0}), 310_000, 50_000, "too low"),
    (
        "03",
        "fastest_fetch",
        (FETCHES,),
        {"max.partition.fetch.bytes": 8_388_608, "fetch.min.bytes": 1_000_000},
        {"max.partition.fetch.bytes": 16_384, "fetch.min.bytes": 1},
        "40%",
    ),
    (
        "03",
        "proxy_fetch",
        (VIA_PROXY,),
        {"max_bytes": 16_777_216, "fetch_min_bytes": 1},
        {"max_bytes": 65_536, "fetch_min_bytes": -1},
        "whole timeout",
    ),
    ("04", "proxy_half", (PROXIED,), 10_000, 1_000_000, "a smaller measured size"),
    ("04", "gigabyte_small", (PROXIED,), 1_000.0, 10, "too low"),
    ("05", "article_gain", (_grid(["proxy_instances"], [(1, 10_000.0), (2, 12_000.0)], ["msg_s"]),), None, 2, "1.20x"),
    ("05", "proxy_sizing", (INSTANCES,), 350.0, 50, "too low"),
    ("06", "metadata_5000", (TOPICS,), 500.1, 50, "too low"),
    ("06", "create_10000", (TOPICS,), 50.0, 5, "too low"),
    ("07", "partition_scan", (READS,), 400, 4_000, "too high"),
    ("08", "partitions_500", (partitions_needed(100, 10, 20, 0.5),), 50, 25, "too few"),
    ("08", "keys_moved", (KEYS,), None, 0.1, "too low"),
    ("09", "max_offsets", (LIMITED,), 10_000, 20_000, "would take about"),
    ("09", "shuffle_partitions", (SHUFFLES,), 1, 8, "60% of the fastest"),
    ("09", "real_time_ratio", (REAL_TIME,), 5.0, 20, "too high"),
    ("10", "smaller_format", (FORMATS,), "protobuf", "json", "too many bytes"),
    ("11", "group_ceiling", (GROUPS,), 80, 300, "too high"),
    ("12", "linger_wait", (LINGER,), 10.0, 40, "too high"),
    ("12", "clear_time", (BURSTS,), 7.5, 1, "too low"),
    ("13", "in_flight", (REPLICATED,), 8.0, 80, "too high"),
    ("13", "cut_backlog", (CUT,), 5_000, 2_500, "too low"),
    ("14", "deleted_by", (RETAINED,), 5.0, 3, "too low"),
    ("14", "missed_latest", (BEHIND,), 500, 447, "too low"),
]
JUNK = [..., "a lot", [1, 2], {"nonsense": 1}, float("nan"), True, object(), -1, "", 10**400]
IDS = [f"{n}.{k}" for n, k, *_ in CASES]


def test_every_exercise_of_the_course_is_covered_here() -> None:
    assert sorted((e.notebook, e.key) for e in course.catalogue()) == sorted((n, k) for n, k, *_ in CASES)
    assert {e.notebook for e in course.catalogue()} == {f"{n:02d}" for n in range(15)}


@pytest.mark.parametrize(("notebook", "key", "measured", "reference", "wrong", "said"), CASES, ids=IDS)
def test_the_reference_answer_passes_and_a_wrong_one_fails_with_a_hint(
    profile: Profile, notebook: str, key: str, measured: tuple[Any, ...], reference: Any, wrong: Any, said: str
) -> None:
    exercises = course.Exercises(notebook, profile, solutions=True)
    solution = exercises.solution(key, *measured)
    if reference is not None:
        assert solution == pytest.approx(reference, rel=0.01) if isinstance(reference, float) else solution == reference
    assert exercises.check(key, solution, *measured).passed
    failed = exercises.check(key, wrong, *measured)
    assert failed.outcome == "fail" and said in failed.message, failed.message
    assert failed.hint.startswith("re-read «") and course.find(notebook, key).section in failed.hint
    assert "Exercise" in exercises.ask(key, *measured)._repr_markdown_()


@pytest.mark.parametrize(("notebook", "key", "measured"), [case[:3] for case in CASES], ids=IDS)
def test_junk_answers_fail_without_raising(
    profile: Profile, notebook: str, key: str, measured: tuple[Any, ...]
) -> None:
    exercises = course.Exercises(notebook, profile)
    for junk in JUNK:
        verdict = exercises.check(key, junk, *measured)
        assert verdict.outcome == ("unanswered" if junk is ... else "fail"), (junk, str(verdict))
        assert verdict.message and "Traceback" not in str(verdict)


@pytest.mark.parametrize(("notebook", "key"), [case[:2] for case in CASES], ids=IDS)
def test_measurements_a_profile_could_not_make_are_skipped_with_the_reason(
    profile: Profile, notebook: str, key: str
) -> None:
    exercises = course.Exercises(notebook, profile)
    nothing: Any = [] if key == "keys_moved" else pd.DataFrame() if key != "partitions_500" else None
    arguments = (nothing,) * len(next(c[2] for c in CASES if c[1] == key))
    verdict = exercises.check(key, 1, *arguments)
    assert verdict.outcome == "skipped" and verdict.message
    assert exercises.solution(key, *arguments) is None
    assert "could not measure" in exercises.ask(key, *arguments).text


def test_a_cluster_that_hides_its_retention_check_skips_the_deletion_bound(profile: Profile) -> None:
    verdict = course.Exercises("14", profile).check("deleted_by", 5.0, RETAINED.assign(check_interval_ms=float("nan")))
    assert verdict.outcome == "skipped"
    assert "does not say how often its broker looks for segments past retention" in verdict.message


def test_none_is_right_when_no_measured_setting_reaches_the_goal(profile: Profile) -> None:
    slow = BATCHING.assign(latency_p99_ms=[10.0, 60.0, 70.0, 120.0])
    exercises = course.Exercises("02", profile)
    assert exercises.solution("double_default", slow) is None
    assert exercises.check("double_default", None, slow).passed
    assert not exercises.check("double_default", None, BATCHING).passed
    heavy = LIMITED.assign(median_batch_ms=[3_000.0, 1_500.0])
    assert course.Exercises("09", profile).solution("max_offsets", heavy) is None


def test_answers_are_read_the_way_people_write_them(profile: Profile) -> None:
    exercises = course.Exercises("08", profile)
    moved = exercises.solution("keys_moved", KEYS)
    for answer in (moved, f"{moved:.1%}", moved * 100, "2/3" if False else f"{moved:.3f}"):
        assert exercises.check("keys_moved", answer, KEYS).passed, answer
    assert course.Exercises("00", profile).check("million_seconds", "4,000,000", {"produce_msg_s": 0.25}).passed
    assert course.Exercises("10", profile).check("smaller_format", " ProtoBuf ", FORMATS).passed


def test_a_missed_prediction_says_which_way_but_not_the_figure(profile: Profile) -> None:
    exercises = course.Exercises("00", profile)
    missed = exercises.check("million_seconds", 5.0, {"produce_msg_s": 250_000.0})
    assert "too high" in missed.message and "4.00" not in missed.message
    passed = exercises.check("million_seconds", 4.1, {"produce_msg_s": 250_000.0})
    assert passed.passed and "4.00 s" in passed.message


def test_a_schema_registry_less_profile_skips_the_format_exercise(profile: Profile) -> None:
    plain = FORMATS[FORMATS["point_label"].isin(["native · binary", "native · json"])]
    verdict = course.Exercises("10", profile).check("smaller_format", "json", plain)
    assert verdict.outcome == "skipped" and "Schema Registry" in verdict.message


def test_every_check_is_a_progress_row_and_the_table_shows_pass_after_attempts(profile: Profile) -> None:
    exercises = course.Exercises("04", profile)
    exercises.check("proxy_half", 100, PROXIED)
    last = exercises.check("proxy_half", 10_000, PROXIED)
    assert last.passed and last.attempts == 2
    course.Exercises("04", profile, learner="grace", solutions=True).check("gigabyte_small", 1_000, PROXIED)
    course.Exercises("03", profile, learner="grace").check("proxy_fetch", 1, pd.DataFrame())
    assert course.Exercises("04", profile).check("gigabyte_small", ..., PROXIED).attempts == 0  # not recorded

    rows = course.load_progress(profile)
    assert list(rows["outcome"]) == ["fail", "pass", "pass", "skipped"]
    assert list(rows["learner"]) == ["ada", "ada", "grace", "grace"] and list(rows["attempts"]) == [1, 2, 1, 1]
    assert '"best_mb_s": 20' in rows["measured"].iloc[0] and rows["answer"].iloc[0] == "100"
    table = course.progress_table(rows)
    assert list(table.columns) == ["ada", "grace"]
    assert table.loc["04.1"]["ada"].iloc[0] == "pass (2/2)"
    assert table.loc["04.2"]["grace"].iloc[0] == "pass (1/1) [solution]"
    assert table.loc["03.2"]["grace"].iloc[0] == "skipped" and table.loc["00.1"]["ada"].iloc[0] == ""


def test_workbench_course_shows_each_learner_and_reads_collected_files(
    cli: Callable[..., Result], profile: Profile, tmp_path: Path
) -> None:
    course.Exercises("00", profile).check("million_seconds", 4.0, {"produce_msg_s": 250_000.0})
    collected = tmp_path / "linus.parquet"
    course.load_progress(profile).assign(learner="linus", outcome="fail").to_parquet(collected)
    shown = cli("course", str(collected), columns=200)
    assert shown.exit_code == 0, shown.stderr
    assert "ada" in shown.stdout and "linus" in shown.stdout and "pass (1/1)" in shown.stdout
    total = len(course.catalogue())
    assert f"ada: 1 of {total} exercises passed" in shown.stdout and f"linus: 0 of {total}" in shown.stdout
    broken = tmp_path / "notes.parquet"
    pd.DataFrame({"x": [1]}).to_parquet(broken)
    refused = cli("course", str(broken), columns=200)
    assert refused.exit_code == 1 and "not a course progress table" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_an_unknown_exercise_names_the_notebooks_exercises(profile: Profile) -> None:
    with pytest.raises(course.AnswerError, match="double_default"):
        course.Exercises("02", profile).check("no_such", 1)


def test_the_learner_is_the_parameter_then_the_profile_then_the_login(
    profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert course.learner_name(profile, " grace ") == "grace"
    assert course.learner_name(profile) == "ada"  # $WORKBENCH_LEARNER, through the profile
    monkeypatch.setenv("WORKBENCH_LEARNER", "007")
    assert load_profile("local").learner == "007"
    monkeypatch.delenv("WORKBENCH_LEARNER")
    assert course.learner_name(load_profile("local")) not in ("", "ada")
