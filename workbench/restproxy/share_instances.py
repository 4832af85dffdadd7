"""Share-consumer instances (KIP-932 share groups): their state, and the blocking Kafka
work done for them.

Each instance wraps a confluent-kafka `ShareConsumer` in explicit acknowledgement mode.
A record it polls is *acquired*: the broker locks it to this member for the group's
`share.record.lock.duration.ms`, until the member accepts, releases or rejects it (or
the lock runs out and the record is offered again). The proxy keeps every acquired
record in exactly one of three places, which is what the trust rule is built on:

- `buffered`: polled, in no answer yet (an answer's budget ran out before them);
- `writing`: in an answer being written to its client;
- `outstanding`: in an answer the client's connection took in full, so the client holds
  them: only these may be acknowledged by the client (explicit instances, with the
  acknowledgements call or a records request's `acknowledge`), or are accepted by the
  proxy (the affinity-free group members, see `share_consumers._handle_fetch`).

An answer that fails or is cut releases its records (`finish_answer`), so they are
offered again. librdkafka polls again only when every record of the last poll is
acknowledged, so an explicit instance with records outstanding answers a records call
409 / 40903 until its client acknowledges them.

Every librdkafka call blocks, so it runs on the manager's worker pool, one call at a time
per instance (`InstanceManager.run`, the base it shares with v2 consumer instances), never
on the event loop; names and numbers are checked before they reach librdkafka (its
assertions end the process). An instance idle for `consumer.instance.timeout.ms` is closed
like a deleted one: what it holds is released first, then it leaves the group. The v3
share-group GETs' admin client (`workbench.kafka.share_admin`) lives on the manager too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from confluent_kafka import AcknowledgeType, KafkaException, Message, ShareConsumer, TopicPartition

from workbench.errors import KafkaError
from workbench.httpserver.errors import RestError
from workbench.kafka.security import Security
from workbench.kafka.share_admin import ShareGroupAdmin
from workbench.restproxy.errors import ILLEGAL_STATE
from workbench.restproxy.instances import Instance, InstanceManager, close_within
from workbench.restproxy.metadata import kafka_error
from workbench.restproxy.schemas import SchemaFormats
from workbench.restproxy.settings import RestProxySettings

__all__ = [
    "ACK_TYPES",
    "AckType",
    "Coordinates",
    "MAX_POLL_RECORDS_CEILING",
    "ShareInstance",
    "ShareManager",
    "acknowledge",
    "acknowledge_held",
    "coordinates",
    "finish_answer",
    "partitions",
    "poll_batch",
    "renew",
    "subscribe",
    "subscription",
    "take",
    "unsubscribe",
]

log = logging.getLogger("workbench.restproxy")

#: (topic, partition, offset): one record.
Coordinates = tuple[str, int, int]
AckType = Literal["accept", "release", "reject"]
ACK_TYPES: dict[str, AcknowledgeType] = {
    "accept": AcknowledgeType.ACCEPT,
    "release": AcknowledgeType.RELEASE,
    "reject": AcknowledgeType.REJECT,
}

#: Consumer settings a ShareConsumer refuses at construction (librdkafka 2.16's
#: rdkafka_conf.c: group-protocol settings live on the broker for share groups), left out
#: of the properties' `consumer.*` pass-through for share instances.
_NOT_FOR_SHARE = frozenset(
    {
        "session.timeout.ms",
        "heartbeat.interval.ms",
        "allow.auto.create.topics",
        "fetch.queue.backoff.ms",
        "enable.auto.commit",
        "auto.commit.interval.ms",
        "auto.offset.reset",
        "enable.auto.offset.store",
        "enable.partition.eof",
        "group.protocol",
        "group.protocol.type",
        "group.remote.assignor",
        "group.instance.id",
        "partition.assignment.strategy",
        "max.poll.interval.ms",
    }
)
#: How long a commit of acknowledgements may wait for the broker (seconds).
_COMMIT_TIMEOUT_S = 10.0
_RESETS = {"earliest": "earliest", "smallest": "earliest", "latest": "latest", "largest": "latest"}
#: The most records a create body's `max.poll.records` may ask one answer to hold (its
#: bytes stay bounded by `consumer.request.max.bytes`).
MAX_POLL_RECORDS_CEILING = 1_000_000
#: Share-group admin calls (the v3 GETs) running at once in one process, and each one's deadline.
_GROUP_CALLS = 4
_GROUP_CALL_TIMEOUT_S = 10.0


@dataclass(kw_only=True)
class ShareInstance(Instance):
    """One share-consumer instance: the ShareConsumer and the records it holds."""

    consumer: ShareConsumer
    #: True for the affinity-free group members (`share_consumers._handle_fetch`), which
    #: the proxy acknowledges itself; False for the explicit instances a client acknowledges.
    member: bool = False
    buffered: deque[Message] = field(default_factory=deque)
    writing: dict[Coordinates, Message] = field(default_factory=dict)
    outstanding: dict[Coordinates, int] = field(default_factory=dict)
    #: Partitions this member has received records from (what the v3 assignments show).
    seen: set[tuple[str, int]] = field(default_factory=set)
    #: The group's `share.auto.offset.reset` the create body asked for (set before it joins).
    reset: str | None = None
    #: The most records one poll, and so one answer, holds (`max.poll.records`).
    max_records: int = 500

    @property
    def held(self) -> int:
        """Records acquired by this member and not yet acknowledged."""
        return len(self.buffered) + len(self.writing) + len(self.outstanding)


def _max_poll_records(asked: Any, default: int) -> int:
    """A create body's `max.poll.records` (an integer from 1 to the ceiling; a string of
    digits is taken, as Jackson takes it), else the properties' `consumer.max.poll.records`."""
    if asked is None:
        return default
    if isinstance(asked, str) and asked.isascii() and asked.isdigit() and len(asked) < 10:
        asked = int(asked)
    if type(asked) is not int or not 1 <= asked <= MAX_POLL_RECORDS_CEILING:
        raise RestError(
            422, 42204, f"max.poll.records must be an integer from 1 to {MAX_POLL_RECORDS_CEILING}, got {asked!r}"[:200]
        )
    return asked


