"""The latency waterfall on the embedded Kafka: every record stamped on its path, read once, and
its hops in order and adding up to its end-to-end time."""

from __future__ import annotations

from typing import Any

import pytest
from waterfall_checks import check_stamps

from workbench.bench import BenchError, waterfall_run
from workbench.measure.hops import ACK_PATH, READ_PATH, hop_tolerance_ms
from workbench.stack import Stack


def test_a_native_record_is_stamped_by_the_client_the_broker_and_the_reader(stack: Stack) -> None:
    settings: dict[str, Any] = {"linger.ms": 2}
    run = waterfall_run(stack, offered_msg_s=400, offered_seconds=6, partitions=2, **settings)
    check_stamps(run, ["scheduled", "sent", "appended", "consumed"])
    row = run.row
    assert row["ack_path"] == "scheduled → sent → appended → delivered"
    assert row["unsplit"] == "" and row["clock_crossings"] == ""  # one machine, every stamp taken
    assert row["measured_records"] == 400  # the 6th second: the first 5 s are the warm-up
    acks = run.stamps[run.counted]
    assert (acks["delivered"] >= acks["appended"] - hop_tolerance_ms("appended", "delivered")).all()
    assert (
        row["params"]
        == "offered_msg_s,offered_seconds,warm_up_s,record_bytes,partitions,path,reader,max_batch,trigger,linger.ms"
    )
    assert row["hop_sent_appended_p50_ms"] <= row["hop_sent_appended_p99_ms"]


def test_a_traced_rest_call_splits_the_proxys_hops(stack: Stack) -> None:
    run = waterfall_run(stack, offered_msg_s=300, offered_seconds=5.5, path="proxy", max_batch=50)
    check_stamps(run, ["scheduled", "sent", "proxy_received", "proxy_handed", "appended", "consumed"])
    assert run.row["ack_path"] == "scheduled → sent → proxy_received → proxy_handed → appended → delivered → answered"
    counted = run.stamps[run.counted]
    assert (counted["delivered"] <= counted["answered"]).all() and (counted["sent"] <= counted["proxy_received"]).all()


def test_a_rest_consumer_instance_reads_every_record_once(stack: Stack) -> None:
    run = waterfall_run(stack, offered_msg_s=300, offered_seconds=5.5, reader="proxy")
    check_stamps(run, ["scheduled", "sent", "appended", "consumed"])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"path": "carrier pigeon"}, "path must be one of"),
        ({"reader": "\x00"}, "reader must be one of"),
        ({"offered_seconds": 5.0}, "warm-up"),
        ({"offered_seconds": float("nan")}, "warm-up"),
        ({"warm_up_s": -1}, "warm_up_s must be 0 to 60"),
        ({"warm_up_s": float("nan")}, "warm_up_s must be 0 to 60"),
        ({"warm_up_s": 3.0, "offered_seconds": 3.0}, "over the 3 s warm-up"),
        ({"record_bytes": 8}, "record_bytes"),
        ({"partitions": 0}, "partitions"),
        ({"max_batch": 10**9}, "max_batch"),
        ({"offered_msg_s": 1e6, "offered_seconds": 60}, "at most 2,000,000 records"),
        ({"offered_msg_s": -1}, "offered rate"),
        ({"reader": "spark", "trigger": "whenever"}, "not a trigger interval"),
        ({"reader": "spark", "trigger": "10 hours"}, "not a trigger interval"),
    ],
)
def test_parameters_out_of_range_are_refused_in_one_line(stack: Stack, params: dict[str, object], message: str) -> None:
    with pytest.raises(BenchError, match=message) as refused:
        waterfall_run(stack, **params)  # type: ignore[arg-type]
    assert "\n" not in str(refused.value)


def test_the_paths_start_alike_and_part_after_the_broker() -> None:
    assert READ_PATH[:5] == ACK_PATH[:5] and ACK_PATH[4] == "appended"
