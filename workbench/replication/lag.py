"""Replication lag: the time from a record's append on the source to its append on the target.

Both appends are stamped by the brokers themselves, each record is known on both clusters
by its number, and the load is offered open-loop once MirrorMaker has picked the topic up
(`load`, where each of these is explained): the measured lag is that of a flow already
running, and a slow flow shows as lag, not as a slower producer.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.errors import BenchError
from workbench.numbers import format_number
from workbench.replication.load import Load, under_load
from workbench.replication.numbered import SEQ_DIGITS

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = ["LAG_DEFAULTS", "ReplicationLagRun", "check_ranges", "replication_lag", "replication_lag_run"]

#: The run's defaults: a notebook-sized load.
LAG_DEFAULTS: dict[str, Any] = {"rate": 1_000.0, "seconds": 10.0, "partitions": 3, "record_bytes": 100}


@dataclass(frozen=True)
class ReplicationLagRun:
    """A run's contract row, and each record's appends: `seq`, `partition`, `a_offset`,
    `b_offset`, `a_ms`, `b_ms`, `lag_ms` (NaN where the record never reached b)."""

    row: dict[str, Any]
    records: pd.DataFrame


def replication_lag_run(
    stack: Stack,
    *,
    rate: float = LAG_DEFAULTS["rate"],
    seconds: float = LAG_DEFAULTS["seconds"],
    partitions: int = LAG_DEFAULTS["partitions"],
    record_bytes: int = LAG_DEFAULTS["record_bytes"],
    topic_prefix: str = "wb-geo",
) -> ReplicationLagRun:
    """Offer `rate` records a second for `seconds` on cluster a and measure each one's lag to b.

    Raises:
        BenchError: a parameter out of range, or MirrorMaker did not pick the topic up
            within `load.PICKUP_LIMIT_S` (the message says where its workers' logs are).
        StackError: the profile has no second cluster.
    """
    _check(rate, seconds, partitions, record_bytes)
    with under_load(
        stack, topic_prefix=topic_prefix, partitions=partitions, rate=rate, seconds=seconds, record_bytes=record_bytes
    ) as load:
        settle_s = load.settle()
        records = load.records()
    params = {"rate": rate, "seconds": seconds, "partitions": partitions, "record_bytes": record_bytes}
    return ReplicationLagRun(_row(load, params, records, settle_s), records)


def replication_lag(stack: Stack, *, topic_prefix: str = "wb-geo", **params: Any) -> dict[str, Any]:
    """One replication-lag run's row (the registered experiment `replication_lag`). See `replication_lag_run`."""
    return replication_lag_run(stack, topic_prefix=topic_prefix, **params).row


def _check(rate: float, seconds: float, partitions: int, record_bytes: int) -> None:
    if not 1 <= rate <= 50_000:
        raise BenchError(f"rate must be 1 to 50,000 records a second, got {rate:g}")
    if not 0.5 <= seconds <= 600:
        raise BenchError(f"seconds must be 0.5 to 600, got {seconds:g}")
    if not 1 <= partitions <= 64:
        raise BenchError(f"partitions must be 1 to 64, got {partitions}")
    if not SEQ_DIGITS <= record_bytes <= 1_000_000:
        raise BenchError(f"record_bytes must be {SEQ_DIGITS} to 1,000,000, got {record_bytes}")


def check_ranges(*checks: tuple[str, float, float, float], whole: Collection[str] = ()) -> None:
    """Each `(name, value, low, high)` a number from low to high (NaN fails too), and a whole
    number when its name is in `whole` (a count), else a one-line `BenchError`: a parameter
    from `--param` is whatever YAML made of it, a text or 1.5 partitions included."""
    for name, value, low, high in checks:
        span = f"{format_number(low)} to {format_number(high)}"  # 1,000,000, not 1e+06
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BenchError(f"{name} must be a number from {span}, got {value!r}")
        if not low <= value <= high:
            raise BenchError(f"{name} must be {span}, got {value}")
        if name in whole and not float(value).is_integer():
            raise BenchError(f"{name} must be a whole number, got {value}")


def _row(load: Load, params: dict[str, Any], records: pd.DataFrame, settle_s: float) -> dict[str, Any]:
    arrived = records.dropna(subset=["b_ms"])
    lags = arrived["lag_ms"].to_numpy(dtype=float) / 1000.0
    if len(arrived) and float(np.abs(lags).max()) == 0.0:
        raise BenchError(
            "every record has the same timestamp on both clusters: the remote topic keeps the source's "
            "(message.timestamp.type was synced to it), so the lag cannot be read"
        )
    return load.row(
        "replication_lag",
        params,
        records,
        latency_of="append on a → append on b",
        extra={
            "offset_shift_max": int((arrived["b_offset"] - arrived["a_offset"]).abs().max()) if len(arrived) else 0,
            "pickup_s": load.pickup_s,
            "settle_s": settle_s,
            "slips": load.run.slips,
            "mirror_tasks": int(load.stack.profile.replication.properties.get("tasks.max", 1)),
        },
    )
