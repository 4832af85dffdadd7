"""Opt-in per-record tracing through the REST proxy (`Workbench-Trace`), on the session's stack.

Off (no header, `false`, `0`): what a native consumer reads back is byte for byte what was
sent, with no header added, and the answer has no `trace`. On: every record carries the two
trace headers, its stamps run received ≤ handed ≤ delivered ≤ answered, and on a topic whose
timestamps are the broker's (`LogAppendTime`) the broker's stamp lies between handed and
delivered, within the broker's millisecond. Bad header values are 400 with Confluent's body,
and a traced record that fails still answers in the usual shape.
"""

from __future__ import annotations

import base64
import dataclasses
import os
import socket
import uuid
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, cast
from urllib.parse import urlsplit

import orjson
import pytest
import requests
from confluent_kafka import OFFSET_BEGINNING, TIMESTAMP_LOG_APPEND_TIME, TopicPartition
from proxy_http import AVRO_V2, BINARY_V2, JSON_V2, error

from workbench import kafka
from workbench.bench import proxy_produce
from workbench.bench.loadgen import wrk_path
from workbench.proxy import ProxyClient
from workbench.restproxy.tracing import HANDED_HEADER, RECEIVED_HEADER
from workbench.stack import Stack

MS = 1_000_000
TRACE_KEYS = {"received_ns", "handed_ns", "delivered_ns", "answered_ns"}
V3_JSON = {"Content-Type": "application/json"}


class Stored(NamedTuple):
    """A record as a native consumer reads it back."""

    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]] | None
    timestamp_type: int
    timestamp_ms: int


@pytest.fixture(scope="module")
def cluster(proxy: str) -> str:
    return str(requests.get(f"{proxy}/v3/clusters", timeout=10).json()["data"][0]["cluster_id"])


@pytest.fixture
def topic_with(stack: Stack) -> Iterator[Callable[..., str]]:
    """A factory of fresh topics with topic configs of their own; deleted after the test."""
    created: list[str] = []

    def make(partitions: int = 1, **config: str) -> str:
        name = f"trace-{uuid.uuid4().hex[:10]}"
        settings = stack.profile.topics
        kafka.create_topics(
            stack.kafka_config("admin"),
            {name: partitions},
            replication_factor=settings.replication_factor,
            config={**settings.topic_config(), **{k.replace("_", "."): v for k, v in config.items()}},
        )
        created.append(name)
        return name

    yield make
    stack.delete_topics(created)


def read_back(stack: Stack, topic: str, partitions: int, count: int) -> dict[tuple[int, int], Stored]:
    """Every record of `topic` by (partition, offset), read natively: exactly `count` of them."""
    consumer = kafka.consumer(stack.kafka_config("consumer"), settings=kafka.READER_SETTINGS)
    stored: dict[tuple[int, int], Stored] = {}
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        for _ in range(300):
            for message in consumer.consume(num_messages=1000, timeout=0.1):
                assert message.error() is None, message.error()
                kind, stamp = message.timestamp()
                where = (int(message.partition() or 0), int(message.offset() or 0))
                headers = cast(list[tuple[str, bytes | None]] | None, message.headers())  # a list when read
                stored[where] = Stored(message.key(), message.value(), headers, kind, stamp)
            if len(stored) >= count:
                break
    finally:
        consumer.close()
    assert len(stored) == count, f"{len(stored)} records read back, {count} expected"
    return stored


def v2_produce(
    http: requests.Session, url: str, records: list[dict[str, Any]], fmt: str, trace: str | None
) -> requests.Response:
    headers = {"Content-Type": fmt}
    if trace is not None:
        headers["Workbench-Trace"] = trace
    return http.post(url, data=orjson.dumps({"records": records}), headers=headers, timeout=60)


def v3_produce(
    http: requests.Session, url: str, records: list[dict[str, Any]], trace: str | None
) -> list[dict[str, Any]]:
    headers = dict(V3_JSON)
    if trace is not None:
        headers["Workbench-Trace"] = trace
    response = http.post(url, data=b"\n".join(orjson.dumps(r) for r in records), headers=headers, timeout=60)
    assert response.status_code == 200, response.text
    return [orjson.loads(line) for line in response.iter_lines() if line.strip()]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def assert_ordered(trace: dict[str, Any]) -> None:
    assert set(trace) == TRACE_KEYS
    assert all(type(trace[k]) is int for k in TRACE_KEYS), trace
    assert trace["received_ns"] <= trace["handed_ns"] <= trace["delivered_ns"] <= trace["answered_ns"], trace


