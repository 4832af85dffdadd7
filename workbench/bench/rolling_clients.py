"""The clients of a rolling restart: a writer of numbered records through the balancer, and
readers that each keep one consumer instance on one proxy, making it again whenever the
proxy's restart ends it. They record what happened (acknowledgements, deliveries, failed
calls by cause); `workbench.bench.rolling_restart` turns that into the run's figures.
"""

from __future__ import annotations

import itertools
import struct
import threading
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass

from workbench.errors import BenchError, ProxyError
from workbench.proxy import ProxyClient, ProxyConsumer, ProxyUnavailableError, Retries, Timeout

__all__ = ["Delivery", "Reader", "SEQUENCE", "Writer", "await_every_partition", "drain"]

#: The record's number, big-endian, at the start of its value.
SEQUENCE = struct.Struct(">Q")
#: How often the writer sends one produce call, and how long a records request may wait.
_TICK_S = 0.05
_POLL_MS = 200


@dataclass(frozen=True)
class Delivery:
    """One record as a reader got it: when (`time.monotonic()`), where, and its number."""

    at: float
    partition: int
    offset: int
    sequence: int


def await_every_partition(readers: Sequence[Reader], partitions: int, deadline: float) -> float:
    """The moment every partition has been delivered at least once: the group reads."""
    while time.monotonic() < deadline:
        seen = {d.partition for r in readers for d in list(r.deliveries)}
        if len(seen) == partitions:
            return time.monotonic()
        time.sleep(0.05)
    raise BenchError(f"the group did not read all {partitions} partitions within 60 s of starting")


def drain(readers: Sequence[Reader], acknowledged: dict[tuple[int, int], int], deadline: float) -> None:
    """Wait until every acknowledged record has been delivered, or the deadline."""
    wanted = set(acknowledged)
    while time.monotonic() < deadline:
        got = {(d.partition, d.offset) for r in readers for d in list(r.deliveries)}
        if wanted <= got:
            return
        time.sleep(0.1)


class Writer(threading.Thread):
    """Numbered records through the balancer at a steady rate; a failed call is sent again."""

    def __init__(
        self,
        url: str,
        topic: str,
        partitions: int,
        rate: int,
        record_bytes: int,
        auth: tuple[str, str] | None,
        stop: threading.Event,
    ) -> None:
        super().__init__(name=f"rolling-writer-{topic}", daemon=True)
        self.client = _client(url, auth)
        self.topic, self.partitions, self.rate, self.stop = topic, partitions, rate, stop
        self.padding = b"r" * (record_bytes - SEQUENCE.size)
        self.acknowledged: dict[tuple[int, int], int] = {}
        self.acked_at: dict[tuple[int, int], float] = {}
        #: Failed produce calls by cause ("HTTP 502", "unavailable", a per-record error code).
        self.causes: Counter[str] = Counter()
        self.written_at: list[tuple[float, int]] = []
        self.failed = 0

    def run(self) -> None:
        sent, started = 0, time.monotonic()
        with self.client:
            while not self.stop.is_set():
                due = min(int((time.monotonic() - started) * self.rate), sent + 5_000)
                if due > sent:
                    self._send(range(sent, due))
                    sent = due
                time.sleep(_TICK_S)

    def _send(self, numbers: range) -> None:
        """Send these records, and send again those not acknowledged until writing stops."""
        pending = list(numbers)
        while pending:
            records = [{"partition": n % self.partitions, "value": SEQUENCE.pack(n) + self.padding} for n in pending]
            try:
                offsets = self.client.produce(self.topic, records).offsets
            except (ProxyError, ProxyUnavailableError) as exc:  # the balancer found no proxy, or lost the answer
                self.causes[_cause(exc)] += 1
                offsets = ()
            now = time.monotonic()
            again = []
            for number, offset in itertools.zip_longest(pending, offsets):
                where = (offset.partition, offset.offset) if offset is not None and offset.error_code is None else None
                if where is not None and where[0] is not None and where[1] is not None:
                    place = (int(where[0]), int(where[1]))
                    self.acknowledged[place], self.acked_at[place] = number, now
                else:
                    again.append(number)
            self.written_at.append((now, len(pending) - len(again)))
            if again:
                self.failed += 1
                if offsets:
                    code = next((o.error_code for o in offsets if o.error_code), "missing")
                    self.causes[f"record error {code}"] += 1
                if self.stop.is_set():
                    return
                time.sleep(_TICK_S)
            pending = again


class Reader(threading.Thread):
    """One consumer instance on one proxy, made again on it whenever it is gone."""

    def __init__(
        self,
        url: str,
        group: str,
        topic: str,
        auto_commit: bool,
        commit_interval_s: float,
        auth: tuple[str, str] | None,
        stop: threading.Event,
    ) -> None:
        super().__init__(name=f"rolling-reader-{url}", daemon=True)
        self.client = _client(url, auth)
        self.group, self.topic, self.auto_commit = group, topic, auto_commit
        self.commit_interval_s, self.stop = commit_interval_s, stop
        self.deliveries: list[Delivery] = []
        self.made = 0
        #: Calls its instance refused other than with a 404 (a commit during a rebalance).
        self.refused = 0

    def run(self) -> None:
        consumer: ProxyConsumer | None = None
        committed_at = time.monotonic()
        # What this member read since its last commit. Only that is committed: a position read
        # before a rebalance moved the partition away would rewind the new owner's commit.
        unsaved: dict[tuple[str, int], int] = {}
        with self.client:
            while not self.stop.is_set():
                if consumer is None:
                    consumer, unsaved = self._make(), {}
                    continue
                try:
                    records = consumer.poll(timeout_ms=_POLL_MS)
                    now = time.monotonic()
                    for r in records:
                        self.deliveries.append(Delivery(now, r.partition, r.offset, SEQUENCE.unpack_from(r.value)[0]))
                        unsaved[(r.topic, r.partition)] = r.offset
                    if not self.auto_commit and unsaved and now - committed_at >= self.commit_interval_s:
                        consumer.commit(unsaved)
                        committed_at, unsaved = now, {}
                except ProxyUnavailableError:  # its proxy is restarting: the instance goes with it
                    consumer = None
                except ProxyError as exc:
                    if exc.status == 404:  # its proxy restarted: the instance is gone
                        consumer = None
                    else:  # a commit refused mid-rebalance: the instance lives on, and reads on
                        self.refused += 1
            if consumer is not None:
                _quietly_close(consumer)

    def _make(self) -> ProxyConsumer | None:
        consumer = self.client.consumer(
            self.group, topics=[self.topic], auto_offset_reset="earliest", auto_commit=self.auto_commit
        )
        try:
            consumer.open()
        except (ProxyError, ProxyUnavailableError):  # its proxy is stopping or starting
            time.sleep(_TICK_S)
            return None
        self.made += 1
        return consumer


def _client(url: str, auth: tuple[str, str] | None) -> ProxyClient:
    """A client of one URL that never retries by itself: the writer and readers decide what a
    failed call means (send again; make the instance again)."""
    return ProxyClient(url, retries=Retries(attempts=1), timeout=Timeout(2.0, 30.0), auth=auth)


def _cause(exc: Exception) -> str:
    """A failed call's cause in a few words: the HTTP status, or that no proxy answered."""
    return f"HTTP {exc.status}" if isinstance(exc, ProxyError) else "no proxy answered"


def _quietly_close(consumer: ProxyConsumer) -> None:
    with suppress(ProxyError, ProxyUnavailableError):  # its proxy is gone with it
        consumer.close()
