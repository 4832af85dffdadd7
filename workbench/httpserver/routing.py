"""Routes matched on the raw, still percent-encoded path, one segment at a time.

Matching on `raw_path` rather than the decoded path is what lets a topic name carry a
`/` or a `:` (MapR stream topics, `%2Fstreams%2Ftest%3Atopic1`): each segment is
decoded only after the path has been split. A trailing slash is accepted on every
route, as both upstream servers do. An unknown path is 404 / 404 and a known path
with another method 405 / 405, in upstream's error body.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from workbench.httpserver.errors import RestError

__all__ = ["Handler", "Route", "Router", "split_path"]

Handler = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class Route:
    """`template` like `/topics/{topic}/partitions/{partition}`; `name` labels metrics."""

    method: str
    template: str
    handler: Handler

    @property
    def segments(self) -> tuple[str, ...]:
        return tuple(part for part in self.template.split("/") if part)


def split_path(raw_path: bytes | str) -> list[str]:
    """Path segments, each percent-decoded after splitting; trailing slash ignored."""
    text = raw_path.decode("latin-1") if isinstance(raw_path, bytes) else raw_path
    text = text.split("?", 1)[0]
    return [unquote(part) for part in text.split("/") if part != ""]


class Router:
    """Finds the route for (method, path) and the decoded path parameters."""

    def __init__(self, routes: list[Route]) -> None:
        self._by_length: dict[int, list[tuple[Route, tuple[str, ...]]]] = {}
        for route in routes:
            segments = route.segments
            self._by_length.setdefault(len(segments), []).append((route, segments))

    def match(self, method: str, segments: list[str]) -> tuple[Route, dict[str, str]]:
        """The matching route and its parameters; RestError 404 or 405 otherwise."""
        if len(segments) >= 2 and segments[0] == "kafka" and segments[1] == "v3":
            segments = segments[1:]  # Confluent Server's and Cloud's prefix
        allowed: list[str] = []
        for route, pattern in self._by_length.get(len(segments), ()):
            params: dict[str, str] = {}
            for want, got in zip(pattern, segments, strict=True):
                if want[0] == "{":
                    params[want[1:-1]] = got
                elif want != got:
                    break
            else:
                if route.method == method or (method == "HEAD" and route.method == "GET"):
                    return route, params
                allowed.append(route.method)
        if allowed:
            raise RestError(405, 405, "HTTP 405 Method Not Allowed", headers={"Allow": ", ".join(sorted(allowed))})
        raise RestError(404, 404, "HTTP 404 Not Found")
