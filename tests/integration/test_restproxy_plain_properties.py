"""A proxy started on its own: `workbench proxy --config FILE`, FILE holding only
`bootstrap.servers` and a listener, on the embedded Kafka and on Tansu.

The stack's proxies and the foreign cluster's get the project's `kafka-rest.properties`
and the command line's overrides; a user's own proxy may get nothing but the two
settings it cannot do without, and runs with librdkafka's defaults (a consumer's 45 s
session and 300 s poll interval). Each test starts its own such proxy and stops it by PID.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from proxy_http import JSON_V2, V2, error, post
from proxy_processes import ProxyProcess, start_plain_proxy

from workbench import kafka
from workbench.stack import Stack


@pytest.fixture(params=["kafka", "tansu"])
def plain_proxy(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[ProxyProcess, dict[str, Any]]]:
    """(a proxy started from a plain properties file, admin settings) on the embedded Kafka
    and on the foreign Tansu; the proxy is stopped by PID after the test."""
    if request.param == "kafka":
        stack: Stack = request.getfixturevalue("stack")
        bootstrap, conf = stack.bootstrap_servers, stack.kafka_config("admin")
    else:
        foreign = request.getfixturevalue("foreign_cluster")
        bootstrap = foreign.bootstrap_servers
        conf = {"bootstrap.servers": bootstrap, "allow.auto.create.topics": False}
    proxy = start_plain_proxy(bootstrap, tmp_path)
    try:
        yield proxy, conf
    finally:
        proxy.stop()


def test_a_deleted_topic_is_404_at_once(plain_proxy: tuple[ProxyProcess, dict[str, Any]]) -> None:
    """DELETE is 204, and the next GET of the topic is 404 on v3 (40403, as Confluent's v3
    answers an unknown topic) and on v2 (40401), while the proxy's producer and a consumer
    instance still know the topic; the DELETE returned because the metadata showed the
    topic gone, not because its wait ran out."""
    proxy, conf = plain_proxy
    name = kafka.create_topic(conf, f"plain-{uuid.uuid4().hex[:10]}", 2)
    http = requests.Session()
    cluster = http.get(f"{proxy.url}/v3/clusters").json()["data"][0]["cluster_id"]
    url = f"{proxy.url}/v3/clusters/{cluster}/topics/{name}"
    instance = post(http, f"{proxy.url}/consumers/plain-{uuid.uuid4().hex[:8]}", {"format": "json"}).json()
    try:
        assert http.get(url).json()["partitions_count"] == 2
        produced = post(http, f"{proxy.url}/topics/{name}", {"records": [{"value": 1, "partition": 0}]}, JSON_V2)
        assert produced.status_code == 200 and produced.json()["offsets"][0]["error_code"] is None, produced.text
        assigned = post(http, f"{instance['base_uri']}/assignments", {"partitions": [{"topic": name, "partition": 0}]})
        assert assigned.status_code == 204, assigned.text

        deleted = http.delete(url)
        assert deleted.status_code == 204, deleted.text
        error(http.get(url), 404, 40403)
        error(http.get(f"{proxy.url}/topics/{name}", headers={"Accept": V2}), 404, 40401)
        assert name not in kafka.list_topics(conf)
        assert f"topics {name} to disappear" not in proxy.log.read_text(errors="replace"), proxy.log_tail()
        assert proxy.alive(), proxy.log_tail()
    finally:
        http.delete(instance["base_uri"], headers={"Content-Type": V2})
        kafka.delete_topics(conf, [name])
