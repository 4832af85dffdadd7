"""Topic administration. Topics are always created explicitly, never by a first produce.

On the embedded broker a topic auto-created by a produce loses records (20 produced,
20 acknowledged, 10 readable), so every experiment creates its topics here first, and
the profiles set `allow.auto.create.topics=false` for every client.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from workbench.errors import KafkaError

if TYPE_CHECKING:
    from workbench.config import KafkaConf

__all__ = [
    "PartitionInfo",
    "TopicInfo",
    "admin_client",
    "broker_answers",
    "create_topic",
    "create_topics",
    "delete_topics",
    "describe_topic",
    "list_topics",
]

log = logging.getLogger("workbench.kafka")


@dataclass(frozen=True)
class PartitionInfo:
    """One partition as the cluster's metadata describes it."""

    id: int
    leader: int
    replicas: tuple[int, ...]


@dataclass(frozen=True)
class TopicInfo:
    """A topic and its partitions."""

    name: str
    partitions: tuple[PartitionInfo, ...]


def admin_client(conf: KafkaConf) -> AdminClient:
    """An AdminClient whose librdkafka log lines go to the `workbench.kafka` logger.

    Use it as a context manager (`with admin_client(conf) as client:`), which destroys it
    in the calling thread. A client left to the garbage collector may be destroyed by a
    collection that runs in one of librdkafka's own threads (a future's callback), which
    aborts or crashes the process (confluent-kafka-python #1761, #2129); a segfault in a
    test worker's `list_offsets` was one such crash."""
    return AdminClient({**conf, "logger": log})  # type: ignore[dict-item]  # librdkafka takes a logger


def broker_answers(bootstrap_servers: str, timeout: float = 1.0, conf: KafkaConf | None = None) -> bool:
    """True when a broker answers a Metadata request within `timeout` seconds."""
    with admin_client({**(conf or {}), "bootstrap.servers": bootstrap_servers}) as client:
        try:
            client.list_topics(timeout=timeout)
            return True
        except KafkaException:
            return False


def create_topics(
    conf: KafkaConf,
    topics: Mapping[str, int],
    *,
    replication_factor: int = 1,
    config: Mapping[str, str] | None = None,
    exist_ok: bool = False,
    timeout: float = 30.0,
) -> None:
    """Create topics `{name: partitions}` and wait until the broker has them.

    Raises:
        KafkaError: a topic exists (unless `exist_ok`), or the broker refused it.
    """
    new = [
        NewTopic(name, num_partitions=partitions, replication_factor=replication_factor, config=dict(config or {}))
        for name, partitions in topics.items()
    ]
    if not new:
        return
    with admin_client(conf) as client:  # it must outlive the futures, or they fail as 'terminating'
        futures = client.create_topics(new, operation_timeout=timeout, request_timeout=timeout)
        _settle(futures, "create", "TOPIC_ALREADY_EXISTS" if exist_ok else None)


def create_topic(conf: KafkaConf, name: str, partitions: int = 1, **kwargs: object) -> str:
    """Create one topic; returns its name so it can be used inline. See `create_topics`."""
    create_topics(conf, {name: partitions}, **kwargs)  # type: ignore[arg-type]
    return name


def delete_topics(conf: KafkaConf, names: Iterable[str], *, missing_ok: bool = True, timeout: float = 30.0) -> None:
    """Delete topics; the embedded broker keeps data in memory, so this frees it."""
    names = list(names)
    if not names:
        return
    with admin_client(conf) as client:  # it must outlive the futures
        futures = client.delete_topics(names, operation_timeout=timeout, request_timeout=timeout)
        _settle(futures, "delete", "UNKNOWN_TOPIC_OR_PART" if missing_ok else None)


def _settle(futures: Mapping[str, Any], action: str, tolerated: str | None) -> None:
    """Wait for each topic's future; an error named `tolerated` is no error, any other a KafkaError."""
    for name, future in futures.items():
        try:
            future.result()
        except KafkaException as exc:
            error = exc.args[0]
            if error.name() != tolerated:
                raise KafkaError(f"cannot {action} topic {name!r}: {error.str()}", error.name()) from None


def list_topics(conf: KafkaConf, *, internal: bool = False, timeout: float = 10.0) -> list[str]:
    """Topic names, sorted; internal ones (`__consumer_offsets`...) only when asked."""
    metadata = _metadata(conf, None, timeout)
    return sorted(t for t in metadata.topics if internal or not t.startswith("__"))


def describe_topic(conf: KafkaConf, name: str, *, timeout: float = 10.0) -> TopicInfo:
    """A topic's partitions with leader and replicas.

    Raises:
        KafkaError: the topic does not exist.
    """
    topic = _metadata(conf, name, timeout).topics.get(name)
    if topic is None or topic.error is not None:
        reason = topic.error.str() if topic is not None and topic.error else "unknown topic"
        raise KafkaError(f"cannot describe topic {name!r}: {reason}", "UNKNOWN_TOPIC_OR_PART")
    partitions = tuple(
        PartitionInfo(id=p.id, leader=p.leader, replicas=tuple(p.replicas))
        for p in sorted(topic.partitions.values(), key=lambda p: p.id)
    )
    return TopicInfo(name=name, partitions=partitions)


def _metadata(conf: KafkaConf, topic: str | None, timeout: float):  # type: ignore[no-untyped-def]
    try:
        with admin_client(conf) as client:
            return client.list_topics(topic=topic, timeout=timeout)
    except KafkaException as exc:
        error = exc.args[0]
        raise KafkaError(f"no metadata from {conf.get('bootstrap.servers')}: {error.str()}", error.name()) from None
