"""The whole path across data centres: what it refuses, and how it counts each path."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench.config import load_profile
from workbench.errors import BenchError, StackError
from workbench.replication import whole_path_run
from workbench.replication.whole_path import path_counts
from workbench.stack import Stack


def test_the_whole_path_needs_a_proxy_on_b_and_says_which_setting_starts_one() -> None:
    with pytest.raises(StackError, match=r"no REST proxy of cluster 'b' runs .*replication.target_proxy: true"):
        whole_path_run(Stack(load_profile("local-geo")))
    cluster = Stack(load_profile("local-geo").model_copy(update={"embedded": False}))
    with pytest.raises(StackError, match=r"no REST proxy for its second cluster \(replication.target_proxy_url\)"):
        whole_path_run(cluster)
    with pytest.raises(BenchError, match="batch must be 1 to 10,000"):
        whole_path_run(cluster, batch=0)
    with pytest.raises(BenchError, match=r"records must be a whole number, got 10\.5"):
        whole_path_run(cluster, records=10.5)  # type: ignore[arg-type]


def test_each_path_counts_what_it_lacks_what_came_twice_and_the_order_per_partition() -> None:
    reads = pd.DataFrame(
        {
            "path": ["proxy_b"] * 4 + ["spark_b"] * 3,
            "partition": [0, 0, 1, 1, 0, 0, 1],
            "offset": [0, 1, 0, 1, 0, 1, 0],
            "seq": [0, 2, 1, 1, 2, 0, 1],
        }
    )
    counts = path_counts(reads, acked=[0, 1, 2, 3])
    assert (counts["proxy_b_read"], counts["proxy_b_missing"], counts["proxy_b_twice"]) == (4, 1, 1)
    assert counts["proxy_b_in_order"] and not counts["spark_b_in_order"]  # spark_b read 2 before 0 in partition 0
    assert pd.isna(path_counts(reads, acked=[0], spark=False)["spark_b_read"])


def test_the_sentence_names_each_path_and_a_path_left_out() -> None:
    from workbench.replication import whole_path_sentence

    row = {
        "batch": 500,
        "acked": 5_000,
        "posted_msg_s": 10_227.5,
        "latency_p50_ms": 327.0,
        "latency_p99_ms": 449.0,
        **{f"proxy_b_{k}": v for k, v in {"read": 5_000, "missing": 0, "twice": 0, "in_order": True}.items()},
        **{f"spark_b_{k}": float("nan") for k in ("read", "missing", "twice", "in_order")},
    }
    said = whole_path_sentence(row)
    assert "5,000 records were acknowledged (10,228 records/s)" in said and "a median 327 ms" in said
    assert "B's REST proxy found 5,000: 0 missing, 0 twice, each partition in the order posted." in said
    assert "Spark's batch read on b was left out of this run." in said and "nothing read twice" in said
    assert "nothing read twice" not in whole_path_sentence({**row, "proxy_b_twice": 3})


@pytest.mark.parametrize(
    ("value", "seq"), [(b"0000000042....", 42), (b"-" * 10, -1), (None, -1), (b"", -1), (bytearray(b"0000000007"), 7)]
)
def test_a_record_is_known_by_its_number_and_the_pick_up_marker_by_none(value: bytes | None, seq: int) -> None:
    from workbench.replication.numbered import seq_of

    assert seq_of(value) == seq
