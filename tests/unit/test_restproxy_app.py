"""The proxy's request handling in process, through `create_app`'s factory seam.

Starlette's TestClient drives the real app (dispatcher, validation, handlers, error
bodies) with a stand-in producer and metadata client, so these checks need no socket
and no broker. What librdkafka and the broker do is covered by the integration tests
against real proxy processes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any, ClassVar, cast

import pytest
from starlette.testclient import TestClient

from workbench.httpserver.errors import RestError
from workbench.restproxy.app import create_app
from workbench.restproxy.delivery import Delivery
from workbench.restproxy.errors import PARTITION_NOT_FOUND
from workbench.restproxy.metadata import Metadata
from workbench.restproxy.producer import AsyncProducer
from workbench.restproxy.settings import RestProxySettings

JSON_V2 = "application/vnd.kafka.json.v2+json"
BINARY_V2 = "application/vnd.kafka.binary.v2+json"
V2 = "application/vnd.kafka.v2+json"


class StandInMetadata:
    """Topics `orders` (4 partitions) and `events` (1); nothing else exists."""

    topics: ClassVar[dict[str, int]] = {"orders": 4, "events": 1}

    async def call(self, function: Callable[..., Any], *args: Any) -> Any:
        return function(*args)

    def cluster(self, topic: str | None = None) -> Any:
        return SimpleNamespace(cluster_id="stand-in", brokers={1: None}, topics=dict.fromkeys(self.topics))

    def topic(self, name: str) -> Any:
        if name not in self.topics:
            raise RestError(404, 40401, f"Topic {name} not found.")
        return SimpleNamespace(partitions={p: None for p in range(self.topics[name])})

    async def partition_count(self, name: str) -> int:
        if name not in self.topics:
            raise RestError(404, 40401, f"Topic {name} not found.")
        return self.topics[name]

    async def check_partition(self, name: str, partition: int) -> None:
        if not 0 <= partition < await self.partition_count(name):
            raise RestError(404, PARTITION_NOT_FOUND, f"Partition {partition} of topic {name} not found.")

    def forget(self, name: str) -> None:
        pass


class StandInProducer:
    """Acknowledges every record at once, at the next offset of its partition."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes | None, bytes | None, int]] = []

    def start(self) -> None:
        pass

    async def close(self, timeout: float = 30.0) -> int:
        return 0

    def __len__(self) -> int:
        return 0

    def kick(self) -> None:
        pass

    def sticky_partition(self, topic: str, count: int) -> int:
        return 0

    def _deliver(self, topic: str, rows: list[tuple[bytes | None, bytes | None, int]]) -> Delivery:
        delivery = Delivery(asyncio.get_running_loop(), len(rows))
        for index, (key, value, partition) in enumerate(rows):
            offset = sum(1 for sent in self.sent if sent[0] == topic and sent[3] == partition)
            self.sent.append((topic, key, value, partition))
            delivery.outcomes[index] = (partition, offset)
        delivery.seal(0)
        return delivery

    async def enqueue(self, topic: str, records: list[tuple[bytes | None, bytes | None, int]]) -> Delivery:
        return self._deliver(topic, records)

    async def enqueue_batch(
        self, topic: str, messages: list[dict[str, Any]], received_ns: int | None = None
    ) -> Delivery:
        return self._deliver(topic, [(m.get("key"), m["value"], m["partition"]) for m in messages])


@pytest.fixture
def producer() -> StandInProducer:
    return StandInProducer()


@pytest.fixture
def client(producer: StandInProducer) -> Iterator[TestClient]:
    settings = RestProxySettings(bootstrap_servers="stand-in:9092", max_records_per_request=1000)
    app = create_app(
        settings,
        producer_factory=lambda _: cast(AsyncProducer, producer),
        metadata_factory=lambda _: cast(Metadata, StandInMetadata()),
    )
    with TestClient(app) as test_client:
        yield test_client


