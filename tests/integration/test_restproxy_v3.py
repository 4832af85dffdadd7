"""API v3 (clusters, topics, partitions, configs, consumer groups, streaming produce)."""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest
import requests
from proxy_http import JSON_V2, V2, error

from workbench import kafka
from workbench.stack import Stack


@pytest.fixture(scope="module")
def cluster(proxy: str) -> str:
    clusters = requests.get(f"{proxy}/v3/clusters").json()
    assert clusters["kind"] == "KafkaClusterList" and len(clusters["data"]) == 1
    return str(clusters["data"][0]["cluster_id"])


@pytest.fixture
def http() -> requests.Session:
    """A session of each test's own, where the conftest's is one per module: as these tests always had."""
    return requests.Session()


def test_cluster(http: requests.Session, proxy: str, cluster: str) -> None:
    body = http.get(f"{proxy}/v3/clusters/{cluster}").json()
    assert body["kind"] == "KafkaCluster" and body["cluster_id"] == cluster
    assert body["metadata"]["self"] == f"{proxy}/v3/clusters/{cluster}"
    assert body["topics"]["related"] == f"{proxy}/v3/clusters/{cluster}/topics"
    error(http.get(f"{proxy}/v3/clusters/not-this-one"), 404, 404)
    assert http.get(f"{proxy}/kafka/v3/clusters/{cluster}").status_code == 200


def test_topic_lifecycle(stack: Stack, http: requests.Session, proxy: str, cluster: str) -> None:
    name = f"v3-{uuid.uuid4().hex[:8]}"
    base = f"{proxy}/v3/clusters/{cluster}/topics"
    error(http.post(base, data=b"", headers={"Content-Type": "application/json"}), 422, 42206)
    created = http.post(base, json={"topic_name": name, "partitions_count": 3})
    assert created.status_code == 201, created.text
    assert created.headers["location"] == f"{base}/{name}"
    assert created.json()["partitions_count"] == 3
    error(http.post(base, json={"topic_name": name, "partitions_count": 3}), 400, 40002)

    listed = http.get(base).json()
    names = [t["topic_name"] for t in listed["data"]]
    assert name in names and names == sorted(names)
    topic = http.get(f"{base}/{name}").json()
    assert (topic["kind"], topic["topic_name"], topic["partitions_count"]) == ("KafkaTopic", name, 3)
    partitions = http.get(f"{base}/{name}/partitions").json()["data"]
    assert [p["partition_id"] for p in partitions] == [0, 1, 2]
    assert http.get(f"{base}/{name}/partitions/2").json()["partition_id"] == 2
    error(http.get(f"{base}/{name}/partitions/9"), 404, 40402)
    configs = http.get(f"{base}/{name}/configs").json()
    assert configs["kind"] == "KafkaTopicConfigList" and isinstance(configs["data"], list)

    assert http.delete(f"{base}/{name}").status_code == 204
    assert name not in kafka.list_topics(stack.kafka_config("admin"))
    defaults = http.post(base, json={"topic_name": f"{name}-defaults"})  # the broker's defaults fill the rest
    assert defaults.status_code == 201 and defaults.json()["partitions_count"] >= 1
    assert http.delete(f"{base}/{name}-defaults").status_code == 204
    error(http.get(f"{base}/{name}"), 404, 40403)
    error(http.delete(f"{base}/{name}"), 404, 40403)


def test_streaming_produce_returns_one_result_per_record(
    stack: Stack, http: requests.Session, proxy: str, cluster: str, topic: Callable[..., str]
) -> None:
    name = topic(partitions=2)
    n = 300
    lines: list[dict[str, Any]] = [{"value": {"type": "JSON", "data": {"i": i}}} for i in range(n)]
    lines[5] = {
        "key": {"type": "STRING", "data": "k"},
        "value": {"type": "BINARY", "data": "aGk="},
        "partition_id": 1,
        "headers": [{"name": "h", "value": "dg=="}],
    }

    def chunks() -> Iterator[bytes]:  # a chunked upload, several objects per chunk, split mid-object too
        body = b"\n".join(orjson.dumps(line) for line in lines)
        for start in range(0, len(body), 777):
            yield body[start : start + 777]

    response = http.post(
        f"{proxy}/v3/clusters/{cluster}/topics/{name}/records",
        data=chunks(),
        headers={"Content-Type": "application/json"},
        stream=True,
    )
    assert response.status_code == 200
    results = [orjson.loads(line) for line in response.iter_lines() if line.strip()]
    assert len(results) == n
    assert all(r["error_code"] == 200 and r["topic_name"] == name for r in results)
    assert results[5]["partition_id"] == 1 and results[5]["key"] == {"type": "STRING", "size": 1}
    stored = list(kafka.read_records(stack.kafka_config("consumer"), name))
    assert len(stored) == n
    assert {(r.partition, r.offset) for r in stored} == {(r["partition_id"], r["offset"]) for r in results}


