"""Both ways at once: a ↔ b with MirrorMaker's default policy, every copy counted for a loop.

The MapR chapter says its replication graph may hold loops "without problems". MirrorMaker 2
runs a->b and b->a at once (active/active) because its default replication policy names
each copy after the cluster it came from (`a.orders` on b) and never copies a topic to the
cluster its name says it came from: `a.orders` on b is not copied back to a as
`b.a.orders`. The run makes a topic of one name on each cluster (two data centres taking
the same kind of record), offers numbered records on both at once, and counts on each
cluster every topic that ends in that name: its own, the other's copy, and any copy of a
copy (a loop). It waits twice the slowest copy's lag, and at least two of MirrorMaker's
looks for new topics, then counts again: counts that did not move mean no loop. A consumer
on each cluster subscribed by pattern (`^(.+\\.)?name$`) reads local and remote records in one group.

Each topic, and each copy made ahead of MirrorMaker, stamps records with its own append
time (`load.APPEND_TIME`), so both directions' lag is read as `replication_lag` reads it.
"""

from __future__ import annotations

import math
import re
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench import kafka
from workbench.errors import BenchError
from workbench.measure.schedule import Phase, RateSchedule
from workbench.replication.lag import check_ranges
from workbench.replication.load import APPEND_TIME, flow_row, joined_appends, offer, pick_up, settle
from workbench.replication.naming import remote_topic, separator
from workbench.replication.numbered import SEQ_DIGITS, seq_of
from workbench.replication.preflight import check_flow

if TYPE_CHECKING:
    from workbench.config import Profile
    from workbench.kafka.config import KafkaConf
    from workbench.stack import Stack

__all__ = [
    "ACTIVE_DEFAULTS",
    "ActiveActiveRun",
    "LOOKS_WAITED",
    "active_active",
    "active_active_run",
    "active_active_unavailable",
    "copy_hops",
]

#: The run's defaults: each cluster takes `rate` records/s for `seconds`.
ACTIVE_DEFAULTS: dict[str, Any] = {"rate": 500.0, "seconds": 4.0, "partitions": 2}
#: How many of MirrorMaker's looks for new topics the run waits out before it counts again:
#: a looping copy would be a new topic, found at a look.
LOOKS_WAITED = 2


@dataclass(frozen=True)
class ActiveActiveRun:
    """A run's contract row; each record's appends (`direction` a->b or b->a, then as
    `joined_appends`); and each cluster's census of topics ending in the name, twice."""

    row: dict[str, Any]
    records: pd.DataFrame
    census: pd.DataFrame

    def by_direction(self) -> dict[str, pd.DataFrame]:
        """Each direction's records (`a->b`, `b->a`), for a figure."""
        return {str(flow): records for flow, records in self.records.groupby("direction")}

    def census_table(self) -> pd.DataFrame:
        """Each cluster's topics that end in the run's name, their hops, and their records
        when the copies were all there and again after the wait (the pick-up marker included)."""
        table = self.census.pivot_table(index=["cluster", "topic", "hops"], columns="when", values="records")
        return table[["first", "again"]].astype("Int64")


