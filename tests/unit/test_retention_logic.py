"""The retention toolkit's pure parts: log setting names, what a scan of a compacted log
counts, when each record was deleted, and how the registry takes Kafka's dotted names."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from workbench.bench.experiments import get_experiment
from workbench.errors import BenchError
from workbench.kafka.clients import Record
from workbench.retention import LOG_SETTINGS, LogScan, RetentionError, compaction_run, log_settings
from workbench.retention.compaction import _first_times
from workbench.retention.deletion import _fates
from workbench.retention.writing import Written


def test_log_settings_become_the_strings_kafka_takes() -> None:
    given = {"retention.ms": 3000, "cleanup.policy": ["compact", "delete"], "min.cleanable.dirty.ratio": 0.1}
    assert log_settings(given) == {
        "retention.ms": "3000",
        "cleanup.policy": "compact,delete",
        "min.cleanable.dirty.ratio": "0.1",
    }


@pytest.mark.parametrize("name", ["retention.mss", "log.retention.ms", "retention", ""])
def test_a_name_that_is_not_a_log_setting_is_one_line_listing_them(name: str) -> None:
    with pytest.raises(RetentionError) as raised:
        log_settings({name: 1})
    message = str(raised.value)
    assert "\n" not in message and "not a log setting" in message and "retention.ms" in message


@pytest.mark.parametrize("value", [None, "", "  "])
def test_a_setting_without_a_value_is_refused(value: object) -> None:
    with pytest.raises(RetentionError, match=r"retention\.ms has no value"):
        log_settings({"retention.ms": value})


def _record(offset: int, key: bytes, value: bytes | None) -> Record:
    return Record("t", 0, offset, key, value, 0, 0)


def test_a_scan_counts_stale_records_and_live_tombstones() -> None:
    log = [_record(0, b"a", b"1"), _record(1, b"b", b"1"), _record(2, b"a", b"2"), _record(3, b"b", None)]
    assert LogScan.of(1.5, log) == LogScan(at_s=1.5, records=4, keys=2, stale=2, tombstones=1)


def test_each_record_is_deleted_at_the_first_look_past_it() -> None:
    written = [Written(offset, None, 100.0 + offset) for offset in range(5)]
    looks = pd.DataFrame({"at_s": [1.0, 2.0, 3.0, 4.0], "start_offset": [0, 2, 2, 4]})
    fates = _fates(written, looks, began=100.0)
    assert fates["deleted_s"].tolist()[:4] == [2.0, 2.0, 4.0, 4.0]
    assert math.isnan(fates["deleted_s"].iloc[4]), "offset 4 was never past the log start"
    assert fates["survived_s"].tolist()[:4] == [2.0, 1.0, 2.0, 1.0]


def test_the_first_compaction_and_the_tombstones_end_are_read_from_the_scans() -> None:
    scans = pd.DataFrame(
        {
            "at_s": [1.0, 2.0, 3.0, 4.0, 5.0],
            "records": [10, 20, 12, 15, 9],
            "tombstones": [0, 2, 2, 0, 0],
        }
    )
    assert _first_times(scans, tombstone_written_s=1.5) == {"first_compacted_s": 3.0, "tombstones_gone_s": 2.5}
    assert math.isnan(_first_times(scans, tombstone_written_s=math.nan)["tombstones_gone_s"])


def test_the_registry_takes_log_settings_by_kafkas_names() -> None:
    experiment = get_experiment("retention_deletes")
    assert experiment.defaults()["retention.ms"] == 3000 and set(LOG_SETTINGS) >= {"segment.ms", "retention.bytes"}
    experiment.check({"retention.ms": 500, "segment.bytes": 1_048_576, "rate": 50})
    with pytest.raises(BenchError, match=r"no parameter retention\.mss; .*log settings by Kafka's names"):
        experiment.check({"retention.mss": 500})
    with pytest.raises(BenchError, match=r"linger\.ms"):
        get_experiment("replay").check({"linger.ms": 5})


def test_a_broker_that_deletes_and_compacts_nothing_is_said_so_in_one_line_each() -> None:
    import pandas as pd

    from workbench.retention.conclusions import compaction_sentences, retention_sentences

    nan = float("nan")
    kept = pd.DataFrame(
        [
            {
                "retention.ms": "3000",
                "segment.ms": "1000",
                "records": 800,
                "deleted": 0,
                "kept": 800,
                "first_deleted_s": nan,
                "survival_min_s": nan,
                "survival_p50_s": nan,
                "survival_max_s": nan,
                "overstay_p50_s": nan,
            }
        ]
    )
    said = retention_sentences(kept, None)
    assert said[-1].startswith("No run saw a record deleted") and "an interval this cluster does not tell" in said[-1]
    uncompacted = pd.DataFrame(
        [
            {
                "min.cleanable.dirty.ratio": 0.5,
                "tombstones_gone_s": nan,
                "tombstones_final": 5,
                "table_matches": True,
                "stale_peak": 750,
                "records_final": 800,
                "live_keys": 45,
                "stale_final": 750,
                "first_compacted_s": nan,
                "records": 800,
            }
        ]
    )
    assert compaction_sentences(uncompacted, 50)[-1].startswith(
        "No run saw the topic shrink: it ended with 800 records for 50 keys"
    )


def test_a_replay_that_lands_early_says_where_and_why() -> None:
    import pandas as pd

    from workbench.retention.conclusions import replay_sentences

    row = {
        "through": "native",
        "to": "timestamp",
        "landed_right": False,
        "landed_offset": 8904,
        "expected_offset": 9779,
        "replayed": 11096,
        "msg_s": 50_000.0,
        "live_msg_s": 60_000.0,
        "duplicates": 0,
    }
    said = replay_sentences(pd.DataFrame([row]))[0]
    assert said.startswith(
        "native, to the timestamp: landed 875 records early, at 8,904: the broker's offsets-for-times"
    )
    assert "not offset 9,779, replayed 11,096 records" in said


def test_a_stale_value_lives_from_the_write_that_supersedes_it_to_the_first_read_without_it() -> None:
    from workbench.retention.compaction import Removals
    from workbench.retention.writing import Written

    written = [Written(0, b"a", 100.0), Written(1, b"b", 100.5), Written(2, b"a", 101.0), Written(3, b"a", 102.0)]
    removals = Removals()
    removals.saw({0, 1, 2, 3}, 2.5)
    removals.saw({1, 3}, 4.0)  # offsets 0 and 2 (stale since 1.0 s and 2.0 s) were compacted away
    removals.saw({1, 3}, 4.5)
    assert sorted(removals.stale_lifetimes(written, began=100.0)) == [2.0, 3.0]
    assert removals.gone_at == {0: 4.0, 2: 4.0}


@pytest.mark.parametrize("settle_s", [-1.0, math.nan, math.inf, 1e9, "6", True])
def test_a_compaction_watch_out_of_range_is_one_line_before_the_broker_is_asked(settle_s: object) -> None:
    """Notebook 14's `compaction_watch_s` arrives here as `settle_s`: refused before any topic
    is made (no stack is needed to find out)."""
    with pytest.raises(RetentionError, match=r"^settle_s must be "):
        compaction_run(None, settle_s=settle_s)  # type: ignore[arg-type]
