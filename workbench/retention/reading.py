"""One reader of partition 0, natively or through the REST proxy, that says where it is:
what the retention experiments resume, rewind and count with.

Both kinds start at the group's committed offset (an assignment, no group join to wait
for), take `auto.offset.reset` for where to go when there is none or it is outside the
log, and raise `ReaderOutOfRange` in one line when that setting is `none` and the log
has moved past them: librdkafka's `_AUTO_OFFSET_RESET` consumer error natively, the
proxy's 409 / 40903 through it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka import KafkaError as RdKafkaError

from workbench.errors import KafkaError, ProxyError
from workbench.retention.errors import RetentionError

if TYPE_CHECKING:
    from workbench.proxy.client import ProxyClient
    from workbench.proxy.consumer import ProxyConsumer
    from workbench.stack import Stack

__all__ = [
    "PartitionReader",
    "RESETS",
    "Read",
    "ReaderOutOfRange",
]

#: `auto.offset.reset` values both kinds of reader take.
RESETS = ("earliest", "latest", "none")

#: (offset, timestamp in ms) of one record read.
Read = tuple[int, int]


class ReaderOutOfRange(KafkaError):
    """The reader's position is outside the log and `auto.offset.reset` is `none`."""


class PartitionReader:
    """Reads partition 0 of `topic` for `group`, from the group's committed offset.

    Usage:
        with PartitionReader(stack, topic, group, reset="earliest") as reader:
            got = reader.read(100, timeout_s=10)
            reader.commit(got[-1][0] + 1)
    """

    def __init__(
        self, stack: Stack, topic: str, group: str, *, reset: str = "earliest", proxy: ProxyClient | None = None
    ) -> None:
        if reset not in RESETS:
            raise RetentionError(f"auto.offset.reset must be one of {list(RESETS)}, got {reset!r}")
        self.topic, self.group, self.reset = topic, group, reset
        self._stack, self._proxy = stack, proxy
        self._native: Consumer | None = None
        self._rest: ProxyConsumer | None = None
        #: Records read but not yet handed out, in order.
        self._left: list[Read] = []

    def __enter__(self) -> PartitionReader:
        if self._proxy is not None:
            self._rest = self._proxy.consumer(
                self.group, partitions=[(self.topic, 0)], auto_offset_reset=self.reset
            ).__enter__()
        else:
            from workbench.kafka.clients import READER_SETTINGS, consumer

            reset = "error" if self.reset == "none" else self.reset
            # librdkafka logs every offset reset as a warning; here a reset is what is measured,
            # and the row says where it went: errors only.
            settings = {**READER_SETTINGS, "auto.offset.reset": reset, "log_level": 3}
            self._native = consumer(self._stack.kafka_config("consumer"), self.group, settings)
            self._native.assign([TopicPartition(self.topic, 0)])
        return self

    def __exit__(self, *exc_info: object) -> None:
        rest, native, self._rest, self._native = self._rest, self._native, None, None
        if rest is not None:
            rest.__exit__(None, None, None)
        if native is not None:
            native.close()

    def read(
        self, count: int, *, timeout_s: float = 30.0, idle_s: float | None = None, through: int | None = None
    ) -> list[Read]:
        """Up to `count` records from the position on: stops at `count`, after `timeout_s`,
        after `idle_s` without a record (None: no idle stop), or once the record at offset
        `through` or a later one is read (the last one written: the end is then an event,
        not a quiet spell waited out).

        Raises:
            ReaderOutOfRange: the position is outside the log and the reset is `none`.
        """
        got, self._left = self._left[:count], self._left[count:]
        deadline = time.monotonic() + timeout_s
        quiet_since = time.monotonic()
        reached = through is not None and any(offset >= through for offset, _ in got)
        while len(got) < count and not reached and time.monotonic() < deadline:
            batch = self._batch(count - len(got))
            if batch:
                got += batch
                quiet_since = time.monotonic()
                reached = through is not None and max(offset for offset, _ in batch) >= through
            elif idle_s is not None and time.monotonic() - quiet_since > idle_s:
                break
        self._left = got[count:] + self._left  # a proxy answer may hold more than asked: kept for the next read
        return got[:count]

    def commit(self, next_offset: int) -> None:
        """Commit `next_offset` as the group's position (the next record to read)."""
        if self._rest is not None:
            self._rest.commit({(self.topic, 0): next_offset - 1})  # the proxy takes the last one processed
        elif self._native is not None:
            self._native.commit(offsets=[TopicPartition(self.topic, 0, next_offset)], asynchronous=False)

    def seek(self, offset: int) -> None:
        """Read from `offset` next."""
        self._left = []
        if self._rest is not None:
            self._rest.seek(self.topic, 0, offset)
        elif self._native is not None:
            _native_seek(self._native, TopicPartition(self.topic, 0, offset))

    def seek_to_beginning(self) -> None:
        """Read from the first record still in the log next."""
        self._left = []
        if self._rest is not None:
            self._rest.seek_to_beginning([(self.topic, 0)])
        elif self._native is not None:
            _native_seek(self._native, TopicPartition(self.topic, 0, OFFSET_BEGINNING))

    def seek_to_time(self, timestamp_ms: int) -> None:
        """Read from the first record stamped at or after `timestamp_ms` next (offsets for times)."""
        self._left = []
        if self._rest is not None:
            self._rest.seek_to_time(self.topic, 0, timestamp_ms)
        elif self._native is not None:
            found = self._native.offsets_for_times([TopicPartition(self.topic, 0, timestamp_ms)], timeout=10)
            _native_seek(self._native, found[0])

    def _batch(self, wanted: int) -> list[Read]:
        if self._rest is not None:
            try:
                records = self._rest.poll(timeout_ms=500)
            except ProxyError as exc:
                if exc.status == 409 and "out of range" in exc.message.lower():
                    raise ReaderOutOfRange(f"{self.topic}-0 through the REST proxy: {exc.message}", "40903") from None
                raise
            return [(r.offset, r.timestamp or 0) for r in records]
        assert self._native is not None
        out: list[Read] = []
        for message in self._native.consume(min(wanted, 10_000), 0.5):
            error = message.error()
            if error is None:
                out.append((int(message.offset() or 0), message.timestamp()[1]))
            elif error.code() == RdKafkaError._AUTO_OFFSET_RESET:
                raise ReaderOutOfRange(
                    f"{self.topic}-0: the group's offset is outside the log and auto.offset.reset is none "
                    f"({error.str()}); seek to the beginning, the end or an offset to go on",
                    error.name(),
                )
            elif error.code() != RdKafkaError._PARTITION_EOF:
                raise KafkaError(f"reading {self.topic}-0: {error.str()}", error.name())
        return out


def _native_seek(client: Consumer, target: Any) -> None:
    """Seek, or assign at the offset when librdkafka has not started fetching the partition yet."""
    from confluent_kafka import KafkaException

    try:
        client.seek(target)
    except KafkaException:
        client.incremental_unassign([TopicPartition(target.topic, target.partition)])
        client.incremental_assign([target])
