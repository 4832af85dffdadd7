"""Large records against Kafka's size limits: who refuses a record, and what had to change.

A record over a size limit is refused by whichever limit it meets first, and each says
so in its own words: librdkafka before sending (`MSG_SIZE_TOO_LARGE`, "Message size too
large"), the broker for the topic ("Broker: Message size too large"), a REST proxy for its
producer (HTTP 413) or passing the broker's refusal on per record (error_code 413,
`RecordTooLargeException`). `limit_ladder` sends a few records of one size with every
limit at its default, then raises one more limit at a step, natively and through the
proxy, and reads the last step back byte for byte with the reader's limits: the rows are
the lesson (who refused, with which error) and `needed_settings` its conclusion.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import pandas as pd

from workbench import kafka
from workbench.bench.native import native_produce
from workbench.bench.payload import value_pool
from workbench.bench.proxy_load import proxy_produce
from workbench.bench.scale import ProxySetup
from workbench.bench.sweep import delete_bench_topics
from workbench.kafka.record_limits import RecordLimits, limits_for
from workbench.stack import Stack

__all__ = ["LADDER_COLUMNS", "ladder_story", "limit_ladder", "needed_settings", "read_back_exact"]

#: The ladder's columns, in the order a notebook shows them.
LADDER_COLUMNS = ("path", "step", "raised", "acknowledged", "failed", "error_code", "error_message", "landed")


def limit_ladder(
    stack: Stack, record_bytes: int, *, raised_proxy: ProxySetup | None = None, records: int = 4
) -> pd.DataFrame:
    """`records` records of `record_bytes` sent at each step of raising the limits, one row a step.

    Native: all defaults; the producer's `message.max.bytes` and `batch.size` raised; the
    topic's `max.message.bytes` raised too, then read back with the reader's limits. Through
    the proxy: the stack's own proxy; `raised_proxy` (a proxy started or listed with
    `limits.proxy`) on a topic at its default; the same proxy on a raised topic. Without
    `raised_proxy` only the first proxy step runs.

    Args:
        stack: the notebook's stack.
        record_bytes: the size to carry (notebook 04: its largest).
        raised_proxy: from `proxy_setup(stack, limits_for(record_bytes).proxy_raised())`.
        records: records per step (few: a refusal is the same for one record or many).

    Returns:
        One row per step: `LADDER_COLUMNS`, `read_back` (records read back equal to what was
        sent, on the last native step), each limit's value (`RecordLimits.columns`) and the
        experiment row's own columns.

    Usage: `limit_ladder(active, 2_000_000, raised_proxy=big)`.
    """
    limits = limits_for(record_bytes)
    default = limits_for(1)
    rows = [
        _step("native", 1, "nothing", native_produce(stack, records=records, record_bytes=record_bytes), default),
        _step(
            "native",
            2,
            "the producer's limits",
            native_produce(stack, records=records, record_bytes=record_bytes, **dict[str, Any](limits.producer)),
            replace(default, producer=limits.producer),
        ),
        _native_raised(stack, record_bytes, records, limits),
        _step("proxy", 1, "nothing", _proxy(stack, record_bytes, records, {}), default),
    ]
    if raised_proxy is not None:
        on_default_topic = _proxy(raised_proxy.stack, record_bytes, records, {})
        rows.append(_step("proxy", 2, "the proxy's limits", on_default_topic, replace(default, proxy=limits.proxy)))
        topic = {f"topic.{k}": v for k, v in limits.topic.items()}
        raised = _proxy(raised_proxy.stack, record_bytes, records, topic)
        carried = replace(limits, producer=default.producer, reader=default.reader)
        rows.append(_step("proxy", 3, "the proxy's and the topic's limits", raised, carried))
        for row in rows[-2:]:
            row["via"] = raised_proxy.via
    return pd.DataFrame(rows)


def needed_settings(ladder: pd.DataFrame) -> dict[str, list[str]]:
    """Per path, the settings its first fully delivered step had above their defaults:
    what records of that size needed changed. A path that never delivered is missing.

    Usage: `needed_settings(ladder)` → `{"native": ["topic.max.message.bytes", "message.max.bytes", ...]}`.
    """
    needed: dict[str, list[str]] = {}
    for path, steps in ladder.sort_values("step").groupby("path", sort=False):
        for _, row in steps.iterrows():
            if row["failed"] == 0 and row["landed"] == row["acknowledged"] > 0:
                needed[str(path)] = [k for k in row["raised_settings"].split(",") if k]
                break
    return needed


def read_back_exact(stack: Stack, topic: str, expected: list[bytes], reader: dict[str, Any]) -> int:
    """How many records read back from `topic` (with the `reader` limits) equal, byte for
    byte, a value of `expected`; compared as a multiset, since partitions interleave."""
    conf = {**stack.kafka_config("consumer"), **reader}
    remaining: dict[bytes, int] = {}
    for value in expected:
        remaining[value] = remaining.get(value, 0) + 1
    equal = 0
    for record in kafka.read_records(conf, topic, timeout=60.0):
        if remaining.get(record.value or b"", 0) > 0:
            remaining[record.value or b""] -= 1
            equal += 1
    return equal


def _native_raised(stack: Stack, record_bytes: int, records: int, limits: RecordLimits) -> dict[str, Any]:
    """The last native step: producer and topic raised; the topic kept for the read-back."""
    prefix = f"bench-ladder-{uuid.uuid4().hex[:6]}"
    row = native_produce(
        stack, records=records, record_bytes=record_bytes, topic_prefix=prefix, keep_topic=True,
        **limits.as_experiment_settings(),
    )  # fmt: skip
    try:
        topics = [t for t in kafka.list_topics(stack.kafka_config("admin")) if t.startswith(prefix + "-")]
        values = value_pool(record_bytes)
        sent = [values[i % len(values)] for i in range(records)]
        row["read_back"] = read_back_exact(stack, topics[0], sent, limits.reader) if topics else 0
    finally:
        delete_bench_topics(stack, prefix)
    return _step("native", 3, "the producer's and the topic's limits", row, replace(limits, proxy=limits_for(1).proxy))


def _proxy(stack: Stack, record_bytes: int, records: int, topic: dict[str, Any]) -> dict[str, Any]:
    return proxy_produce(
        stack, records=records, record_bytes=record_bytes, records_per_call=1, max_seconds=30.0, **topic
    )


def _step(path: str, step: int, raised: str, row: dict[str, Any], limits: RecordLimits) -> dict[str, Any]:
    columns = limits.columns()
    return {
        "path": path,
        "step": step,
        "raised": raised,
        **row,
        **columns,
        "raised_settings": ",".join(limits.raised()),
    }


def ladder_story(ladder: pd.DataFrame) -> list[str]:
    """The ladder in sentences, one per path: who refused the records at each step, in their
    own words, and which settings carried them in the end (`needed_settings`).

    Usage: `Markdown("\\n".join(f"- {line}" for line in ladder_story(ladder)))`.
    """
    needed = needed_settings(ladder)
    size = int(ladder["record_bytes"].iloc[0])
    lines = []
    for path, steps in ladder.sort_values("step").groupby("path", sort=False):
        refusals = [
            f"with {row['raised']} raised, {int(row['failed']):,} of {int(row['failed']) + int(row['acknowledged']):,} "
            f"refused ({_cause(row)})"
            for _, row in steps.iterrows()
            if row["failed"]
        ]
        said = "; ".join(refusals) if refusals else "nothing was refused, even at the defaults"
        if path in needed:
            changed = ", ".join(f"`{name}`" for name in needed[str(path)]) or "no setting"
            landed = f"they landed once {changed} {'was' if len(needed[str(path)]) == 1 else 'were'} raised"
        else:
            landed = "no step delivered them all"
        lines.append(f"{str(path).capitalize()}, {size:,} B records: {said}; {landed}.")
    return lines


def _cause(row: Any) -> str:
    """The error as a reader wants it: an HTTP-style code with its message, a librdkafka error
    name left to the table (the message says the same in words)."""
    code = str(row["error_code"])
    return f"{code}: {row['error_message']}" if code.isdigit() else str(row["error_message"])