def assert_stamped(stored: Stored, trace: dict[str, Any], own: list[tuple[str, bytes | None]]) -> None:
    """The user's headers, then exactly the two trace headers with the answer's stamps; the
    broker's append time between handed and delivered, within its millisecond."""
    expected = [
        *own,
        (RECEIVED_HEADER, str(trace["received_ns"]).encode()),
        (HANDED_HEADER, str(trace["handed_ns"]).encode()),
    ]
    assert stored.headers == expected
    assert stored.timestamp_type == TIMESTAMP_LOG_APPEND_TIME
    assert trace["handed_ns"] - MS <= stored.timestamp_ms * MS <= trace["delivered_ns"] + MS, (stored, trace)


# ---------------------------------------------------------------- tracing off


KEYS: list[bytes | None] = [None, b"", b"k-1", bytes(range(256)), b"k-1"]
VALUES: list[bytes | None] = [b"plain", None, b"", os.urandom(300), b"\x00\xff" * 50]


@pytest.mark.parametrize("off", [None, "false", "0", "FALSE"])
def test_untraced_v2_binary_is_written_byte_for_byte(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str], off: str | None
) -> None:
    name = topic(partitions=2)
    records = [
        {
            k: v
            for k, v in (("key", None if key is None else b64(key)), ("value", None if value is None else b64(value)))
        }
        for key, value in zip(KEYS, VALUES, strict=True)
    ]
    answer = v2_produce(http, f"{proxy}/topics/{name}", records, BINARY_V2, off)
    assert answer.status_code == 200, answer.text
    offsets = answer.json()["offsets"]
    assert len(offsets) == len(records)
    assert all(set(o) == {"partition", "offset", "error_code", "error"} for o in offsets), "no trace when off"
    stored = read_back(stack, name, 2, len(records))
    for key, value, where in zip(KEYS, VALUES, offsets, strict=True):
        got = stored[(where["partition"], where["offset"])]
        assert (got.key, got.value, got.headers) == (key, value, None)


