"""The share-group admin client (`workbench.kafka.share_admin`) against the session's Kafka:
listed and described as the cluster knows them, a group that is not there, hostile ids,
and peers that are not Kafka (nothing listening, garbage, silence) ending in one error
within the deadline, never a hang."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from confluent_kafka import ShareConsumer

from workbench import kafka
from workbench.errors import KafkaError
from workbench.kafka.share_admin import ShareGroupAdmin, ShareGroupNotFound, ShareGroupsUnsupported
from workbench.kafka.wire import KafkaProtocolError
from workbench.stack import Stack
from workbench.topics.share_groups import configure_share_group, share_consumer_conf

GIVE_UP_S = 60.0


@contextmanager
def members(stack: Stack, group: str, topic: str, count: int) -> Iterator[list[str]]:
    """`count` native share members of `group` polling `topic` in threads; their client ids."""
    stop = threading.Event()
    ids = [f"admin-test-{uuid.uuid4().hex[:6]}" for _ in range(count)]

    def poll(client_id: str) -> None:
        conf = {**share_consumer_conf(stack, group), "client.id": client_id, "share.acknowledgement.mode": "implicit"}
        member = ShareConsumer(conf)
        member.subscribe([topic])
        while not stop.is_set():
            member.poll(0.2)
        member.close()

    threads = [threading.Thread(target=poll, args=(client_id,)) for client_id in ids]
    for thread in threads:
        thread.start()
    try:
        yield ids
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)


def _until(check: Any) -> Any:
    deadline = time.monotonic() + GIVE_UP_S
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"not within {GIVE_UP_S:.0f} s")


def test_a_share_group_is_listed_and_described_with_each_member_and_its_partitions(stack: Stack, topic: Any) -> None:
    name = topic(partitions=4, prefix="share-admin")
    group = f"share-admin-{uuid.uuid4().hex[:8]}"
    configure_share_group(stack, group)
    admin = ShareGroupAdmin(stack.bootstrap_servers)
    with members(stack, group, name, 2) as client_ids:

        def settled() -> Any:
            described = admin.describe_groups([group]).get(group)
            if described is None or len(described.members) < 2 or len(described.partitions) < 4:
                return None
            return described

        described = _until(settled)
        assert group in admin.list_groups()
    assert described.group_id == group and described.state == "Stable"
    assert sorted(m.client_id for m in described.members) == sorted(client_ids)
    assert described.partitions == [(name, p) for p in range(4)]
    assert all(m.subscribed_topics == (name,) and m.member_id and m.member_epoch > 0 for m in described.members)
    assert described.coordinator is not None and described.coordinator.port > 0
    # a share group's members may share a partition: every member holds some, together all 4
    assert all(m.assignment for m in described.members)


def test_a_group_that_is_not_there_or_not_a_share_group_is_not_found(stack: Stack, topic: Any) -> None:
    admin = ShareGroupAdmin(stack.bootstrap_servers)
    with pytest.raises(ShareGroupNotFound):
        admin.describe_group(f"nobody-{uuid.uuid4().hex}")
    classic = f"classic-{uuid.uuid4().hex[:8]}"
    name = topic(partitions=1, prefix="share-admin-classic")
    kafka.produce(stack.kafka_config("producer"), name, [(None, b"x")])
    with kafka.consumer(
        stack.kafka_config("consumer"), settings={"group.id": classic, "auto.offset.reset": "earliest"}
    ) as consumer:
        consumer.subscribe([name])
        _until(lambda: consumer.poll(0.5))
        consumer.commit(asynchronous=False)
        with pytest.raises(ShareGroupNotFound):
            admin.describe_group(classic)
        assert classic not in admin.list_groups()


def test_hostile_group_ids_answer_not_found_or_one_error(stack: Stack) -> None:
    admin = ShareGroupAdmin(stack.bootstrap_servers)
    for hostile in ["", "a\x00b", "\u202e\U0001f600" * 100, "x" * 255]:
        with pytest.raises(ShareGroupNotFound):
            admin.describe_group(hostile)
    with pytest.raises(KafkaError, match=r"\(32767 characters\)"):  # the broker refuses it; the id is cut
        admin.describe_group("x" * 32767)
    with pytest.raises(KafkaError, match="longer than Kafka takes"):
        admin.describe_group("x" * 32768)
    many = [f"nobody-{i}-{uuid.uuid4().hex[:6]}" for i in range(250)]  # three ShareGroupDescribe batches
    assert admin.describe_groups(many) == {}


def _serve_once(answer: bytes | None) -> tuple[int, threading.Thread]:
    """A local TCP server for one connection: it sends `answer` (None: nothing) and waits."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        with listener:
            listener.settimeout(10)
            try:
                peer, _ = listener.accept()
            except TimeoutError:
                return
            with peer:
                peer.recv(4096)
                if answer is not None:
                    peer.sendall(answer)
                time.sleep(3)

    thread = threading.Thread(target=serve)
    thread.start()
    return port, thread


@pytest.mark.parametrize(
    "answer",
    [None, b"\x7f\xff\xff\xff", b"\x00\x00\x00\x08\x00\x00\x00\x63garbage", b"\x00\x00\x00\x10short"],
    ids=["silent", "a 2 GB frame", "another correlation id", "closed mid-answer"],
)
def test_a_peer_that_is_not_kafka_ends_in_one_error_within_the_deadline(answer: bytes | None) -> None:
    port, thread = _serve_once(answer)
    admin = ShareGroupAdmin(f"127.0.0.1:{port}", timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(KafkaProtocolError):
        admin.list_groups()
    assert time.monotonic() - started < 5
    thread.join()


def test_nothing_listening_and_a_scheme_that_is_not_kafkas_are_refused_in_one_line() -> None:
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    with pytest.raises(KafkaProtocolError, match="cannot connect"):
        ShareGroupAdmin(f"127.0.0.1:{port}", timeout_s=2).list_groups()
    with pytest.raises(KafkaProtocolError, match="HTTP is not a Kafka security protocol"):
        ShareGroupAdmin("HTTP://127.0.0.1:9093")


def test_a_broker_without_share_groups_is_unsupported(foreign_cluster: Any) -> None:
    """Tansu lists no ShareGroupDescribe: one ShareGroupsUnsupported, on both calls."""
    admin = ShareGroupAdmin(foreign_cluster.bootstrap_servers)
    with pytest.raises(ShareGroupsUnsupported, match="no share groups"):
        admin.list_groups()
    with pytest.raises(ShareGroupsUnsupported):
        admin.describe_group("g")
