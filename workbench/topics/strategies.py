"""Three ways to lay out device data in topics, behind one interface.

- `KeyedTopic`: every device in one topic, the device id as the key. Few topics, a
  consumer of one device reads (and discards) its partition's other devices.
- `TopicPerDevice`: one topic per device, optionally inside a MapR-style stream
  (`/stream:topic`). Reading one device reads nothing else; the topic count, and with
  it metadata, files and group-join work, grows with the fleet.
- `BucketedTopics`: the hybrid: devices hashed into M topics of P partitions each.

Each strategy answers the same questions, so a notebook can swap them:

    strategy.topics(devices)        {topic: partitions} to create
    strategy.route(device)          Route(topic, key, partition, expected_partition)
    strategy.subscription()         how a consumer reads every device (names or a regex)
    strategy.subscription(device)   how it reads one device (a topic, or one partition + key filter)
    strategy.spark_options(device)  the same as Spark Kafka source options (subscribe /
                                    subscribePattern / assign)
    strategy.producer_settings()    the `partitioner` that makes `expected_partition` true

Routes leave the partition to the producer's partitioner (`partition` is None) and
predict it with `partition_for`, so what a Java or Python producer does is what is
measured; the prediction holds when the producer uses `producer_settings()`.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass

from workbench.topics.errors import TopicDesignError
from workbench.topics.partitioners import JAVA_DEFAULT, PARTITIONERS, murmur2, partition_for

__all__ = [
    "BucketedTopics",
    "KeyedTopic",
    "Route",
    "Subscription",
    "TopicPerDevice",
    "TopicStrategy",
    "device_ids",
]

#: Kafka's rule for topic names: these characters, at most 249 of them.
_LEGAL_NAME = re.compile(r"[A-Za-z0-9._-]+")
_MAX_NAME = 249
#: A salt for the bucket hash, so bucket and partition are not the same hash modulo
#: related numbers (M = P = 4 would otherwise put every device of bucket i in partition i).
_BUCKET_SALT = b"workbench-bucket:"


def device_ids(count: int, *, width: int = 3) -> list[str]:
    """`device-000`, `device-001`, ...: the device ids every generator, experiment and test uses.

    One scheme, so a device in a telemetry topic, a benchmark key and a per-device topic
    name are the same string. Zero-padded to `width` digits, or more when `count` needs
    them, so the ids sort in numeric order. Key size is part of a record's size: a
    benchmark that must keep its record size keeps its `width`.

    Usage: `device_ids(3)` is `["device-000", "device-001", "device-002"]`.
    """
    digits = max(width, len(str(max(0, count - 1))))
    return [f"device-{i:0{digits}d}" for i in range(count)]


@dataclass(frozen=True)
class Route:
    """Where one device's records go."""

    topic: str
    key: bytes
    #: The partition to pass to `produce`, or None to let the partitioner place the key.
    partition: int | None
    #: Where the record lands under the strategy's partitioner.
    expected_partition: int


@dataclass(frozen=True)
class Subscription:
    """How a consumer reads: topic names, a regex, or fixed partitions plus a key filter."""

    topics: tuple[str, ...] = ()
    #: A regex in librdkafka's form (a leading `^` marks it as a pattern).
    pattern: str | None = None
    #: Fixed (topic, partition) pairs, read without a consumer group.
    assignment: tuple[tuple[str, int], ...] = ()
    #: Records with another key share these partitions and must be skipped.
    key: bytes | None = None

    def for_subscribe(self) -> list[str]:
        """The list to pass to `Consumer.subscribe` (a group subscription).

        Raises:
            TopicDesignError: this subscription is an assignment; use `assignment`.
        """
        if self.assignment:
            raise TopicDesignError(
                f"this subscription reads fixed partitions {list(self.assignment)}; "
                "assign them (Consumer.assign) instead of subscribing"
            )
        return [self.pattern] if self.pattern else list(self.topics)

    def spark_options(self) -> dict[str, str]:
        """The Spark Kafka source option that reads the same data."""
        if self.assignment:
            by_topic: dict[str, list[int]] = {}
            for topic, partition in self.assignment:
                by_topic.setdefault(topic, []).append(partition)
            return {"assign": json.dumps(by_topic, separators=(",", ":"))}
        if self.pattern:
            # Spark matches a Java regex against the whole name; the `^` is librdkafka's marker.
            return {"subscribePattern": self.pattern.removeprefix("^")}
        return {"subscribe": ",".join(self.topics)}

    @property
    def kind(self) -> str:
        """'assign', 'pattern' or 'topics'."""
        return "assign" if self.assignment else "pattern" if self.pattern else "topics"


