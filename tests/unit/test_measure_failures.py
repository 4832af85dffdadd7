"""Failed records keep their first cause in the row, and the notebook checks name it, with the likely cause."""

from __future__ import annotations

import pickle
from pathlib import Path

import pandas as pd
import pytest

from workbench.config import Profile, load_profile
from workbench.kafka import offsets
from workbench.kafka.offsets import END_PROBE_ENV, declare_end_probe
from workbench.measure.failures import (
    DeliveryError,
    FailureTally,
    check_complete,
    check_delivered,
    failure_summary,
    likely_cause,
)
from workbench.stack import Stack


def test_an_empty_tally_is_no_failure() -> None:
    assert FailureTally().columns() == {"failed": 0, "error_code": "", "error_message": "", "error_records": 0}


def test_the_first_cause_is_kept_with_its_own_count() -> None:
    tally = FailureTally()
    tally.add("MSG_SIZE_TOO_LARGE", "Broker: Message size too large", 3)
    tally.add("_MSG_TIMED_OUT", "Local: Message timed out")
    tally.add("MSG_SIZE_TOO_LARGE", "Broker: Message size too large")
    assert tally.columns() == {
        "failed": 5,
        "error_code": "MSG_SIZE_TOO_LARGE",
        "error_message": "Broker: Message size too large",
        "error_records": 4,
    }


def test_records_left_unacknowledged_count_as_failed_with_a_cause_when_none_other() -> None:
    assert FailureTally().columns(unaccounted=2)["error_code"] == "TIMED_OUT"
    tally = FailureTally()
    tally.add(413, "RecordTooLargeException: Broker: Message size too large")
    columns = tally.columns(unaccounted=2)
    assert (columns["failed"], columns["error_code"], columns["error_records"]) == (3, "413", 1)


def test_tallies_merge_and_survive_a_process_boundary() -> None:
    one, two = FailureTally(), FailureTally()
    one.add(413, "too large", 2)
    two.add(413, "too large", 5)
    two.add(50002, "other")
    one.merge(pickle.loads(pickle.dumps(two)))
    assert one.columns()["failed"] == 8 and one.columns()["error_records"] == 7


def test_check_delivered_passes_complete_rows() -> None:
    check_delivered(pd.DataFrame([{"acknowledged": 10, "landed": 10, "failed": 0}]))


def test_check_delivered_names_the_row_and_its_cause() -> None:
    rows = pd.DataFrame(
        [
            {"path": "native", "record_bytes": 100, "acknowledged": 10, "landed": 10, "failed": 0},
            {
                "path": "native",
                "record_bytes": 2_000_000,
                "acknowledged": 0,
                "landed": 0,
                "failed": 50,
                "error_code": "MSG_SIZE_TOO_LARGE",
                "error_message": "Broker: Message size too large",
                "error_records": 50,
            },
        ]
    )
    with pytest.raises(DeliveryError) as raised:
        check_delivered(rows, ["path", "record_bytes"])
    message = str(raised.value)
    assert "path=native, record_bytes=2,000,000" in message
    assert "50 failed (50 with MSG_SIZE_TOO_LARGE: Broker: Message size too large)" in message
    assert "record_bytes=100" not in message


def test_check_delivered_names_records_missing_from_the_topic() -> None:
    rows = pd.DataFrame([{"acknowledged": 10, "landed": 7, "failed": 0}])
    with pytest.raises(DeliveryError, match="7 of 10 acknowledged records in the topic"):
        check_delivered(rows)


def test_a_summary_without_a_recorded_cause_says_so() -> None:
    assert failure_summary({"failed": 2}) == "2 failed (0 with no cause recorded)"
    assert failure_summary({"failed": 0}) == "none failed"


def test_check_complete_names_each_count_that_differs() -> None:
    check_complete({"acknowledged": 20_000, "read back": 20_000}, 20_000)
    with pytest.raises(DeliveryError) as raised:
        check_complete({"acknowledged": 20_000, "read back": 20_002, "in the log": 16_001}, 20_000)
    assert str(raised.value) == (
        "records do not add up: read back: 20,002 of 20,000 (2 extra); in the log: 16,001 of 20,000 (3,999 missing)"
    )


