"""Record values for load generators: JSON-like text that compresses like real events.

Random bytes would make every codec look useless and a repeated constant would make
them all look magic; device readings with random numbers sit in between, as real
telemetry does. A pool of distinct values is cycled so that a producer batch does not
consist of one value repeated (which any codec shrinks to nothing).
"""

from __future__ import annotations

import random

from workbench.topics.strategies import device_ids

__all__ = ["key_pool", "value_pool"]

_POOL_BYTES = 32_000_000  # memory the pool may take, whatever the record size


def value_pool(record_bytes: int, *, distinct: int = 1024, seed: int = 7) -> list[bytes]:
    """Distinct values of exactly `record_bytes` bytes each (fewer for huge records).

    Usage: `values = value_pool(1000); value = values[i % len(values)]`.
    """
    if record_bytes < 1:
        raise ValueError(f"record_bytes must be at least 1, got {record_bytes}")
    rng = random.Random(seed)
    count = max(2, min(distinct, _POOL_BYTES // record_bytes))
    return [_reading_text(rng, record_bytes) for _ in range(count)]


def key_pool(count: int = 1000) -> list[bytes]:
    """Device-id keys (`device-00000`...), so records spread over partitions by the key hash, as in production."""
    return [device.encode() for device in device_ids(count, width=5)]


def _reading_text(rng: random.Random, size: int) -> bytes:
    parts: list[str] = []
    length = 0
    while length < size:
        part = (
            f'{{"device":"dev-{rng.randrange(10_000):05d}","temp":{rng.uniform(-20, 45):.2f},'
            f'"hum":{rng.uniform(0, 100):.1f},"seq":{rng.randrange(1_000_000)}}}'
        )
        parts.append(part)
        length += len(part) + 1
    return "\n".join(parts).encode()[:size]
