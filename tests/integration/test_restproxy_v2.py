"""API v2 metadata and produce against the stack's real proxy process and broker."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from typing import Any

import orjson
import pytest
import requests
from proxy_http import BINARY_V2, JSON_V2, V2, error, post

from workbench import kafka
from workbench.stack import Stack


def records_in(stack: Stack, topic: str) -> list[kafka.Record]:
    return list(kafka.read_records(stack.kafka_config("consumer"), topic))


# ---------------------------------------------------------------- metadata


def test_root_and_brokers(http: requests.Session, proxy: str) -> None:
    assert http.get(f"{proxy}/").json() == {}
    brokers = http.get(f"{proxy}/brokers")
    assert brokers.status_code == 200
    assert brokers.headers["content-type"] == V2
    assert len(brokers.json()["brokers"]) == 1


def test_topic_metadata(http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic(partitions=3)
    assert name in http.get(f"{proxy}/topics").json()
    described = http.get(f"{proxy}/topics/{name}").json()
    assert described["name"] == name
    assert isinstance(described["configs"], dict)
    assert [p["partition"] for p in described["partitions"]] == [0, 1, 2]
    replica = described["partitions"][0]["replicas"][0]
    assert replica["leader"] is True and replica["in_sync"] is True
    assert len(http.get(f"{proxy}/topics/{name}/partitions").json()) == 3
    assert http.get(f"{proxy}/topics/{name}/partitions/2").json()["partition"] == 2


def test_unknown_topic_and_partition_metadata(http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic(partitions=2)
    assert http.get(f"{proxy}/topics/no-such-topic").json()["error_code"] in (40401, 40403)
    error(http.get(f"{proxy}/topics/{name}/partitions/7"), 404, 40402)
    error(http.get(f"{proxy}/topics/{name}/partitions/seven"), 404, 404)
    error(http.get(f"{proxy}/no/such/route"), 404, 404)
    error(http.delete(f"{proxy}/topics"), 405, 405)
    assert "no-such-topic" not in http.get(f"{proxy}/topics").json(), "a metadata request never creates a topic"


def test_partition_offsets_are_true_log_ends(http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic(partitions=1)
    for _ in range(3):
        assert post(http, f"{proxy}/topics/{name}", {"records": [{"value": i} for i in range(200)]}, JSON_V2).ok
    assert http.get(f"{proxy}/topics/{name}/partitions/0/offsets").json() == {"beginning_offset": 0, "end_offset": 600}


# ---------------------------------------------------------------- produce


def test_produce_json_records(stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic(partitions=3)
    records: list[dict[str, Any]] = [
        {"value": {"n": 1}},
        {"key": "k", "value": [1, 2]},
        {"key": None, "value": 0, "partition": 2},
        {"value": False},
        {"key": {"a": 1}},
    ]
    body = {"records": records}
    response = post(http, f"{proxy}/topics/{name}", body, JSON_V2)
    assert response.status_code == 200
    assert response.headers["content-type"] == V2
    result = response.json()
    assert result["key_schema_id"] is None and result["value_schema_id"] is None
    assert len(result["offsets"]) == 5
    assert all(o["error_code"] is None and o["error"] is None for o in result["offsets"])
    assert result["offsets"][2]["partition"] == 2
    stored = {(r.partition, r.offset): r for r in records_in(stack, name)}
    assert len(stored) == 5
    for sent, offset in zip(body["records"], result["offsets"], strict=True):
        record = stored[(offset["partition"], offset["offset"])]
        assert record.value == (None if sent.get("value") is None else orjson.dumps(sent["value"]))
        assert record.key == (None if sent.get("key") is None else orjson.dumps(sent["key"]))


def test_keyed_records_land_where_librdkafka_puts_them(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    name = topic(partitions=4)
    keys = [f"device-{i}" for i in range(40)]
    result = post(http, f"{proxy}/topics/{name}", {"records": [{"key": k, "value": 1} for k in keys]}, JSON_V2).json()
    by_key: dict[str, set[int]] = {}
    for key, offset in zip(keys, result["offsets"], strict=True):
        by_key.setdefault(key, set()).add(offset["partition"])
    native: dict[bytes | None, int | None] = {}
    from confluent_kafka import Producer

    producer = Producer(stack.kafka_config("producer"))
    for key in keys:
        producer.produce(
            name, b"v", orjson.dumps(key), on_delivery=lambda _e, m: native.__setitem__(m.key(), m.partition())
        )
    producer.flush(30)
    assert all(by_key[k] == {native[orjson.dumps(k)]} for k in keys)


def test_produce_binary_to_a_partition(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    name = topic(partitions=2)
    payloads = [b"\x00\x01binary", b"", b"x" * 100]
    body = {
        "records": [{"value": base64.b64encode(p).decode(), "key": base64.b64encode(b"k").decode()} for p in payloads]
    }
    result = post(http, f"{proxy}/topics/{name}/partitions/1", body, BINARY_V2).json()
    assert [o["partition"] for o in result["offsets"]] == [1, 1, 1]
    assert [o["offset"] for o in result["offsets"]] == [0, 1, 2]
    assert [r.value for r in records_in(stack, name)] == payloads


@pytest.mark.parametrize(
    "content_type",
    [
        "application/vnd.kafka.binary.v1+json",
        "application/vnd.kafka.v2+json",
        "application/json",
        "application/octet-stream",
        "application/vnd.kafka+json",
    ],
)
def test_loose_content_types_mean_binary(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str], content_type: str
) -> None:
    name = topic()
    response = post(http, f"{proxy}/topics/{name}/", {"records": [{"value": "aGVsbG8="}]}, content_type)
    assert response.status_code == 200, response.text
    assert [r.value for r in records_in(stack, name)] == [b"hello"]


def test_json_v1_alias_and_trailing_slash(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    name = topic()
    response = post(
        http,
        f"{proxy}/topics/{name}/partitions/0/",
        {"records": [{"value": {"v": 1}}]},
        "application/vnd.kafka.json.v1+json",
    )
    assert response.status_code == 200
    assert [r.value for r in records_in(stack, name)] == [b'{"v":1}']


def test_percent_encoded_topic_names(stack: Stack, http: requests.Session, proxy: str) -> None:
    """A topic in the path is percent-decoded before it reaches the broker: `%2D` is `-`, and a
    MapR stream name (`/stream:topic`, which Kafka refuses as a topic name) arrives decoded."""
    name = kafka.create_topic(stack.kafka_config("admin"), f"topic-encoded-{uuid.uuid4().hex[:8]}", 1)
    try:
        url = f"{proxy}/topics/{name.replace('-', '%2D')}"
        assert http.get(url).json()["name"] == name
        assert post(http, url, {"records": [{"value": 1}]}, JSON_V2).status_code == 200
        assert [r.value for r in records_in(stack, name)] == [b"1"]
    finally:
        kafka.delete_topics(stack.kafka_config("admin"), [name])
    message = error(http.get(f"{proxy}/topics/%2Fstreams%2Ftest%3Atopic-encoded"), 404, 40401)
    assert "/streams/test:topic-encoded" in message


# ---------------------------------------------------------------- produce: bad input


def test_unknown_topic_is_404_at_once_and_not_created(stack: Stack, http: requests.Session, proxy: str) -> None:
    error(post(http, f"{proxy}/topics/never-created", {"records": [{"value": 1}]}, JSON_V2), 404, 40401)
    assert "never-created" not in kafka.list_topics(stack.kafka_config("admin"))


def test_bad_partitions(http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic(partitions=2)
    error(post(http, f"{proxy}/topics/{name}/partitions/5", {"records": [{"value": 1}]}, JSON_V2), 404, 40402)
    error(post(http, f"{proxy}/topics/{name}", {"records": [{"value": 1, "partition": 9}]}, JSON_V2), 404, 40402)
    error(post(http, f"{proxy}/topics/{name}", {"records": [{"value": 1, "partition": -1}]}, JSON_V2), 404, 40402)
    error(post(http, f"{proxy}/topics/{name}/partitions/x", {"records": [{"value": 1}]}, JSON_V2), 404, 404)
    error(post(http, f"{proxy}/topics/{name}", {"records": [{"value": 1, "partition": "0"}]}, JSON_V2), 422, 422)


def test_malformed_bodies(stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic()
    url = f"{proxy}/topics/{name}"
    headers = {"Content-Type": JSON_V2}
    error(http.post(url, data=b'{"records": [', headers=headers), 400, 400)
    error(http.post(url, data=b"", headers=headers), 422, 422)
    error(post(http, url, {"records": []}, JSON_V2), 422, 422)
    error(post(http, url, {"nothing": 1}, JSON_V2), 422, 422)
    error(post(http, url, [1, 2], JSON_V2), 400, 400)  # Jackson's mapping error upstream
    error(post(http, url, {"records": {"value": 1}}, JSON_V2), 400, 400)
    error(post(http, url, {"records": [1]}, JSON_V2), 400, 400)
    error(post(http, url, {"records": [{"value": 1, "colour": "red"}]}, JSON_V2), 422, 422)
    assert records_in(stack, name) == [], "a refused request writes nothing"


def test_content_type_errors(http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic()
    body = orjson.dumps({"records": [{"value": 1}]})
    error(http.post(f"{proxy}/topics/{name}", data=body, headers={"Content-Type": "text/plain"}), 415, 415)
    error(http.post(f"{proxy}/topics/{name}", data=body, headers={"Content-Type": ""}), 415, 415)
    accept = {"Content-Type": JSON_V2, "Accept": "text/html"}
    error(http.post(f"{proxy}/topics/{name}", data=body, headers=accept), 406, 406)


def test_invalid_base64(stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic()
    message = error(post(http, f"{proxy}/topics/{name}", {"records": [{"value": "not base64!"}]}, BINARY_V2), 400, 400)
    assert "base64" in message
    error(post(http, f"{proxy}/topics/{name}", {"records": [{"value": 12}]}, BINARY_V2), 400, 400)
    assert records_in(stack, name) == []


def test_record_over_message_max_bytes(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    name = topic()
    big = base64.b64encode(b"x" * 1_100_000).decode()
    message = error(post(http, f"{proxy}/topics/{name}", {"records": [{"value": big}]}, BINARY_V2), 413, 413)
    assert "message.max.bytes" in message
    assert records_in(stack, name) == []


def test_metrics_count_requests_and_records(http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic()
    assert post(http, f"{proxy}/topics/{name}", {"records": [{"value": i} for i in range(7)]}, JSON_V2).ok
    text = http.get(f"{proxy}/metrics").text
    assert 'kafka_rest_requests_total{method="POST",route="/topics/{topic}",status="200"}' in text
    assert "kafka_rest_records_produced_total" in text
    assert "kafka_rest_request_seconds_bucket" in text
    assert "kafka_rest_producer_queue_depth" in text
    assert "kafka_rest_consumer_instances" in text
