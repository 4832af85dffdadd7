"""A topic's log settings (how long records stay, how the log is cut and cleaned), by
Kafka's own names, set the way the path under test sets them.

An experiment names the settings it wants in its parameters (`retention.ms=5000`); they
go to the topic through the REST proxy's v3 config API when the proxy is in the path
(`POST /v3/clusters/{c}/topics/{t}/configs:alter`, what a REST user has), and through
the admin client's IncrementalAlterConfigs otherwise. Names are checked here, against the
topic-level names Kafka documents for the log, so a typo is a one-line error before any
call; values are the broker's to judge (it knows its own bounds, which change between
releases: Kafka 4 raised `segment.bytes`' floor to 1 MiB), and its reason is passed on
whole. An alter is one request for the topic, which the broker validates in full before it
applies anything: a refused setting leaves the topic as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from confluent_kafka import KafkaException

from workbench.errors import ProxyError
from workbench.retention.errors import RetentionError, TopicConfigRefused

if TYPE_CHECKING:
    from workbench.proxy.client import ProxyClient
    from workbench.stack import Stack

__all__ = [
    "BROKER_INTERVALS",
    "LOG_SETTINGS",
    "apply_log_settings",
    "broker_log_intervals",
    "log_settings",
    "topic_log_settings",
]

#: The topic-level settings that decide how long a record stays and when the log is cleaned,
#: with what each one does (Kafka's names; `kafka-configs.sh --entity-type topics`).
LOG_SETTINGS: dict[str, str] = {
    "cleanup.policy": "delete, compact, or both (compact,delete)",
    "retention.ms": "a closed segment is deleted once its newest record is this old (-1: never)",
    "retention.bytes": "closed segments are deleted, oldest first, while a partition is larger (-1: no limit)",
    "segment.ms": "the active segment is closed (rolled) at the first append after it is this old",
    "segment.bytes": "the active segment is closed when it reaches this size (Kafka 4: at least 1 MiB)",
    "min.cleanable.dirty.ratio": "the share of a log not yet compacted above which the cleaner compacts it",
    "min.compaction.lag.ms": "a record stays uncompacted at least this long",
    "max.compaction.lag.ms": "a record is compacted at most this long after it is written, whatever the ratio",
    "delete.retention.ms": "how long a tombstone (a null value) stays after compaction reaches it",
    "file.delete.delay.ms": "how long a deleted segment's files stay on disk",
    "message.timestamp.type": "CreateTime (the producer's clock) or LogAppendTime (the broker's)",
}


def log_settings(values: Mapping[str, Any]) -> dict[str, str]:
    """`values` as the strings Kafka takes, after checking each name is a log setting.

    Booleans become `true`/`false`; a list (`["compact", "delete"]`) becomes `compact,delete`.

    Raises:
        RetentionError: a name that is not one of `LOG_SETTINGS`, or an empty value.
    """
    unknown = sorted(name for name in values if name not in LOG_SETTINGS)
    if unknown:
        raise RetentionError(f"{', '.join(unknown)}: not a log setting; log settings are {', '.join(LOG_SETTINGS)}")
    settings: dict[str, str] = {}
    for name, value in values.items():
        if isinstance(value, bool):
            text = str(value).lower()
        elif isinstance(value, list | tuple):
            text = ",".join(str(v) for v in value)
        else:
            text = "" if value is None else str(value)
        if not text.strip():
            raise RetentionError(f"{name} has no value; give one ({LOG_SETTINGS[name]})")
        settings[name] = text
    return settings


def apply_log_settings(
    stack: Stack, topic: str, values: Mapping[str, Any], *, proxy: ProxyClient | None = None
) -> dict[str, str]:
    """Set a topic's log settings (the others keep theirs); returns them as sent.

    Through `proxy`'s v3 config API when given, else through the admin client.

    Raises:
        RetentionError: a name that is not a log setting (nothing is sent).
        TopicConfigRefused: the broker or the proxy refused; its reason, in one line.
    """
    settings = log_settings(values)
    if not settings:
        return settings
    if proxy is not None:
        _through_proxy(proxy, topic, settings)
    else:
        _through_admin(stack, topic, settings)
    return settings


def topic_log_settings(stack: Stack, topic: str) -> dict[str, str]:
    """The topic's log settings as the broker holds them now (its defaults included).

    Raises:
        TopicConfigRefused: the cluster would not describe the topic's configs.
    """
    from confluent_kafka.admin import ConfigResource, ResourceType

    from workbench.kafka.admin import admin_client

    resource = ConfigResource(ResourceType.TOPIC, topic)
    try:
        with admin_client(stack.kafka_config("admin")) as admin:
            entries = admin.describe_configs([resource], request_timeout=15)[resource].result()
    except KafkaException as exc:
        raise TopicConfigRefused(f"cannot read the configs of topic {topic}: {exc.args[0].str()}") from None
    return {name: entries[name].value for name in LOG_SETTINGS if name in entries}


def _through_admin(stack: Stack, topic: str, settings: Mapping[str, str]) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    from workbench.kafka.admin import admin_client

    entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in settings.items()]
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=entries)
    try:
        with admin_client(stack.kafka_config("admin")) as admin:
            admin.incremental_alter_configs([resource], request_timeout=15)[resource].result()
    except KafkaException as exc:
        error = exc.args[0]
        raise TopicConfigRefused(f"topic {topic}: {_shown(settings)} refused: {error.str()}", error.name()) from None


def _through_proxy(proxy: ProxyClient, topic: str, settings: Mapping[str, str]) -> None:
    try:
        proxy.alter_topic_configs(topic, settings)
    except ProxyError as exc:
        raise TopicConfigRefused(
            f"topic {topic}: {_shown(settings)} refused by the REST proxy (HTTP {exc.status}, "
            f"error_code {exc.error_code}): {exc.message}",
            str(exc.error_code),
        ) from None


def _shown(settings: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in settings.items())


#: The broker's own intervals that decide when retention and compaction act (docs/brokers.md).
BROKER_INTERVALS = ("log.retention.check.interval.ms", "log.cleaner.backoff.ms", "log.segment.delete.delay.ms")


def broker_log_intervals(stack: Stack) -> dict[str, int | None]:
    """The first broker's retention check, cleaner backoff and file-delete delay in ms
    (None each where the cluster does not describe its broker configs, Tansu for one)."""
    from confluent_kafka.admin import ConfigResource, ResourceType

    from workbench.kafka.admin import admin_client

    try:
        with admin_client(stack.kafka_config("admin")) as admin:
            broker = min(admin.list_topics(timeout=10).brokers)
            resource = ConfigResource(ResourceType.BROKER, str(broker))
            entries = admin.describe_configs([resource], request_timeout=10)[resource].result()
    except (KafkaException, ValueError):
        return dict.fromkeys(BROKER_INTERVALS)
    found: dict[str, int | None] = {}
    for name in BROKER_INTERVALS:
        entry = entries.get(name)
        found[name] = int(entry.value) if entry is not None and str(entry.value).lstrip("-").isdigit() else None
    return found
