"""`ThroughputMeter`: msg/s from the sum of true end offsets, sampled while a load runs.

This is the workbench's version of the MapR article's shell script, which summed the
topics' max offsets every interval and printed the difference per second. It watches
the log, not the client, so it measures what actually landed, whoever produced it (a
proxy, several processes, Spark). It uses the true end offsets (`kafka.end_offsets`),
because Tansu's ListOffsets(latest) lags by up to a batch.
"""

from __future__ import annotations

import gc
import queue
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import pandas as pd

from workbench import kafka
from workbench.config import KafkaConf
from workbench.errors import KafkaError
from workbench.measure.sampling import Sampler
from workbench.measure.timeline import Timeline, mean_rate, rate_between, timeline_rates

__all__ = ["Sample", "ThroughputMeter"]


@dataclass(frozen=True)
class Sample:
    """One reading: seconds since start, records in the topics, rate since the previous reading
    (`timeline.rate_between`; 0.0 for the first, so a live chart starts from zero)."""

    t: float
    total: int
    msg_s: float


class ThroughputMeter(Sampler):
    """Samples the sum of true end offsets over `topics` every `interval` seconds.

    Use it as a context manager around a load; read `samples` or `frame()` afterwards,
    or iterate it (in another thread) to get samples as they come. `on_sample` is called
    from the sampling thread: give it `viz.live_throughput()`'s callback to draw a live chart.

    Delete metered topics after the meter stops, not while it reads them.

    Usage:
        with ThroughputMeter(stack.kafka_config("admin"), [topic], interval=0.5) as meter:
            run_load()
        with ThroughputMeter(conf, pattern=r"^bench-", interval=1.0) as meter:  # every bench topic
            run_load()
        meter.frame()  # columns t, total, msg_s
    """

    def __init__(
        self,
        conf: KafkaConf,
        topics: str | Iterable[str] = (),
        *,
        pattern: str | None = None,
        interval: float = 1.0,
        on_sample: Callable[[Sample], None] | None = None,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be positive, got {interval}")
        self.conf = conf
        self.topics = [topics] if isinstance(topics, str) else list(topics)
        self.pattern = re.compile(pattern) if pattern else None
        if not self.topics and self.pattern is None:
            raise ValueError("give topics, or a pattern that matches topic names")
        # Last count seen per topic: a topic deleted while the meter runs keeps counting
        # what it held, so the total never drops and the rate never goes negative.
        self._counts: dict[str, int] = {}
        super().__init__(interval)
        self.on_sample = on_sample
        self.samples: list[Sample] = []
        self._queue: queue.Queue[Sample | None] = queue.Queue()
        #: One AdminClient for every reading, and a log read only where it changed (see
        #: `kafka.OffsetReader`): a reading of 4 topics through `end_offsets`, with new
        #: clients each time, took ~230 ms and 30 ms of the producing process's CPU.
        self._reader = kafka.OffsetReader(conf)

    def total(self) -> int:
        """Records written to the topics so far: the sum of their true end offsets.

        With a `pattern`, the topics are looked up at every reading (the articles'
        script summed over every topic of a stream); topics that disappear keep the
        count they had.
        """
        metadata = self._reader.admin.list_topics(timeout=self._reader.timeout).topics
        names = list(self.topics)
        if self.pattern is not None:
            names += [t for t in metadata if self.pattern.search(t) and t not in names]
        for name in names:
            try:
                topic = metadata.get(name)
                if topic is None or topic.error is not None:
                    raise KafkaError(f"topic {name!r} not found ({topic.error if topic else 'no metadata'})")
                self._counts[name] = sum(self._reader.ends([(name, p) for p in topic.partitions]).values())
            except KafkaError:
                if self.pattern is None or name in self.topics:
                    raise
                # Deleted between listing and reading: keep its last count. The failed
                # call left its Kafka clients in an exception-traceback cycle; collect it
                # now, in this thread, rather than whenever and wherever GC next runs
                # (confluent-kafka-python #1761: clients destroyed by GC in another thread
                # can crash the process).
                gc.collect()
        return sum(self._counts.values())

    def stop(self) -> list[Sample]:  # type: ignore[override]
        """Take a last reading, stop sampling and return every sample; raises a reading's failure."""
        super().stop()
        return self.samples

    def __iter__(self) -> Iterator[Sample]:
        """Samples as they are taken, until the meter stops."""
        while (item := self._queue.get()) is not None:
            yield item

    def timeline(self) -> Timeline:
        """The readings as a timeline: (seconds since start, records in the topics)."""
        return [(s.t, s.total) for s in self.samples]

    def frame(self) -> pd.DataFrame:
        """The rates as a table: `t` (s), `total` (records), `msg_s` (`timeline.timeline_rates`)."""
        return timeline_rates(self.timeline())

    def mean_rate(self) -> float:
        """Records per second between the first and the last reading."""
        return mean_rate(self.timeline())

    def _first(self) -> None:
        self._started = time.perf_counter()
        self._read()

    def _read(self) -> None:
        self._record(self.total())

    def _close(self) -> None:
        self._reader.close()  # in the caller's thread, not whenever the collector gets to it
        self._queue.put(None)

    def _record(self, total: int) -> None:
        now = time.perf_counter() - self._started
        rate = rate_between((self.samples[-1].t, self.samples[-1].total), (now, total)) if self.samples else 0.0
        sample = Sample(now, total, rate)
        self.samples.append(sample)
        self._queue.put(sample)
        if self.on_sample is not None:
            self.on_sample(sample)
