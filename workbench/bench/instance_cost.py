"""What a consumer instance costs the REST proxy process that holds it: memory and CPU by count.

The REST proxy deployment guide sizes a proxy by its consumers, about 16 MB of heap each: a
JVM figure, the Java consumer's fetch buffers plus a share of the answer buffer. This proxy
is a Python process whose instances are librdkafka consumers, each with its own threads,
connections and prefetch queue, so its figure is measured here rather than borrowed.
`instance_cost` creates `instances` consumer (or share-consumer) instances on one proxy
process, each subscribed to a fresh topic, first idle and then, with `fetching`, reading
records written at `rate`: the process's resident memory before, idle and at the fetching
peak, and its CPU, give the cost per instance. Only a proxy the workbench started can be
measured (its PID is on this machine); on someone else's cluster the experiment says so.

Memory a process frees goes back to its allocator, not to the system, so a proxy that held
instances before grows less for new ones: measured, 0.41-0.57 MB per idle consumer instance
on a proxy just started, 0.02-0.18 MB on one that had held a hundred. Measure on a fresh
stack (`workbench up`) for what a proxy's first instances cost.
"""

from __future__ import annotations

import threading
import time
import uuid
from contextlib import ExitStack
from functools import partial
from typing import TYPE_CHECKING, Any

from workbench.errors import BenchError
from workbench.measure.resources import cpu_seconds, rss_bytes
from workbench.topics.sizing import GUIDE_BYTES_PER_CONSUMER

if TYPE_CHECKING:
    import pandas as pd

    from workbench.proxy.client import ProxyClient
    from workbench.stack import ServiceRecord, Stack

__all__ = [
    "GUIDE_MB_PER_CONSUMER",
    "INSTANCE_KINDS",
    "MAX_INSTANCES",
    "POLL_MS",
    "instance_cost",
    "instance_cost_sentence",
    "instance_cost_sweep",
]

#: The kinds of instance measured: v2 consumer instances (one group each) or share-consumer
#: instances (one share group).
INSTANCE_KINDS = ("consumer", "share")
#: The most instances one run creates (the proxy's own limits are 500 and 100 by default).
MAX_INSTANCES = 1_000


def instance_cost(
    stack: Stack,
    *,
    instances: int = 20,
    kind: str = "consumer",
    fetching: bool = True,
    rate: float = 2_000.0,
    seconds: float = 5.0,
    partitions: int = 4,
    record_bytes: int = 1_000,
    protocol: str = "classic",
    fetch_max_bytes: int = 0,
    max_partition_fetch_bytes: int = 0,
    topic_prefix: str = "bench-instances",
) -> dict[str, Any]:
    """Create `instances` instances on the stack's first proxy process, idle for `seconds`,
    then (with `fetching`) reading `rate` records/s for `seconds`; one contract row.

    `protocol` ("consumer": KIP-848) and the fetch sizes (`consumer.fetch.max.bytes`,
    `consumer.max.partition.fetch.bytes`; 0 keeps librdkafka's 52,428,800 and 1,048,576) are
    the proxy's consumer settings: any of them other than the default measures a proxy of its
    own started with them (`side_stack`), so the figures compare proxies alike but for them.

    Returns:
        A row with `rss_before_mb`, `rss_idle_mb`, `rss_fetching_mb` (the process and its
        children), `idle_mb_per_instance` and `fetching_mb_per_instance` (the growth over
        the count), `idle_cpu_pct` and `fetching_cpu_pct` (of one core), `records` read.

    Raises:
        BenchError: a count or rate out of range, an unknown kind, or a profile whose proxy
            runs elsewhere (its memory cannot be read from here).
    """
    _check(instances, kind, rate, seconds, partitions, record_bytes)
    properties = _consumer_properties(protocol, fetch_max_bytes, max_partition_fetch_bytes)
    params = {
        "kind": kind,
        "instances": instances,
        "fetching": fetching,
        "rate": rate,
        "protocol": protocol,
        "fetch_max_bytes": fetch_max_bytes,
        "max_partition_fetch_bytes": max_partition_fetch_bytes,
    }
    measure = partial(
        _measure, instances=instances, kind=kind, fetching=fetching, rate=rate, seconds=seconds,
        partitions=partitions, record_bytes=record_bytes, topic_prefix=topic_prefix,
    )  # fmt: skip
    if not properties:
        return _row(stack, params, *measure(stack))
    if not stack.profile.embedded:
        raise BenchError(
            f"instance_cost with {', '.join(f'{k}={v}' for k, v in properties.items() if v)} needs a proxy started "
            f"with it, and the workbench starts none on profile {stack.profile.name!r}"
        )
    from workbench.bench.scale import side_stack

    with side_stack(stack, proxy_properties=properties, label="instances") as side:
        return _row(stack, params, *measure(side))


