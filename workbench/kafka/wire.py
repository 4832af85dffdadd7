"""Kafka's wire protocol, by hand: framing, both encodings, and one blocking connection.

librdkafka 2.16 speaks to brokers for us everywhere except where it has no call at all
(the share-group admin requests of KIP-932, see `share_admin`). This module is the least
needed to ask those questions ourselves, and nothing more: no retries, no pooling. TLS
and SASL (PLAIN, SCRAM) come from `security`.

- `Writer` and `Reader` encode and decode the primitives of both encodings: the
  fixed-width one (int16 string lengths, int32 array counts) and the *flexible* one of
  newer versions (unsigned-varint "compact" lengths plus one, tagged fields after every
  struct). The Reader refuses to run past its buffer: every length and count is checked
  against the bytes left before anything is allocated, so a hostile or confused peer
  can make it raise, never make it hold more memory than its answer's frame.
- `Connection` is one TCP connection to one broker, in TLS when its `Security` says so.
  It asks the broker's API versions first (ApiVersions v0, which every Kafka answers),
  then authenticates when its `Security` has a SASL mechanism (SaslHandshake v1, then
  the mechanism's tokens in SaslAuthenticate v2), checks every answer's correlation id,
  refuses a frame larger than its bound, and gives up at one deadline for the whole
  conversation. It blocks: callers on an event loop run it in a worker thread.

- `request_frame` frames every request (size, header v1 or v2, body); `parse_servers`
  reads every `bootstrap.servers`. Nothing else in the workbench frames a request or
  parses a server list.

The message layouts are Apache Kafka's JSON message definitions
(clients/src/main/resources/common/message/*.json in kafka-clients' jar).

Where this ends: the hand-written layouts are the ApiVersions, SASL, Metadata v4 and
the share-group admin requests, each a few lines against its JSON definition. A fifth
kind of request, or a version whose layout grows past a screen, means generating the
message classes from those definitions (as kafka-python and franz-go do) rather than
writing more layouts here; and anything librdkafka can do stays librdkafka's.
"""

from __future__ import annotations

import itertools
import socket
import ssl
import struct
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import TypeVar

from workbench.errors import KafkaError
from workbench.kafka.sasl import SaslError, SaslExchange
from workbench.kafka.security import PROTOCOLS, Security

__all__ = [
    "API_VERSIONS",
    "Address",
    "Connection",
    "KafkaProtocolError",
    "Reader",
    "Writer",
    "parse_servers",
    "request_frame",
]

_T = TypeVar("_T")

#: ApiVersions' API key; v0 is what every broker answers, with a v0 response header.
API_VERSIONS = 18
_SASL_HANDSHAKE, _SASL_AUTHENTICATE = 17, 36
#: The largest answer frame read by default: a ShareGroupDescribe of hundreds of busy
#: groups is well under a megabyte; a wrong port answering any 4 bytes is refused.
_MAX_FRAME_BYTES = 16 << 20
#: The most bytes one socket read asks for.
_RECV_BYTES = 1 << 20


class KafkaProtocolError(KafkaError):
    """A broker could not be reached in time, or answered what this client cannot read."""