def _groups_admin(settings: RestProxySettings) -> tuple[ShareGroupAdmin | None, str | None]:
    """The cluster's share-group admin client, with the TLS and SASL of the `admin.*`
    settings, or None and why (settings it does not speak, or bootstrap servers it cannot read)."""
    client_id = f"{settings.id}-share-groups" if settings.id else "rest-proxy-share-groups"
    try:
        security = Security.from_conf({**settings.admin})
        admin = ShareGroupAdmin(
            settings.bootstrap_servers, timeout_s=_GROUP_CALL_TIMEOUT_S, client_id=client_id, security=security
        )
    except KafkaError as exc:
        return None, str(exc)
    return admin, None


class ShareManager(InstanceManager[ShareInstance]):
    """All share-consumer instances of this process, their worker pool and their expiry."""

    kind = "Share consumer"
    limit_property = "share.consumer.instances.max"
    name_prefix = "rest-share-consumer"
    thread_prefix = "share"

    def __init__(
        self,
        settings: RestProxySettings,
        schemas: SchemaFormats | None = None,
        group_setup: Callable[[str, dict[str, str]], None] | None = None,
    ) -> None:
        super().__init__(settings, schemas)
        #: Sets a share group's configs before its first member joins (the admin client's
        #: incremental_alter_configs on the GROUP resource); None: not offered.
        self.group_setup = group_setup
        #: The v3 share-group GETs' admin client, or None with the reason it cannot be used
        #: (`groups_view_reason`): then they show this process's own members.
        self.groups_admin, self.groups_view_reason = _groups_admin(settings)
        #: At most this many share-group admin calls at once; each waits that long for its turn.
        self.groups_calls = asyncio.Semaphore(_GROUP_CALLS)
        self.groups_timeout_s = _GROUP_CALL_TIMEOUT_S

    @property
    def limit(self) -> int:
        return self.settings.share_instances_max

    def visible(self, instance: ShareInstance) -> bool:
        """Affinity-free members are the proxy's own: no client names them."""
        return not instance.member

    def close_client(self, instance: ShareInstance) -> None:
        _close(instance)

    def expiry_note(self, instance: ShareInstance) -> str:
        return f"; releasing {instance.held} record(s)"

    def conf(self, group: str, client_id: str) -> dict[str, Any]:
        """The ShareConsumer settings: the properties' `consumer.*` minus what a share
        consumer refuses, explicit acknowledgement, and `consumer.max.poll.records`."""
        passed = {
            k: v for k, v in self.settings.consumer.items() if k not in _NOT_FOR_SHARE and not k.startswith("queued.")
        }
        return {
            "bootstrap.servers": self.settings.bootstrap_servers,
            "max.poll.records": self.settings.consumer_max_poll_records,
            **passed,
            # A member that does not poll for max.poll.interval.ms leaves its group, and an
            # instance's client may think between answers for as long as the instance lives
            # (the v2 consumers' 7 s would drop a member a slow client still uses).
            "max.poll.interval.ms": min(max(self.settings.consumer_instance_timeout_ms, 1000), 86_400_000),
            "group.id": group,
            "client.id": client_id,
            "share.acknowledgement.mode": "explicit",
            "logger": log,
        }

    def create(self, group: str, body: dict[str, Any], *, member: bool = False) -> ShareInstance:
        """Validate the create body and build the instance (the ShareConsumer too).

        Args:
            group: the share group (checked: 422 / 42204 when unusable).
            body: `{"name"|"id", "format", "auto.offset.reset"}`; the offset reset is
                the group's `share.auto.offset.reset`, set before this member joins.
            member: an affinity-free group member (named by the proxy).
        """
        name = self.checked_name(group, body)
        fmt = self.checked_format(body)
        reset = body.get("auto.offset.reset", body.get("share.auto.offset.reset"))
        if reset is not None and str(reset).lower() not in _RESETS:
            raise RestError(
                422, 42204, f"Invalid value {reset!r} for auto.offset.reset: earliest or latest (smallest, largest)"
            )
        max_records = _max_poll_records(body.get("max.poll.records"), self.settings.consumer_max_poll_records)
        client_id = f"{self.settings.id}-{name}" if self.settings.id else name
        conf = {**self.conf(group, client_id), "max.poll.records": max_records}
        consumer = self.client(ShareConsumer, conf)
        instance = ShareInstance(
            group=group,
            name=name,
            format=fmt,
            consumer=consumer,
            expires=time.monotonic() + self.timeout_s,
            member=member,
            schemas=self.schemas_for(fmt),
            reset=None if reset is None else _RESETS[str(reset).lower()],
            conf=dict(conf),
            max_records=max_records,
        )
        return self.add(instance)

    async def configure_group(self, instance: ShareInstance) -> None:
        """Set the group's `share.auto.offset.reset` when the create body named one,
        before the member subscribes (it applies from the member's first fetch)."""
        reset = instance.reset
        if reset is None or self.group_setup is None:
            return
        try:
            await asyncio.get_running_loop().run_in_executor(
                self.pool, self.group_setup, instance.group, {"share.auto.offset.reset": reset}
            )
        except RestError:
            await self.delete(instance)
            raise


