"""Java Kafka client settings and how librdkafka spells them.

Users bring settings written for the Java client: in an upstream `kafka-rest.properties`
(`producer.max.request.size`), or as `kafka.*` options of a Spark Kafka source
(`kafka.fetch.max.wait.ms`). librdkafka knows some under another name, some in other
units, and some not at all (serializers are Java classes). Both the proxy and the Spark
source translate through this one table, so a name learnt in one place works in the other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["JAVA_ONLY", "JAVA_TO_LIBRDKAFKA", "translate"]


def _kilobytes(value: Any) -> int:
    """`buffer.memory` is bytes; `queue.buffering.max.kbytes` is KiB, at least 1."""
    return max(1, int(value) // 1024)


#: Java name -> (librdkafka name, converter of the value).
JAVA_TO_LIBRDKAFKA: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "max.request.size": ("message.max.bytes", int),
    "buffer.memory": ("queue.buffering.max.kbytes", _kilobytes),
    "fetch.max.wait.ms": ("fetch.wait.max.ms", int),
    "receive.buffer.bytes": ("socket.receive.buffer.bytes", int),
    "send.buffer.bytes": ("socket.send.buffer.bytes", int),
}

#: Java-only settings: no librdkafka meaning, so they are dropped (with a warning by the caller).
JAVA_ONLY = frozenset(
    {
        "key.serializer",
        "value.serializer",
        "key.deserializer",
        "value.deserializer",
        "max.block.ms",
        "max.poll.records",
        "interceptor.classes",
    }
)


def translate(name: str, value: Any) -> tuple[str, Any] | None:
    """librdkafka's (name, value) for a Java client setting; None for a Java-only one.

    Names librdkafka shares with Java come back unchanged.

    Raises:
        ValueError: the value cannot be converted (`max.request.size=lots`); the caller
            names the setting in its own error.
    """
    if name in JAVA_ONLY:
        return None
    if name in JAVA_TO_LIBRDKAFKA:
        target, convert = JAVA_TO_LIBRDKAFKA[name]
        return target, convert(value)
    return name, value