class TopicStrategy(ABC):
    """The questions every topic layout answers; see the module docstring."""

    #: Short name for tables and plots.
    label: str = ""

    def __init__(self, partitioner: str = JAVA_DEFAULT) -> None:
        if partitioner not in PARTITIONERS or partitioner == "random":
            raise TopicDesignError(
                f"partitioner {partitioner!r} cannot route devices; use a hashing one: "
                f"{', '.join(p for p in PARTITIONERS if p != 'random')}"
            )
        self.partitioner = partitioner

    @abstractmethod
    def topics(self, devices: Iterable[str] = ()) -> dict[str, int]:
        """Topics to create for these devices, `{name: partitions}`."""

    @abstractmethod
    def route(self, device: str) -> Route:
        """Where a device's records go."""

    @abstractmethod
    def subscription(self, device: str | None = None) -> Subscription:
        """How to read every device (None) or one device."""

    def spark_options(self, device: str | None = None) -> dict[str, str]:
        """Spark Kafka source options reading every device, or one (filter on `key` too)."""
        return self.subscription(device).spark_options()

    def producer_settings(self) -> dict[str, str]:
        """librdkafka settings that make the producer place keys as `route` predicts."""
        return {"partitioner": self.partitioner}

    def _key(self, device: str) -> bytes:
        if not isinstance(device, str) or not device:
            raise TopicDesignError(f"a device id must be a non-empty string, got {device!r}")
        return device.encode("utf-8")

    def _partition(self, key: bytes, partitions: int) -> int:
        partition = partition_for(key, partitions, self.partitioner)
        assert partition is not None  # non-empty key, hashing partitioner: checked above
        return partition


class KeyedTopic(TopicStrategy):
    """All devices in one topic of `partitions` partitions, keyed by device id.

    Usage: `KeyedTopic("telemetry", partitions=12).route("car-7")`.
    """

    label = "keyed topic"

    def __init__(self, name: str, partitions: int, partitioner: str = JAVA_DEFAULT) -> None:
        super().__init__(partitioner)
        self.name = _checked_name(name, "topic name")
        self.partitions = _checked_count("partitions", partitions)

    def topics(self, devices: Iterable[str] = ()) -> dict[str, int]:
        return {self.name: self.partitions}

    def route(self, device: str) -> Route:
        key = self._key(device)
        return Route(self.name, key, None, self._partition(key, self.partitions))

    def subscription(self, device: str | None = None) -> Subscription:
        if device is None:
            return Subscription(topics=(self.name,))
        route = self.route(device)
        return Subscription(assignment=((self.name, route.expected_partition),), key=route.key)

    def __repr__(self) -> str:
        return f"KeyedTopic({self.name!r}, partitions={self.partitions}, partitioner={self.partitioner!r})"