@dataclass(frozen=True, order=True)
class Address:
    """A broker's `host:port`."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_servers(servers: str) -> list[Address]:
    """The addresses of a `bootstrap.servers` list (a `PLAINTEXT://`, `SSL://`,
    `SASL_PLAINTEXT://` or `SASL_SSL://` scheme dropped: as for librdkafka, the protocol is
    `security.protocol`'s).

    Raises:
        KafkaProtocolError: an entry has no `host:port`, or another scheme.
    """
    found = []
    for entry in (part.strip() for part in servers.split(",")):
        if not entry:
            continue
        scheme, _, rest = entry.rpartition("://")
        if scheme and scheme.lower() not in PROTOCOLS:
            raise KafkaProtocolError(f"bootstrap server {entry!r}: {scheme} is not a Kafka security protocol")
        host, _, port = rest.rpartition(":")
        if not host or not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
            raise KafkaProtocolError(f"cannot read host:port from bootstrap server {entry!r}")
        found.append(Address(host.strip("[]"), int(port)))
    if not found:
        raise KafkaProtocolError(f"no host:port in bootstrap.servers {servers!r}")
    return found


def request_frame(
    api_key: int, version: int, correlation: int, client_id: str, body: bytes, *, flexible: bool
) -> bytes:
    """A whole request as it goes on the wire: its size, the request header (v1, or v2 with
    tagged fields for a flexible version), then `body`. The one framer every call uses."""
    header = Writer().int16(api_key).int16(version).int32(correlation).string(client_id)
    if flexible:
        header.no_tags()
    request = header.getvalue() + body
    return struct.pack(">i", len(request)) + request


class Writer:
    """Builds a request body from Kafka's primitives, in either encoding."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def getvalue(self) -> bytes:
        return b"".join(self._parts)

    def int8(self, value: int) -> Writer:
        self._parts.append(struct.pack(">b", value))
        return self

    def int16(self, value: int) -> Writer:
        self._parts.append(struct.pack(">h", value))
        return self

    def int32(self, value: int) -> Writer:
        self._parts.append(struct.pack(">i", value))
        return self

    def boolean(self, value: bool) -> Writer:
        return self.int8(1 if value else 0)

    def uvarint(self, value: int) -> Writer:
        """An unsigned varint: 7 bits a byte, low bits first (the compact lengths)."""
        if value < 0:
            raise ValueError(f"an unsigned varint cannot hold {value}")
        out = bytearray()
        while value > 0x7F:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
        self._parts.append(bytes(out))
        return self

    def string(self, value: str | None) -> Writer:
        """A fixed-width (int16-length) string; None is the null string."""
        if value is None:
            return self.int16(-1)
        data = value.encode()
        if len(data) > 0x7FFF:
            raise ValueError(f"a string of {len(data)} bytes does not fit Kafka's int16 length")
        self._parts.append(struct.pack(">h", len(data)) + data)
        return self

    def compact_string(self, value: str | None) -> Writer:
        """A compact string (length + 1 as a varint; 0 is null)."""
        if value is None:
            return self.uvarint(0)
        data = value.encode()
        if len(data) > 0x7FFF:
            raise ValueError(f"a string of {len(data)} bytes is longer than Kafka takes (32767)")
        self.uvarint(len(data) + 1)
        self._parts.append(data)
        return self

    def compact_bytes(self, value: bytes) -> Writer:
        """Compact bytes (length + 1 as a varint)."""
        self.uvarint(len(value) + 1)
        self._parts.append(value)
        return self

    def compact_strings(self, values: list[str]) -> Writer:
        """A compact array of compact strings."""
        self.uvarint(len(values) + 1)
        for value in values:
            self.compact_string(value)
        return self

    def no_tags(self) -> Writer:
        """An empty tagged-field section (every flexible struct ends with one)."""
        return self.uvarint(0)


class Reader:
    """Reads Kafka's primitives from one answer, refusing to run past its end.

    `where` names the answer in errors ("ShareGroupDescribe from 127.0.0.1:9092")."""

    def __init__(self, data: bytes, where: str) -> None:
        self._data = memoryview(data)
        self._at = 0
        self.where = where

    @property
    def remaining(self) -> int:
        return len(self._data) - self._at

    def _take(self, n: int) -> memoryview:
        if n < 0 or n > self.remaining:
            raise KafkaProtocolError(
                f"{self.where}: the answer ended {n - self.remaining} bytes short of a field; it is truncated, or "
                "not one this client can read"
            )
        chunk = self._data[self._at : self._at + n]
        self._at += n
        return chunk

    def int8(self) -> int:
        return int(struct.unpack(">b", self._take(1))[0])

    def int16(self) -> int:
        return int(struct.unpack(">h", self._take(2))[0])

    def int32(self) -> int:
        return int(struct.unpack(">i", self._take(4))[0])

    def int64(self) -> int:
        return int(struct.unpack(">q", self._take(8))[0])

    def boolean(self) -> bool:
        return self._take(1)[0] != 0

    def uuid(self) -> uuid.UUID:
        return uuid.UUID(bytes=bytes(self._take(16)))

    def uvarint(self) -> int:
        """An unsigned varint of at most 5 bytes (Kafka's lengths are int32)."""
        value = 0
        for shift in range(0, 35, 7):
            byte = self._take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
        raise KafkaProtocolError(f"{self.where}: a varint runs past 5 bytes")

    def string(self) -> str | None:
        """A fixed-width string (int16 length; -1 is null)."""
        length = self.int16()
        return None if length < 0 else self._text(length)

    def compact_string(self) -> str | None:
        """A compact string (length + 1; 0 is null)."""
        length = self.uvarint()
        return None if length == 0 else self._text(length - 1)

    def compact_bytes(self) -> bytes:
        """Compact bytes (length + 1; 0 is null, read as empty)."""
        length = self.uvarint()
        return b"" if length == 0 else bytes(self._take(length - 1))

    def _text(self, length: int) -> str:
        try:
            return bytes(self._take(length)).decode()
        except UnicodeDecodeError:
            raise KafkaProtocolError(f"{self.where}: a string is not UTF-8") from None

    def array(self, item: Callable[[Reader], _T]) -> list[_T]:
        """A fixed-width array (int32 count; -1 is null, read as empty)."""
        return self._items(self.int32(), item)

    def compact_array(self, item: Callable[[Reader], _T]) -> list[_T]:
        """A compact array (count + 1; 0 is null, read as empty)."""
        return self._items(self.uvarint() - 1, item)

    def _items(self, count: int, item: Callable[[Reader], _T]) -> list[_T]:
        if count > self.remaining:  # every element takes at least one byte
            raise KafkaProtocolError(f"{self.where}: an array of {count} elements in {self.remaining} bytes")
        return [item(self) for _ in range(max(0, count))]

    def skip_tags(self) -> None:
        """Skip a tagged-field section: this client reads no tagged field."""
        for _ in range(self.uvarint()):
            self.uvarint()  # the tag
            self._take(self.uvarint())


class Connection:
    """One blocking TCP connection to one broker, for one conversation with a deadline.

    Opening it shakes hands in TLS and authenticates as `security` says, and asks the
    broker's API versions (`versions`); `call` sends one request and returns a Reader over
    its answer's body. Use it as a context manager.

    Raises (from open and call):
        KafkaProtocolError: no connection, the deadline passed, the broker closed the
            connection, the TLS handshake or the SASL exchange failed, or its answer is
            larger than `max_frame_bytes`, carries another correlation id, or cannot be read.
    """

    def __init__(
        self,
        address: Address,
        deadline: float,
        *,
        client_id: str = "workbench",
        max_frame_bytes: int = _MAX_FRAME_BYTES,
        security: Security | None = None,
    ) -> None:
        self.address = address
        self.security = security or Security()
        self.deadline = deadline
        self.client_id = client_id
        self.max_frame_bytes = max_frame_bytes
        #: API key → (lowest, highest) version the broker speaks.
        self.versions: dict[int, tuple[int, int]] = {}
        self._sock: socket.socket | None = None
        self._correlation = itertools.count(1)

    def __enter__(self) -> Connection:
        self.open()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def open(self) -> None:
        try:
            self._sock = socket.create_connection((self.address.host, self.address.port), timeout=self._left())
        except OSError as exc:
            raise KafkaProtocolError(f"cannot connect to broker {self.address}: {exc}", "_TRANSPORT") from None
        if self.security.tls is not None:
            self._sock = self._handshake(self._sock, self.security.tls)
        body = self.call(API_VERSIONS, 0, b"", flexible=False)
        error = body.int16()
        entries = body.array(lambda r: (r.int16(), r.int16(), r.int16()))
        if error:
            raise KafkaProtocolError(f"broker {self.address} refused ApiVersions v0 (error {error})")
        self.versions = {key: (low, high) for key, low, high in entries}
        tokens = self.security.exchange()
        if tokens is not None:
            self._authenticate(tokens)

    def _handshake(self, sock: socket.socket, context: ssl.SSLContext) -> socket.socket:
        try:
            sock.settimeout(self._left())
            return context.wrap_socket(sock, server_hostname=self.address.host)
        except (OSError, ssl.SSLError, ssl.CertificateError) as exc:
            sock.close()
            raise KafkaProtocolError(f"TLS handshake with broker {self.address} failed: {exc}", "_SSL") from None

    def _authenticate(self, tokens: SaslExchange) -> None:
        """SaslHandshake v1 names the mechanism; its tokens then travel in SaslAuthenticate
        v2 until the mechanism is satisfied (it raises when the broker's answer is wrong)."""
        mechanism = self.security.mechanism or ""
        answer = self.call(_SASL_HANDSHAKE, 1, Writer().string(mechanism).getvalue(), flexible=False)
        error = answer.int16()
        offered = answer.array(Reader.string)
        if error:
            raise KafkaProtocolError(
                f"broker {self.address} does not offer SASL {mechanism} (it offers {', '.join(map(str, offered))})",
                "UNSUPPORTED_SASL_MECHANISM",
            )
        if self.version(_SASL_AUTHENTICATE, 2, 2) is None:
            raise KafkaProtocolError(f"broker {self.address} has no SaslAuthenticate v2 (Kafka 2.4 or newer)")
        try:
            token = next(tokens)
            while True:
                token = tokens.send(self._sasl_token(token, mechanism))
        except StopIteration:
            return
        except SaslError as exc:
            raise KafkaProtocolError(f"broker {self.address}: {exc}", exc.code) from None

    def _sasl_token(self, token: bytes, mechanism: str) -> bytes:
        answer = self.call(_SASL_AUTHENTICATE, 2, Writer().compact_bytes(token).no_tags().getvalue(), flexible=True)
        error, message = answer.int16(), answer.compact_string()
        if error:
            raise KafkaProtocolError(
                f"broker {self.address} refused SASL {mechanism} for user {self.security.username!r}: "
                f"{message or f'error {error}'}",
                "SASL_AUTHENTICATION_FAILED",
            )
        return answer.compact_bytes()

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def version(self, api_key: int, lowest: int, highest: int) -> int | None:
        """The highest version in `lowest..highest` the broker speaks for `api_key`, or None."""
        if api_key not in self.versions:
            return None
        low, high = self.versions[api_key]
        best = min(high, highest)
        return best if best >= max(low, lowest) else None

    def call(self, api_key: int, version: int, body: bytes, *, flexible: bool) -> Reader:
        """Send one request and read its answer; the Reader starts after the answer's header.

        A flexible request has header v2 and its answer header v1 (tagged fields after the
        correlation id), except ApiVersions, whose answer header is always v0."""
        answer = Reader(self.exchange(api_key, version, body, flexible=flexible), self._where(api_key, version))
        answer.int32()  # the correlation id, checked
        if flexible and api_key != API_VERSIONS:
            answer.skip_tags()
        return answer

    def exchange(self, api_key: int, version: int, body: bytes, *, flexible: bool) -> bytes:
        """Send one request and return its answer's frame as it came (from the correlation
        id on, which is checked): what a caller measures the size of."""
        correlation = next(self._correlation)
        where = self._where(api_key, version)
        self._send(request_frame(api_key, version, correlation, self.client_id, body, flexible=flexible))
        frame = self._receive(where)
        got = struct.unpack_from(">i", frame)[0]
        if got != correlation:
            raise KafkaProtocolError(f"{where}: answered correlation id {got}, not {correlation}")
        return frame

    def _where(self, api_key: int, version: int) -> str:
        return f"API {api_key} v{version} from broker {self.address}"

    def _left(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise KafkaProtocolError(f"broker {self.address} did not answer in time", "_TIMED_OUT")
        return left

    def _socket(self) -> socket.socket:
        if self._sock is None:
            raise KafkaProtocolError(f"the connection to broker {self.address} is closed")
        self._sock.settimeout(self._left())
        return self._sock

    def _send(self, data: bytes) -> None:
        try:
            self._socket().sendall(data)
        except TimeoutError:
            raise KafkaProtocolError(f"broker {self.address} did not take a request in time", "_TIMED_OUT") from None
        except OSError as exc:
            raise KafkaProtocolError(f"sending to broker {self.address}: {exc}", "_TRANSPORT") from None

    def _receive(self, where: str) -> bytes:
        size = struct.unpack(">i", self._exactly(4))[0]
        if not 4 <= size <= self.max_frame_bytes:
            raise KafkaProtocolError(
                f"{where}: an answer of {size} bytes (this client reads 4 to {self.max_frame_bytes}); is it Kafka"
                f"{'' if self.security.tls else ', or a listener that wants TLS (security.protocol)'}?"
            )
        return self._exactly(size)

    def _exactly(self, n: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < n:
            try:
                chunk = self._socket().recv(min(n - len(chunks), _RECV_BYTES))
            except TimeoutError:
                raise KafkaProtocolError(f"broker {self.address} did not answer in time", "_TIMED_OUT") from None
            except OSError as exc:
                raise KafkaProtocolError(f"reading from broker {self.address}: {exc}", "_TRANSPORT") from None
            if not chunk:
                hint = "" if self.security.mechanism else " (a SASL listener does so to a client that did not log in)"
                raise KafkaProtocolError(f"broker {self.address} closed the connection mid-answer{hint}", "_TRANSPORT")
            chunks += chunk
        return bytes(chunks)
