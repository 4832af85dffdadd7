"""How long a consumer group takes to hand out partitions: the classic protocol against KIP-848.

A group's members stop reading while partitions change hands, so the time a join or a
leave takes is time a topic goes unread. Two protocols do it differently:

- `classic` (librdkafka's default): the members run the rebalance themselves through
  JoinGroup and SyncGroup; with the default eager assignors every member gives up all
  its partitions and waits for the others to rejoin, which each does at its next
  heartbeat (`heartbeat.interval.ms`, a client setting).
- `consumer` (KIP-848, `group.protocol=consumer`, Kafka 4.0 and librdkafka 2.12 on): the
  broker computes the assignment and tells each member, incrementally, at its next
  heartbeat; the heartbeat interval and session timeout are the broker's
  (`group.consumer.heartbeat.interval.ms`, 5 s by default), and librdkafka refuses
  `session.timeout.ms`, `heartbeat.interval.ms` and `partition.assignment.strategy`
  as configuration errors. `member_settings` drops them from the profile's consumer
  settings for that protocol and says which it dropped.

`join_timing` measures three moments for one protocol on a fresh group: a first member
subscribing until it holds every partition; a second one subscribing until both hold
partitions, each partition held by exactly one of them; the first leaving cleanly
(`close`) until the remaining one holds everything. A broker without KIP-848 never
assigns a `consumer` member (Tansu: no assignment); the wait is bounded and the row says
so in `outcome` instead of hanging.

    rows = group_join_timing(stack, repeats=3)
    pd.DataFrame(rows).groupby("protocol")[list(PHASES)].median()
"""

from __future__ import annotations

import logging
import math
import statistics
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaException
from confluent_kafka import KafkaError as RdKafkaError
from confluent_kafka.admin import ConfigResource, ResourceType

from workbench import kafka
from workbench.config import KafkaConf
from workbench.errors import KafkaError
from workbench.kafka.admin import alter_group_configs
from workbench.stack import Stack
from workbench.topics.errors import TopicDesignError

__all__ = [
    "CLASSIC_HEARTBEAT_MS",
    "CLASSIC_ONLY",
    "JOINED",
    "JoinTiming",
    "PHASES",
    "PROTOCOLS",
    "broker_group_settings",
    "configure_consumer_group",
    "group_join_timing",
    "join_timing",
    "join_verdict",
    "member_settings",
]

log = logging.getLogger("workbench.topics")

#: The values of librdkafka's `group.protocol`: the classic rebalance protocol and KIP-848's.
PROTOCOLS = ("classic", "consumer")
#: Settings librdkafka refuses with `group.protocol=consumer` (the broker owns them then).
CLASSIC_ONLY = ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy", "group.protocol.type")
#: The three moments measured, as the columns of a row: first join, second join, clean leave.
PHASES = {"first_join_s": "first member assigned", "second_join_s": "second member joins", "leave_s": "a member leaves"}
#: `outcome` of a row whose three moments were all measured.
JOINED = "joined"

#: librdkafka's `heartbeat.interval.ms` when a classic member does not set it.
CLASSIC_HEARTBEAT_MS = 3000
#: librdkafka errors that mean the group will never assign this member: stop waiting.
_FATAL = {"_UNSUPPORTED_FEATURE", "UNSUPPORTED_VERSION", "GROUP_AUTHORIZATION_FAILED", "INVALID_REQUEST"}


@dataclass(frozen=True)
class JoinTiming:
    """One protocol's join, second join and leave on a fresh group; NaN for what did not happen."""

    protocol: str
    partitions: int
    first_join_s: float
    second_join_s: float
    leave_s: float
    #: Members holding partitions once the second joined (2 when it worked).
    members_assigned: int
    #: Partitions both members held at that moment (0 when it worked).
    held_twice: int
    #: Partitions neither held at that moment (0 when it worked).
    unheld: int
    #: Partitions each member held once the second joined, as "3+3".
    split: str
    #: The members' heartbeat interval: the client's setting (classic) or the broker's (KIP-848); NaN unknown.
    heartbeat_ms: float
    #: The profile's settings dropped for this protocol (librdkafka refuses them with it).
    dropped: tuple[str, ...]
    #: `JOINED`, or in one line what did not happen within the wait.
    outcome: str

    def extra(self) -> dict[str, Any]:
        """The measures as a contract row's extra columns."""
        return {
            "first_join_s": self.first_join_s,
            "second_join_s": self.second_join_s,
            "leave_s": self.leave_s,
            "members_assigned": self.members_assigned,
            "held_twice": self.held_twice,
            "unheld": self.unheld,
            "split": self.split,
            "heartbeat_ms": self.heartbeat_ms,
            "dropped_settings": ",".join(self.dropped),
            "outcome": self.outcome,
        }