def test_check_complete_labels_a_series_by_its_index_and_takes_one_expected_count_per_row() -> None:
    rows = pd.DataFrame(
        {"max_offsets_per_trigger": [None, 5_000.0], "records": [20_000, 15_001], "expected": [20_000, 20_000]}
    )
    with pytest.raises(DeliveryError, match=r"^rows read do not add up: max_offsets_per_trigger=5,000: 15,001 of "):
        check_complete(rows.set_index("max_offsets_per_trigger")["records"], 20_000, what="rows read")
    both = rows.set_index(["max_offsets_per_trigger", "expected"])
    with pytest.raises(DeliveryError, match=r"max_offsets_per_trigger=none, expected=20,000: 1 of 20,000"):
        check_complete(both["records"].replace(20_000, 1), rows["expected"])


def _cluster(tmp_path: Path, servers: str, **broker: object) -> Stack:
    profile = Profile.model_validate(
        {
            "name": "theirs",
            "embedded": False,
            "run_dir": str(tmp_path),
            "kafka": {"bootstrap.servers": servers},
            "source": str(tmp_path / "theirs.yaml"),
            **({"broker": broker} if broker else {}),
        }
    )
    return Stack(profile)


def _nothing_declared(monkeypatch: pytest.MonkeyPatch) -> None:
    """No cluster declared to read its ends from the log, in this process or from outside it."""
    monkeypatch.delenv(END_PROBE_ENV, raising=False)
    monkeypatch.setattr(offsets, "_declared_here", set())


def test_a_shortfall_on_a_broker_not_known_to_be_kafka_names_the_likely_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _nothing_declared(monkeypatch)
    unknown = _cluster(tmp_path, "theirs.example:9092")
    cause = (
        "; on a broker that is not Apache Kafka the likely cause is log ends reported short of what it acknowledged: "
        f"write `broker: {{kind: tansu}}` (or its kind) in the profile ({tmp_path / 'theirs.yaml'}) so they are "
        "read from the log"
    )
    assert likely_cause(unknown) == cause
    with pytest.raises(DeliveryError) as raised:
        check_complete({"in the log": 16_001}, 20_000, stack=unknown)
    assert str(raised.value) == "records do not add up: in the log: 16,001 of 20,000 (3,999 missing)" + cause
    rows = pd.DataFrame([{"records": 10, "landed": 7, "point_label": "native · json"}])
    with pytest.raises(DeliveryError) as raised:
        check_delivered(rows, ["point_label"], sent="records", stack=unknown)
    assert str(raised.value) == (
        "records did not all get through: point_label=native · json: none failed; 7 of 10 records in the topic" + cause
    )
    with pytest.raises(DeliveryError) as raised:
        check_complete({"rows": 20_002}, 20_000, stack=unknown)  # extra records are not the ends
    assert "likely cause" not in str(raised.value)


def test_no_cause_is_guessed_where_the_ends_are_known_to_be_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _nothing_declared(monkeypatch)
    assert likely_cause(None) == ""
    assert likely_cause(_cluster(tmp_path, "theirs.example:9092", kind="kafka")) == ""  # said to be Kafka
    assert likely_cause(Stack(load_profile("local"))) == ""  # the embedded Kafka
    declare_end_probe("declared.example:9092")
    assert likely_cause(_cluster(tmp_path, "declared.example:9092")) == ""  # its ends are read from the log


def test_a_restart_check_names_each_count_that_is_not_the_records_produced() -> None:
    from workbench.streaming.ingestion import check_restarts

    exact = {"produced": 30, "landed_before_stop": 10, "rows": 30, "distinct_offsets": 30, "log_records": 30}
    check_restarts({"kafka": exact, "workbench": exact})
    with pytest.raises(DeliveryError) as raised:
        check_restarts({"kafka": exact, "workbench": {**exact, "rows": 33, "log_records": 28}})
    assert str(raised.value) == (
        "records after the restart do not add up: workbench rows: 33 of 30 (3 extra); "
        "workbench log_records: 28 of 30 (2 missing)"
    )


def test_check_complete_at_least_passes_extra_records_and_still_names_missing_ones() -> None:
    """A producer without idempotence may land a retried batch twice: extra, never missing."""
    check_complete({"linger 0": 50_004, "linger 10": 50_000}, 50_000, at_least=True)
    with pytest.raises(DeliveryError, match=r"records do not add up: linger 0: 49,996 of 50,000 \(4 missing\)"):
        check_complete({"linger 0": 49_996, "linger 10": 50_004}, 50_000, at_least=True)
