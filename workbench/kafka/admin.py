"""Topic administration. Topics are always created explicitly, never by a first produce.

An experiment's topics get the profile's replication and settings only when it creates
them itself, and on Tansu (the second embedded broker) a topic auto-created by a produce
loses records (20 produced, 20 acknowledged, 10 readable); so every experiment creates
its topics here first, and the profiles set `allow.auto.create.topics=false` for every
client. Creation and deletion return once the cluster's metadata shows them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

from confluent_kafka import KafkaException
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    ResourceType,
)

from workbench.backoff import Backoff
from workbench.errors import KafkaError

if TYPE_CHECKING:
    from workbench.config import KafkaConf

__all__ = [
    "AdminOwner",
    "PartitionInfo",
    "TopicInfo",
    "admin_client",
    "alter_group_configs",
    "await_topics",
    "broker_answers",
    "broker_count",
    "create_partitions",
    "create_topic",
    "create_topics",
    "delete_records",
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


class AdminOwner:
    """What keeps one AdminClient in `_admin` across calls: `close()`, or the end of its `with`
    block, destroys it in the calling thread (see `admin_client` for why not leave it to the
    garbage collector); after that `_admin` is None."""

    _admin: AdminClient | None = None

    def close(self) -> None:
        """Destroy the AdminClient now, in this thread; closing again does nothing."""
        admin, self._admin = self._admin, None
        if admin is not None:
            admin.__exit__(None, None, None)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def alter_group_configs(conf: KafkaConf, group: str, settings: Mapping[str, str]) -> None:
    """Set a group's own configs (KIP-848's `consumer.*`, KIP-932's `share.*`) before its
    members join, with IncrementalAlterConfigs on the group resource.

    Raises:
        KafkaError: the broker refused them (a value below its floor, a broker without group
            configs), its reason in one line.
    """
    entries = [ConfigEntry(k, str(v), incremental_operation=AlterConfigOpType.SET) for k, v in settings.items()]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    with admin_client(conf) as admin:
        try:
            for future in admin.incremental_alter_configs([resource]).values():
                future.result()
        except KafkaException as exc:
            raise KafkaError(exc.args[0].str()) from None


def broker_answers(bootstrap_servers: str, timeout: float = 1.0, conf: KafkaConf | None = None) -> bool:
    """True when a broker answers a Metadata request within `timeout` seconds."""
    with admin_client({**(conf or {}), "bootstrap.servers": bootstrap_servers}) as client:
        try:
            client.list_topics(timeout=timeout)
            return True
        except KafkaException:
            return False


def broker_count(bootstrap_servers: str, timeout: float = 1.0, conf: KafkaConf | None = None) -> int:
    """How many brokers the cluster's metadata lists (0 when none answers within `timeout`)."""
    with admin_client({**(conf or {}), "bootstrap.servers": bootstrap_servers}) as client:
        try:
            return len(client.list_topics(timeout=timeout).brokers)
        except KafkaException:
            return 0


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

    Kafka answers CreateTopics once its controller has the topics; the brokers learn of
    them from the metadata log a moment later, and a client asking one before then is
    told the topic does not exist (measured: the REST proxy's first produce to a topic
    created a moment before got 40401). So this returns only when the cluster's
    metadata lists every topic with all its partitions led.

    Raises:
        KafkaError: a topic exists (unless `exist_ok`), or the broker refused it, or the
            metadata did not show it within `timeout`.
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
        _await_metadata(
            conf,
            client,
            lambda metadata: all(_is_led(metadata.topics.get(n)) for n in topics),
            timeout,
            f"created topics {_names(topics)} to appear",
        )


def create_partitions(conf: KafkaConf, topic: str, total: int, *, timeout: float = 30.0) -> None:
    """Grow `topic` to `total` partitions and wait until every broker's metadata shows them
    led (a producer asking a broker that has not heard yet would use the old count).

    Raises:
        KafkaError: the cluster refused (a broker without CreatePartitions, a count not
            above the current one, an ACL, a policy; its error name is the code), or the
            metadata did not show the new count within `timeout`.
    """
    with admin_client(conf) as client:  # it must outlive the future
        futures = client.create_partitions(
            [NewPartitions(topic, total)], operation_timeout=timeout, request_timeout=timeout
        )
        _settle(futures, "add partitions to", None)

        def grown(metadata: Any) -> bool:
            found = metadata.topics.get(topic)
            return _is_led(found) and len(found.partitions) == total

        _await_metadata(conf, client, grown, timeout, f"{topic!r} to show {total} partitions")


