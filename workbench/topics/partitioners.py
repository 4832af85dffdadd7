"""Key → partition, exactly as the Java client and librdkafka compute it.

Why compute it ourselves: what happens to keys when a topic grows can then be computed
for any partition counts without a broker (and checked against one that grows a topic,
`live_growth`), and a strategy can say which partition holds a device without reading the
topic.

The partitioners (librdkafka's `partitioner` setting; the Java client in brackets):

| name                | hash of a key                         | NULL key          | empty key |
|---------------------|---------------------------------------|-------------------|-----------|
| `murmur2`           | murmur2 & 0x7fffffff, modulo          | client's choice   | hashed    |
| `murmur2_random`    | same (the Java client's default)      | client's choice   | hashed    |
| `consistent`        | CRC-32, modulo                        | client's choice   | hashed    |
| `consistent_random` | CRC-32 (librdkafka's default)         | client's choice   | client's choice |
| `fnv1a`             | FNV-1a 32-bit, absolute value, modulo | client's choice   | hashed    |
| `fnv1a_random`      | same (Sarama's default hash)          | client's choice   | hashed    |
| `random`            | none                                  | client's choice   | client's choice |

"Client's choice" means no hash decides: librdkafka (since 1.9) and the Java client
(since 2.4) put such records on a sticky partition that changes every few
milliseconds, so `partition_for` returns None for them. librdkafka's murmur2 is the
same function as Java's `Utils.murmur2` (seed 0x9747b28c), which is why a Python
producer with `partitioner=murmur2_random` places keys where a Java producer does.

Pure Python, cached per key: ~1-2 µs per cached hash, a few µs uncached, fast enough
for the 100,000-key growth tables and the parity tests.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from functools import lru_cache

from workbench.topics.errors import TopicDesignError

__all__ = [
    "JAVA_DEFAULT",
    "LIBRDKAFKA_DEFAULT",
    "PARTITIONERS",
    "fnv1a",
    "key_bytes",
    "murmur2",
    "partition_for",
]

#: librdkafka's default `partitioner`.
LIBRDKAFKA_DEFAULT = "consistent_random"
#: librdkafka's name for the Java client's default placement of keyed records.
JAVA_DEFAULT = "murmur2_random"

_MASK32 = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 of `data` as the Java client's signed 32-bit int.

    Usage: `murmur2(b"21") == -973932308` (a vector of Kafka's own UtilsTest).
    """
    return _murmur2_cached(bytes(data))


@lru_cache(maxsize=1 << 20)
def _murmur2_cached(data: bytes) -> int:
    m = 0x5BD1E995
    length = len(data)
    h = (0x9747B28C ^ length) & _MASK32
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * m) & _MASK32
        k ^= k >> 24
        k = (k * m) & _MASK32
        h = ((h * m) & _MASK32) ^ k
    tail = length % 4
    # The tail mixes in the last 1-3 bytes, highest first, as Java's switch falls through.
    if tail == 3:
        h ^= data[whole + 2] << 16
    if tail >= 2:
        h ^= data[whole + 1] << 8
    if tail >= 1:
        h ^= data[whole]
        h = (h * m) & _MASK32
    h ^= h >> 13
    h = (h * m) & _MASK32
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def fnv1a(data: bytes) -> int:
    """librdkafka's FNV-1a: 32-bit FNV-1a taken as a signed int, then its absolute value.

    The absolute value is librdkafka's, to agree with Sarama's hash partitioner; the
    one value with no positive twin (-2**31) stays 2**31 as an unsigned number.

    Usage: `fnv1a(b"kafka") == 0x0D33C4E1` (a vector of librdkafka's own unit test).
    """
    return _fnv1a_cached(bytes(data))


@lru_cache(maxsize=1 << 20)
def _fnv1a_cached(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & _MASK32
    if h & 0x80000000:  # negative as int32: take -h in 32-bit arithmetic
        h = (-h) & _MASK32
    return h


def _crc32(data: bytes) -> int:
    return zlib.crc32(data) & _MASK32


def _murmur2_positive(data: bytes) -> int:
    return _murmur2_cached(data) & 0x7FFFFFFF


# name -> (hash of the key, whether an empty key is left to the client like a NULL one)
_HASHES: dict[str, tuple[Callable[[bytes], int] | None, bool]] = {
    "murmur2": (_murmur2_positive, False),
    "murmur2_random": (_murmur2_positive, False),
    "consistent": (_crc32, False),
    "consistent_random": (_crc32, True),
    "fnv1a": (_fnv1a_cached, False),
    "fnv1a_random": (_fnv1a_cached, False),
    "random": (None, True),
}

#: Every partitioner name `partition_for` understands (librdkafka's values of `partitioner`).
PARTITIONERS: tuple[str, ...] = tuple(sorted(_HASHES))


def key_bytes(key: bytes | str) -> bytes:
    """A key as the client sends it: bytes as they are, text as UTF-8 (what confluent-kafka does)."""
    if isinstance(key, bytes | bytearray | memoryview):
        return bytes(key)
    if isinstance(key, str):
        return key.encode("utf-8")
    raise TopicDesignError(f"a key must be bytes or str, not {type(key).__name__} ({key!r}); encode it first")


def partition_for(key: bytes | str | None, num_partitions: int, partitioner: str = "murmur2") -> int | None:
    """The partition a keyed record lands on, as the producer computes it.

    Args:
        key: the record key (text is UTF-8 encoded, as confluent-kafka does); None for no key.
        num_partitions: partitions of the topic.
        partitioner: librdkafka's `partitioner` value; `murmur2` is the Java client's hash.

    Returns:
        The partition, or None when no hash decides (a NULL key, an empty key under
        `consistent_random`, or the `random` partitioner): the client then picks a sticky
        partition of its own.

    Raises:
        TopicDesignError: an unknown partitioner, or a partition count below 1.

    Usage: `partition_for(b"device-7", 12)`; `partition_for("car-1", 6, "consistent_random")`.
    """
    if partitioner not in _HASHES:
        raise TopicDesignError(
            f"unknown partitioner {partitioner!r}; use one of {', '.join(PARTITIONERS)} "
            f"(librdkafka's `partitioner` setting; murmur2 is the Java client's)"
        )
    if isinstance(num_partitions, bool) or not isinstance(num_partitions, int) or num_partitions < 1:
        raise TopicDesignError(f"num_partitions must be a whole number ≥ 1, got {num_partitions!r}")
    hash_of, empty_is_null = _HASHES[partitioner]
    if key is None or hash_of is None:
        return None
    data = key_bytes(key)
    if empty_is_null and not data:
        return None
    return hash_of(data) % num_partitions
