"""HTTP limits below the application: header size and header read time.

uvicorn's httptools protocol accepts request lines and headers of any size and waits
for them without end (only the idle time *between* requests is bounded), so one client
sending an 8 MB header, or a header that never finishes, holds memory or a connection
for as long as it likes. `limited_protocol(max_bytes, timeout_ms)` returns the same protocol with
two bounds, each a property with a documented default:

- `request.header.max.bytes`: the request line plus headers; past it the answer is
  431 and the connection closes (nginx and Jetty answer the same way);
- `request.header.timeout.ms`: from the connection's first byte (or the end of the
  previous response) to the end of the headers; past it the answer is 408 and the
  connection closes.

The scope's `extensions` carry the connection's transport (`TRANSPORT_KEY`), so an
answer can tell whether its bytes reached the peer before it acts on that.

Bodies are bounded in the application (`request.max.bytes`, `request.body.timeout.ms`),
where the error can be Confluent's JSON body.
"""

from __future__ import annotations

from asyncio import TimerHandle
from typing import Any

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["LimitedHttpToolsProtocol", "TRANSPORT_KEY", "limited_protocol"]

#: The ASGI scope's `extensions` key holding the connection's asyncio transport.
TRANSPORT_KEY = "workbench.transport"

_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}


class _Refused(Exception):
    """Raised from a parser callback to stop parsing a request already answered."""


class LimitedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header size and a header time limit."""

    header_max_bytes = 32768
    header_timeout_s = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_bytes = 0
        self._header_timer: TimerHandle | None = None
        self._refused = False

    # -- the header clock: armed when a request may begin, stopped when its headers end
    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self._refuse(
                408,
                f"the request headers did not arrive within request.header.timeout.ms "
                f"({self.header_timeout_s * 1000:.0f} ms)",
            )

    def _refuse(self, status: int, message: str) -> None:
        """Answer `status` with Confluent's error body and close: the request is not read."""
        self._refused = True
        self._disarm()
        body = orjson.dumps({"error_code": status, "message": f"HTTP {status} {_REASONS[status].decode()}: {message}"})
        head = b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
        self.transport.write(head % (status, _REASONS[status], len(body)) + body)
        self.transport.close()

    def _count(self, size: int) -> None:
        self._header_bytes += size
        if self._header_bytes > self.header_max_bytes:
            self._refuse(
                431, f"the request line and headers are over request.header.max.bytes ({self.header_max_bytes})"
            )
            raise _Refused

    # -- uvicorn's protocol, bounded
    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if not self._refused:
            super().data_received(data)

    def send_400_response(self, msg: str) -> None:
        if not self._refused:  # a refusal's _Refused surfaces here as a parser error
            super().send_400_response(msg)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        # The connection's transport, for an answer that must know it reached the peer
        # (the REST proxy's share-group records: `workbench.restproxy.share_records`).
        extensions: dict[str, Any] = {TRANSPORT_KEY: self.transport}
        self.scope["extensions"] = extensions
        self._header_bytes = 0
        if self._header_timer is None:
            self._arm()

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.pipeline and not self.transport.is_closing():
            self._disarm()  # between requests the keep-alive timer (idle.timeout.ms) rules


def limited_protocol(header_max_bytes: int, header_timeout_ms: int) -> type[HttpToolsProtocol]:
    """The protocol class for uvicorn's `http=`, with these bounds (any server of ours)."""
    return type(
        "LimitedHttpProtocol",
        (LimitedHttpToolsProtocol,),
        {"header_max_bytes": header_max_bytes, "header_timeout_s": header_timeout_ms / 1000},
    )