def error(response: Any, status: int, code: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code, body
    return str(body["message"])


def produce(client: TestClient, body: Any, topic: str = "orders", content_type: str = JSON_V2) -> Any:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()  # json: orjson stops at depth 255
    return client.post(f"/topics/{topic}", content=data, headers={"Content-Type": content_type})


def test_a_produce_is_acknowledged_per_record_in_request_order(client: TestClient, producer: StandInProducer) -> None:
    answer = produce(client, {"records": [{"value": {"n": 1}}, {"key": "k", "value": [1, 2]}]})
    assert answer.status_code == 200, answer.text
    assert [o["error_code"] for o in answer.json()["offsets"]] == [None, None]
    assert [sent[2] for sent in producer.sent] == [b'{"n":1}', b"[1,2]"]


@pytest.mark.parametrize("name", ["a" * 250, ".", "..", "bad name", "caf\u00e9", "tab\tname", "nul\x00"])
def test_an_illegal_topic_name_names_no_topic(client: TestClient, name: str) -> None:
    from urllib.parse import quote

    path = quote(name, safe="").replace(".", "%2E")  # clients drop literal dot segments
    error(client.get(f"/topics/{path}"), 404, 40401)
    error(
        client.post(f"/topics/{path}", content=b'{"records":[{"value":1}]}', headers={"Content-Type": JSON_V2}),
        404,
        40401,
    )
    error(client.get(f"/v3/clusters/stand-in/topics/{path}"), 404, 40403)


def test_a_mapr_stream_topic_is_a_legal_name(client: TestClient) -> None:
    error(client.get("/topics/%2Fapps%2Fstream%3Aorders"), 404, 40401)  # legal, just absent here
    message = error(client.get("/topics/%2Fapps%2Fstream%3Abad%20name"), 404, 40401)
    assert "topic name is" in message


@pytest.mark.parametrize("group", ["nul\x00", "bell\x07", "g" * 256])
def test_an_unusable_group_is_refused_before_librdkafka_sees_it(client: TestClient, group: str) -> None:
    from urllib.parse import quote

    error(client.post(f"/consumers/{quote(group, safe='')}", json={}, headers={"Content-Type": V2}), 422, 42204)


@pytest.mark.parametrize("name", [".", "..", "a/b", "x" * 256, "line\nbreak", "", 7])
def test_an_unusable_instance_name_is_refused(client: TestClient, name: Any) -> None:
    answer = client.post("/consumers/readers", json={"name": name}, headers={"Content-Type": V2})
    if name == "":  # an empty name means "pick one for me" upstream; here it is refused rather than guessed
        assert answer.status_code == 422
    else:
        error(answer, 422, 42204)


def test_an_instance_path_with_an_unusable_name_is_not_found(client: TestClient) -> None:
    error(client.get("/consumers/readers/instances/%2e%2e/records", headers={"Accept": BINARY_V2}), 404, 40403)
    error(client.delete("/consumers/nul%00/instances/x"), 404, 40403)


def test_shapes_upstream_answers_with_400(client: TestClient) -> None:
    error(produce(client, [1, 2]), 400, 400)
    error(produce(client, {"records": {"value": 1}}), 400, 400)
    error(produce(client, {"records": [1]}), 400, 400)
    error(produce(client, b'{"records": ['), 400, 400)
    error(produce(client, b'{"records": [{"value": 1e400}]}'), 400, 400)


def test_too_many_records_in_one_request(client: TestClient, producer: StandInProducer) -> None:
    message = error(produce(client, {"records": [{}] * 1001}), 413, 413)
    assert "producer.max.records.per.request" in message
    assert producer.sent == []


def test_values_json_cannot_carry_back_exactly_are_refused(client: TestClient, producer: StandInProducer) -> None:
    deep: Any = 1
    for _ in range(300):
        deep = [deep]
    error(produce(client, {"records": [{"value": 1}, {"value": deep}]}), 422, 422)
    error(produce(client, {"records": [{"key": deep, "value": 1}]}), 422, 422)
    error(produce(client, b'{"records": [{"value": 18446744073709551616}]}'), 422, 422)
    error(produce(client, b'{"records": [{"value": -9223372036854775809}]}'), 422, 422)
    error(produce(client, b'{"records": [{"value": 1, "partition": 18446744073709551616}]}'), 422, 422)
    error(produce(client, b'{"records": [{"value": ' + b"[" * 2000 + b"]" * 2000 + b"}]}"), 400, 400)
    assert producer.sent == [], "a refused request writes nothing"
    assert produce(client, {"records": [{"value": "18446744073709551616"}]}).status_code == 200


def test_schema_formats_answer_in_upstreams_order(client: TestClient) -> None:
    avro = "application/vnd.kafka.avro.v2+json"
    error(produce(client, {"records": [{"value": 1}]}, topic="missing", content_type=avro), 404, 40401)
    error(produce(client, {"records": [{"key": 1, "value": 1}], "value_schema": "int"}, content_type=avro), 422, 42201)
    error(produce(client, {"records": [{"value": 1}]}, content_type=avro), 422, 42202)
    answer = produce(client, {"records": [{"value": 1}], "value_schema": '"int"'}, content_type=avro)
    message = error(answer, 422, 42205)
    assert "Schema Registry" in message


@pytest.mark.parametrize("partition", [-1, 4, 2**31, 2**63, 2**64 - 1])
def test_partitions_out_of_range(client: TestClient, partition: int) -> None:
    error(produce(client, {"records": [{"value": 1, "partition": partition}]}), 404, 40402)


def test_path_partitions_must_be_plain_integers(client: TestClient) -> None:
    body = b'{"records":[{"value":1}]}'
    for text in ("x", "1_0", "%20", "\u0661", "9" * 50):
        answer = client.post(f"/topics/orders/partitions/{text}", content=body, headers={"Content-Type": JSON_V2})
        assert answer.status_code == 404 and answer.json()["error_code"] in (404, 40402), (text, answer.text)
