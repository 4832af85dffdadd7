"""Failed records keep their first cause in the row, and the notebook check names it."""

from __future__ import annotations

import pickle

import pandas as pd
import pytest

from workbench.measure.failures import DeliveryError, FailureTally, check_delivered, failure_summary


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