def active_active_run(
    stack: Stack,
    *,
    rate: float = ACTIVE_DEFAULTS["rate"],
    seconds: float = ACTIVE_DEFAULTS["seconds"],
    partitions: int = ACTIVE_DEFAULTS["partitions"],
    record_bytes: int = 100,
    topic_prefix: str = "wb-both",
) -> ActiveActiveRun:
    """Offer `rate` records/s for `seconds` on a topic of one name on each cluster; count the copies.

    Raises:
        BenchError: a parameter out of range, a stack that replicates one way only, or the
            copies not all on the other cluster within `load.SETTLE_LIMIT_S`.
    """
    check_ranges(
        ("rate", rate, 1, 20_000),
        ("seconds", seconds, 0.5, 300),
        ("partitions", partitions, 1, 64),
        ("record_bytes", record_bytes, SEQ_DIGITS, 1_000_000),
        whole=("partitions", "record_bytes"),
    )
    reason = active_active_unavailable(stack)
    if reason is not None:
        raise BenchError(reason)
    a, b = stack.profile.replication.source, stack.profile.replication.target
    name = f"{topic_prefix}-{uuid.uuid4().hex[:8]}"
    to_b, to_a = remote_topic(stack.profile, name), remote_topic(stack.profile, name, source=b)
    check_flow(stack, name, both_ways=True)
    schedule = RateSchedule([Phase("offered", seconds, rate)])
    with _topics(stack, name, to_b, to_a, partitions), ThreadPoolExecutor(max_workers=2) as pool:
        pickup_s = max(
            pool.map(lambda back: pick_up(stack, name, to_a if back else to_b, from_peer=back), [False, True])
        )
        runs = list(pool.map(lambda peer: offer(stack, name, schedule, record_bytes, peer=peer), [False, True]))
        copies = ((stack.peer_config("admin"), to_b, runs[0]), (stack.kafka_config("admin"), to_a, runs[1]))
        for conf, copy, run in copies:
            if math.isnan(settle(conf, copy, run.sent + 1)):  # and the pick-up marker
                raise BenchError(f"{copy} did not receive all {run.sent:,} records in time; see `workbench status`")
        records = _both_directions(stack, name, to_b, to_a, a, b)
        first = _census(stack, name)
        waited_s = max(2 * float(records["lag_ms"].max()) / 1000, LOOKS_WAITED * _look_s(stack.profile))
        time.sleep(waited_s)
        census = pd.concat([first.assign(when="first"), _census(stack, name).assign(when="again")])
        read = {
            side: _by_pattern(conf, name, stack.profile)
            for side, conf in ((a, stack.kafka_config("consumer")), (b, stack.peer_config("consumer")))
        }
        _delete_loops(stack, census, name, to_b, to_a)
    params = {"rate": rate, "seconds": seconds, "partitions": partitions}
    row = _row(stack, params, records, census, read, pickup_s, waited_s, record_bytes)
    return ActiveActiveRun(row, records, census)


def active_active(stack: Stack, *, topic_prefix: str = "wb-both", **params: Any) -> dict[str, Any]:
    """One run's row (the registered experiment `active_active`). See `active_active_run`."""
    return active_active_run(stack, topic_prefix=topic_prefix, **params).row


def active_active_unavailable(stack: Stack) -> str | None:
    """Why this stack cannot show both ways at once (one line), or None."""
    settings = stack.profile.replication
    back = f"{settings.target}->{settings.source}.enabled"
    if str(settings.properties.get(back, "false")).lower() != "true":
        return (
            f"profile `{stack.profile.name}` replicates one way, {settings.source}->{settings.target}; both ways "
            f"need `replication.properties: {{{back}: true}}`, as profile `local-geo-2way` has"
        )
    return None


def copy_hops(topic: str, name: str, sep: str = ".") -> int:
    """How many flows a topic ending in `name` came through: 0 for `name`, 1 for `a.name`,
    2 for `b.a.name` (a copy of a copy: a loop). -1 for a topic that is no copy of `name`."""
    if topic == name:
        return 0
    prefix = topic[: -len(name)] if topic.endswith(sep + name) else None
    if not prefix:
        return -1
    return len([alias for alias in prefix.split(sep) if alias])


@contextmanager
def _topics(stack: Stack, name: str, to_b: str, to_a: str, partitions: int) -> Iterator[None]:
    """`name` on both clusters and each copy's topic made ahead of MirrorMaker, all stamping
    their own append time; all deleted at the end. The copies' topics come first, as in
    `stamped_topics`: MirrorMaker would make them once an original exists."""
    stack.create_topics({to_a: partitions}, config=APPEND_TIME)
    try:
        stack.create_topics({to_b: partitions}, config=APPEND_TIME, peer=True)
        try:
            stack.create_topics({name: partitions}, config=APPEND_TIME)
            stack.create_topics({name: partitions}, config=APPEND_TIME, peer=True)
            yield
        finally:
            stack.delete_topics([name, to_b], peer=True)
    finally:
        stack.delete_topics([name, to_a])


def _both_directions(stack: Stack, name: str, to_b: str, to_a: str, a: str, b: str) -> pd.DataFrame:
    """Each record's appends on its own cluster and on the other, both directions in one frame."""
    a_conf, b_conf = stack.kafka_config("consumer"), stack.peer_config("consumer")
    there = joined_appends(a_conf, name, b_conf, to_b).assign(direction=f"{a}->{b}")
    back = joined_appends(b_conf, name, a_conf, to_a).assign(direction=f"{b}->{a}")
    return pd.concat([there, back], ignore_index=True)


