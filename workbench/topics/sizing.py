"""Partition counts and the capacity they cost, as formulas with plain numbers in and out.

Each estimate returns an `Estimate`: the value, its unit, the formula with the inputs
substituted (so a notebook can print how the number came about) and the inputs. Every
function takes plain numbers, so a notebook can sweep a parameter from one topic to
millions without touching a broker.

Sources of the rules of thumb (their defaults here):

- partitions = max(t / t_produce, t / t_consume) per topic, then over-partition for
  future growth, because adding partitions later moves keys (see `growth`);
- a producer wants "a few tens of KB" of buffer per partition it writes (32 KiB here);
- a broker opens a segment file and its index for every partition replica it holds
  (newer Kafka adds a time index: pass `files_per_segment=3`);
- replicating 1,000 partitions from one broker to another adds about 20 ms to the
  commit of a message; with leaders balanced, each broker follows
  `partitions * (r - 1) / b` partitions (the source article writes `(1 - r)`, a sign slip);
- an unclean broker failure makes its leaders unavailable until each is re-elected,
  about 5 ms per partition, plus about 2 ms per partition of the cluster when the
  failed broker was the controller (Confluent's "How to choose the number of
  topics/partitions" figures, the reference the throughput article cites);
- a Confluent REST Proxy needs about 1 GB of heap for producing and admin, plus about
  16 MB per consumer instance, and above 8 GB one should run more proxies instead.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.numbers import format_number
from workbench.topics.errors import TopicDesignError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Estimate",
    "GIB",
    "GUIDE_BYTES_PER_CONSUMER",
    "KIB",
    "MIB",
    "PartitionPlan",
    "capacity",
    "measured_bytes_per_consumer",
    "open_file_handles",
    "partitions_needed",
    "plan_text",
    "producer_buffer_memory",
    "proxy_heap",
    "replication_latency",
    "unavailability_window",
]

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


@dataclass(frozen=True)
class Estimate:
    """One estimated quantity with the formula that produced it."""

    name: str
    value: float
    unit: str
    formula: str
    inputs: dict[str, float] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.name} = {self.formula} = {format_number(self.value)} {self.unit}"


@dataclass(frozen=True)
class PartitionPlan:
    """The partition count for a target throughput, and which side bounds it."""

    target: float
    produce_per_partition: float
    consume_per_partition: float
    for_produce: int
    for_consume: int
    minimum: int
    margin: float
    recommended: int

    @property
    def bound_by(self) -> str:
        """'produce' or 'consume': the side that needs more partitions (produce on a tie)."""
        return "produce" if self.for_produce >= self.for_consume else "consume"

    @property
    def formula(self) -> str:
        """The computation with its numbers, to print under a calculator."""
        return (
            f"max(⌈{format_number(self.target)} / {format_number(self.produce_per_partition)}⌉, "
            f"⌈{format_number(self.target)} / {format_number(self.consume_per_partition)}⌉) = "
            f"max({self.for_produce}, {self.for_consume}) = {self.minimum}; "
            f"with a {self.margin:.0%} margin: ⌈{self.minimum} * {1 + self.margin:g}⌉ = {self.recommended}"
        )

    def row(self) -> dict[str, Any]:
        """The plan as one tidy row: its fields, then the side that bounds it."""
        return {**asdict(self), "bound_by": self.bound_by}


def partitions_needed(
    target: float,
    produce_per_partition: float,
    consume_per_partition: float,
    margin: float = 0.0,
) -> PartitionPlan:
    """Partitions for a target throughput: `max(⌈t/t_p⌉, ⌈t/t_c⌉)`, then `⌈* (1 + margin)⌉`.

    Args:
        target: the throughput the topic must carry (any unit: msg/s or MB/s).
        produce_per_partition: measured produce throughput of one partition, same unit.
        consume_per_partition: measured consume throughput of one partition, same unit.
        margin: over-partitioning for growth, as a fraction (0.5 = 50 % more).

    Raises:
        TopicDesignError: a rate or target that is not positive, or a negative margin.

    Usage: `partitions_needed(40, 4, 8).minimum == 10` (MB/s: produce-bound).
    """
    _positive("target", target)
    _positive("produce_per_partition", produce_per_partition)
    _positive("consume_per_partition", consume_per_partition)
    _non_negative("margin", margin)
    # Round away float noise first: 0.3 / 0.1 must be 3, not 4.
    for_produce = math.ceil(round(target / produce_per_partition, 9))
    for_consume = math.ceil(round(target / consume_per_partition, 9))
    minimum = max(for_produce, for_consume, 1)
    recommended = math.ceil(round(minimum * (1 + margin), 9))
    return PartitionPlan(
        target, produce_per_partition, consume_per_partition, for_produce, for_consume, minimum, margin, recommended
    )


def plan_text(
    target: float,
    produce_per_partition: float,
    consume_per_partition: float,
    margin: float = 0.0,
    *,
    brokers: int = 3,
    replication_factor: int = 3,
    consumers: int = 0,
) -> str:
    """The recommended partition count with its formula, then what that count costs (Markdown).

    What the sizing notebook's calculator shows for each setting of its sliders.

    Raises:
        TopicDesignError: as `partitions_needed`.
    """
    if replication_factor > brokers:
        return f"replication factor {replication_factor} needs at least {replication_factor} brokers"
    plan = partitions_needed(target, produce_per_partition, consume_per_partition, margin)
    heap, proxies = proxy_heap(consumers)
    costs = [
        producer_buffer_memory(plan.recommended),
        open_file_handles(plan.recommended, brokers, replication_factor),
        replication_latency(plan.recommended, brokers, replication_factor),
        unavailability_window(plan.recommended, brokers),
        heap,
        proxies,
    ]
    return f"**{plan.recommended} partitions**: {plan.formula}\n\n" + "\n".join(f"- {c}" for c in costs)


def producer_buffer_memory(partitions: float, bytes_per_partition: float = 32 * KIB) -> Estimate:
    """Producer buffer memory to keep every partition it writes batching well.

    Usage: `producer_buffer_memory(1_000).value == 32_768_000` (bytes).
    """
    _non_negative("partitions", partitions)
    _positive("bytes_per_partition", bytes_per_partition)
    value = partitions * bytes_per_partition
    return Estimate(
        "producer buffer memory",
        value,
        "bytes",
        f"{format_number(partitions)} partitions * {format_number(bytes_per_partition)} B",
        {"partitions": partitions, "bytes_per_partition": bytes_per_partition},
    )


def open_file_handles(
    partitions: float,
    brokers: int,
    replication_factor: int = 1,
    segments_per_partition: float = 1,
    files_per_segment: int = 2,
) -> Estimate:
    """Open files per broker: each replica it holds keeps segment and index files open.

    Usage: `open_file_handles(3_000, brokers=3, replication_factor=3).value == 6_000`.
    """
    _non_negative("partitions", partitions)
    _whole_at_least("brokers", brokers, 1)
    _replication(replication_factor, brokers)
    _positive("segments_per_partition", segments_per_partition)
    _whole_at_least("files_per_segment", files_per_segment, 1)
    replicas_per_broker = partitions * replication_factor / brokers
    value = replicas_per_broker * segments_per_partition * files_per_segment
    return Estimate(
        "open file handles per broker",
        value,
        "files",
        f"{format_number(partitions)} partitions * {replication_factor} replicas / {brokers} brokers "
        f"* {format_number(segments_per_partition)} segments * {files_per_segment} files",
        {
            "partitions": partitions,
            "brokers": brokers,
            "replication_factor": replication_factor,
            "segments_per_partition": segments_per_partition,
            "files_per_segment": files_per_segment,
        },
    )


def replication_latency(
    partitions: float,
    brokers: int,
    replication_factor: int,
    ms_per_1000_partitions: float = 20.0,
) -> Estimate:
    """Latency replication adds to committing a message: followers per broker * 20 ms / 1,000.

    Usage: `replication_latency(1_000, brokers=2, replication_factor=2).value == 10.0` (ms).
    """
    _non_negative("partitions", partitions)
    _whole_at_least("brokers", brokers, 1)
    _replication(replication_factor, brokers)
    _positive("ms_per_1000_partitions", ms_per_1000_partitions)
    followers = partitions * (replication_factor - 1) / brokers
    value = followers * ms_per_1000_partitions / 1000
    return Estimate(
        "replication-added latency",
        value,
        "ms",
        f"{format_number(partitions)} partitions * ({replication_factor} - 1) / {brokers} brokers "
        f"* {format_number(ms_per_1000_partitions)} ms / 1,000",
        {
            "partitions": partitions,
            "brokers": brokers,
            "replication_factor": replication_factor,
            "ms_per_1000_partitions": ms_per_1000_partitions,
        },
    )


def unavailability_window(
    partitions: float,
    brokers: int,
    ms_per_election: float = 5.0,
    controller_ms_per_partition: float = 2.0,
    controller_failed: bool = False,
) -> Estimate:
    """Seconds a broker's unclean failure leaves its leaders unavailable.

    The failed broker led `partitions / brokers` partitions, each re-elected in turn;
    if it was also the controller, the new controller first loads every partition.

    Usage: `unavailability_window(2_000, brokers=2).value == 5.0` (seconds).
    """
    _non_negative("partitions", partitions)
    _whole_at_least("brokers", brokers, 1)
    _positive("ms_per_election", ms_per_election)
    _non_negative("controller_ms_per_partition", controller_ms_per_partition)
    leaders = partitions / brokers
    elections_ms = leaders * ms_per_election
    controller_ms = partitions * controller_ms_per_partition if controller_failed else 0.0
    formula = f"{format_number(partitions)} partitions / {brokers} brokers * {format_number(ms_per_election)} ms"
    if controller_failed:
        formula += f" + {format_number(partitions)} partitions * {format_number(controller_ms_per_partition)} ms"
    return Estimate(
        "unavailability window",
        (elections_ms + controller_ms) / 1000,
        "s",
        formula,
        {
            "partitions": partitions,
            "brokers": brokers,
            "ms_per_election": ms_per_election,
            "controller_ms_per_partition": controller_ms_per_partition,
            "controller_failed": float(controller_failed),
        },
    )


#: The deployment guide's heap per consumer instance, a figure for Confluent's JVM proxy. The
#: workbench's proxy measures its own (`workbench bench instance_cost`, notebook 05): pass
#: that as `bytes_per_consumer` to size it.
GUIDE_BYTES_PER_CONSUMER = 16 * MIB


def measured_bytes_per_consumer(rows: pd.DataFrame | None) -> float | None:
    """What one consumer instance cost this workbench's proxy, in bytes, from `instance_cost`
    rows (`results.load("instance_cost")`): the larger of idle and reading growth at the
    largest count measured; None when nothing was measured (the guide's figure stands alone).
    """
    if rows is None or rows.empty or not {"kind", "instances", "fetching_mb_per_instance"} <= set(rows.columns):
        return None
    consumers = rows[rows["kind"] == "consumer"].dropna(subset=["fetching_mb_per_instance"])
    if consumers.empty:
        return None
    largest = consumers[consumers["instances"] == consumers["instances"].max()]
    each = max(float(largest["idle_mb_per_instance"].median()), float(largest["fetching_mb_per_instance"].median()))
    return each * 1e6 if math.isfinite(each) and each > 0 else None


def proxy_heap(
    consumers: float,
    bytes_per_consumer: float = GUIDE_BYTES_PER_CONSUMER,
    base_bytes: float = 1 * GIB,
    max_heap_bytes: float = 8 * GIB,
) -> tuple[Estimate, Estimate]:
    """REST proxy heap for N consumer instances, and how many proxies keep each heap ≤ 8 GB.

    Each process needs the base heap for itself, so the consumers are spread over
    `⌈consumers * per consumer / (max heap - base)⌉` processes.

    Returns:
        (total heap in bytes, proxy processes needed).

    Usage: `heap, proxies = proxy_heap(1_000)`: 1 GiB + 1,000 * 16 MiB, 3 proxies.
    """
    _non_negative("consumers", consumers)
    _positive("bytes_per_consumer", bytes_per_consumer)
    _non_negative("base_bytes", base_bytes)
    _positive("max_heap_bytes", max_heap_bytes)
    if max_heap_bytes <= base_bytes:
        raise TopicDesignError(
            f"max_heap_bytes {max_heap_bytes!r} leaves no room above the {base_bytes!r} B base; "
            "raise it or lower the base"
        )
    heap = base_bytes + consumers * bytes_per_consumer
    processes = max(1, math.ceil(round(consumers * bytes_per_consumer / (max_heap_bytes - base_bytes), 9)))
    inputs = {
        "consumers": consumers,
        "bytes_per_consumer": bytes_per_consumer,
        "base_bytes": base_bytes,
        "max_heap_bytes": max_heap_bytes,
    }
    guide = bytes_per_consumer == GUIDE_BYTES_PER_CONSUMER
    return (
        Estimate(
            "JVM proxy heap (the guide's 16 MB per consumer)" if guide else "proxy heap (measured per consumer)",
            heap,
            "bytes",
            f"{format_number(base_bytes)} B + {format_number(consumers)} consumers"
            f" * {format_number(bytes_per_consumer)} B",
            inputs,
        ),
        Estimate(
            "proxy processes",
            processes,
            "process(es)",
            f"⌈{format_number(consumers)} * {format_number(bytes_per_consumer)} B"
            f" / ({format_number(max_heap_bytes)} B - {format_number(base_bytes)} B)⌉",
            inputs,
        ),
    )


def capacity(
    topics: float,
    partitions_per_topic: float = 1,
    brokers: int = 3,
    replication_factor: int = 3,
    consumers: float = 0,
    bytes_per_partition: float = 32 * KIB,
    segments_per_partition: float = 1,
) -> dict[str, float]:
    """Every estimate for one layout, as a flat row of plain numbers (for sweeps and tables).

    Usage: `pd.DataFrame([capacity(n) for n in (1e3, 1e4, 1e5, 1e6)])`.
    """
    partitions = topics * partitions_per_topic
    heap, processes = proxy_heap(consumers)
    return {
        "topics": topics,
        "partitions_per_topic": partitions_per_topic,
        "partitions": partitions,
        "brokers": brokers,
        "replication_factor": replication_factor,
        "leaders_per_broker": partitions / brokers,
        "replicas_per_broker": partitions * replication_factor / brokers,
        "producer_buffer_bytes": producer_buffer_memory(partitions, bytes_per_partition).value,
        "file_handles_per_broker": open_file_handles(
            partitions, brokers, replication_factor, segments_per_partition
        ).value,
        "replication_latency_ms": replication_latency(partitions, brokers, replication_factor).value,
        "unavailability_s": unavailability_window(partitions, brokers).value,
        "unavailability_controller_s": unavailability_window(partitions, brokers, controller_failed=True).value,
        "consumers": consumers,
        "proxy_heap_bytes": heap.value,
        "proxy_processes": processes.value,
    }


def _positive(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0 or math.isinf(value):
        raise TopicDesignError(f"{name} must be a positive number, got {value!r}")


def _non_negative(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0 or math.isinf(value):
        raise TopicDesignError(f"{name} must be a number ≥ 0, got {value!r}")


def _whole_at_least(name: str, value: int, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise TopicDesignError(f"{name} must be a whole number ≥ {least}, got {value!r}")


def _replication(replication_factor: int, brokers: int) -> None:
    _whole_at_least("replication_factor", replication_factor, 1)
    if replication_factor > brokers:
        raise TopicDesignError(
            f"replication_factor {replication_factor} exceeds the {brokers} brokers; "
            f"a partition cannot have more replicas than brokers: use at most {brokers}"
        )
