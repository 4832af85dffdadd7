"""What a record of a given size needs from each size limit on its way, by Kafka's own names.

A record passes four limits between a client and a reader, each with its own default:

| where | setting | default |
|---|---|---|
| the topic (broker) | `max.message.bytes` (the broker's `message.max.bytes`) | 1,048,588 |
| the producer (librdkafka) | `message.max.bytes`, `batch.size` | 1,000,000, 1,000,000 |
| a REST proxy | `producer.message.max.bytes`, `request.max.bytes` (the body, base64 inside) | 1,000,000, 64 MiB |
| the reader (librdkafka) | `fetch.max.bytes`, `max.partition.fetch.bytes` | 52,428,800, 1,048,576 |

The topic and producer limits refuse a record (`MSG_SIZE_TOO_LARGE`: the client's own,
or the broker's "Broker: Message size too large"); the proxy's limits refuse a call
(413); the reader's do not refuse: since KIP-74 a fetch returns the first batch whole
even when it is over both, one batch per request. Raising them with the record keeps a
reader at full fetches, so `limits_for` raises them too. Tansu had none of these limits,
Kafka has all of them: 2 MB records sent with the defaults are refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["DEFAULTS", "RecordLimits", "limits_for"]

#: Each limit's default, by the name the row records it under (see `RecordLimits.columns`).
DEFAULTS: dict[str, int] = {
    "topic.max.message.bytes": 1_048_588,
    "message.max.bytes": 1_000_000,
    "batch.size": 1_000_000,
    "proxy.producer.message.max.bytes": 1_000_000,
    "proxy.request.max.bytes": 67_108_864,
    "fetch.max.bytes": 52_428_800,
    "max.partition.fetch.bytes": 1_048_576,
}

#: Room above the value for the key, the headers and a record batch's framing.
_FRAMING = 16_384
#: A REST proxy call carries the value in base64 (4 bytes for every 3) inside JSON.
_BASE64 = 4 / 3


@dataclass(frozen=True)
class RecordLimits:
    """The settings that carry records of one size, grouped by who takes them.

    Each group holds upstream names, ready to hand to that component: `topic` to a topic's
    creation (or `incrementalAlterConfigs`), `producer` and `reader` to librdkafka, `proxy`
    to a REST proxy's properties file (or `proxy_setup`).
    """

    record_bytes: int
    topic: dict[str, int] = field(default_factory=dict)
    producer: dict[str, int] = field(default_factory=dict)
    proxy: dict[str, int] = field(default_factory=dict)
    reader: dict[str, int] = field(default_factory=dict)

    def columns(self) -> dict[str, int]:
        """Every limit by its row name (`topic.max.message.bytes`, `proxy.request.max.bytes`, ...)."""
        return {
            **{f"topic.{k}": v for k, v in self.topic.items()},
            **self.producer,
            **{f"proxy.{k}": v for k, v in self.proxy.items()},
            **self.reader,
        }

    def raised(self) -> dict[str, int]:
        """Only the limits set above their defaults: what a record of this size had to change."""
        return {name: value for name, value in self.columns().items() if value != DEFAULTS[name]}

    def proxy_raised(self) -> dict[str, int]:
        """The proxy properties above their defaults: what a proxy must run with (what a
        `proxy.variants` entry must list, no more, so a variant of 8 MB matches)."""
        return {k: v for k, v in self.proxy.items() if v != DEFAULTS[f"proxy.{k}"]}

    def as_experiment_settings(self) -> dict[str, Any]:
        """The topic and producer limits as `native_produce` / `proxy_produce` parameters
        (`topic.max.message.bytes` goes to the topic, the rest to librdkafka)."""
        return {**{f"topic.{k}": v for k, v in self.topic.items()}, **self.producer}


def limits_for(record_bytes: int, *, records_per_call: int = 1) -> RecordLimits:
    """The limits that carry `record_bytes`-byte values: each default where it suffices,
    else raised to the record plus its framing (a proxy call's body: `records_per_call` of them
    in base64).

    Raises:
        ValueError: `record_bytes` or `records_per_call` below 1.

    Usage: `limits_for(2_000_000).raised()` → the five settings a 2 MB record needs raised.
    """
    if record_bytes < 1 or records_per_call < 1:
        raise ValueError(
            f"record_bytes and records_per_call must be at least 1, got {record_bytes}, {records_per_call}"
        )
    record = record_bytes + _FRAMING
    body = int(records_per_call * (record_bytes * _BASE64 + 256)) + _FRAMING

    def at_least(name: str, needed: int) -> int:
        return max(DEFAULTS[name], needed)

    producer_limit = at_least("message.max.bytes", record)
    return RecordLimits(
        record_bytes,
        topic={"max.message.bytes": at_least("topic.max.message.bytes", record)},
        producer={"message.max.bytes": producer_limit, "batch.size": at_least("batch.size", producer_limit)},
        proxy={
            "producer.message.max.bytes": at_least("proxy.producer.message.max.bytes", record),
            "request.max.bytes": at_least("proxy.request.max.bytes", body),
        },
        reader={
            "fetch.max.bytes": at_least("fetch.max.bytes", record),
            "max.partition.fetch.bytes": at_least("max.partition.fetch.bytes", record),
        },
    )
