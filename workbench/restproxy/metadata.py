"""Cluster metadata for the handlers: topics, partitions, brokers, cluster id, configs.

All calls block on the broker, so they run in worker threads (`await meta.call(...)`).
Partition counts are cached for `metadata.max.age.ms` (as Karapace caches for 5 s), so
the produce path checks "does this topic and partition exist" without a round trip; a
topic missing from the cache is looked up again at once, so a topic created a moment
ago is found and an unknown one gets 404 / 40401 without waiting for any timeout.
Metadata requests never create topics (`allow.auto.create.topics=false`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import anyio.to_thread
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ClusterMetadata, TopicMetadata

from workbench.httpserver.errors import RestError
from workbench.restproxy.errors import PARTITION_NOT_FOUND, TOPIC_NOT_FOUND

__all__ = ["Metadata", "kafka_error"]

log = logging.getLogger("workbench.restproxy")

_T = TypeVar("_T")

#: librdkafka error names for a missing topic or partition.
_UNKNOWN_TOPIC = {"UNKNOWN_TOPIC_OR_PART", "_UNKNOWN_TOPIC", "UNKNOWN_TOPIC_ID"}


def kafka_error(exc: KafkaException, action: str) -> RestError:
    """A librdkafka error as upstream's REST error (rest-utils' KafkaExceptionMapper)."""
    error: Any = exc.args[0] if exc.args else None
    name = error.name() if hasattr(error, "name") else "UNKNOWN"
    text = error.str() if hasattr(error, "str") else str(exc)
    if name in _UNKNOWN_TOPIC:
        return RestError(404, TOPIC_NOT_FOUND, f"{action}: topic not found ({text})")
    if name == "_UNKNOWN_PARTITION":
        return RestError(404, PARTITION_NOT_FOUND, f"{action}: partition not found ({text})")
    if name in (
        "TOPIC_ALREADY_EXISTS",
        "INVALID_REPLICATION_FACTOR",
        "INVALID_PARTITIONS",
        "INVALID_CONFIG",
        "POLICY_VIOLATION",
        "INVALID_REQUEST",
        "TOPIC_EXCEPTION",
        "UNSUPPORTED_VERSION",
        "INVALID_TOPIC_EXCEPTION",
        "TOPIC_DELETION_DISABLED",
        "UNKNOWN_SERVER_ERROR",
    ):
        return RestError(400, 40002, f"{action}: {text}")
    if name in ("TOPIC_AUTHORIZATION_FAILED", "GROUP_AUTHORIZATION_FAILED", "CLUSTER_AUTHORIZATION_FAILED"):
        return RestError(403, 40301, f"{action}: {text}")
    if name in ("_TRANSPORT", "_ALL_BROKERS_DOWN", "BROKER_NOT_AVAILABLE"):
        return RestError(503, 50302, f"{action}: broker not available ({text})")
    retriable = bool(error.retriable()) if hasattr(error, "retriable") else False
    return RestError(500, 50003 if retriable else 50002, f"{action}: {text}")


class Metadata:
    """A thread-safe AdminClient plus a short-lived cache of partition counts."""

    def __init__(self, conf: Mapping[str, Any], max_age_ms: int, timeout: float = 10.0) -> None:
        self.admin = AdminClient({**conf, "allow.auto.create.topics": False, "logger": log})  # type: ignore[dict-item]
        self.timeout = timeout
        self._max_age = max_age_ms / 1000
        self._partitions: dict[str, tuple[float, int]] = {}
        self._share_groups: bool | None = None

    async def call(self, function: Callable[..., _T], *args: Any) -> _T:
        """Run a blocking admin call in a worker thread."""
        return await anyio.to_thread.run_sync(function, *args)

    def cluster(self, topic: str | None = None) -> ClusterMetadata:
        try:
            return self.admin.list_topics(topic=topic, timeout=self.timeout)
        except KafkaException as exc:
            raise kafka_error(exc, "cannot read the cluster metadata") from None

    def topic(self, name: str) -> TopicMetadata:
        """A topic's metadata; 404 / 40401 when it does not exist (nothing is created)."""
        metadata = self.cluster(name).topics.get(name)
        if metadata is None or metadata.error is not None:
            self._partitions.pop(name, None)
            raise RestError(404, TOPIC_NOT_FOUND, f"Topic {name} not found.")
        self._partitions[name] = (time.monotonic(), len(metadata.partitions))
        return metadata

    async def partition_count(self, name: str) -> int:
        """Partitions of a topic, from the cache when fresh; 404 / 40401 when unknown."""
        cached = self._partitions.get(name)
        if cached is not None and time.monotonic() - cached[0] < self._max_age:
            return cached[1]
        return len((await self.call(self.topic, name)).partitions)

    async def check_partition(self, name: str, partition: int) -> None:
        """404 / 40402 when `partition` is not a partition of the (existing) topic."""
        count = await self.partition_count(name)
        if not 0 <= partition < count:
            self._partitions.pop(name, None)  # it may have grown: look again next time
            raise RestError(404, PARTITION_NOT_FOUND, f"Partition {partition} of topic {name} not found.")

    def forget(self, name: str) -> None:
        self._partitions.pop(name, None)

    def topic_configs(self, name: str) -> dict[str, str]:
        """A topic's configs (empty when the broker does not describe them, as Tansu)."""
        from confluent_kafka.admin import ConfigResource, ResourceType

        try:
            futures = self.admin.describe_configs(
                [ConfigResource(ResourceType.TOPIC, name)], request_timeout=self.timeout
            )
            result = next(iter(futures.values())).result()
        except KafkaException as exc:
            raise kafka_error(exc, f"cannot describe the configs of topic {name}") from None
        return {key: entry.value for key, entry in result.items()}

    def topic_config_entries(self, name: str) -> list[Any]:
        from confluent_kafka.admin import ConfigResource, ResourceType

        try:
            futures = self.admin.describe_configs(
                [ConfigResource(ResourceType.TOPIC, name)], request_timeout=self.timeout
            )
            return list(next(iter(futures.values())).result().values())
        except KafkaException as exc:
            raise kafka_error(exc, f"cannot describe the configs of topic {name}") from None

    def alter_topic_configs(
        self, name: str, changes: list[tuple[str, str | None]], validate_only: bool = False
    ) -> None:
        """Set (value) or reset to the default (None) a topic's configs, incrementally:
        the configs not named keep their values (IncrementalAlterConfigs, as upstream)."""
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

        entries = []
        for key, value in changes:
            operation = AlterConfigOpType.SET if value is not None else AlterConfigOpType.DELETE
            entries.append(ConfigEntry(key, value or "", incremental_operation=operation))
        resource = ConfigResource(ResourceType.TOPIC, name, incremental_configs=entries)
        try:
            futures = self.admin.incremental_alter_configs(
                [resource], validate_only=validate_only, request_timeout=self.timeout
            )
            next(iter(futures.values())).result()
        except KafkaException as exc:
            raise kafka_error(exc, f"cannot alter the configs of topic {name}") from None

    def require_share_groups(self) -> None:
        """400 / 40002 (upstream's answer to Kafka's UnsupportedVersion) when the cluster
        has no share groups (KIP-932: Apache Kafka 4.2 or newer), asked once per process.

        A broker with share groups describes a group's `share.record.lock.duration.ms`
        (every group has it, as a default); one without them (Tansu, Kafka before 4.1)
        does not know the GROUP config resource or that name. A share consumer on such a
        broker would only ever read nothing, so the proxy says so at once.
        """
        if self._share_groups is None:
            from confluent_kafka.admin import ConfigResource, ResourceType

            resource = ConfigResource(ResourceType.GROUP, "workbench-share-probe")
            try:
                found = self.admin.describe_configs([resource], request_timeout=self.timeout)[resource].result()
                self._share_groups = "share.record.lock.duration.ms" in found
            except KafkaException as exc:
                error: Any = exc.args[0] if exc.args else None
                name = error.name() if hasattr(error, "name") else ""
                if name in ("_TRANSPORT", "_ALL_BROKERS_DOWN", "BROKER_NOT_AVAILABLE", "_TIMED_OUT"):
                    raise kafka_error(exc, "cannot ask the cluster about share groups") from None
                self._share_groups = False
        if not self._share_groups:
            raise RestError(
                400,
                40002,
                "This Kafka cluster has no share groups (KIP-932, Kafka's queues): they need Apache Kafka "
                "4.2 or newer (share.version=1). Use a consumer group: POST /consumers/{group}.",
            )

    def alter_group_configs(self, group: str, configs: dict[str, str]) -> None:
        """Set a group's dynamic configs (`share.auto.offset.reset`, ...), incrementally."""
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

        entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in configs.items()]
        resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
        try:
            self.admin.incremental_alter_configs([resource], request_timeout=self.timeout)[resource].result()
        except KafkaException as exc:
            raise kafka_error(exc, f"cannot set the configs of share group {group}") from None
