"""The raw Metadata v4 client's request (as `wire.request_frame` sends it) and its decoding, byte for
byte, without a broker."""

from __future__ import annotations

import struct

import pytest

from workbench.errors import KafkaError
from workbench.kafka.metadata import METADATA_API_KEY, METADATA_VERSION, decode_metadata_response, metadata_request_body
from workbench.kafka.wire import request_frame


def _string(text: str | None) -> bytes:
    if text is None:
        return struct.pack(">h", -1)
    return struct.pack(">h", len(text)) + text.encode()


def _response(correlation_id: int = 7) -> bytes:
    """A v4 response: two brokers (one with a rack), a cluster id, two topics."""
    brokers = struct.pack(">i", 2)
    brokers += struct.pack(">i", 1) + _string("b1") + struct.pack(">i", 9092) + _string(None)
    brokers += struct.pack(">i", 2) + _string("b2") + struct.pack(">i", 9093) + _string("rack-a")
    topics = struct.pack(">i", 2)
    # "orders": no error, not internal, partitions 0 and 1 (replicas [1, 2], isr [1]).
    topics += struct.pack(">h", 0) + _string("orders") + struct.pack(">b", 0) + struct.pack(">i", 2)
    for partition in (0, 1):
        topics += struct.pack(">hii", 0, partition, 1) + struct.pack(">iii", 2, 1, 2) + struct.pack(">ii", 1, 1)
    # "__consumer_offsets": internal, no partitions listed, error 3.
    topics += struct.pack(">h", 3) + _string("__consumer_offsets") + struct.pack(">b", 1) + struct.pack(">i", 0)
    head = struct.pack(">ii", correlation_id, 0)
    return head + brokers + _string("cluster-x") + struct.pack(">i", 2) + topics


def test_a_request_for_every_topic_is_header_v1_then_a_null_topic_array_without_auto_creation() -> None:
    frame = request_frame(METADATA_API_KEY, METADATA_VERSION, 5, "wb", metadata_request_body(), flexible=False)
    size, api_key, version, correlation, client_length = struct.unpack(">ihhih", frame[:14])
    assert (size, api_key, version, correlation) == (len(frame) - 4, 3, 4, 5)
    assert frame[14 : 14 + client_length] == b"wb"
    assert frame[14 + client_length :] == struct.pack(">ib", -1, 0)


def test_a_request_for_named_topics_lists_them_as_strings() -> None:
    frame = request_frame(
        METADATA_API_KEY, METADATA_VERSION, 1, "wb", metadata_request_body(["a", "bc"]), flexible=False
    )
    assert frame.endswith(struct.pack(">i", 2) + _string("a") + _string("bc") + b"\x00")


def test_a_response_decodes_into_its_brokers_cluster_and_topics() -> None:
    response = decode_metadata_response(_response())
    assert response.correlation_id == 7 and response.throttle_ms == 0
    assert [(b.node_id, b.host, b.port, b.rack) for b in response.brokers] == [
        (1, "b1", 9092, None),
        (2, "b2", 9093, "rack-a"),
    ]
    assert (response.cluster_id, response.controller_id) == ("cluster-x", 2)
    orders, offsets = response.topics
    assert (orders.name, orders.error_code, orders.internal, orders.partitions) == ("orders", 0, False, (0, 1))
    assert (offsets.name, offsets.error_code, offsets.internal, offsets.partitions) == (
        "__consumer_offsets",
        3,
        True,
        (),
    )


def test_a_truncated_response_is_refused_with_how_much_is_missing() -> None:
    with pytest.raises(KafkaError, match="ended 1 bytes short"):
        decode_metadata_response(_response()[:-1])


def test_bytes_past_the_end_of_a_response_are_refused() -> None:
    with pytest.raises(KafkaError, match="2 bytes past its end"):
        decode_metadata_response(_response() + b"\x00\x00")
