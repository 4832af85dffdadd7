"""Faults a new user found (issue 25), each closed on Apache Kafka and on Tansu.

- a commit whose `metadata` holds NUL was a 500: it is the 422 of any bad commit body;
- a v3 topic config's `source` after a PUT read `"5"`: it is Confluent's name;
- a v3 GET right after a topic's DELETE still found it: it is 404 / 40403, as v3 answers an unknown topic.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import requests
from proxy_http import V2

from workbench import kafka
from workbench.stack import Stack


@pytest.fixture(params=["kafka", "tansu"])
def target(request: pytest.FixtureRequest) -> Iterator[tuple[str, dict[str, Any]]]:
    """(proxy URL, admin settings) on the embedded Kafka and on the foreign Tansu."""
    if request.param == "kafka":
        stack: Stack = request.getfixturevalue("stack")
        yield stack.proxy_urls[0], stack.kafka_config("admin")
    else:
        foreign = request.getfixturevalue("foreign_cluster")
        yield foreign.proxy_urls[0], {"bootstrap.servers": foreign.bootstrap_servers}


def _topic(conf: dict[str, Any]) -> str:
    return kafka.create_topic(conf, f"found-{uuid.uuid4().hex[:10]}", 1)


def test_commit_metadata_with_nul_is_a_422_not_a_500(target: tuple[str, dict[str, Any]]) -> None:
    proxy, conf = target
    name = _topic(conf)
    http = requests.Session()
    group = f"found-{uuid.uuid4().hex[:8]}"
    created = http.post(
        f"{proxy}/consumers/{group}", data=orjson.dumps({"format": "json"}), headers={"Content-Type": V2}
    )
    base = created.json()["base_uri"]
    try:
        body = {"offsets": [{"topic": name, "partition": 0, "offset": 0, "metadata": "a\u0000b"}]}
        answer = http.post(f"{base}/offsets", data=orjson.dumps(body), headers={"Content-Type": V2})
        assert answer.status_code == 422 and answer.json()["error_code"] == 422, answer.text
        assert "NUL" in answer.json()["message"]
        body["offsets"][0]["metadata"] = "fine"
        assert http.post(f"{base}/offsets", data=orjson.dumps(body), headers={"Content-Type": V2}).status_code == 200
    finally:
        http.delete(base, headers={"Content-Type": V2})
        kafka.delete_topics(conf, [name])


def test_a_config_source_is_named_as_confluent_names_it(target: tuple[str, dict[str, Any]]) -> None:
    proxy, conf = target
    name = _topic(conf)
    try:
        cluster = requests.get(f"{proxy}/v3/clusters").json()["data"][0]["cluster_id"]
        url = f"{proxy}/v3/clusters/{cluster}/topics/{name}/configs/retention.ms"
        put = requests.put(url, json={"value": "86400000"})
        if put.status_code == 204:
            source = requests.get(url).json()["source"]
            assert source in ("DYNAMIC_TOPIC_CONFIG", "UNKNOWN_CONFIG", "DEFAULT_CONFIG"), source
        listed = requests.get(f"{proxy}/v3/clusters/{cluster}/topics/{name}/configs").json()["data"]
        assert all(not str(c["source"]).isdigit() for c in listed)
        assert all(not str(s["source"]).isdigit() for c in listed for s in c["synonyms"])
    finally:
        kafka.delete_topics(conf, [name])


def test_a_deleted_topic_is_404_at_once(target: tuple[str, dict[str, Any]]) -> None:
    proxy, conf = target
    name = _topic(conf)
    cluster = requests.get(f"{proxy}/v3/clusters").json()["data"][0]["cluster_id"]
    url = f"{proxy}/v3/clusters/{cluster}/topics/{name}"
    assert requests.get(url).status_code == 200
    assert requests.delete(url).status_code == 204
    gone = requests.get(url)
    assert gone.status_code == 404 and gone.json()["error_code"] == 40403, gone.text  # v3: Confluent's code