def test_untraced_v2_json_is_written_as_before(
    stack: Stack, http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    name = topic(partitions=1)
    records: list[dict[str, Any]] = [
        {"value": {"n": 1, "s": "é"}},
        {"key": "k", "value": [1, 2.5, None]},
        {"key": {"id": 7}, "value": "text"},
        {"value": None},
    ]
    answer = v2_produce(http, f"{proxy}/topics/{name}/partitions/0", records, JSON_V2, None)
    assert answer.status_code == 200, answer.text
    offsets = answer.json()["offsets"]
    assert [o["offset"] for o in offsets] == [0, 1, 2, 3] and all("trace" not in o for o in offsets)
    stored = read_back(stack, name, 1, len(records))
    for index, record in enumerate(records):
        key = record.get("key")
        expected = (
            None if key is None else orjson.dumps(key),
            None if record["value"] is None else orjson.dumps(record["value"]),
            None,
        )
        got = stored[(0, index)]
        assert (got.key, got.value, got.headers) == expected


@pytest.mark.parametrize("with_headers", [False, True])
def test_untraced_v3_is_written_byte_for_byte(
    stack: Stack, http: requests.Session, proxy: str, cluster: str, topic: Callable[..., str], with_headers: bool
) -> None:
    name = topic(partitions=1)
    own = [("h1", b"\x00one"), ("h2", None), ("h1", b"again")] if with_headers else []
    headers = [{"name": n, "value": None if v is None else b64(v)} for n, v in own]
    records: list[dict[str, Any]] = [
        {"key": {"type": "BINARY", "data": b64(b"\x01k")}, "value": {"type": "BINARY", "data": b64(b"\xffv")}},
        {"value": {"type": "JSON", "data": {"a": [1, 2]}}},
        {"key": {"type": "STRING", "data": "k"}, "value": {"type": "JSON", "data": "s"}},
    ]
    if headers:
        records = [{**r, "headers": headers} for r in records]
    results = v3_produce(http, f"{proxy}/v3/clusters/{cluster}/topics/{name}/records", records, None)
    assert [r["error_code"] for r in results] == [200, 200, 200]
    assert all("trace" not in r for r in results)
    stored = read_back(stack, name, 1, 3)
    expected = [(b"\x01k", b"\xffv"), (None, b'{"a":[1,2]}'), (b"k", b'"s"')]
    for index, (key, value) in enumerate(expected):
        got = stored[(0, index)]
        assert (got.key, got.value, got.headers) == (key, value, own or None)


# ---------------------------------------------------------------- tracing on


@pytest.mark.parametrize("on", ["true", "1", "True"])
def test_traced_v2_binary_stamps_every_record(
    stack: Stack, http: requests.Session, proxy: str, topic_with: Callable[..., str], on: str
) -> None:
    name = topic_with(3, message_timestamp_type="LogAppendTime")
    records = [{"key": b64(b"key-%d" % i), "value": b64(b"value-%d" % i)} for i in range(200)]
    records += [{"value": b64(b"keyless-%d" % i)} for i in range(50)]
    answer = v2_produce(http, f"{proxy}/topics/{name}", records, BINARY_V2, on)
    assert answer.status_code == 200, answer.text
    offsets = answer.json()["offsets"]
    assert len(offsets) == len(records) == sum(1 for o in offsets if "trace" in o)
    stored = read_back(stack, name, 3, len(records))
    answered = {o["trace"]["answered_ns"] for o in offsets}
    received = {o["trace"]["received_ns"] for o in offsets}
    assert len(answered) == 1 and len(received) == 1, "one request: one received and one answered time"
    for record, where in zip(records, offsets, strict=True):
        assert where["error_code"] is None
        assert_ordered(where["trace"])
        got = stored[(where["partition"], where["offset"])]
        key = record.get("key")
        assert (got.key, got.value) == (
            None if key is None else base64.b64decode(key),
            base64.b64decode(record["value"]),
        )
        assert_stamped(got, where["trace"], [])


@pytest.mark.parametrize("fmt", [JSON_V2, AVRO_V2])
def test_traced_v2_embedded_formats_and_the_partition_url(
    stack: Stack, http: requests.Session, proxy: str, topic_with: Callable[..., str], fmt: str
) -> None:
    name = topic_with(2, message_timestamp_type="LogAppendTime")
    body: dict[str, Any] = {"records": [{"value": {"n": i}} for i in range(20)]}
    if fmt == AVRO_V2:
        schema = {"type": "record", "name": "N", "fields": [{"name": "n", "type": "int"}]}
        body["value_schema"] = orjson.dumps(schema).decode()
    answer = http.post(
        f"{proxy}/topics/{name}/partitions/1",
        data=orjson.dumps(body),
        headers={"Content-Type": fmt, "Workbench-Trace": "1"},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    offsets = answer.json()["offsets"]
    assert [o["partition"] for o in offsets] == [1] * 20 and [o["offset"] for o in offsets] == list(range(20))
    stored = read_back(stack, name, 2, 20)
    for index, where in enumerate(offsets):
        assert_ordered(where["trace"])
        got = stored[(1, index)]
        if fmt == JSON_V2:
            assert got.value == orjson.dumps({"n": index})
        else:
            assert got.value is not None and got.value[0] == 0, "Confluent's wire format: magic byte 0"
        assert_stamped(got, where["trace"], [])


@pytest.mark.parametrize("with_headers", [False, True])
def test_traced_v3_stamps_every_record_after_its_own_headers(
    stack: Stack,
    http: requests.Session,
    proxy: str,
    cluster: str,
    topic_with: Callable[..., str],
    with_headers: bool,
) -> None:
    name = topic_with(2, message_timestamp_type="LogAppendTime")
    own = [("user", b"\x00\x01"), ("empty", None)] if with_headers else []
    headers = [{"name": n, "value": None if v is None else b64(v)} for n, v in own]
    records: list[dict[str, Any]] = []
    for i in range(40):
        data = {"type": "BINARY", "data": b64(b"v%d" % i)} if i % 2 else {"type": "JSON", "data": {"i": i}}
        record: dict[str, Any] = {"key": {"type": "STRING", "data": f"k{i % 5}"}, "value": data}
        if headers:
            record["headers"] = headers
        records.append(record)
    results = v3_produce(http, f"{proxy}/v3/clusters/{cluster}/topics/{name}/records", records, "true")
    assert len(results) == len(records) == sum(1 for r in results if "trace" in r)
    stored = read_back(stack, name, 2, len(records))
    for i, result in enumerate(results):
        assert result["error_code"] == 200
        assert_ordered(result["trace"])
        got = stored[(result["partition_id"], result["offset"])]
        assert got.key == f"k{i % 5}".encode()
        assert got.value == (b"v%d" % i if i % 2 else orjson.dumps({"i": i}))
        assert_stamped(got, result["trace"], own)


def test_traced_in_the_answer_only_v2_writes_the_records_byte_for_byte(
    stack: Stack, http: requests.Session, proxy: str, topic_with: Callable[..., str]
) -> None:
    """`Workbench-Trace: answer`: every result has its trace, the records take the untraced path
    and carry no header, and the broker's stamp still lies between handed and delivered."""
    name = topic_with(3, message_timestamp_type="LogAppendTime")
    records = [{"key": b64(b"key-%d" % i), "value": b64(b"value-%d" % i)} for i in range(150)]
    records += [{"value": b64(b"keyless-%d" % i)} for i in range(50)]
    answer = v2_produce(http, f"{proxy}/topics/{name}", records, BINARY_V2, "answer")
    assert answer.status_code == 200, answer.text
    offsets = answer.json()["offsets"]
    stored = read_back(stack, name, 3, len(records))
    for record, where in zip(records, offsets, strict=True):
        assert where["error_code"] is None
        assert_ordered(where["trace"])
        got = stored[(where["partition"], where["offset"])]
        assert got.value == base64.b64decode(record["value"]) and got.headers is None
        trace = where["trace"]
        assert trace["handed_ns"] - MS <= got.timestamp_ms * MS <= trace["delivered_ns"] + MS, (got, trace)


def test_traced_in_the_answer_only_v3_keeps_the_users_headers_alone(
    stack: Stack, http: requests.Session, proxy: str, cluster: str, topic_with: Callable[..., str]
) -> None:
    name = topic_with(1, message_timestamp_type="LogAppendTime")
    own = [("user", b"\x00\x01")]
    records = [
        {"value": {"type": "BINARY", "data": b64(b"v%d" % i)}, "headers": [{"name": "user", "value": b64(b"\x00\x01")}]}
        for i in range(20)
    ]
    results = v3_produce(http, f"{proxy}/v3/clusters/{cluster}/topics/{name}/records", records, "answer")
    stored = read_back(stack, name, 1, len(records))
    for i, result in enumerate(results):
        assert result["error_code"] == 200
        assert_ordered(result["trace"])
        got = stored[(result["partition_id"], result["offset"])]
        assert (got.value, got.headers) == (b"v%d" % i, own)


def test_traced_v3_stream_stamps_each_record_when_its_chunk_arrived(
    stack: Stack, http: requests.Session, proxy: str, cluster: str, topic_with: Callable[..., str]
) -> None:
    """A stream's later records are received when their chunk came, not when the stream began;
    a record refused before producing still has its trace (handed and delivered null)."""
    name = topic_with(1, message_timestamp_type="LogAppendTime")
    lines = [orjson.dumps({"value": {"type": "JSON", "data": i}}) for i in range(30)]
    lines[10] = orjson.dumps({"value": {"type": "BINARY", "data": "%%%"}})  # refused: not base64

    def chunks() -> Iterator[bytes]:
        for start in range(0, 30, 3):
            yield b"\n".join(lines[start : start + 3]) + b"\n"

    response = http.post(
        f"{proxy}/v3/clusters/{cluster}/topics/{name}/records",
        data=chunks(),
        headers={**V3_JSON, "Workbench-Trace": "true"},
        stream=True,
        timeout=60,
    )
    assert response.status_code == 200
    results = [orjson.loads(line) for line in response.iter_lines() if line.strip()]
    assert [r["error_code"] for r in results] == [200] * 10 + [400] + [200] * 19
    refused = results[10]["trace"]
    assert set(refused) == TRACE_KEYS and refused["handed_ns"] is None and refused["delivered_ns"] is None
    assert refused["received_ns"] <= refused["answered_ns"]
    received = [r["trace"]["received_ns"] for r in results]
    assert received == sorted(received), "each chunk arrives after the one before it"
    stored = read_back(stack, name, 1, 29)
    for result in results[:10] + results[11:]:
        assert_ordered(result["trace"])
        assert_stamped(stored[(0, result["offset"])], result["trace"], [])


# ---------------------------------------------------------------- hostile


BAD_VALUES = ["yes", "2", "", "on", "true, true", "tru\u00e9"]


@pytest.mark.parametrize("value", BAD_VALUES)
def test_a_bad_header_value_is_400_and_writes_nothing(
    stack: Stack, http: requests.Session, proxy: str, cluster: str, topic: Callable[..., str], value: str
) -> None:
    name = topic(partitions=1)
    header = {"Workbench-Trace": value.encode("latin-1")}
    records = orjson.dumps({"records": [{"value": 1}]})
    for url, data, content_type in (
        (f"{proxy}/topics/{name}", records, JSON_V2),
        (f"{proxy}/topics/{name}/partitions/0", records, JSON_V2),
        (f"{proxy}/v3/clusters/{cluster}/topics/{name}/records", b'{"value": {"type": "JSON", "data": 1}}', None),
    ):
        answer = http.post(url, data=data, headers={"Content-Type": content_type or "application/json", **header})
        message = error(answer, 400, 400)
        assert "Workbench-Trace" in message and "true, 1" in message and "false, 0" in message
    assert sum(kafka.end_offsets(stack.kafka_config("admin"), name).values()) == 0


def test_the_header_sent_twice_is_400(http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    name = topic(partitions=1)
    address = urlsplit(proxy)
    body = b'{"records":[{"value":1}]}'
    request = (
        f"POST /topics/{name} HTTP/1.1\r\nHost: {address.netloc}\r\nContent-Type: {JSON_V2}\r\n"
        f"Workbench-Trace: true\r\nWorkbench-Trace: false\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode() + body
    with socket.create_connection((address.hostname, address.port), timeout=10) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, payload = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), head
    body_json = orjson.loads(payload)
    assert body_json["error_code"] == 400 and "once" in body_json["message"]


def test_a_huge_header_value_is_refused_in_one_short_line(
    http: requests.Session, proxy: str, cluster: str, topic: Callable[..., str]
) -> None:
    name = topic(partitions=1)
    message = error(
        http.post(
            f"{proxy}/topics/{name}",
            data=b'{"records":[{"value":1}]}',
            headers={"Content-Type": JSON_V2, "Workbench-Trace": "t" * 20_000},
        ),
        400,
        400,
    )
    assert len(message) < 300, "the value is not echoed whole"
    too_big = http.post(
        f"{proxy}/v3/clusters/{cluster}/topics/{name}/records",
        data=b'{"value": {"type": "JSON", "data": 1}}',
        headers={**V3_JSON, "Workbench-Trace": "t" * 100_000},
    )
    assert too_big.status_code == 431, "past request.header.max.bytes the server refuses the headers"
    alive = v2_produce(requests.Session(), f"{proxy}/topics/{name}", [{"value": 1}], JSON_V2, "true")
    assert alive.status_code == 200 and "trace" in alive.json()["offsets"][0]


def test_a_traced_record_the_broker_refuses_answers_in_the_usual_shape(
    stack: Stack, http: requests.Session, proxy: str, cluster: str, topic_with: Callable[..., str]
) -> None:
    """A record over the topic's max.message.bytes gets librdkafka's failure report: the answer
    keeps its shape (per-record 413), with the trace of a record handed over and reported."""
    name = topic_with(1, max_message_bytes="2048")
    big = os.urandom(8000)
    traced = v2_produce(http, f"{proxy}/topics/{name}", [{"value": b64(big)}], BINARY_V2, "true")
    plain = v2_produce(http, f"{proxy}/topics/{name}", [{"value": b64(big)}], BINARY_V2, None)
    assert traced.status_code == plain.status_code == 200
    (failed,) = traced.json()["offsets"]
    (untraced,) = plain.json()["offsets"]
    assert {k: v for k, v in failed.items() if k != "trace"} == untraced
    assert failed["error_code"] == 413 and failed["partition"] is None
    assert_ordered(failed["trace"])

    url = f"{proxy}/v3/clusters/{cluster}/topics/{name}/records"
    too_large = {"value": {"type": "BINARY", "data": b64(big)}}
    over_limit = {"value": {"type": "BINARY", "data": b64(os.urandom(1_000_001))}}  # over the proxy's own limit
    results = v3_produce(http, url, [too_large, over_limit], "true")
    assert [r["error_code"] for r in results] == [413, 413]
    assert_ordered(results[0]["trace"])
    assert results[1]["trace"]["handed_ns"] is None and results[1]["trace"]["delivered_ns"] is None
    # A small record in its own call: in the same stream it could share the too-large record's
    # batch, which the broker refuses whole (max.message.bytes bounds a batch).
    (fine,) = v3_produce(http, url, [{"value": {"type": "JSON", "data": 1}}], "true")
    assert fine["error_code"] == 200
    assert_ordered(fine["trace"])
    assert sum(kafka.end_offsets(stack.kafka_config("admin"), name).values()) == 1


# ---------------------------------------------------------------- the client


def test_proxy_client_returns_traces_aligned_with_the_records(stack: Stack, topic_with: Callable[..., str]) -> None:
    name = topic_with(2, message_timestamp_type="LogAppendTime")
    with ProxyClient(stack.proxy_urls[0]) as client:
        plain = client.produce(name, [b"a", b"b"])
        assert (plain.traces, plain.client_sent_ns, plain.client_received_ns) == ((), None, None)

        values = [(b"k%d" % i, b"v%d" % i) for i in range(30)]
        result = client.produce(name, values, trace=True)
        assert result.acknowledged == 30 and len(result.traces) == 30
        assert result.client_sent_ns is not None and result.client_received_ns is not None
        for trace in result.traces:
            assert trace.handed_ns is not None and trace.delivered_ns is not None
            assert result.client_sent_ns <= trace.received_ns <= trace.handed_ns <= trace.delivered_ns
            assert trace.delivered_ns <= trace.answered_ns <= result.client_received_ns

        streamed = list(client.produce_stream(name, [b"s%d" % i for i in range(15)], partition=1, trace=True))
    assert len(streamed) == 15 and all(item["error_code"] == 200 for item in streamed)
    for item in streamed:
        assert_ordered(item["trace"])
        assert item["client_sent_ns"] <= item["trace"]["received_ns"]
        assert item["trace"]["answered_ns"] <= item["client_received_ns"]
    stored = read_back(stack, name, 2, 2 + 30 + 15)
    for (key, value), where, trace in zip(values, result.offsets, result.traces, strict=True):
        assert where.partition is not None and where.offset is not None
        got = stored[(where.partition, where.offset)]
        assert (got.key, got.value) == (key, value)
        assert_stamped(got, dataclasses.asdict(trace), [])


# ---------------------------------------------------------------- the benchmark


@pytest.mark.parametrize("client", ["python", "wrk"])
def test_proxy_produce_measures_traced_calls(stack: Stack, client: str) -> None:
    """The benchmark's traced point lands every record once and names itself; the untraced one
    stays the point earlier runs measured (no `trace` in its params)."""
    if client == "wrk" and wrk_path() is None:
        pytest.skip("wrk is not installed (Debian package wrk)")
    row = proxy_produce(
        stack, records=1_000, record_bytes=64, records_per_call=100, trace=True, client=client, max_seconds=1
    )
    assert row["trace"] is True and "trace" in row["params"].split(",")
    assert row["failed"] == 0 and row["acknowledged"] > 0
    if client == "python":
        assert (row["records"], row["acknowledged"], row["landed"]) == (1_000, 1_000, 1_000)
    else:  # wrk stops with calls in flight: they land, uncounted
        assert row["landed"] >= row["acknowledged"]
    plain = proxy_produce(stack, records=200, record_bytes=64, records_per_call=100)
    assert "trace" not in plain and "trace" not in plain["params"].split(",")
    assert plain["landed"] == 200


def test_a_proxy_that_does_not_trace_leaves_traces_empty(caplog: pytest.LogCaptureFixture) -> None:
    """Confluent's proxy ignores the header: the records are written, so the client answers
    with their offsets and no traces (an error would invite a retry, and duplicates)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    seen: list[str | None] = []

    class Untraced(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(self.headers.get("Workbench-Trace"))
            self.rfile.read(int(self.headers["Content-Length"]))
            body = b'{"offsets":[{"partition":0,"offset":5,"error_code":null,"error":null}]}'
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.kafka.v2+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Untraced)
    thread = Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with ProxyClient(f"http://127.0.0.1:{server.server_address[1]}") as client:
            result = client.produce("t", [b"x"], trace=True)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert seen == ["true"]
    assert result.acknowledged == 1 and result.offsets[0].offset == 5 and result.traces == ()
    assert "only the workbench's own proxy traces records" in caplog.text
