"""MirrorMaker's own records, decoded: the offset syncs on the source and the checkpoints on the target.

Offsets are not copied between clusters: the target appends each copy at an offset of its
own. What ties the two together is written by MirrorMaker itself, in Kafka's own binary
struct layout (big-endian integers, strings as an int16 length and UTF-8 bytes):

- **offset syncs** (`mm2-offset-syncs.<target>.internal`, on the source by default): the
  source task writes `(topic, partition) -> (upstream offset, downstream offset)` whenever
  the two drift apart by `offset.lag.max` records or more;
- **checkpoints** (`<source>.checkpoints.internal`, on the target): every
  `emit.checkpoints.interval.seconds` the checkpoint task writes, for each group it
  replicates, `(group, remote topic, partition) -> (committed offset on the source, its
  translation on the target, metadata)`, behind an int16 version header.

`translate` is the rule MirrorMaker's checkpoint task applies (`OffsetSyncStore`): the latest
sync at or before the group's offset; the sync's own downstream offset when the group
stands exactly on it, else one past it. It never lands past a record the group did not
read: what it cannot know (records between the sync and the group's offset that took no
place on the target) it reads again instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench import kafka
from workbench.kafka.wire import KafkaProtocolError, Reader

if TYPE_CHECKING:
    from workbench.config import KafkaConf, Profile

__all__ = [
    "Checkpoint",
    "OffsetSync",
    "checkpoints",
    "checkpoints_topic",
    "decode_checkpoint",
    "decode_offset_sync",
    "offset_syncs",
    "offset_syncs_topic",
    "translate",
]


@dataclass(frozen=True)
class OffsetSync:
    """A source record's offset (`upstream`) and the offset its copy landed at (`downstream`)."""

    topic: str
    partition: int
    upstream: int
    downstream: int


@dataclass(frozen=True)
class Checkpoint:
    """A group's committed offset on the source and MirrorMaker's translation of it on the target.

    `topic` is the partition's name on the target (the remote topic, `a.orders`), where
    the translated offset applies.
    """

    group: str
    topic: str
    partition: int
    upstream: int
    downstream: int
    metadata: str


def offset_syncs_topic(profile: Profile) -> str:
    """Where the flow's offset syncs are written (on the source cluster, MirrorMaker's default)."""
    separator = _separator(profile)
    return f"mm2-offset-syncs{separator}{profile.replication.target}{separator}internal"


def checkpoints_topic(profile: Profile) -> str:
    """Where the flow's checkpoints are written (on the target cluster)."""
    return f"{profile.replication.source}{_separator(profile)}checkpoints.internal"


def decode_offset_sync(key: bytes, value: bytes) -> OffsetSync:
    """One record of the offset-syncs topic.

    Raises:
        KafkaProtocolError: the bytes are not an offset sync (another topic's record, a newer layout).
    """
    keys, values = Reader(key, "an offset sync's key"), Reader(value, "an offset sync's value")
    return OffsetSync(_name(keys), keys.int32(), values.int64(), values.int64())


def decode_checkpoint(key: bytes, value: bytes) -> Checkpoint:
    """One record of the checkpoints topic (value layout version 0, the only one there is).

    Raises:
        KafkaProtocolError: the bytes are not a checkpoint, or carry a version this reader does not know.
    """
    keys, values = Reader(key, "a checkpoint's key"), Reader(value, "a checkpoint's value")
    group, topic, partition = _name(keys), _name(keys), keys.int32()
    version = values.int16()
    if version != 0:
        raise KafkaProtocolError(f"a checkpoint of layout version {version}: this reader knows version 0")
    return Checkpoint(group, topic, partition, values.int64(), values.int64(), values.string() or "")


def offset_syncs(conf: KafkaConf, profile: Profile, topic: str | None = None) -> list[OffsetSync]:
    """Every offset sync now in the source's offset-syncs topic (of `topic` alone if given), in log order.

    Raises:
        KafkaError: the topic cannot be read (the flow has written none yet, or the cluster is away).
    """
    records = kafka.read_records(conf, offset_syncs_topic(profile))
    found = (decode_offset_sync(r.key or b"", r.value or b"") for r in records if r.value is not None)
    return [s for s in found if topic is None or s.topic == topic]


def checkpoints(conf: KafkaConf, profile: Profile, group: str | None = None) -> list[Checkpoint]:
    """Every checkpoint now in the target's checkpoints topic (of `group` alone if given), in log order.

    Raises:
        KafkaError: the topic cannot be read.
    """
    records = kafka.read_records(conf, checkpoints_topic(profile))
    found = (decode_checkpoint(r.key or b"", r.value or b"") for r in records if r.value is not None)
    return [c for c in found if group is None or c.group == group]


def translate(syncs: Iterable[OffsetSync], topic: str, partition: int, upstream: int) -> int | None:
    """The target offset MirrorMaker gives a group standing at `upstream` on the source.

    None when no sync at or before `upstream` is known: MirrorMaker then emits no checkpoint.
    From every sync in the topic; MirrorMaker keeps a subset (KAFKA-14666), so its own
    answer may come from an older sync and lie further back, never further ahead.
    """
    before = [s for s in syncs if s.topic == topic and s.partition == partition and s.upstream <= upstream]
    if not before:
        return None
    nearest = max(before, key=lambda s: (s.upstream, s.downstream))
    return nearest.downstream + (0 if nearest.upstream == upstream else 1)


def _separator(profile: Profile) -> str:
    return str(profile.replication.properties.get("replication.policy.separator", "."))


def _name(reader: Reader) -> str:
    name = reader.string()
    if not name:
        raise KafkaProtocolError(f"{reader.where} holds no name where MirrorMaker writes one")
    return name
