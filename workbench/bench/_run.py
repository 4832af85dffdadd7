"""What every load generator shares: a throw-away topic and the result row (see `contract`)."""

from __future__ import annotations

import gc
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer

from workbench import kafka
from workbench.errors import BenchError
from workbench.measure.contract import result_row
from workbench.stack import Stack

__all__ = [
    "TOPIC_PREFIX",
    "TOPIC_SETTING",
    "bench_consumer",
    "bench_producer",
    "bench_topic",
    "result_row",
    "split_topic_settings",
]

#: Prefix of every benchmark topic, so a sweep can find and delete what a point left behind.
TOPIC_PREFIX = "bench"
#: The prefix of an experiment parameter that is the fresh topic's own setting, as Kafka
#: Streams names its internal topics' settings (`topic.max.message.bytes`): a topic's
#: names and librdkafka's overlap (`compression.type`), so a prefix, not a list, decides.
TOPIC_SETTING = "topic."


def split_topic_settings(settings: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """`settings` parted into the topic's own (`topic.` taken off, values as Kafka's text) and the rest.

    Usage: `split_topic_settings({"topic.max.message.bytes": 3_000_000, "linger.ms": 5})`
    → `({"max.message.bytes": "3000000"}, {"linger.ms": 5})`.
    """
    topic = {k[len(TOPIC_SETTING) :]: str(v) for k, v in settings.items() if k.startswith(TOPIC_SETTING)}
    rest = {k: v for k, v in settings.items() if not k.startswith(TOPIC_SETTING)}
    return topic, rest


@contextmanager
def bench_topic(
    stack: Stack,
    partitions: int,
    prefix: str = TOPIC_PREFIX,
    *,
    keep: bool = False,
    config: Mapping[str, str] | None = None,
) -> Iterator[str]:
    """A fresh, uniquely named topic for one point (`Stack.temporary_topics`: deleted afterwards unless `keep`)."""
    name = f"{prefix}-{uuid.uuid4().hex[:10]}"
    try:
        with stack.temporary_topics({name: partitions}, timeout=30.0, keep=keep, config=config):
            yield name
    finally:
        gc.collect()  # destroy this point's Kafka clients here, not in some other thread (see resources.py)


def bench_producer(stack: Stack, settings: dict[str, Any], on_stats: Callable[[str], None] | None = None) -> Producer:
    """A producer with the stack's settings and `settings` on top; settings librdkafka refuses become a BenchError."""
    conf = {**stack.kafka_config("producer"), **settings}
    if on_stats is not None:
        conf["stats_cb"] = on_stats
    try:
        return kafka.producer(conf)
    except (KafkaException, ValueError, TypeError) as exc:
        raise BenchError(
            f"producer settings rejected by librdkafka: {_rejection(exc)}; see librdkafka's CONFIGURATION.md"
        ) from None


def bench_consumer(stack: Stack, settings: dict[str, Any]) -> Consumer:
    """A consumer with the stack's settings and `settings` on top; settings librdkafka refuses become a BenchError."""
    try:
        return kafka.consumer(stack.kafka_config("consumer"), settings=settings)
    except (KafkaException, ValueError, TypeError) as exc:
        raise BenchError(
            f"consumer settings rejected by librdkafka: {_rejection(exc)}; see librdkafka's CONFIGURATION.md"
        ) from None


def _rejection(exc: Exception) -> str:
    arg = exc.args[0] if exc.args else exc
    return arg.str() if hasattr(arg, "str") else str(arg)
