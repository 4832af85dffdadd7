"""Records written at a steady rate, natively or through the REST proxy, each one's offset
and the moment it was acknowledged kept: what the retention experiments measure a
record's life from.

A retention experiment asks when a record is deleted, so it needs each record's offset
and when it was written, and a steady stream: a segment only rolls (and so only becomes
deletable) at an append. `write_steadily` sends `rate` records a second in ticks of
`TICK_S`, each tick's batch flushed before the next, so every record's time is its
acknowledgement's, within a tick.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from confluent_kafka import TIMESTAMP_NOT_AVAILABLE, Message
from confluent_kafka import KafkaError as RdKafkaError

from workbench.errors import KafkaError
from workbench.retention.errors import RetentionError

if TYPE_CHECKING:
    from workbench.proxy.client import ProxyClient
    from workbench.stack import Stack

__all__ = [
    "KeyValue",
    "LogWriter",
    "PATHS",
    "TICK_S",
    "Written",
    "proxy_for",
    "write_steadily",
]

#: The paths records and settings take: the native client, or the REST proxy (v2 produce, v3 configs).
PATHS = ("native", "proxy")
#: Seconds between the batches of a steady write.
TICK_S = 0.05

KeyValue = tuple[bytes | None, bytes | None]


@dataclass(frozen=True)
class Written:
    """One acknowledged record: its offset, key, and when (epoch seconds) it was acknowledged."""

    offset: int
    key: bytes | None
    at: float
    tombstone: bool = False
    #: The record's own timestamp (epoch seconds, CreateTime) where the client learns it: what
    #: the broker's time-based rules (`min.compaction.lag.ms`, retention) count from. None
    #: through the proxy, whose produce answer does not carry it.
    stamped: float | None = None

    @property
    def since(self) -> float:
        """The record's timestamp, else when it was acknowledged."""
        return self.at if self.stamped is None else self.stamped


class LogWriter:
    """Writes batches to partition 0 of a topic and returns what each record became."""

    def __init__(self, stack: Stack, topic: str, through: str = "native", proxy: ProxyClient | None = None) -> None:
        if through not in PATHS:
            raise RetentionError(f"through must be one of {list(PATHS)}, got {through!r}")
        if through == "proxy" and proxy is None:
            raise RetentionError("through='proxy' needs a REST proxy; this profile has none")
        self.topic = topic
        self.through = through
        self.proxy = proxy
        self._producer = None if through == "proxy" else _native_producer(stack)

    def write(self, batch: Sequence[KeyValue]) -> list[Written]:
        """Write `batch` (key, value) pairs in order; returns them acknowledged, in order.

        Raises:
            KafkaError: a record was not acknowledged (its reason).
        """
        if not batch:
            return []
        if self.proxy is not None and self.through == "proxy":
            return self._through_proxy(batch)
        return self._native(batch)

    def close(self) -> None:
        """Flush what is left (nothing, after `write`)."""
        if self._producer is not None:
            self._producer.flush(10)

    def _native(self, batch: Sequence[KeyValue]) -> list[Written]:
        assert self._producer is not None
        acked: list[Written] = []
        errors: list[str] = []

        def delivered(error: RdKafkaError | None, message: Message) -> None:
            if error is not None:
                errors.append(error.str())
            else:
                key, (kind, stamp_ms) = message.key(), message.timestamp()
                stamped = stamp_ms / 1000 if kind != TIMESTAMP_NOT_AVAILABLE else None
                acked.append(Written(int(message.offset() or 0), key, time.time(), message.value() is None, stamped))

        for key, value in batch:
            self._producer.produce(self.topic, value=value, key=key, partition=0, on_delivery=delivered)
        left = self._producer.flush(30)
        if errors or left:
            raise KafkaError(
                f"{left + len(errors)} of {len(batch)} records to {self.topic} not acknowledged: "
                f"{errors[0] if errors else 'flush timed out'}"
            )
        return sorted(acked, key=lambda w: w.offset)

    def _through_proxy(self, batch: Sequence[KeyValue]) -> list[Written]:
        assert self.proxy is not None
        answer = self.proxy.produce(self.topic, list(batch), partition=0)
        at = time.time()
        if answer.failed:
            raise KafkaError(
                f"{answer.failed} of {len(batch)} records to {self.topic} not written through the "
                f"proxy: {answer.errors[0].error}"
            )
        return [Written(int(o.offset or 0), k, at, v is None) for o, (k, v) in zip(answer.offsets, batch, strict=True)]


def write_steadily(writer: LogWriter, rate: float, seconds: float, make: Callable[[int], KeyValue]) -> list[Written]:
    """Write `rate` records a second for `seconds`, record `i` being `make(i)`; every one acknowledged.

    Raises:
        KafkaError: a record was not acknowledged.
    """
    total = max(1, round(rate * seconds))
    written: list[Written] = []
    start = time.monotonic()
    sent = 0
    while sent < total:
        due = min(total, int((time.monotonic() - start) * rate) + 1)
        if due > sent:
            written += writer.write([make(i) for i in range(sent, due)])
            sent = due
        time.sleep(TICK_S)
    return written


def _native_producer(stack: Stack):  # type: ignore[no-untyped-def]
    from workbench.kafka.clients import producer

    return producer(stack.kafka_config("producer"), {"linger.ms": 5})


def proxy_for(stack: Stack, through: str) -> Any:
    """A context giving a ProxyClient for the stack when records go through the proxy, else None.

    Raises:
        RetentionError: an unknown path, or the proxy asked for on a profile without one.
    """
    if through not in PATHS:
        raise RetentionError(f"through must be one of {list(PATHS)}, got {through!r}")
    if through != "proxy":
        return nullcontext()
    if not stack.proxy_urls:
        raise RetentionError("through='proxy' needs a REST proxy; this profile has none")
    from workbench.proxy.client import ProxyClient

    return ProxyClient.for_stack(stack)
