"""API v2 consumer instances against the stack's real proxy process and broker.

Most tests assign partitions by hand (no group join to wait for); the flow test
subscribes, as a REST consumer in the wild does, and so waits for the group join.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Callable
from typing import Any

import orjson
import pytest
import requests
from proxy_http import BINARY_V2, JSON_V2, V2, error, post

from workbench.stack import Stack


@pytest.fixture
def http() -> requests.Session:
    """A session of each test's own, where the conftest's is one per module: as these tests always had."""
    return requests.Session()


def produce(http: requests.Session, proxy: str, topic: str, values: list[Any], partition: int | None = None) -> None:
    url = f"{proxy}/topics/{topic}" + (f"/partitions/{partition}" if partition is not None else "")
    response = post(http, url, {"records": [{"value": v} for v in values]}, JSON_V2)
    assert response.status_code == 200 and all(o["error_code"] is None for o in response.json()["offsets"])


def create(http: requests.Session, proxy: str, group: str, **config: Any) -> str:
    response = post(http, f"{proxy}/consumers/{group}", config)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["base_uri"].startswith("http://") and body["base_uri"].endswith(f"/instances/{body['instance_id']}")
    return str(body["base_uri"])


def fetch_until(
    http: requests.Session, base: str, count: int, accept: str = JSON_V2, limit: float = 60.0, **params: Any
) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    deadline = time.monotonic() + limit
    while len(records) < count and time.monotonic() < deadline:
        response = http.get(f"{base}/records", headers={"Accept": accept}, params=params)
        assert response.status_code == 200, response.text
        records += response.json()
    return records


def assign(http: requests.Session, base: str, topic: str, partitions: list[int]) -> None:
    body = {"partitions": [{"topic": topic, "partition": p} for p in partitions]}
    assert post(http, f"{base}/assignments", body).status_code == 204


def group() -> str:
    return f"g-{uuid.uuid4().hex[:10]}"


def test_consumer_flow_resumes_after_the_committed_offset(
    http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    name, gid = topic(partitions=2), group()
    produce(http, proxy, name, [{"n": i} for i in range(50)])
    base = create(
        http,
        proxy,
        gid,
        name="first",
        format="json",
        **{"auto.offset.reset": "earliest", "auto.commit.enable": "false"},
    )
    assert post(http, f"{base}/subscription", {"topics": [name]}).status_code == 204
    assert http.get(f"{base}/subscription").json() == {"topics": [name]}
    records = fetch_until(http, base, 50)
    assert sorted(r["value"]["n"] for r in records) == list(range(50))
    assert {r["topic"] for r in records} == {name}
    assert sorted(p["partition"] for p in http.get(f"{base}/assignments").json()["partitions"]) == [0, 1]

    commit = post(http, f"{base}/offsets")  # empty body: everything returned so far
    assert commit.status_code == 200
    committed = http.get(
        f"{base}/offsets",
        data=orjson.dumps({"partitions": [{"topic": name, "partition": 0}, {"topic": name, "partition": 1}]}),
        headers={"Content-Type": V2},
    ).json()["offsets"]
    ends: dict[int, int] = {}
    for record in records:
        ends[record["partition"]] = max(ends.get(record["partition"], 0), record["offset"] + 1)
    assert {o["partition"]: o["offset"] for o in committed} == ends
    assert http.delete(base).status_code == 204
    error(http.get(f"{base}/records", headers={"Accept": JSON_V2}), 404, 40403)

    produce(http, proxy, name, [{"n": i} for i in range(50, 60)])
    again = create(http, proxy, gid, name="second", format="json", **{"auto.offset.reset": "earliest"})
    assert post(http, f"{again}/subscription", {"topics": [name]}).status_code == 204
    resumed = fetch_until(http, again, 10)
    assert sorted(r["value"]["n"] for r in resumed) == list(range(50, 60)), "only what was not committed"
    assert http.delete(again).status_code == 204


def test_binary_consumer_with_assignment_and_seeks(
    http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    name = topic(partitions=2)
    values = [f"v{i}".encode() for i in range(20)]
    response = post(
        http,
        f"{proxy}/topics/{name}/partitions/1",
        {"records": [{"key": base64.b64encode(b"k").decode(), "value": base64.b64encode(v).decode()} for v in values]},
        BINARY_V2,
    )
    assert response.status_code == 200
    base = create(http, proxy, group(), **{"auto.offset.reset": "smallest"})
    assign(http, base, name, [1])
    assert http.get(f"{base}/assignments").json() == {"partitions": [{"topic": name, "partition": 1}]}
    records = fetch_until(http, base, 20, BINARY_V2)
    assert [base64.b64decode(r["value"]) for r in records] == values
    assert {base64.b64decode(r["key"]) for r in records} == {b"k"}

    assert (
        post(http, f"{base}/positions", {"offsets": [{"topic": name, "partition": 1, "offset": 15}]}).status_code == 204
    )
    assert [r["offset"] for r in fetch_until(http, base, 5, BINARY_V2)] == [15, 16, 17, 18, 19]
    body = {"partitions": [{"topic": name, "partition": 1}]}
    assert post(http, f"{base}/positions/beginning", body).status_code == 204
    assert len(fetch_until(http, base, 20, BINARY_V2)) == 20
    assert post(http, f"{base}/positions/end", body).status_code == 204
    post(http, f"{proxy}/topics/{name}/partitions/1", {"records": [{"value": "bmV3"}]}, BINARY_V2)
    after_end = fetch_until(http, base, 1, BINARY_V2)
    assert [(r["offset"], base64.b64decode(r["value"])) for r in after_end] == [(20, b"new")]
    assert http.delete(base).status_code == 204


def test_a_waiting_records_request_ends_with_the_first_record_not_its_timeout(
    http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    """At the log's end a records request waits for data; one record arriving ends the
    wait (after `consumer.iterator.backoff.ms` for more), however long the timeout."""
    from concurrent.futures import ThreadPoolExecutor

    name = topic()
    base = create(http, proxy, group(), format="json", **{"consumer.request.timeout.ms": 30_000})
    assign(http, base, name, [0])
    assert http.get(f"{base}/records", headers={"Accept": JSON_V2}, params={"timeout": 0}).json() == []
    with ThreadPoolExecutor(1) as pool:
        started = time.monotonic()
        waiting = pool.submit(http.get, f"{base}/records", headers={"Accept": JSON_V2}, params={"timeout": 30_000})
        time.sleep(0.5)
        produce(requests.Session(), proxy, name, ["one"])
        response = waiting.result(timeout=60)
    assert response.status_code == 200 and [r["value"] for r in response.json()] == ["one"]
    assert time.monotonic() - started < 20, "the request waited out its 30 s timeout for more records"
    assert http.delete(base).status_code == 204


def test_max_bytes_and_timeout(http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic()
    produce(http, proxy, name, ["x" * 100] * 10, partition=0)
    base = create(http, proxy, group(), format="json", **{"auto.offset.reset": "earliest"})
    assign(http, base, name, [0])
    first = fetch_until(http, base, 1, max_bytes=1)
    assert len(first) == 1, "the first record always goes out, however small max_bytes is"
    rest = fetch_until(http, base, 9, max_bytes=250)
    assert [r["offset"] for r in rest] == list(range(1, 10))
    empty = http.get(f"{base}/records", headers={"Accept": JSON_V2}, params={"timeout": 100})
    assert empty.status_code == 200 and empty.json() == []
    assert http.delete(base).status_code == 204


def test_answers_larger_than_a_piece_keep_every_record_once_in_order_within_max_bytes(
    http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    """An answer is gathered and sent in pieces (1 MiB of keys and values): 2 partitions of
    6 MB (12 MB) come back in a few answers, every record once, offsets in order per
    partition, each answer within max_bytes."""
    name = topic(partitions=2)
    value = "v" * 20_000  # JSON strings of 20,002 bytes
    for partition in (0, 1):
        for _ in range(3):
            produce(http, proxy, name, [value] * 100, partition=partition)
    base = create(http, proxy, group(), format="json", **{"auto.offset.reset": "earliest"})
    assign(http, base, name, [0, 1])
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    while len(seen) < 600 and time.monotonic() < deadline:
        response = http.get(f"{base}/records", headers={"Accept": JSON_V2}, params={"max_bytes": 9_000_000})
        assert response.status_code == 200, response.text
        answer = response.json()
        assert len(answer) <= 1 or sum(len(orjson.dumps(r["value"])) for r in answer) <= 9_000_000
        seen += answer
    by_partition = {p: [r["offset"] for r in seen if r["partition"] == p] for p in (0, 1)}
    assert by_partition == {0: list(range(300)), 1: list(range(300))}
    assert all(r["value"] == value for r in seen)
    assert http.delete(base).status_code == 204


def test_a_poison_record_in_a_later_piece_ends_the_answer_and_fails_the_next(
    http: requests.Session, proxy: str, topic: Callable[..., str], stack: Stack
) -> None:
    """250 JSON values of 20 KB (past the first 1 MiB piece), then bytes that are not JSON: the
    answer carries the 250 and stops; the next call is the 422 naming offset 250."""
    from workbench import kafka

    name = topic()
    values = [orjson.dumps("v" * 20_000)] * 250 + [b"\xff not json", orjson.dumps("after")]
    kafka.produce(stack.kafka_config("producer"), name, [(None, v) for v in values], partition=0)
    base = create(http, proxy, group(), format="json", **{"auto.offset.reset": "earliest"})
    assign(http, base, name, [0])
    delivered = fetch_until(http, base, 250)
    assert [r["offset"] for r in delivered] == list(range(250))
    poison = http.get(f"{base}/records", headers={"Accept": JSON_V2})
    assert poison.status_code == 422 and "offset 250" in poison.text, poison.text
    assert http.delete(base).status_code == 204


def test_explicit_commit_and_committed_offsets(http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic(partitions=2)
    base = create(http, proxy, group())
    assign(http, base, name, [0, 1])
    offsets = {"offsets": [{"topic": name, "partition": 0, "offset": 4, "metadata": "m"}]}
    assert post(http, f"{base}/offsets/", offsets).status_code == 200
    committed = http.get(
        f"{base}/offsets",
        data=orjson.dumps({"partitions": [{"topic": name, "partition": 0}, {"topic": name, "partition": 1}]}),
        headers={"Content-Type": V2},
    ).json()
    # the committed position is offset + 1; Tansu does not keep commit metadata, Kafka does
    assert [(o["topic"], o["partition"], o["offset"]) for o in committed["offsets"]] == [(name, 0, 5)]
    assert committed["offsets"][0]["metadata"] in ("m", "")
    assert post(http, f"{base}/offsets", {}).status_code == 200, "{} is commit-all too"
    assert http.delete(base).status_code == 204


def test_consumer_bad_input(http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name, gid = topic(partitions=1), group()
    base = create(http, proxy, gid, name="dup")
    error(post(http, f"{proxy}/consumers/{gid}", {"name": "dup"}), 409, 40902)
    error(post(http, f"{proxy}/consumers/{gid}", {"format": "xml"}), 422, 422)
    error(post(http, f"{proxy}/consumers/{gid}", {"auto.offset.reset": "sometimes"}), 422, 42204)
    error(post(http, f"{proxy}/consumers/{gid}", {"fetch.min.bytes": 10**9}), 422, 40001)
    error(http.post(f"{proxy}/consumers/{gid}", data=b"{", headers={"Content-Type": V2}), 400, 400)
    error(http.post(f"{proxy}/consumers/{gid}", data=b"{}", headers={"Content-Type": "text/plain"}), 415, 415)

    missing = f"{proxy}/consumers/{gid}/instances/nobody"
    error(http.get(f"{missing}/records", headers={"Accept": BINARY_V2}), 404, 40403)
    error(post(http, f"{missing}/subscription", {"topics": [name]}), 404, 40403)
    error(http.delete(missing), 404, 40403)

    error(post(http, f"{base}/subscription", {"topics": [name], "topic_pattern": "x.*"}), 409, 40903)
    error(post(http, f"{base}/subscription", {}), 409, 40903)
    assign(http, base, name, [0])
    error(post(http, f"{base}/subscription", {"topics": [name]}), 409, 40903)
    error(http.get(f"{base}/records", headers={"Accept": JSON_V2}), 406, 40601)
    unassigned = {"offsets": [{"topic": name, "partition": 3, "offset": 1}]}
    error(post(http, f"{base}/offsets", unassigned), 404, 40402)  # the topic has no partition 3
    error(post(http, f"{base}/positions", unassigned), 409, 40903)
    error(post(http, f"{base}/offsets", {"offsets": [{"topic": name}]}), 422, 422)
    error(http.get(f"{base}/records", headers={"Accept": BINARY_V2}, params={"timeout": "soon"}), 404, 404)
    assert http.delete(base).status_code == 204


def test_pattern_subscription_and_empty_body_create(
    http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    prefix = f"pat{uuid.uuid4().hex[:6]}"
    first, second = topic(prefix=prefix), topic(prefix=prefix)
    produce(http, proxy, first, [1, 2])
    produce(http, proxy, second, [3])
    response = http.post(f"{proxy}/consumers/{group()}", headers={"Content-Type": V2})
    assert response.status_code == 200, "an empty body creates a consumer with the defaults"
    base = response.json()["base_uri"]
    assert response.json()["instance_id"].startswith("rest-consumer-")
    assert (
        http.post(
            f"{base}/subscription", data=orjson.dumps({"topic_pattern": f"{prefix}-.*"}), headers={"Content-Type": V2}
        ).status_code
        == 204
    )
    assert post(http, f"{base}/positions/beginning", {"partitions": []}).status_code == 204
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(http.get(f"{base}/subscription").json()["topics"]) < 2:
        http.get(f"{base}/records", headers={"Accept": BINARY_V2}, params={"timeout": 200})
    assert http.get(f"{base}/subscription").json() == {"topics": sorted([first, second])}
    assert http.delete(f"{base}/subscription").status_code == 204
    assert http.get(f"{base}/subscription").json() == {"topics": []}
    assert http.delete(base).status_code == 204


def test_a_seek_right_after_assigning_lands_on_its_offset(
    http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    """A REST client assigns and seeks before its first records request; librdkafka refuses
    a seek on a partition it has not started fetching, so the proxy assigns it there."""
    name = topic(partitions=2)
    produce(http, proxy, name, [{"n": i} for i in range(30)], partition=0)
    produce(http, proxy, name, [{"n": i} for i in range(10)], partition=1)
    base = create(http, proxy, group(), format="json", **{"auto.offset.reset": "earliest"})
    assign(http, base, name, [0, 1])
    seek = {"offsets": [{"topic": name, "partition": 0, "offset": 25}]}
    assert post(http, f"{base}/positions", seek).status_code == 204
    records = fetch_until(http, base, 15)
    assert sorted(r["offset"] for r in records if r["partition"] == 0) == [25, 26, 27, 28, 29]
    assert sorted(r["offset"] for r in records if r["partition"] == 1) == list(range(10)), (
        "the other partition untouched"
    )
    assert http.delete(base).status_code == 204


def test_a_position_behind_the_log_start_with_reset_none_is_a_409_until_the_client_seeks(
    http: requests.Session, proxy: str, topic: Callable[..., str], stack: Stack
) -> None:
    """Records before the log start are gone (retention, here DeleteRecords): a reader at
    offset 0 with auto.offset.reset=none learns why at once, not from endless empty answers."""
    from workbench import kafka

    name = topic()
    produce(http, proxy, name, [{"n": i} for i in range(300)])
    assert kafka.delete_records(stack.kafka_config(), {(name, 0): 211}) == {(name, 0): 211}
    base = create(http, proxy, group(), format="json", **{"auto.offset.reset": "none"})
    assign(http, base, name, [0])
    assert (
        post(http, f"{base}/positions", {"offsets": [{"topic": name, "partition": 0, "offset": 0}]}).status_code == 204
    )
    for _ in range(2):  # and again: the partition stays stopped until a seek
        message = error(http.get(f"{base}/records", headers={"Accept": JSON_V2}, params={"timeout": 5000}), 409, 40903)
        assert f"{name}-0: position 0 is outside the log (the log holds offsets 211 to 299)" in message
    assert (
        post(http, f"{base}/positions/beginning", {"partitions": [{"topic": name, "partition": 0}]}).status_code == 204
    )
    records = fetch_until(http, base, 89)
    assert [r["offset"] for r in records] == list(range(211, 300)), "every record left, once, in order"
    assert http.delete(base).status_code == 204


def test_an_error_queued_before_a_seek_is_not_the_answer_after_it(
    http: requests.Session, proxy: str, topic: Callable[..., str], stack: Stack
) -> None:
    """With auto.offset.reset=none, the assignment of a group with no committed offset
    queues librdkafka's "no committed offset" error; a seek to a position in the log made
    after it must be read from, not answered with that error (CI saw the 409 a stale error
    gives)."""
    from workbench import kafka

    name = topic()
    produce(http, proxy, name, [{"n": i} for i in range(30)])
    assert kafka.delete_records(stack.kafka_config(), {(name, 0): 10}) == {(name, 0): 10}
    base = create(http, proxy, group(), format="json", **{"auto.offset.reset": "none"})
    assign(http, base, name, [0])
    time.sleep(1.5)  # the group's offset lookup ends: its error waits in the instance's queue
    assert (
        post(http, f"{base}/positions/beginning", {"partitions": [{"topic": name, "partition": 0}]}).status_code == 204
    )
    assert [r["offset"] for r in fetch_until(http, base, 20)] == list(range(10, 30))
    assert http.delete(base).status_code == 204


def test_a_seek_to_a_moment_after_every_record_lands_at_the_end(
    http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    name = topic()
    produce(http, proxy, name, [{"n": i} for i in range(5)])
    base = create(http, proxy, group(), format="json", **{"auto.offset.reset": "earliest"})
    assign(http, base, name, [0])
    later = {"timestamps": [{"topic": name, "partition": 0, "timestamp": "2999-01-01T00:00:00Z"}]}
    assert post(http, f"{base}/positions", later).status_code == 204
    produce(http, proxy, name, [{"n": 5}])
    assert [r["offset"] for r in fetch_until(http, base, 1)] == [5], "the first record written after the seek"
    assert http.delete(base).status_code == 204