def _census(stack: Stack, name: str) -> pd.DataFrame:
    """On each cluster, every topic that is `name` or a copy of it, its hops and its records."""
    sep = separator(stack.profile)
    rows = []
    for cluster, conf in (
        (stack.profile.replication.source, stack.kafka_config("admin")),
        (stack.profile.replication.target, stack.peer_config("admin")),
    ):
        for topic in sorted(kafka.list_topics(conf)):
            hops = copy_hops(topic, name, sep)
            if hops >= 0:
                rows.append((cluster, topic, hops, kafka.total_records(conf, topic)))
    return pd.DataFrame(rows, columns=["cluster", "topic", "hops", "records"])


def _look_s(profile: Profile) -> float:
    """Seconds between MirrorMaker's looks for new topics (the profile's, else the stack's)."""
    from workbench.stack.mirror_plan import NOTEBOOK_INTERVALS

    key = "refresh.topics.interval.seconds"
    return float(profile.replication.properties.get(key, NOTEBOOK_INTERVALS[key]))


def _by_pattern(conf: KafkaConf, name: str, profile: Profile, timeout_s: float = 30.0) -> Counter[tuple[str, int]]:
    """What one group subscribed to `^(.+<sep>)?name$` reads on a cluster: (topic, seq) → times read.
    Reads until nothing new came for 3 s (or `timeout_s`)."""
    pattern = f"^(.+{re.escape(separator(profile))})?{re.escape(name)}$"
    consumer = kafka.consumer(conf, settings={"auto.offset.reset": "earliest"})
    seen: Counter[tuple[str, int]] = Counter()
    try:
        consumer.subscribe([pattern])
        deadline, last = time.monotonic() + timeout_s, time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - last < 3.0:
            for message in consumer.consume(1_000, timeout=0.5):
                seq = seq_of(message.value()) if message.error() is None else -1
                if seq >= 0:
                    seen[(str(message.topic()), seq)] += 1
                    last = time.monotonic()
    finally:
        consumer.close()
    return seen


def _delete_loops(stack: Stack, census: pd.DataFrame, name: str, to_b: str, to_a: str) -> None:
    """Delete any looping copy the run made (a topic the run did not create)."""
    made = {name, to_b, to_a}
    for cluster, peer in ((stack.profile.replication.source, False), (stack.profile.replication.target, True)):
        extra = sorted(set(census.loc[census["cluster"] == cluster, "topic"]) - made)
        if extra:
            stack.delete_topics(extra, peer=peer)


def _row(
    stack: Stack,
    params: dict[str, Any],
    records: pd.DataFrame,
    census: pd.DataFrame,
    read: dict[str, Counter[tuple[str, int]]],
    pickup_s: float,
    waited_s: float,
    record_bytes: int,
) -> dict[str, Any]:
    first, again = (
        census[census["when"] == when].set_index(["cluster", "topic"])["records"] for when in ("first", "again")
    )
    lags = records.groupby("direction")["lag_ms"].median()
    a, b = stack.profile.replication.source, stack.profile.replication.target
    return flow_row(
        stack,
        "active_active",
        params,
        records,
        seconds=float(params["seconds"]),
        record_bytes=record_bytes,
        latency_of="append on one cluster → append on the other, both ways",
        extra={
            "per_side": int(len(records) / 2),
            "topics_on_a": ",".join(
                sorted(census.loc[(census["cluster"] == a) & (census["when"] == "again"), "topic"])
            ),
            "topics_on_b": ",".join(
                sorted(census.loc[(census["cluster"] == b) & (census["when"] == "again"), "topic"])
            ),
            "loop_topics": int(census.loc[census["hops"] >= 2, "topic"].nunique()),
            "counts_stable": bool(first.equals(again)),
            "waited_s": waited_s,
            "pickup_s": pickup_s,
            "a_to_b_p50_ms": float(lags.get(f"{a}->{b}", float("nan"))),
            "b_to_a_p50_ms": float(lags.get(f"{b}->{a}", float("nan"))),
            "pattern_read_a": sum(read[a].values()),
            "pattern_read_b": sum(read[b].values()),
            "pattern_twice": sum(n - 1 for counter in read.values() for n in counter.values() if n > 1),
        },
    )