def _ack_all(instance: ShareInstance, messages: Iterable[Coordinates], kind: AcknowledgeType) -> int:
    """Acknowledge records locally (sent with the next commit); how many librdkafka took.

    A record librdkafka no longer holds in flight (its lock ran out and it was acquired
    again elsewhere) is skipped: there is nothing left to acknowledge."""
    done = 0
    for topic, partition, offset in messages:
        try:
            instance.consumer.acknowledge_offset(topic, partition, offset, kind)
            done += 1
        except (KafkaException, RuntimeError, ValueError) as exc:
            log.debug(
                "share %s/%s: %s-%d@%d not acknowledged: %s",
                instance.group,
                instance.name,
                topic,
                partition,
                offset,
                exc,
            )
    return done


def _held(instance: ShareInstance) -> list[Coordinates]:
    buffered = [coordinates(m) for m in instance.buffered]
    return buffered + list(instance.writing) + list(instance.outstanding)


def coordinates(message: Message) -> Coordinates:
    return (message.topic() or "", message.partition() or 0, message.offset() or 0)


def _commit(instance: ShareInstance, named: Iterable[tuple[str, int]]) -> dict[tuple[str, int], dict[str, Any]]:
    """Send the acknowledgements made so far and wait for the broker's answer: a row per
    partition, with its error when the broker refused them. A partition in `named`
    that the answer leaves out gets an error row: nothing says the broker took its
    acknowledgements, so the client must not count them."""
    try:
        results = instance.consumer.commit_sync(_COMMIT_TIMEOUT_S)
    except KafkaException as exc:
        raise kafka_error(exc, "acknowledgement commit failed") from None
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for tp, error in (results or {}).items():
        row: dict[str, Any] = {"topic": tp.topic, "partition": tp.partition, "error_code": None, "error": None}
        if error is not None:
            detail: Any = error.args[0] if error.args else error
            retriable = bool(detail.retriable()) if hasattr(detail, "retriable") else False
            row["error_code"] = 50003 if retriable else 50002
            row["error"] = detail.str() if hasattr(detail, "str") else str(detail)
        rows[(tp.topic, tp.partition)] = row
    for topic, partition in named:
        if (topic, partition) not in rows:
            log.warning("share %s/%s: no commit result for %s-%d", instance.group, instance.name, topic, partition)
            rows[(topic, partition)] = _refused_row(topic, partition, "the commit's answer did not name this partition")
    return rows


