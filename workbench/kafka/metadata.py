"""A raw Kafka Metadata request: the exact size of the answer on the wire.

librdkafka parses Metadata responses and never says how large they were, yet their size
is what grows with the topic count (every client fetches the whole thing on start-up and
on every refresh). This client sends one Metadata v4 request and reads the frame back
byte for byte, so the size is exact; it also decodes the frame, which lets a caller
check that the answer is what it asked for (brokers, topics, partitions).

v4 because Kafka 4 dropped versions 0-3, and v4 is still the non-flexible encoding
(fixed-width lengths, no tagged fields), simple enough to write by hand. It travels on a
`wire.Connection`, so TLS and SASL PLAIN / SCRAM listeners are measured too (the size is
the Kafka frame's, TLS records around it left out); for security the connection does
not speak, the caller reports librdkafka's time instead (see
`workbench.topics.count_cost.metadata_cost`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from workbench.errors import KafkaError
from workbench.kafka.security import Security
from workbench.kafka.wire import Address, Connection, Reader, Writer

__all__ = [
    "BrokerMetadata",
    "METADATA_API_KEY",
    "METADATA_VERSION",
    "MetadataAnswer",
    "MetadataResponse",
    "TopicMetadata",
    "decode_metadata_response",
    "fetch_metadata",
    "metadata_request_body",
]

METADATA_API_KEY = 3
METADATA_VERSION = 4
#: A Metadata answer larger than this is refused rather than buffered (a wrong port can
#: answer with any four bytes; 1 GiB is far past any real cluster's metadata).
_MAX_FRAME = 1 << 30


@dataclass(frozen=True)
class BrokerMetadata:
    """One broker as a Metadata response lists it."""

    node_id: int
    host: str
    port: int
    rack: str | None


@dataclass(frozen=True)
class TopicMetadata:
    """One topic as a Metadata response lists it: its error code (0 is none) and partition ids."""

    name: str
    error_code: int
    internal: bool
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class MetadataResponse:
    """A decoded Metadata v4 response."""

    correlation_id: int
    throttle_ms: int
    brokers: tuple[BrokerMetadata, ...]
    cluster_id: str | None
    controller_id: int
    topics: tuple[TopicMetadata, ...]


@dataclass(frozen=True)
class MetadataAnswer:
    """What one raw request measured: the frame's size (size field included), its time, its content."""

    size_bytes: int
    seconds: float
    response: MetadataResponse


def metadata_request_body(topics: list[str] | None = None) -> bytes:
    """A Metadata v4 request's body: `topics=None` sends a null topic array, which asks for
    every topic; auto-creation is always off, so asking about a topic never creates it."""
    writer = Writer()
    if topics is None:
        writer.int32(-1)
    else:
        writer.int32(len(topics))
        for topic in topics:
            writer.string(topic)
    return writer.boolean(False).getvalue()  # allow_auto_topic_creation


def decode_metadata_response(frame: bytes) -> MetadataResponse:
    """Decode a Metadata v4 response frame (without its 4-byte size prefix).

    Raises:
        KafkaError: the bytes are not a whole v4 response (truncated, or trailing bytes).
    """
    reader = Reader(frame, "a Metadata v4 response")
    correlation_id, throttle_ms = reader.int32(), reader.int32()
    brokers = tuple(reader.array(lambda r: BrokerMetadata(r.int32(), r.string() or "", r.int32(), r.string())))
    cluster_id, controller_id = reader.string(), reader.int32()
    topics = tuple(reader.array(_topic))
    if reader.remaining:
        raise KafkaError(f"a Metadata v4 response had {reader.remaining} bytes past its end; is it another version?")
    return MetadataResponse(correlation_id, throttle_ms, brokers, cluster_id, controller_id, topics)


def fetch_metadata(address: Address, *, timeout: float = 120.0, security: Security | None = None) -> MetadataAnswer:
    """Send one Metadata v4 request for every topic and read the whole answer.

    The time runs from sending the request to the last byte of the answer (connecting,
    the TLS handshake and logging in are left out). `security` is PLAINTEXT when None.

    Raises:
        KafkaError: no connection in `timeout` seconds, the handshake or the login failed,
            or the broker closed the connection early or answered something else.
    """
    deadline = time.monotonic() + timeout
    with Connection(address, deadline, max_frame_bytes=_MAX_FRAME, security=security) as connection:
        started = time.perf_counter()
        frame = connection.exchange(METADATA_API_KEY, METADATA_VERSION, metadata_request_body(), flexible=False)
        seconds = time.perf_counter() - started
    return MetadataAnswer(len(frame) + 4, seconds, decode_metadata_response(frame))


def _topic(reader: Reader) -> TopicMetadata:
    error_code, name, internal = reader.int16(), reader.string() or "", reader.boolean()
    return TopicMetadata(name, error_code, internal, tuple(reader.array(_partition)))


def _partition(reader: Reader) -> int:
    reader.int16()  # the partition's error code
    partition = reader.int32()
    reader.int32()  # leader
    reader.array(Reader.int32)  # replicas
    reader.array(Reader.int32)  # in-sync replicas
    return partition