def create_topic(conf: KafkaConf, name: str, partitions: int = 1, **kwargs: object) -> str:
    """Create one topic; returns its name so it can be used inline. See `create_topics`."""
    create_topics(conf, {name: partitions}, **kwargs)  # type: ignore[arg-type]
    return name


def delete_topics(conf: KafkaConf, names: Iterable[str], *, missing_ok: bool = True, timeout: float = 30.0) -> None:
    """Delete topics, and return once the cluster's metadata no longer shows them."""
    names = list(names)
    if not names:
        return
    with admin_client(conf) as client:  # it must outlive the futures
        futures = client.delete_topics(names, operation_timeout=timeout, request_timeout=timeout)
        _settle(futures, "delete", "UNKNOWN_TOPIC_OR_PART" if missing_ok else None)
        # As on creation: the brokers learn of a deletion after the controller; a topic
        # created again under the same name before then would be refused as existing.
        _await_metadata(conf, client, _gone(names), timeout, f"deleted topics {_names(names)} to disappear")


def await_topics(conf: KafkaConf, names: Iterable[str], *, present: bool, timeout: float = 30.0) -> None:
    """Return once every broker's metadata shows each topic with all its partitions led
    (`present`), or shows none of them: what `create_topics` and `delete_topics` wait for,
    for a caller that created or deleted topics with a client of its own (the REST proxy).

    Raises:
        KafkaError: the metadata did not get there within `timeout`.
    """
    names = list(names)
    what = f"topics {_names(names)} to {'appear' if present else 'disappear'}"
    with admin_client(conf) as client:
        _await_metadata(conf, client, _shown(names) if present else _gone(names), timeout, what)


def _shown(names: Iterable[str]) -> Callable[[Any], bool]:
    wanted = list(names)
    return lambda metadata: all(_is_led(metadata.topics.get(n)) for n in wanted)


def _gone(names: Iterable[str]) -> Callable[[Any], bool]:
    wanted = set(names)
    return lambda metadata: not wanted & set(metadata.topics)


def _await_metadata(
    conf: KafkaConf, client: AdminClient, done: Callable[[Any], bool], timeout: float, what: str
) -> None:
    """Ask the cluster's metadata until `done(metadata)` holds, from every broker.

    Each broker applies the controller's metadata log on its own, and a client may ask
    any of them (measured on three nodes: a topic every broker but one knew was 404 to
    the REST proxy that asked that one). librdkafka sends a metadata request to a broker
    it is connected to, and a client bootstrapped with one address connects to that one
    alone until it needs another, so each broker is asked through a client of its own.
    """
    deadline = time.monotonic() + timeout
    metadata = _until(client, done, deadline, timeout, what)
    if len(metadata.brokers) > 1:
        for broker in metadata.brokers.values():
            with admin_client({**conf, "bootstrap.servers": f"{broker.host}:{broker.port}"}) as single:
                _until(single, done, deadline, timeout, what)


def _until(client: AdminClient, done: Callable[[Any], bool], deadline: float, timeout: float, what: str) -> Any:
    """The first metadata `client` gets for which `done` holds; a KafkaError at the deadline."""
    pauses = Backoff(0.005, 0.2).delays()
    while True:
        try:
            metadata = client.list_topics(timeout=max(0.1, deadline - time.monotonic()))
            if done(metadata):
                return metadata
        except KafkaException as exc:
            error = exc.args[0]
            raise KafkaError(f"waiting for {what}: {error.str()}", error.name()) from None
        if time.monotonic() >= deadline:
            raise KafkaError(f"waited {timeout:.0f} s for {what} in the cluster's metadata", "_TIMED_OUT")
        time.sleep(next(pauses))