def _refused_row(topic: str, partition: int, why: str) -> dict[str, Any]:
    return {
        "topic": topic,
        "partition": partition,
        "error_code": 50002,
        "error": f"acknowledgements not applied ({why}): this partition's records come again",
    }


def _close(instance: ShareInstance) -> None:
    """Release every record the instance holds, then leave the group (close commits the
    releases): its records are offered to the group's other members at once, without
    waiting for their locks."""
    released = _ack_all(instance, _held(instance), AcknowledgeType.RELEASE)
    instance.buffered.clear()
    instance.writing.clear()
    instance.outstanding.clear()
    close_within(f"share consumer {instance.group}/{instance.name}", instance.consumer.close)
    if released:
        log.info("share consumer %s/%s closed; %d record(s) released", instance.group, instance.name, released)


def subscribe(instance: ShareInstance, topics: list[str]) -> None:
    try:
        instance.consumer.subscribe(topics)
    except (KafkaException, ValueError) as exc:
        raise RestError(422, 422, f"cannot subscribe to {topics[:5]}: {exc}") from None
    instance.topics = list(topics)


def unsubscribe(instance: ShareInstance) -> None:
    """Release what the instance holds, then leave the group with a fresh member in its place.

    librdkafka 2.16's share consumer, subscribed again after an unsubscribe, heartbeats with
    its old member epoch, which the broker answers GROUP_ID_NOT_FOUND, a fatal error (found
    by fuzzing): the instance leaves as a closed member and the next subscribe joins anew.
    """
    renew(instance)
    instance.topics = []


def renew(instance: ShareInstance) -> None:
    """Release what the instance holds, close its member and make a fresh one (same
    settings, same subscription); a member librdkafka has failed fatally is replaced so."""
    _close(instance)
    try:
        instance.consumer = ShareConsumer(instance.conf)
        if instance.topics:
            instance.consumer.subscribe(instance.topics)
    except (KafkaException, ValueError) as exc:
        raise RestError(503, 50302, f"share consumer could not join again: {exc}") from None


def subscription(instance: ShareInstance) -> list[str]:
    return list(instance.topics)


def poll_batch(instance: ShareInstance, deadline: float) -> None:
    """Poll into `buffered` until records come or `deadline` passes, when nothing is held
    (librdkafka polls only when every record of the last poll is acknowledged).

    Raises:
        RestError: 409 / 40903 when the client still holds records of earlier answers, or
            when the instance has no subscription.
    """
    if instance.buffered:
        return
    if instance.outstanding:
        raise RestError(
            409,
            ILLEGAL_STATE,
            f"{len(instance.outstanding)} record(s) of earlier answers are not acknowledged: acknowledge each "
            "(accept, release or reject) through POST .../acknowledgements before reading more",
        )
    if not instance.topics:
        raise RestError(409, ILLEGAL_STATE, "The share consumer instance is not subscribed to any topic.")
    while True:
        remaining = deadline - time.monotonic()
        messages: Iterable[Message] = ()
        try:
            messages = instance.consumer.poll(max(0.0, min(remaining, 1.0)))
        except KafkaException as exc:
            if not _fatal(exc):
                raise kafka_error(exc, "share fetch failed") from None
            _replace_failed(instance, str(exc))
        for message in messages:
            error = message.error()
            if error is None:
                instance.buffered.append(message)
            elif error.fatal():
                _replace_failed(instance, error.str())
                break
            else:
                log.debug("share %s/%s: %s", instance.group, instance.name, error.str())
        if instance.buffered or time.monotonic() >= deadline:
            return


def _fatal(exc: KafkaException) -> bool:
    error: Any = exc.args[0] if exc.args else None
    return bool(error.fatal()) if hasattr(error, "fatal") else False


def _replace_failed(instance: ShareInstance, why: str) -> None:
    """A member librdkafka failed fatally reads nothing more: what it held goes back to the
    group (released, or freed when it leaves) and a fresh member takes its place."""
    log.warning("share consumer %s/%s failed (%s); joining again as a new member", instance.group, instance.name, why)
    renew(instance)


def take(instance: ShareInstance, messages: list[Message]) -> None:
    """Move `messages` (the head of `buffered`) into the answer being written."""
    for _ in messages:
        message = instance.buffered.popleft()
        instance.writing[coordinates(message)] = message
        instance.seen.add((message.topic() or "", message.partition() or 0))


