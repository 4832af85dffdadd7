"""What every load generator shares: a throw-away topic and the result row (see `contract`)."""

from __future__ import annotations

import gc
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from workbench import kafka
from workbench.bench.contract import result_row
from workbench.stack import Stack

__all__ = ["TOPIC_PREFIX", "bench_topic", "result_row"]

#: Prefix of every benchmark topic, so a sweep can find and delete what a point left behind.
TOPIC_PREFIX = "bench"


@contextmanager
def bench_topic(stack: Stack, partitions: int, prefix: str = TOPIC_PREFIX, *, keep: bool = False) -> Iterator[str]:
    """A fresh topic, created explicitly and deleted afterwards (the broker keeps data in memory)."""
    conf = stack.kafka_config("admin")
    name = f"{prefix}-{uuid.uuid4().hex[:10]}"
    stack.create_topics({name: partitions})
    try:
        yield name
    finally:
        if not keep:
            kafka.delete_topics(conf, [name])
        gc.collect()  # destroy this point's Kafka clients here, not in some other thread (see resources.py)