def member_settings(conf: KafkaConf, protocol: str) -> tuple[KafkaConf, tuple[str, ...]]:
    """The consumer settings a member of `protocol` can start with, and the keys taken out.

    With `consumer`, librdkafka fails on creation if any of `CLASSIC_ONLY` is set, so a
    profile tuned for classic groups (conf/local.yaml sets the first two) has them removed
    here; the broker's own group settings apply instead.

    Raises:
        TopicDesignError: an unknown protocol.

    Usage: `settings, dropped = member_settings(stack.kafka_config("consumer"), "consumer")`.
    """
    if protocol not in PROTOCOLS:
        raise TopicDesignError(f"unknown group.protocol {protocol!r}; use one of {', '.join(PROTOCOLS)}")
    dropped = tuple(k for k in CLASSIC_ONLY if k in conf) if protocol == "consumer" else ()
    kept = {k: v for k, v in conf.items() if k not in dropped}
    return {**kept, "group.protocol": protocol}, dropped


def configure_consumer_group(conf: KafkaConf, group: str, *, heartbeat_ms: int) -> None:
    """Give a KIP-848 group its own heartbeat interval (`consumer.heartbeat.interval.ms`, a
    group config) before its first member joins. A member hears of partitions moved to it on
    its next heartbeat, so the interval bounds how long a reassigned partition waits; the
    broker's default is 5 s, and the embedded broker lets a group go down to 0.5 s.

    Raises:
        TopicDesignError: the broker refused it (below `group.consumer.min.heartbeat.interval.ms`,
            or a broker without KIP-848's group configs), in one line.
    """
    try:
        alter_group_configs(conf, group, {"consumer.heartbeat.interval.ms": str(heartbeat_ms)})
    except KafkaError as exc:
        raise TopicDesignError(f"the broker refused group {group!r}'s heartbeat interval: {exc}") from None


def broker_group_settings(conf: KafkaConf, *, timeout: float = 10.0) -> dict[str, str]:
    """The broker's `group.*` settings (DescribeConfigs of one broker); empty when it gives none.

    They decide a KIP-848 member's timing (`group.consumer.heartbeat.interval.ms`,
    `group.consumer.session.timeout.ms`) and which protocols a group may use
    (`group.coordinator.rebalance.protocols`). A broker that does not describe its
    configuration (Tansu answers with none) gives an empty dict, logged as a warning.

    Usage: `broker_group_settings(stack.kafka_config("admin"))["group.consumer.heartbeat.interval.ms"]`.
    """
    with kafka.admin_client(conf) as client:
        brokers = client.list_topics(timeout=timeout).brokers
        resource = ConfigResource(ResourceType.BROKER, str(min(brokers)))
        try:
            entries = client.describe_configs([resource], request_timeout=timeout)[resource].result()
        except KafkaException as exc:
            log.warning("the broker did not describe its group settings: %s", exc.args[0].str())
            return {}
    return {name: str(entry.value) for name, entry in entries.items() if name.startswith("group.")}