def finish_answer(instance: ShareInstance, written: bool) -> int:
    """After an answer: the client holds its records when it was written in full (an
    explicit instance's become `outstanding`; a group member accepts them), else they
    are released for redelivery. Returns how many records changed hands."""
    records = list(instance.writing)
    instance.writing.clear()
    if not records:
        return 0
    if written and not instance.member:
        for coordinates in records:
            instance.outstanding[coordinates] = 1
        return len(records)
    kind = AcknowledgeType.ACCEPT if written else AcknowledgeType.RELEASE
    done = _ack_all(instance, records, kind)
    try:
        instance.consumer.commit_async()
    except (KafkaException, RuntimeError) as exc:
        log.warning("share %s/%s: acknowledgement commit failed: %s", instance.group, instance.name, exc)
    if not written:
        log.info(
            "share %s/%s: an answer was not written in full; %d record(s) released", instance.group, instance.name, done
        )
    return done


def acknowledge_held(instance: ShareInstance, kind: str) -> int:
    """Acknowledge every record the client holds (`outstanding`: records of answers written
    to it in full) with `kind`, as a records request's `acknowledge` asks; how many
    librdkafka took.

    The acknowledgements go to the broker with the member's next fetch, as a native share
    consumer's do (KIP-932 carries them on ShareFetch): no round trip of their own. When
    records of the last poll are still buffered (no fetch follows this answer), they are
    sent at once, without waiting for the broker's answer. No client waits for that
    answer: a record whose lock ran out before its acknowledgement arrived comes again (at
    least once); a client that must know uses `acknowledge` (the acknowledgements call)."""
    held = list(instance.outstanding)
    instance.outstanding.clear()
    done = _ack_all(instance, held, ACK_TYPES[kind])
    if held and instance.buffered:
        try:
            instance.consumer.commit_async()
        except (KafkaException, RuntimeError) as exc:
            log.warning("share %s/%s: acknowledgement commit failed: %s", instance.group, instance.name, exc)
    return done


def acknowledge(instance: ShareInstance, acks: list[tuple[str, int, int, str]]) -> list[dict[str, Any]]:
    """Apply a client's acknowledgements and commit them; one row per partition.

    Every record named must be one the client holds (`outstanding`): a record never
    written to it, still buffered, or already acknowledged is refused before librdkafka
    sees anything (409 / 40903), so the whole request applies or none of it does.
    """
    unknown = [(t, p, o) for t, p, o, _ in acks if (t, p, o) not in instance.outstanding]
    if unknown:
        shown = ", ".join(f"{t}-{p}@{o}" for t, p, o in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise RestError(
            409,
            ILLEGAL_STATE,
            f"Not held by this share consumer instance: {shown}{more}. Only records of answers it "
            "wrote in full and not yet acknowledged can be acknowledged.",
        )
    by_partition: dict[tuple[str, int], list[tuple[int, str]]] = {}
    for topic, partition, offset, kind in acks:
        instance.outstanding.pop((topic, partition, offset), None)
        by_partition.setdefault((topic, partition), []).append((offset, kind))
    refused = {key: row for key, items in by_partition.items() if (row := _apply(instance, key, items)) is not None}
    rows = {**_commit(instance, [key for key in by_partition if key not in refused]), **refused}
    return [rows[key] for key in sorted(rows)]


def _apply(instance: ShareInstance, key: tuple[str, int], items: list[tuple[int, str]]) -> dict[str, Any] | None:
    """Acknowledge one partition's records as the client asked, all or none, as the broker
    applies a partition's acknowledgements. When librdkafka no longer holds some of them
    (the partition moved to another member, and with it the records' acquisition), the
    rest are released, so every record of the partition comes again; the error row says
    so. None when all were taken."""
    topic, partition = key
    taken = []
    for offset, kind in items:
        if _ack_all(instance, [(topic, partition, offset)], ACK_TYPES[kind]):
            taken.append(offset)
    if len(taken) == len(items):
        return None
    _ack_all(instance, [(topic, partition, offset) for offset in taken], AcknowledgeType.RELEASE)
    log.warning(
        "share %s/%s: %s-%d: librdkafka no longer holds %d of %d acknowledged record(s); all come again",
        instance.group,
        instance.name,
        topic,
        partition,
        len(items) - len(taken),
        len(items),
    )
    return _refused_row(topic, partition, f"this member no longer holds {len(items) - len(taken)} of them")


def partitions(instance: ShareInstance) -> list[TopicPartition]:
    return [TopicPartition(t, p) for t, p in sorted(instance.seen)]