class TopicPerDevice(TopicStrategy):
    """One topic per device, `<prefix><device>`; with `stream`, MapR's `/stream:<prefix><device>`.

    Kafka topic names allow only `[A-Za-z0-9._-]`, so with no stream a device id with
    other characters is refused. With a MapR stream the names are what MapR Streams
    expects; a Kafka broker (the embedded one included) cannot create them.

    Usage: `TopicPerDevice("car.").subscription()` is the regex `^car\\..*`.
    """

    label = "topic per device"

    def __init__(
        self, prefix: str, partitions: int = 1, stream: str | None = None, partitioner: str = JAVA_DEFAULT
    ) -> None:
        super().__init__(partitioner)
        if not prefix:
            raise TopicDesignError(
                "a per-device topic prefix must not be empty: the regex subscription would match every topic"
            )
        _checked_name(prefix, "topic prefix")
        if stream is not None and not (stream.startswith("/") and ":" not in stream):
            raise TopicDesignError(
                f"a MapR stream is an absolute path with no ':', like '/streams/cars'; got {stream!r}"
            )
        self.prefix = prefix
        self.stream = stream
        self.partitions = _checked_count("partitions", partitions)

    def topic_for(self, device: str) -> str:
        """The device's topic name."""
        self._key(device)
        name = _checked_name(self.prefix + device, f"topic for device {device!r}")
        return f"{self.stream}:{name}" if self.stream else name

    def topics(self, devices: Iterable[str] = ()) -> dict[str, int]:
        return {self.topic_for(d): self.partitions for d in devices}

    def route(self, device: str) -> Route:
        key = self._key(device)
        return Route(self.topic_for(device), key, None, self._partition(key, self.partitions))

    def subscription(self, device: str | None = None) -> Subscription:
        if device is not None:
            return Subscription(topics=(self.topic_for(device),))
        # Topic names hold only [A-Za-z0-9._-]: '.' is the one regex metacharacter to escape.
        escaped = self.prefix.replace(".", "\\.")
        return Subscription(pattern=f"^{self.stream}:{escaped}.*" if self.stream else f"^{escaped}.*")

    def __repr__(self) -> str:
        stream = f", stream={self.stream!r}" if self.stream else ""
        return (
            f"TopicPerDevice({self.prefix!r}, partitions={self.partitions}{stream}, partitioner={self.partitioner!r})"
        )


class BucketedTopics(TopicStrategy):
    """Devices hashed into `topics` topics (`<prefix>000`...) of `partitions` partitions each.

    The bucket uses murmur2 of a salted key, a hash independent of the partitioner's,
    so every partition of every bucket gets devices.

    Usage: `BucketedTopics("fleet-", topics=16, partitions=4).route("car-7").topic`.
    """

    label = "bucketed topics"

    def __init__(self, prefix: str, topics: int, partitions: int, partitioner: str = JAVA_DEFAULT) -> None:
        super().__init__(partitioner)
        if not prefix:
            raise TopicDesignError("a bucket topic prefix must not be empty")
        _checked_name(prefix, "topic prefix")
        self.prefix = prefix
        self.buckets = _checked_count("topics", topics)
        self.partitions = _checked_count("partitions", partitions)
        self._width = len(str(self.buckets - 1))

    def bucket_of(self, device: str) -> int:
        """The bucket (topic index) a device hashes to."""
        return (murmur2(_BUCKET_SALT + self._key(device)) & 0x7FFFFFFF) % self.buckets

    def topic_name(self, bucket: int) -> str:
        """The name of bucket topic `bucket`."""
        return f"{self.prefix}{bucket:0{self._width}d}"

    def topics(self, devices: Iterable[str] = ()) -> dict[str, int]:
        return {self.topic_name(b): self.partitions for b in range(self.buckets)}

    def route(self, device: str) -> Route:
        key = self._key(device)
        return Route(self.topic_name(self.bucket_of(device)), key, None, self._partition(key, self.partitions))

    def subscription(self, device: str | None = None) -> Subscription:
        if device is None:
            return Subscription(topics=tuple(self.topics()))
        route = self.route(device)
        return Subscription(assignment=((route.topic, route.expected_partition),), key=route.key)

    def __repr__(self) -> str:
        return (
            f"BucketedTopics({self.prefix!r}, topics={self.buckets}, partitions={self.partitions}, "
            f"partitioner={self.partitioner!r})"
        )


def _checked_name(name: str, what: str) -> str:
    if not isinstance(name, str) or not _LEGAL_NAME.fullmatch(name) or len(name) > _MAX_NAME or name in {".", ".."}:
        raise TopicDesignError(
            f"{what} {name!r} is not a legal Kafka topic name: use only letters, digits, '.', '_' and '-', "
            f"at most {_MAX_NAME} characters (map other device ids to safe names, or use BucketedTopics with keys)"
        )
    return name


def _checked_count(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TopicDesignError(f"{name} must be a whole number ≥ 1, got {value!r}")
    return value
