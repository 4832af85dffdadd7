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
their first cause, instead of a bare `AssertionError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from workbench.errors import BenchError

__all__ = ["DeliveryError", "FAILURE_COLUMNS", "FailureTally", "check_delivered", "failure_summary"]

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
    rows: pd.DataFrame, described_by: Sequence[str] = (), *, sent: str = "acknowledged", landed: str = "landed"
) -> None:
    """Pass when no row has a failed record and each row's `landed` equals its `sent`.

    Args:
        rows: experiment rows with `failed`, and `sent` and `landed` where they have them.
        described_by: columns that tell the rows apart in the message (`record_bytes`, `path`).
        sent: the column of records the client was told are written.
        landed: the column of records found in the topic.

    Raises:
        DeliveryError: one line per failing row (at most five), with its first cause.

    Usage: `check_delivered(both, ["path", "record_bytes"])` as a notebook section's last line.
    """
    problems = []
    for _, row in rows.iterrows():
        failed = int(row.get("failed", 0) or 0)
        short = sent in row and landed in row and int(row[landed]) != int(row[sent])
        if not failed and not short:
            continue
        where = ", ".join(f"{c}={_shown(row[c])}" for c in described_by if c in row) or f"row {row.name}"
        found = f"; {int(row[landed]):,} of {int(row[sent]):,} {sent} records in the topic" if short else ""
        problems.append(f"{where}: {failure_summary(row)}{found}")
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise DeliveryError("records did not all get through: " + "; ".join(problems[:5]) + more)


def _shown(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
