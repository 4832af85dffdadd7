"""Failed records by cause: what a row keeps of them, and the check a notebook makes.

A count of failed records says that something went wrong, not what. A user who sends
2 MB records to a Kafka with its default limits sees "failed: 50" and has to guess
between the client, the proxy and the broker. So every experiment that counts failed
records tallies them by cause and its row keeps the first cause seen, with how many
records had it:

- `failed`: every record that did not get through;
- `error_code`: the first cause's code (librdkafka's error name, `MSG_SIZE_TOO_LARGE`, or
  a REST proxy's Confluent `error_code`, `413`); "" when nothing failed;
- `error_message`: its message, as the client, proxy or broker said it;
- `error_records`: how many records failed with that first cause.

`check_delivered` is the line a notebook ends a section with: it passes when every row
delivered everything, and otherwise raises a `DeliveryError` that names the rows and
their first cause, instead of a bare `AssertionError`. `check_complete` does the same
for counts that must equal what was sent (read back, in the log, in Spark's output).

Given the stack, both add the likely cause when records look missing on a broker that
is not known to be Apache Kafka: one that reports its log ends short of what it
acknowledged (Tansu), which counts through ListOffsets see as lost records, unless the
profile names the broker (`likely_cause`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.errors import BenchError, StackError

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = [
    "DeliveryError",
    "FAILURE_COLUMNS",
    "FailureTally",
    "check_complete",
    "check_delivered",
    "failure_summary",
    "likely_cause",
]

#: The columns a row with a `failed` count carries about its first cause.
FAILURE_COLUMNS = ("error_code", "error_message", "error_records")


class DeliveryError(BenchError):
    """Records an experiment sent were refused, lost or not all acknowledged; names the cause."""


class FailureTally:
    """Failed records counted by cause, in the order the causes were first seen.

    Cheap on the success path: nothing is done until a record fails. Not thread-safe on
    its own: callers that count from several threads hold their own lock.
    """

    __slots__ = ("_by_cause",)

    def __init__(self) -> None:
        self._by_cause: dict[tuple[str, str], int] = {}

    def add(self, code: object, message: str, records: int = 1) -> None:
        """Count `records` failed with this cause (`code`: an error name or number)."""
        cause = (str(code), message)
        self._by_cause[cause] = self._by_cause.get(cause, 0) + records

    def merge(self, other: FailureTally) -> None:
        """Add another tally's counts (a client process's, a thread's)."""
        for (code, message), records in other._by_cause.items():
            self.add(code, message, records)

    @property
    def total(self) -> int:
        """Every failed record, whatever its cause."""
        return sum(self._by_cause.values())

    def columns(self, unaccounted: int = 0) -> dict[str, Any]:
        """The row's `failed` and first-cause columns; `unaccounted` records failed without
        a cause of their own (still queued when the producer gave up waiting)."""
        first = next(iter(self._by_cause.items()), None)
        if first is None and unaccounted:
            first = (("TIMED_OUT", "not acknowledged before the producer stopped waiting"), unaccounted)
        (code, message), records = first if first is not None else (("", ""), 0)
        return {
            "failed": self.total + unaccounted,
            "error_code": code,
            "error_message": message,
            "error_records": records,
        }

    def __getstate__(self) -> dict[tuple[str, str], int]:
        return self._by_cause

    def __setstate__(self, state: dict[tuple[str, str], int]) -> None:
        self._by_cause = state


def failure_summary(row: Any) -> str:
    """One row's failures in a phrase: "50 failed (50 with MSG_SIZE_TOO_LARGE: Broker: ...)"."""
    failed = int(row.get("failed", 0) or 0)
    if not failed:
        return "none failed"
    code = row.get("error_code") or "no cause recorded"
    message = row.get("error_message") or ""
    cause = f"{code}: {message}" if message else str(code)
    return f"{failed:,} failed ({int(row.get('error_records', 0) or 0):,} with {cause})"


def check_delivered(
    rows: pd.DataFrame,
    described_by: Sequence[str] = (),
    *,
    sent: str = "acknowledged",
    landed: str = "landed",
    stack: Stack | None = None,
) -> None:
    """Pass when no row has a failed record and each row's `landed` equals its `sent`.

    Args:
        rows: experiment rows with `failed`, and `sent` and `landed` where they have them.
        described_by: columns that tell the rows apart in the message (`record_bytes`, `path`).
        sent: the column of records the client was told are written.
        landed: the column of records found in the topic.
        stack: the stack the rows were measured on: a short row's message then says the
            likely cause when its broker is not known to be Apache Kafka (`likely_cause`).

    Raises:
        DeliveryError: one line per failing row (at most five), with its first cause.

    Usage: `check_delivered(both, ["path", "record_bytes"], stack=active)` as a notebook section's last line.
    """
    problems, any_short = [], False
    for _, row in rows.iterrows():
        failed = int(row.get("failed", 0) or 0)
        short = sent in row and landed in row and int(row[landed]) != int(row[sent])
        if not failed and not short:
            continue
        any_short = any_short or (short and int(row[landed]) < int(row[sent]))
        where = ", ".join(f"{c}={_shown(row[c])}" for c in described_by if c in row) or f"row {row.name}"
        counted = "records" if sent == "records" else f"{sent} records"
        found = f"; {int(row[landed]):,} of {int(row[sent]):,} {counted} in the topic" if short else ""
        problems.append(f"{where}: {failure_summary(row)}{found}")
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        cause = likely_cause(stack) if any_short else ""
        raise DeliveryError("records did not all get through: " + "; ".join(problems[:5]) + more + cause)


