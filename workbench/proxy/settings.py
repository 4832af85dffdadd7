"""Small typed settings for the proxy client, in the manner of httpx's `Timeout` and `Limits`."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.backoff import Backoff

__all__ = ["Retries", "Timeout"]


@dataclass(frozen=True)
class Timeout:
    """Seconds to connect and to wait for a response.

    `read` must exceed the proxy's consumer request timeout, or record fetches that
    legitimately wait for data would time out on the client first.
    """

    connect: float = 3.0
    read: float = 60.0

    def as_requests(self) -> tuple[float, float]:
        return (self.connect, self.read)


@dataclass(frozen=True)
class Retries:
    """Retries for idempotent calls (GET, PUT, DELETE, HEAD) only, with exponential backoff.

    A produce (POST) is never retried: the proxy may have written the records before
    the answer was lost, and a retry would write them twice. Connection refusals are the
    exception: a request that never reached a proxy is safe to send to the next URL.
    """

    attempts: int = 3
    backoff: float = 0.1
    max_backoff: float = 2.0
    statuses: frozenset[int] = frozenset({502, 503, 504})

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt` (1-based)."""
        return Backoff(self.backoff, self.max_backoff).delay(attempt)