def _is_led(topic: Any) -> bool:
    """A topic's metadata shows it, error-free, with a leader for every partition."""
    return (
        topic is not None
        and topic.error is None
        and bool(topic.partitions)
        and all(p.leader >= 0 and p.error is None for p in topic.partitions.values())
    )


def _names(names: Iterable[str]) -> str:
    shown = list(names)
    return ", ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")


def _settle(futures: Mapping[str, Any], action: str, tolerated: str | None) -> None:
    """Wait for each topic's future; an error named `tolerated` is no error, any other a KafkaError."""
    for name, future in futures.items():
        try:
            future.result()
        except KafkaException as exc:
            error = exc.args[0]
            if error.name() != tolerated:
                raise KafkaError(f"cannot {action} topic {name!r}: {error.str()}", error.name()) from None


def delete_records(
    conf: KafkaConf, before: Mapping[tuple[str, int], int], *, timeout: float = 30.0
) -> dict[tuple[str, int], int]:
    """Delete each partition's records before an offset (Kafka's DeleteRecords, what
    `kafka-delete-records.sh` does); returns each partition's new log start offset.

    The log start offset moves at once, as retention moves it when it deletes a segment,
    but exactly where asked: a reader can be put behind the log without waiting for it.

    Raises:
        KafkaError: the broker refused (an offset past the end, an unknown partition).
    """
    from confluent_kafka import TopicPartition

    targets = [TopicPartition(topic, partition, offset) for (topic, partition), offset in before.items()]
    if not targets:
        return {}
    moved: dict[tuple[str, int], int] = {}
    with admin_client(conf) as client:
        futures = client.delete_records(targets, request_timeout=timeout, operation_timeout=timeout)
        for target, future in futures.items():
            try:
                moved[(target.topic, target.partition)] = future.result().low_watermark
            except KafkaException as exc:
                error = exc.args[0]
                where = f"{target.topic}-{target.partition}"
                raise KafkaError(
                    f"cannot delete the records of {where} before {target.offset}: {error.str()}", error.name()
                ) from None
    return moved


def list_topics(conf: KafkaConf, *, internal: bool = False, timeout: float = 10.0) -> list[str]:
    """Topic names, sorted; internal ones (`__consumer_offsets`...) only when asked."""
    metadata = _metadata(conf, None, timeout)
    return sorted(t for t in metadata.topics if internal or not t.startswith("__"))


def describe_topic(conf: KafkaConf, name: str, *, timeout: float = 10.0) -> TopicInfo:
    """A topic's partitions with leader and replicas.

    On a cluster of several brokers an unknown topic is asked about again for up to
    `_LAGGING_BROKER_S`: each broker applies the controller's metadata log on its own, and
    one that lags may not know a topic the others have (measured on three nodes: a topic
    every broker had shown a moment before was unknown to the one asked). One broker
    answers for itself, at once.

    Raises:
        KafkaError: the topic does not exist.
    """
    deadline = time.monotonic() + _LAGGING_BROKER_S
    while True:
        metadata = _metadata(conf, name, timeout)
        topic = metadata.topics.get(name)
        known = topic is not None and topic.error is None
        if known or len(metadata.brokers) < 2 or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    if topic is None or topic.error is not None:
        reason = topic.error.str() if topic is not None and topic.error else "unknown topic"
        raise KafkaError(f"cannot describe topic {name!r}: {reason}", "UNKNOWN_TOPIC_OR_PART")
    partitions = tuple(
        PartitionInfo(id=p.id, leader=p.leader, replicas=tuple(p.replicas))
        for p in sorted(topic.partitions.values(), key=lambda p: p.id)
    )
    return TopicInfo(name=name, partitions=partitions)


#: Seconds `describe_topic` asks again about a topic unknown to a cluster of several brokers.
_LAGGING_BROKER_S = 3.0


def _metadata(conf: KafkaConf, topic: str | None, timeout: float):  # type: ignore[no-untyped-def]
    try:
        with admin_client(conf) as client:
            return client.list_topics(topic=topic, timeout=timeout)
    except KafkaException as exc:
        error = exc.args[0]
        raise KafkaError(f"no metadata from {conf.get('bootstrap.servers')}: {error.str()}", error.name()) from None