def check_complete(
    counts: Mapping[Any, Any] | pd.Series,
    expected: int | Mapping[Any, Any] | pd.Series,
    *,
    what: str = "records",
    stack: Stack | None = None,
    at_least: bool = False,
) -> None:
    """Pass when every count equals what was expected of it (`at_least`: is no smaller).

    For the counts a notebook checks after a run (read back, in the log by its end
    offsets, rows in Spark's output), so that a shortfall is named with the likely
    cause instead of ending in a bare `AssertionError`.

    Args:
        counts: `{label: count}`, or a Series whose index labels its counts (an index
            named `linger.ms` labels them `linger.ms=10`).
        expected: one count for all, or one per count (a mapping by label, or a Series
            in the same order as `counts`).
        what: what is counted, for the message.
        stack: the stack counted on, for the likely cause (`likely_cause`).
        at_least: extra records pass: what a producer without idempotence promises, as
            a batch whose answer was lost is sent again and may land twice.

    Raises:
        DeliveryError: the counts that differ (at most five), each with its expected
            count, and the likely cause.

    Usage: `check_complete({"read back": row["read_back"], "in the log": row["end_offsets_total"]}, 1_000)`.
    """
    found = _labelled(counts)
    if isinstance(expected, pd.Series):
        wanted = expected.tolist()
    elif isinstance(expected, Mapping):
        wanted = [expected[key] for key in _keys(counts)]
    else:
        wanted = [expected] * len(found)
    problems, missing = [], False
    for (label, count), target in zip(found, wanted, strict=True):
        have, want = int(count), int(target)
        if have < want or (have > want and not at_least):
            missing = missing or have < want
            gap = f"{want - have:,} missing" if have < want else f"{have - want:,} extra"
            problems.append(f"{label}: {have:,} of {want:,} ({gap})")
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        cause = likely_cause(stack) if missing else ""
        raise DeliveryError(f"{what} do not add up: " + "; ".join(problems[:5]) + more + cause)


def likely_cause(stack: Stack | None) -> str:
    """Why records may look missing on this stack, as a clause to end a message with; "" when not the ends.

    Apache Kafka's ListOffsets(latest) is the log's end; a broker declared to need it
    has its ends read from the log; a cluster found to answer right (`stack.log_ends`)
    does too. Otherwise (a cluster profile that does not name its broker, whose check
    could not run) the likely cause is a broker that reports its ends short, and the way
    out is the profile key that declares it.
    """
    if stack is None:
        return ""
    from workbench.kafka.offsets import needs_end_probe
    from workbench.stack.log_ends import checked

    profile = stack.profile
    if profile.broker.kind == "kafka" and (profile.embedded or "kind" in profile.broker.model_fields_set):
        return ""
    try:
        servers = stack.bootstrap_servers
    except StackError:
        return ""
    found = checked(servers)
    if needs_end_probe({"bootstrap.servers": servers}) or (found is not None and not found.short):
        return ""
    where = f" ({profile.source})" if profile.source else ""
    return (
        "; on a broker that is not Apache Kafka the likely cause is log ends reported short of what it acknowledged: "
        f"write `broker: {{kind: tansu}}` (or its kind) in the profile{where} so they are read from the log"
    )


def _labelled(counts: Mapping[Any, Any] | pd.Series) -> list[tuple[str, Any]]:
    """`(label, count)` pairs in order; a Series' index names label its values (`linger.ms=10`)."""
    if not isinstance(counts, pd.Series):
        return [(str(key), count) for key, count in counts.items()]
    names = list(counts.index.names)
    labelled = []
    for key, count in zip(counts.index, counts.tolist(), strict=True):
        parts = key if isinstance(key, tuple) else (key,)
        if any(name is not None for name in names):
            label = ", ".join(f"{name}={_shown(part)}" for name, part in zip(names, parts, strict=True))
        else:
            label = ", ".join(_shown(part) for part in parts)
        labelled.append((label, count))
    return labelled


def _keys(counts: Mapping[Any, Any] | pd.Series) -> list[Any]:
    return list(counts.index) if isinstance(counts, pd.Series) else list(counts)


def _shown(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "none"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"{value:,}" if isinstance(value, numbers.Integral) and not isinstance(value, bool) else str(value)
