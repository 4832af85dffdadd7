"""Where the proxy once answered differently from Confluent's, it now answers as Confluent
does (see docs/rest-proxy.md's "Conformance" notes for where upstream products disagree and which
one is followed). Each test names the deviation it closes; all run against the session's
real proxy process and broker."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import orjson
import pytest
import requests
from proxy_http import AVRO_V2, JSON_V2, V2, error, post

from workbench import kafka
from workbench.stack import Stack


@pytest.fixture(scope="module")
def v3(http: requests.Session, proxy: str) -> str:
    cluster = http.get(f"{proxy}/v3/clusters").json()["data"][0]["cluster_id"]
    return f"{proxy}/v3/clusters/{cluster}"


@pytest.fixture
def instance(http: requests.Session, proxy: str, topic: Callable[..., str]) -> Iterator[tuple[str, str]]:
    """A json consumer instance assigned partition 0 of a fresh 2-partition topic: (base_uri, topic)."""
    name = topic(partitions=2)
    created = post(http, f"{proxy}/consumers/c-{uuid.uuid4().hex[:8]}", {"format": "json"})
    base = str(created.json()["base_uri"])
    assert post(http, f"{base}/assignments", {"partitions": [{"topic": name, "partition": 0}]}).status_code == 204
    yield base, name
    http.delete(base, timeout=30)


def test_commit_of_a_partition_the_instance_does_not_own_is_accepted(
    http: requests.Session, instance: tuple[str, str]
) -> None:
    """Was 409; Kafka takes commits for any partition of the group's topics."""
    base, name = instance
    answer = post(http, f"{base}/offsets", {"offsets": [{"topic": name, "partition": 1, "offset": 4}]})
    assert answer.status_code == 200, answer.text
    got = http.request(
        "GET",
        f"{base}/offsets",
        data=orjson.dumps({"partitions": [{"topic": name, "partition": 1}]}),
        headers={"Content-Type": V2},
        timeout=30,
    )
    assert got.json()["offsets"] == [{"topic": name, "partition": 1, "offset": 5, "metadata": ""}]


def test_commit_to_a_missing_topic_or_partition_is_404(http: requests.Session, instance: tuple[str, str]) -> None:
    """Was 409; upstream (Karapace, and Confluent's test expectations) answer 40401 / 40402."""
    base, name = instance
    error(
        post(http, f"{base}/offsets", {"offsets": [{"topic": f"absent-{name}", "partition": 0, "offset": 1}]}),
        404,
        40401,
    )
    error(post(http, f"{base}/offsets", {"offsets": [{"topic": name, "partition": 7, "offset": 1}]}), 404, 40402)


def test_committed_offsets_without_a_body_is_confluents_404(http: requests.Session, instance: tuple[str, str]) -> None:
    """Was 200 with every assigned partition; Confluent answers 404 / 40402 (odd but real)."""
    base, _ = instance
    error(http.get(f"{base}/offsets", timeout=30), 404, 40402)


def test_malformed_records_are_400(http: requests.Session, proxy: str, topic: Callable[..., str]) -> None:
    """Were 422; a body Jackson cannot map is 400 upstream."""
    name = topic()
    error(post(http, f"{proxy}/topics/{name}", {"records": "x"}, JSON_V2), 400, 400)
    error(post(http, f"{proxy}/topics/{name}", {"records": ["x"]}, JSON_V2), 400, 400)


def test_schema_checks_come_before_the_registry_answer(
    http: requests.Session, proxy: str, topic: Callable[..., str]
) -> None:
    """Were all 42205; upstream checks the topic (40401), then the schemas (42201 key, 42202 value)."""
    name = topic()
    error(post(http, f"{proxy}/topics/absent-{name}", {"records": [{"value": 1}]}, AVRO_V2), 404, 40401)
    error(
        post(http, f"{proxy}/topics/{name}", {"records": [{"key": 1, "value": 1}], "value_schema": '"int"'}, AVRO_V2),
        422,
        42201,
    )
    error(post(http, f"{proxy}/topics/{name}", {"records": [{"value": 1}]}, AVRO_V2), 422, 42202)
    # Then, without a registry, 42205 (the stack's proxies have one: test_restproxy_schema_formats.py).