def _consumer_properties(protocol: str, fetch_max_bytes: int, max_partition_fetch_bytes: int) -> dict[str, str]:
    """The proxy properties a point needs beyond the stack's own (empty: the stack's proxy will do)."""
    from workbench.bench.rolling_restart import protocol_properties

    for name, value in (("fetch_max_bytes", fetch_max_bytes), ("max_partition_fetch_bytes", max_partition_fetch_bytes)):
        if not 0 <= value <= 1_000_000_000:
            raise BenchError(f"{name} must be 0 (librdkafka's default) to 1,000,000,000 bytes, got {value}")
    properties = protocol_properties(protocol)
    if fetch_max_bytes:
        properties["consumer.fetch.max.bytes"] = str(fetch_max_bytes)
    if max_partition_fetch_bytes:
        properties["consumer.max.partition.fetch.bytes"] = str(max_partition_fetch_bytes)
    return properties


def _measure(
    stack: Stack,
    *,
    instances: int,
    kind: str,
    fetching: bool,
    rate: float,
    seconds: float,
    partitions: int,
    record_bytes: int,
    topic_prefix: str,
) -> tuple[dict[str, float], int, int, float]:
    """The measures on `stack`'s first proxy process: (measured, records read, payload bytes, seconds)."""
    record = _proxy_process(stack)
    from workbench.proxy.client import ProxyClient

    topic = f"{topic_prefix}-{uuid.uuid4().hex[:10]}"
    with stack.temporary_topics({topic: partitions}), ProxyClient(str(record.url)) as client:
        before = rss_bytes(record.pid)
        with ExitStack() as held:
            opened = [held.enter_context(_instance(client, kind, topic, i)) for i in range(instances)]
            _await_joined(opened, kind)
            idle_cpu, idle_rss = _window(record.pid, seconds)
            fetching_cpu, fetching_rss, read, fetched_s = (
                _fetching(stack, record.pid, opened, kind, topic, rate, seconds, record_bytes)
                if fetching
                else (float("nan"), float("nan"), 0, float("nan"))
            )
    mb = 1e6
    measured = {
        "rss_before_mb": before / mb,
        "rss_idle_mb": idle_rss / mb,
        "rss_fetching_mb": fetching_rss / mb,
        "idle_mb_per_instance": (idle_rss - before) / mb / instances,
        "fetching_mb_per_instance": (fetching_rss - before) / mb / instances,
        "idle_cpu_pct": idle_cpu,
        "fetching_cpu_pct": fetching_cpu,
    }
    return measured, read, read * record_bytes, fetched_s


def _instance(client: ProxyClient, kind: str, topic: str, index: int) -> Any:
    run = topic.rsplit("-", 1)[-1]
    if kind == "share":
        return client.share_consumer(f"instances-{run}", topics=[topic], auto_offset_reset="earliest")
    return client.consumer(f"instances-{run}-{index}", topics=[topic], auto_offset_reset="earliest")


#: How long one records request may wait, by kind. A share instance fetches only while a
#: request waits (it holds no records ahead, docs/rest-proxy.md), and the broker answers a
#: share fetch when its own wait is up: a short request returned nothing at 200 records/s.
POLL_MS = {"consumer": 50, "share": 600}
#: How long a member's first ask waits while the instances join: joining needs the request,
#: not records (at a share instance's 600 ms, 50 members asking in turn took 30 s, measured).
_JOIN_ASK_MS = 50


def _read(instance: Any, kind: str, wait_ms: int | None = None) -> int:
    """One records request (waiting `wait_ms`, else its kind's `POLL_MS`); a share instance
    accepts what it got (else it may not ask again)."""
    records = instance.poll(timeout_ms=POLL_MS[kind] if wait_ms is None else wait_ms)
    if kind == "share" and records:
        instance.accept(records)
    return len(records)


def _await_joined(opened: list[Any], kind: str, timeout_s: float = 30.0) -> None:
    """Records requests until every consumer instance holds partitions (its group joined, its
    connections open): before that an instance has cost its proxy almost nothing yet. A
    share group's members share partitions; each asks once (`_JOIN_ASK_MS`)."""
    deadline = time.monotonic() + timeout_s
    waiting = list(opened)
    while waiting and time.monotonic() < deadline:
        for instance in waiting:
            _read(instance, kind, wait_ms=_JOIN_ASK_MS)
        waiting = [i for i in waiting if kind == "consumer" and not i.assignments()]
    if waiting:
        raise BenchError(f"{len(waiting)} of {len(opened)} consumer instances held no partition after {timeout_s:g} s")


def _window(pid: int, seconds: float) -> tuple[float, float]:
    """CPU (% of one core) over `seconds` of nothing but the instances' own upkeep, and the RSS after."""
    start = cpu_seconds(pid, descendants=True)
    time.sleep(seconds)
    return (cpu_seconds(pid, descendants=True) - start) / seconds * 100, float(rss_bytes(pid))


