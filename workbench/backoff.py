"""Exponential backoff: the one rule for every wait that doubles between attempts.

A retried admin call, a supervisor restarting a service, a proxy client retrying a GET,
a socket checked until its peer has read: each waits `first`, then twice that, and so
on up to `ceiling`, as librdkafka's `retry.backoff.ms` and `retry.backoff.max.ms` do.

    pauses = Backoff(0.01, 0.2).delays()
    while not done():
        time.sleep(next(pauses))
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Backoff"]


@dataclass(frozen=True)
class Backoff:
    """Waits of `first` seconds, doubling after each, never above `ceiling`."""

    first: float
    ceiling: float

    def delay(self, attempt: int) -> float:
        """Seconds to wait before attempt number `attempt` (1-based) of the retries."""
        return float(min(self.ceiling, self.first * 2 ** max(0, attempt - 1)))

    def delays(self) -> Iterator[float]:
        """Every wait, in order, without end: `first`, `2 * first`, ..., `ceiling`, `ceiling`, ..."""
        wait = self.first
        while True:
            yield wait
            wait = min(wait * 2, self.ceiling)