def test_v3_topic_config_writes(http: requests.Session, v3: str, topic: Callable[..., str]) -> None:
    """Were 405: PUT and DELETE …/configs/NAME and POST …/configs:alter."""
    name = topic()
    config = f"{v3}/topics/{name}/configs"
    assert http.put(f"{config}/cleanup.policy", json={"value": "compact"}, timeout=30).status_code == 204
    assert http.get(f"{config}/cleanup.policy", timeout=30).json()["value"] == "compact"
    alter = {"data": [{"name": "retention.ms", "value": "60000"}, {"name": "cleanup.policy", "operation": "DELETE"}]}
    assert http.post(f"{config}:alter", json=alter, timeout=30).status_code == 204
    assert http.get(f"{config}/retention.ms", timeout=30).json()["value"] == "60000"
    assert http.delete(f"{config}/retention.ms", timeout=30).status_code == 204
    error(http.put(f"{config}/bad%00name", json={"value": "1"}, timeout=30), 400, 400)
    error(http.post(f"{config}:alter", json={"data": []}, timeout=30), 422, 42206)
    error(
        http.put(f"{v3}/topics/absent-{name}/configs/cleanup.policy", json={"value": "compact"}, timeout=30), 404, 40403
    )


def test_v3_topic_lifecycle_settles(http: requests.Session, v3: str, proxy: str) -> None:
    """create → get → delete → get answers 404 at once, through v3 and v2 alike."""
    for _ in range(5):
        name = f"settle-{uuid.uuid4().hex[:8]}"
        created = http.post(f"{v3}/topics", json={"topic_name": name, "partitions_count": 2}, timeout=30)
        assert created.status_code == 201, created.text
        assert http.get(f"{v3}/topics/{name}", timeout=30).status_code == 200
        started = time.monotonic()
        assert http.delete(f"{v3}/topics/{name}", timeout=30).status_code == 204
        error(http.get(f"{v3}/topics/{name}", timeout=30), 404, 40403)
        error(http.get(f"{proxy}/topics/{name}", timeout=30), 404, 40401)
        error(post(http, f"{proxy}/topics/{name}", {"records": [{"value": 1}]}, JSON_V2), 404, 40401)
        assert time.monotonic() - started < 60, "a hang, not a speed bound: each call answers at once"


def test_v3_charset_is_honoured_or_refused(
    http: requests.Session, v3: str, stack: Stack, topic: Callable[..., str]
) -> None:
    """Was: every body read as UTF-8 with bad bytes replaced. Now ISO-8859-1 is decoded as
    such, invalid UTF-8 is a 400 result, other charsets a 400 answer."""
    name = topic()
    url = f"{v3}/topics/{name}/records"
    latin = '{"value": {"type": "STRING", "data": "caf\u00e9"}}'.encode("iso-8859-1")
    answer = http.post(url, data=latin, headers={"Content-Type": "application/json; charset=ISO-8859-1"}, timeout=30)
    assert orjson.loads(answer.text.split("\r\n")[0])["error_code"] == 200
    broken = b'{"value": {"type": "STRING", "data": "caf\xe9"}}'
    answer = http.post(url, data=broken, headers={"Content-Type": "application/json; charset=UTF-8"}, timeout=30)
    assert orjson.loads(answer.text.split("\r\n")[0])["error_code"] == 400
    error(
        http.post(url, data=latin, headers={"Content-Type": "application/json; charset=UTF-16"}, timeout=30), 400, 400
    )
    values = [r.value for r in kafka.read_records(stack.kafka_config("consumer"), name)]
    assert values == ["café".encode()], "the Latin-1 record is stored as UTF-8 text; the broken one is not stored"


def test_v3_validate_only_writes_nothing(http: requests.Session, v3: str, stack: Stack) -> None:
    """Tansu creates a topic even on validate_only; the proxy answers 200 and leaves no topic behind."""
    name = f"validate-{uuid.uuid4().hex[:8]}"
    answer = http.post(
        f"{v3}/topics", json={"topic_name": name, "partitions_count": 3, "validate_only": True}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["partitions_count"] == 3
    assert name not in kafka.list_topics(stack.kafka_config("admin"))
    error(http.post(f"{v3}/topics", json={"topic_name": "bad name", "validate_only": True}, timeout=30), 400, 40002)