def _fetching(
    stack: Stack,
    pid: int,
    opened: list[Any],
    kind: str,
    topic: str,
    rate: float,
    seconds: float,
    record_bytes: int,
) -> tuple[float, float, int, float]:
    """Records written at `rate` for `seconds` while every instance reads in turn: CPU (% of a
    core), peak RSS, records read (by all instances together), and the seconds it took.

    The last round of reads ends after `seconds` (each instance reads once per round: 50
    instances took 4 s for a 1 s window, measured), so the CPU is over the time it took."""
    from workbench.kafka.clients import producer

    stop = threading.Event()

    def write() -> None:
        client = producer(stack.kafka_config("producer"), {"linger.ms": 5})
        value, sent, started = b"r" * record_bytes, 0, time.monotonic()
        while not stop.is_set():
            due = int((time.monotonic() - started) * rate)
            for _ in range(due - sent):
                try:
                    client.produce(topic, value)
                except BufferError:
                    client.poll(0.05)
            sent = max(sent, due)
            client.poll(0.02)
        client.flush(10)

    writer = threading.Thread(target=write, name=f"instances-writer-{topic}", daemon=True)
    start, peak, read = cpu_seconds(pid, descendants=True), 0, 0
    writer.start()
    began = time.monotonic()
    deadline = began + seconds
    try:
        while time.monotonic() < deadline:
            for instance in opened:
                read += _read(instance, kind)
            peak = max(peak, rss_bytes(pid))
        took, used = time.monotonic() - began, cpu_seconds(pid, descendants=True) - start
    finally:
        stop.set()
        writer.join()
    return used / took * 100, float(peak), read, took


def _row(
    stack: Stack, params: dict[str, Any], measured: dict[str, float], read: int, payload: int, seconds: float
) -> dict[str, Any]:
    from workbench.measure.contract import result_row

    return result_row(
        stack,
        experiment="instance_cost",
        params=params,
        records=read,
        payload_bytes=payload,
        seconds=seconds,
        extra=measured,
    )


def _proxy_process(stack: Stack) -> ServiceRecord:
    """The stack's first proxy process, whose memory this machine can read."""
    records = sorted((r for r in stack.services.values() if r.kind == "proxy" and r.url), key=lambda r: r.name)
    if not records:
        raise BenchError(
            f"instance_cost measures a proxy process's memory, so it needs a proxy the workbench started; "
            f"profile {stack.profile.name!r} has none on this machine"
        )
    return records[0]


def _check(instances: int, kind: str, rate: float, seconds: float, partitions: int, record_bytes: int) -> None:
    if kind not in INSTANCE_KINDS:
        raise BenchError(f"kind must be one of {list(INSTANCE_KINDS)}, got {kind!r}")
    for name, value, low, high in (
        ("instances", instances, 1, MAX_INSTANCES),
        ("rate", rate, 1.0, 1_000_000.0),
        ("seconds", seconds, 0.5, 600.0),
        ("partitions", partitions, 1, 1_000),
        ("record_bytes", record_bytes, 1, 1_000_000),
    ):
        if not low <= value <= high:
            raise BenchError(f"{name} must be from {low:g} to {high:g}, got {value!r}")


#: The deployment guide's heap per consumer instance of Confluent's REST Proxy (a JVM), in MB:
#: the figure `topics.sizing.proxy_heap` uses when nothing measured is given.
GUIDE_MB_PER_CONSUMER = GUIDE_BYTES_PER_CONSUMER / 2**20


def instance_cost_sweep(
    stack: Stack, counts: list[int], kinds: tuple[str, ...] = INSTANCE_KINDS, **params: Any
) -> tuple[pd.DataFrame | None, str | None]:
    """`instance_cost` for every kind and count, or None and one line saying why it cannot
    run here (a proxy on another machine; a broker without share groups drops that kind)."""
    import pandas as pd

    from workbench.topics.share_groups import share_groups_missing

    try:
        _proxy_process(stack)
    except BenchError as exc:
        return None, str(exc)
    note = None
    if "share" in kinds and (missing := share_groups_missing(stack)) is not None:
        kinds, note = tuple(k for k in kinds if k != "share"), f"share-consumer instances left out: {missing}"
    rows = [instance_cost(stack, instances=n, kind=kind, **params) for kind in kinds for n in counts]
    return pd.DataFrame(rows), note


def instance_cost_sentence(rows: pd.DataFrame, consumers: int = 1_000) -> str:
    """What the sweep says per kind, set against the guide's 16 MB per instance (a JVM proxy)."""
    lines = []
    for kind, group in rows.groupby("kind"):
        largest = group.loc[group["instances"].idxmax()]
        idle, fetching = float(largest["idle_mb_per_instance"]), float(largest["fetching_mb_per_instance"])
        lines.append(
            f"{int(largest['instances'])} {kind} instances cost this proxy {idle:.2f} MB each idle and "
            f"{fetching:.2f} MB each while reading ({largest['fetching_cpu_pct']:.0f} % of a core), against the "
            f"guide's {GUIDE_MB_PER_CONSUMER:g} MB for a JVM proxy. At that cost {consumers:,} instances would take "
            f"about {max(idle, fetching) * consumers:,.0f} MB here and {GUIDE_MB_PER_CONSUMER * consumers:,.0f} MB by "
            "the guide (a straight line from the largest count measured: an instance that falls behind holds its "
            "backlog in its prefetch queue, so measure the count you plan)."
        )
    return " ".join(lines)