def test_streaming_produce_errors(http: requests.Session, proxy: str, cluster: str, topic: Callable[..., str]) -> None:
    name = topic(partitions=1)
    url = f"{proxy}/v3/clusters/{cluster}/topics/{name}/records"
    json_type = {"Content-Type": "application/json"}
    error(http.post(url, data=b"  ", headers=json_type), 422, 42206)
    error(http.post(url, data=b"{}", headers={"Content-Type": "text/plain"}), 415, 415)
    error(http.post(f"{proxy}/v3/clusters/{cluster}/topics/missing/records", data=b"{}", headers=json_type), 404, 40401)
    body = (
        b"".join(
            orjson.dumps(r)
            for r in [
                {"value": {"type": "BINARY", "data": "%%%"}},
                {"value": {"type": "JSON", "data": 1}, "partition_id": 4},
                {"value": {"type": "AVRO", "data": 1}},
                {"value": {"type": "JSON", "data": 2}},
            ]
        )
        + b'{"value": nonsense} {"value": {"type": "JSON", "data": 3}}'
    )
    results = [orjson.loads(line) for line in http.post(url, data=body, headers=json_type).iter_lines() if line]
    assert [r["error_code"] for r in results] == [400, 40402, 422, 200, 400], "a parse error ends the stream"
    not_a_list = b"".join(orjson.dumps({"headers": h, "value": {"type": "JSON", "data": 1}}) for h in (True, 5, "x"))
    results = [orjson.loads(line) for line in http.post(url, data=not_a_list, headers=json_type).iter_lines() if line]
    assert [r["error_code"] for r in results] == [400, 400, 400], results  # `true` was a TypeError (schemathesis)


def test_consumer_groups_and_lag(http: requests.Session, proxy: str, cluster: str, topic: Callable[..., str]) -> None:
    name, group = topic(partitions=1), f"g-{uuid.uuid4().hex[:8]}"
    v2 = {"Content-Type": V2}
    produced = http.post(
        f"{proxy}/topics/{name}",
        data=orjson.dumps({"records": [{"value": i} for i in range(30)]}),
        headers={"Content-Type": JSON_V2},
    )
    assert produced.status_code == 200
    base = http.post(f"{proxy}/consumers/{group}", data=b"{}", headers=v2).json()["base_uri"]
    assert (
        http.post(
            f"{base}/assignments", data=orjson.dumps({"partitions": [{"topic": name, "partition": 0}]}), headers=v2
        ).status_code
        == 204
    )
    commit = {"offsets": [{"topic": name, "partition": 0, "offset": 9}]}
    assert http.post(f"{base}/offsets", data=orjson.dumps(commit), headers=v2).status_code == 200

    groups = f"{proxy}/v3/clusters/{cluster}/consumer-groups"
    deadline = time.monotonic() + 10
    while group not in [g["consumer_group_id"] for g in http.get(groups).json()["data"]]:
        assert time.monotonic() < deadline, "the group is listed once it has committed"
        time.sleep(0.2)
    assert http.get(f"{groups}/{group}").json()["consumer_group_id"] == group
    lags = http.get(f"{groups}/{group}/lags").json()["data"]
    assert [(r["topic_name"], r["current_offset"], r["log_end_offset"], r["lag"]) for r in lags] == [(name, 10, 30, 20)]
    summary = http.get(f"{groups}/{group}/lag-summary").json()
    assert (summary["total_lag"], summary["max_lag"], summary["max_lag_topic_name"]) == (20, 20, name)
    error(http.get(f"{groups}/no-such-group-{uuid.uuid4().hex[:6]}"), 404, 404)
    assert http.delete(base).status_code == 204


def test_base_uri_names_the_instance_not_the_host_header(http: requests.Session, proxy: str) -> None:
    host = urlsplit(proxy)
    response = http.post(
        f"{proxy}/consumers/g-{uuid.uuid4().hex[:6]}",
        data=b"{}",
        headers={"Content-Type": V2, "Host": "balancer.example:80"},
    )
    base = response.json()["base_uri"]
    assert urlsplit(base).netloc == host.netloc
    assert http.delete(base).status_code == 204
    assert socket.gethostbyname(host.hostname or "") == "127.0.0.1", "bound to loopback by default"
