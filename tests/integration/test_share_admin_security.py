"""The share-group admin client (`workbench.kafka.share_admin`) on TLS and SASL listeners of
a real broker (`secured_broker`): PLAIN, SCRAM-SHA-256 and -512, TLS with and without SASL;
wrong passwords and untrusted certificates refused in one line; and the proxy's v3 GETs in
the cluster's view on SASL, in its own process's view where the settings ask for a
mechanism the client does not speak (OAUTHBEARER); the raw Metadata size on them."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from confluent_kafka import ShareConsumer
from confluent_kafka.admin import AdminClient, NewTopic
from proxy_http import error, post
from proxy_processes import start_proxy
from secured_broker import PASSWORD, USER, SecuredBroker, secured_broker

from workbench.errors import KafkaError
from workbench.kafka.metadata import fetch_metadata
from workbench.kafka.security import Security
from workbench.kafka.share_admin import ShareGroupAdmin
from workbench.kafka.wire import parse_servers
from workbench.topics.count_cost import metadata_cost

TOPIC = "secured-jobs"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredBroker]:
    with secured_broker(tmp_path_factory.mktemp("secured-broker")) as node:
        admin = AdminClient({"bootstrap.servers": node.plaintext})
        admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(30)
        yield node


@pytest.fixture(scope="module")
def group(broker: SecuredBroker) -> Iterator[str]:
    """A share group with one member (joined over PLAINTEXT), seen by the cluster."""
    name = f"secured-{uuid.uuid4().hex[:8]}"
    member = ShareConsumer({"bootstrap.servers": broker.plaintext, "group.id": name})
    try:
        member.subscribe([TOPIC])
        open_view = ShareGroupAdmin(broker.plaintext)
        deadline = time.monotonic() + 60
        while not _assigned(open_view, name):
            assert time.monotonic() < deadline, "the member never got its partitions"
            member.poll(0.2)
        yield name
    finally:
        member.close()


def _assigned(admin: ShareGroupAdmin, group: str) -> bool:
    found = admin.describe_groups([group]).get(group)
    return found is not None and found.partitions == [(TOPIC, 0), (TOPIC, 1)]


def _sasl(mechanism: str, password: str = PASSWORD, protocol: str = "SASL_PLAINTEXT") -> dict[str, str]:
    return {
        "security.protocol": protocol,
        "sasl.mechanism": mechanism,
        "sasl.username": USER,
        "sasl.password": password,
    }


@pytest.mark.parametrize(
    "listener, conf",
    [
        ("sasl_plaintext", _sasl("PLAIN")),
        ("sasl_plaintext", _sasl("SCRAM-SHA-256")),
        ("sasl_plaintext", _sasl("SCRAM-SHA-512")),
        ("sasl_ssl", _sasl("SCRAM-SHA-256", protocol="SASL_SSL")),
        ("ssl", {"security.protocol": "SSL"}),
    ],
    ids=["plain", "scram-sha-256", "scram-sha-512", "sasl-ssl", "ssl"],
)
def test_the_admin_client_lists_and_describes_share_groups_on_secured_listeners(
    broker: SecuredBroker, group: str, listener: str, conf: dict[str, str]
) -> None:
    if "SSL" in conf["security.protocol"]:
        conf = {**conf, "ssl.ca.location": str(broker.ca)}
    admin = ShareGroupAdmin(getattr(broker, listener), security=Security.from_conf(conf))
    assert group in admin.list_groups()
    described = admin.describe_group(group)
    assert len(described.members) == 1 and described.partitions == [(TOPIC, 0), (TOPIC, 1)]
    # The cluster's metadata, asked on this listener, names the brokers on it: every call went there.
    assert described.coordinator is not None and described.coordinator.port == int(
        getattr(broker, listener).split(":")[1]
    )


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_a_wrong_password_is_the_brokers_refusal_in_one_line(broker: SecuredBroker, mechanism: str) -> None:
    admin = ShareGroupAdmin(broker.sasl_plaintext, security=Security.from_conf(_sasl(mechanism, "wrong")), timeout_s=5)
    with pytest.raises(KafkaError) as refused:
        admin.list_groups()
    assert refused.value.code == "SASL_AUTHENTICATION_FAILED"
    assert f"refused SASL {mechanism} for user 'alice'" in str(refused.value) and "\n" not in str(refused.value)


def test_a_mechanism_the_listener_does_not_offer_is_named_with_those_it_does(broker: SecuredBroker) -> None:
    conf = {**_sasl("PLAIN", protocol="SASL_SSL"), "ssl.ca.location": str(broker.ca)}
    with pytest.raises(KafkaError, match=r"does not offer SASL PLAIN \(it offers SCRAM-SHA-256\)"):
        ShareGroupAdmin(broker.sasl_ssl, security=Security.from_conf(conf), timeout_s=5).list_groups()


def test_an_untrusted_certificate_ends_the_handshake(broker: SecuredBroker) -> None:
    admin = ShareGroupAdmin(broker.ssl, security=Security.from_conf({"security.protocol": "SSL"}), timeout_s=5)
    with pytest.raises(KafkaError, match=r"TLS handshake with broker .* failed: .*certificate verify failed"):
        admin.list_groups()
    trusting = Security.from_conf({"security.protocol": "SSL", "enable.ssl.certificate.verification": "false"})
    assert ShareGroupAdmin(broker.ssl, security=trusting).list_groups()


@pytest.mark.parametrize("listener, says", [("ssl", "a listener that wants TLS"), ("sasl_plaintext", "did not log in")])
def test_plaintext_spoken_to_a_secured_listener_fails_in_one_line(
    broker: SecuredBroker, listener: str, says: str
) -> None:
    with pytest.raises(KafkaError) as failed:
        ShareGroupAdmin(getattr(broker, listener), timeout_s=5).list_groups()
    assert "\n" not in str(failed.value) and says in str(failed.value)


@pytest.mark.parametrize(
    "listener, conf",
    [("sasl_plaintext", _sasl("SCRAM-SHA-512")), ("ssl", {"security.protocol": "SSL"})],
    ids=["scram", "ssl"],
)
def test_the_raw_metadata_size_is_measured_on_secured_listeners(
    broker: SecuredBroker, listener: str, conf: dict[str, str]
) -> None:
    """`metadata_cost` sizes the Metadata answer there too (it gave librdkafka's time only)."""
    if conf["security.protocol"] == "SSL":
        conf = {**conf, "ssl.ca.location": str(broker.ca)}
    (address,) = parse_servers(getattr(broker, listener))
    answer = fetch_metadata(address, timeout=30, security=Security.from_conf(conf))
    assert {t.name: t.partitions for t in answer.response.topics}[TOPIC] == (0, 1)
    assert [(b.host, b.port) for b in answer.response.brokers] == [(address.host, address.port)]
    cost = metadata_cost({"bootstrap.servers": getattr(broker, listener), **conf}, repeats=1)
    assert cost["metadata_bytes"] == answer.size_bytes and cost["list_topics_s"] is not None


def _proxy_env(mechanism: dict[str, str]) -> dict[str, str]:
    return {"KAFKA_REST_CLIENT_" + key.upper().replace(".", "_"): value for key, value in mechanism.items()}


def _members_view(url: str, group: str) -> tuple[str, list[dict[str, Any]]]:
    cluster = requests.get(f"{url}/v3/clusters", timeout=30).json()["data"][0]["cluster_id"]
    answer = requests.get(f"{url}/v3/clusters/{cluster}/share-groups/{group}/consumers", timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.headers["X-Share-Groups-View"], answer.json()["data"]


def _instance(url: str, group: str, name: str) -> None:
    http = requests.Session()
    assert post(http, f"{url}/share-consumers/{group}", {"name": name}).status_code == 200
    base = f"{url}/share-consumers/{group}/instances/{name}"
    assert post(http, f"{base}/subscription", {"topics": [TOPIC]}).status_code == 204
    assert http.get(f"{base}/records?timeout=200", headers={"Accept": "application/vnd.kafka.binary.v2+json"}).ok


def test_the_proxys_v3_gets_show_the_cluster_over_sasl_and_their_own_members_past_it(
    broker: SecuredBroker, group: str, tmp_path: Path
) -> None:
    """On SCRAM the proxy's GETs list every member of the group (the one joined over
    PLAINTEXT and the proxy's own); on OAUTHBEARER, which librdkafka speaks and the
    protocol client does not, they list this process's member only and say why."""
    scram = start_proxy(broker.sasl_plaintext, tmp_path, **_proxy_env(_sasl("SCRAM-SHA-512")))
    oauth_conf = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "enable.sasl.oauthbearer.unsecure.jwt": "true",
        "sasl.oauthbearer.config": "principal=admin",
    }
    oauth = start_proxy(broker.sasl_plaintext, tmp_path, **_proxy_env(oauth_conf))
    try:
        _instance(scram.url, group, "over-scram")
        _instance(oauth.url, group, "over-oauth")
        deadline = time.monotonic() + 60
        while True:
            view, members = _members_view(scram.url, group)
            if len(members) == 3 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert view == "cluster" and len(members) == 3
        assert sorted(m["client_id"].rsplit("-", 1)[-1] for m in members if "over" in m["client_id"]) == [
            "oauth",
            "scram",
        ]
        view, members = _members_view(oauth.url, group)
        assert view.startswith("process; sasl.mechanism is OAUTHBEARER")
        assert [m["consumer_id"] for m in members] == ["over-oauth"]
        _check_process_view(oauth.url, group)
    finally:
        scram.stop()
        oauth.stop()


def _check_process_view(url: str, group: str) -> None:
    """The other GETs of a process's own view: its group, the member, its assignments, and
    a group it has no member in."""
    cluster = requests.get(f"{url}/v3/clusters", timeout=30).json()["data"][0]["cluster_id"]
    base = f"{url}/v3/clusters/{cluster}/share-groups"
    mine = [g for g in requests.get(base, timeout=30).json()["data"] if g["share_group_id"] == group]
    assert len(mine) == 1 and mine[0]["consumer_count"] == 1
    assert mine[0]["coordinator"]["related"] == f"{url}/v3/clusters/{cluster}/brokers"
    one = requests.get(f"{base}/{group}/consumers/over-oauth", timeout=30).json()
    assert one["kind"] == "KafkaShareGroupConsumer" and one["assignments"]["related"].endswith(
        "/over-oauth/assignments"
    )
    assignments = requests.get(f"{base}/{group}/consumers/over-oauth/assignments", timeout=30).json()
    assert assignments["kind"] == "KafkaShareGroupConsumerAssignmentList"
    assert "no member in it" in error(requests.get(f"{base}/nobody-{uuid.uuid4().hex}", timeout=30), 404, 404)