def join_timing(
    stack: Stack, topic: str, protocol: str, *, timeout: float = 30.0, join_timeout: float = 10.0
) -> JoinTiming:
    """Time a first member's assignment, a second member's join and the first one's leave.

    Both members subscribe to `topic` in a new group, polled in turn from this thread
    every few milliseconds (polling is what hands an assignment to the application), so
    each figure is wall-clock from the call (`subscribe`, `close`) until the holdings
    are as described, to within a poll. `join_timeout` bounds the wait for the first
    assignment (a lone member of a group the broker serves gets one within a heartbeat
    or two), `timeout` each rebalance (KIP-848's take a heartbeat of each member
    involved): a broker that never assigns, or a rebalance that never settles, ends the
    measurement with `outcome` saying which; the figures not reached are NaN.

    Raises:
        TopicDesignError: an unknown protocol.
        KafkaError: the topic does not exist.

    Usage: `join_timing(stack, "orders", "consumer").second_join_s`.
    """
    settings, dropped = member_settings(stack.kafka_config("consumer"), protocol)
    everything = frozenset(p.id for p in kafka.describe_topic(stack.kafka_config("admin"), topic).partitions)
    group = f"wb-join-{protocol}-{uuid.uuid4().hex[:10]}"
    errors: list[RdKafkaError] = []
    figures = dict.fromkeys(PHASES, float("nan"))
    split, members_assigned, held_twice, unheld = "", 0, 0, len(everything)
    first = _member(settings, group, errors)
    members = [first]  # the ones still open, closed on the way out
    try:
        started = time.perf_counter()
        first.subscribe([topic])
        figures["first_join_s"], outcome = _wait(
            [first],
            lambda: _held(first, topic) == everything,
            started,
            join_timeout,
            errors,
            f"no assignment within {join_timeout:.0f} s"
            + ("; does the broker serve KIP-848 groups (Kafka 4.0 or later)?" if protocol == "consumer" else ""),
        )
        if outcome == JOINED:
            second = _member(settings, group, errors)
            members.append(second)
            started = time.perf_counter()
            second.subscribe([topic])
            figures["second_join_s"], outcome = _wait(
                members,
                lambda: _shared(members, topic, everything),
                started,
                timeout,
                errors,
                f"the second member's rebalance did not settle within {timeout:.0f} s",
            )
            holdings = [_held(member, topic) for member in members]
            split = "+".join(str(len(held)) for held in holdings)
            members_assigned = sum(1 for held in holdings if held)
            held_twice, unheld = len(holdings[0] & holdings[1]), len(everything - holdings[0] - holdings[1])
        if outcome == JOINED:
            started = time.perf_counter()
            members.pop(0).close()  # a clean leave: LeaveGroup (classic) or a leaving heartbeat (KIP-848)
            remaining = members[0]
            figures["leave_s"], outcome = _wait(
                members,
                lambda: _held(remaining, topic) == everything,
                started,
                timeout,
                errors,
                f"the remaining member did not get every partition within {timeout:.0f} s of the leave",
            )
    finally:
        for member in members:
            member.close()
    return JoinTiming(
        protocol,
        len(everything),
        figures["first_join_s"],
        figures["second_join_s"],
        figures["leave_s"],
        members_assigned,
        held_twice,
        unheld,
        split,
        _heartbeat_ms(stack, protocol, settings),
        dropped,
        outcome,
    )


def group_join_timing(
    stack: Stack,
    protocols: Sequence[str] = PROTOCOLS,
    *,
    repeats: int = 3,
    partitions: int = 6,
    timeout: float = 30.0,
    join_timeout: float = 10.0,
) -> list[dict[str, Any]]:
    """`join_timing` `repeats` times per protocol on one fresh topic, as contract rows.

    Protocols take turns within each repeat, so a machine that gets busier mid-run
    weighs on both alike. A protocol the broker never assigned is not tried again: its
    first row says so in `outcome`, and waiting out the bound again would only repeat it.

    Returns:
        One contract row (`workbench.measure.contract`) per protocol and repeat, with the
        parameters `protocol`, `partitions`, `repeat` and `JoinTiming.extra()`'s columns.

    Raises:
        TopicDesignError: an unknown protocol, or `repeats` or `partitions` below 1.

    Usage: `pd.DataFrame(group_join_timing(stack, repeats=3))`.
    """
    from workbench.measure.contract import result_row

    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown or not protocols:
        raise TopicDesignError(f"protocols must be some of {', '.join(PROTOCOLS)}, got {list(protocols)!r}")
    if repeats < 1 or partitions < 1:
        raise TopicDesignError(f"repeats and partitions must be ≥ 1, got {repeats!r} and {partitions!r}")
    topic = f"wb-join-{uuid.uuid4().hex[:10]}"
    rows: list[dict[str, Any]] = []
    unassigned: set[str] = set()
    with stack.temporary_topics({topic: partitions}):
        for repeat in range(repeats):
            for protocol in protocols:
                if protocol in unassigned:
                    continue
                timing = join_timing(stack, topic, protocol, timeout=timeout, join_timeout=join_timeout)
                if math.isnan(timing.first_join_s):  # never assigned: the next repeat would wait as long
                    unassigned.add(protocol)
                params = {"protocol": protocol, "partitions": partitions, "repeat": repeat}
                seconds = sum(getattr(timing, name) for name in PHASES)
                rows.append(
                    result_row(stack, experiment="group_join", params=params, seconds=seconds, extra=timing.extra())
                )
    return rows


def join_verdict(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Sentences comparing the protocols' medians per moment, computed from the rows themselves.

    One sentence per moment (first join, second join, leave) naming the faster protocol
    and by how much; with one protocol measured, its medians alone. A protocol none of
    whose runs joined is named with its outcome, one whose runs partly failed with how
    many. A last sentence gives each protocol's heartbeat interval, which bounds how soon
    a member hears of a change.

    Usage: `"\\n".join(f"- {line}" for line in join_verdict(rows))`.
    """
    by_protocol: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_protocol.setdefault(str(row["protocol"]), []).append(row)
    lines: list[str] = []
    medians: dict[str, dict[str, float]] = {}
    beats: dict[str, float] = {}
    for protocol, group in by_protocol.items():
        joined = [r for r in group if r["outcome"] == JOINED]
        failed = [r for r in group if r["outcome"] != JOINED]
        if failed:
            share = "every run" if not joined else f"{len(failed)} of {len(group)} runs"
            lines.append(f"`group.protocol={protocol}`: {share} stopped short on this broker: {failed[0]['outcome']}.")
        if joined:
            medians[protocol] = {name: statistics.median(float(r[name]) for r in joined) for name in PHASES}
            beats[protocol] = float(joined[0].get("heartbeat_ms", math.nan))
    if len(medians) == 1:
        ((protocol, values),) = medians.items()
        shown = ", ".join(f"{label} {values[name]:.2f} s" for name, label in PHASES.items())
        lines.append(f"`group.protocol={protocol}` (medians): {shown}.")
    elif len(medians) > 1:
        for name, label in PHASES.items():
            fast, *_, slow = sorted(medians, key=lambda p: medians[p][name])
            a, b = medians[fast][name], medians[slow][name]
            times = f", {b / a:.1f} times as fast" if a > 0 else ""
            lines.append(
                f"{label[0].upper()}{label[1:]}: `{fast}` took {a:.2f} s and `{slow}` {b:.2f} s "
                f"(medians), so `{fast}` was {b - a:.2f} s faster{times}."
            )
    dropped = {str(r.get("dropped_settings") or "") for r in by_protocol.get("consumer", [])} - {""}
    if dropped:
        names = " and ".join(f"`{name}`" for name in sorted(dropped)[0].split(","))
        lines.append(
            f"With `consumer` the profile's {names} were left out: librdkafka refuses them with that "
            "protocol, whose timing the broker sets."
        )
    known = {p: ms for p, ms in beats.items() if not math.isnan(ms)}
    if known:
        shown = " and ".join(f"every {ms:,.0f} ms with `{p}`" for p, ms in known.items())
        lines.append(f"Members heard of each change at their next heartbeat: {shown}.")
    return lines


def _heartbeat_ms(stack: Stack, protocol: str, settings: KafkaConf) -> float:
    """How often a member of `protocol` heartbeats: what it waits for to hear of a rebalance."""
    if protocol == "classic":
        return float(settings.get("heartbeat.interval.ms", CLASSIC_HEARTBEAT_MS))
    value = broker_group_settings(stack.kafka_config("admin")).get("group.consumer.heartbeat.interval.ms")
    return float(value) if value is not None else float("nan")


def _member(settings: KafkaConf, group: str, errors: list[RdKafkaError]) -> Consumer:
    """A group member that keeps librdkafka's asynchronous errors for `_wait` to look at."""
    return kafka.consumer(settings, group, {"auto.offset.reset": "latest", "error_cb": errors.append})


def _held(member: Consumer, topic: str) -> frozenset[int]:
    return frozenset(tp.partition for tp in member.assignment() if tp.topic == topic)


def _shared(members: Sequence[Consumer], topic: str, everything: frozenset[int]) -> bool:
    """Every member holds partitions, none is held twice, and together they hold them all."""
    holdings = [_held(member, topic) for member in members]
    return (
        all(holdings)
        and sum(len(h) for h in holdings) == len(everything)
        and frozenset().union(*holdings) == everything
    )


def _wait(
    members: Sequence[Consumer],
    done: Callable[[], bool],
    started: float,
    timeout: float,
    errors: list[RdKafkaError],
    missed: str,
) -> tuple[float, str]:
    """Poll the members in turn until `done()`: (seconds since `started`, JOINED), or (NaN, why it stopped)."""
    deadline = started + timeout
    while True:
        for member in members:
            member.poll(0.005)
        if done():
            return time.perf_counter() - started, JOINED
        fatal = next((e for e in errors if e.name() in _FATAL), None)
        if fatal is not None:
            return float("nan"), f"{fatal.name()}: {' '.join(fatal.str().split())}"
        if time.perf_counter() >= deadline:
            return float("nan"), missed
