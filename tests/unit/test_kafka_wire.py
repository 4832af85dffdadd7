"""Kafka's wire primitives (`workbench.kafka.wire`) byte for byte, and the Reader's refusal
to run past its answer whatever the lengths in it say; no broker."""

from __future__ import annotations

import struct
import uuid

import pytest

from workbench.kafka.wire import Address, KafkaProtocolError, Reader, Writer, parse_servers, request_frame


@pytest.mark.parametrize(
    "value, encoded",
    [
        (0, b"\x00"),
        (1, b"\x01"),
        (127, b"\x7f"),
        (128, b"\x80\x01"),
        (300, b"\xac\x02"),
        (2**31 - 1, b"\xff\xff\xff\xff\x07"),
    ],
)
def test_unsigned_varints_are_seven_bits_a_byte_low_first(value: int, encoded: bytes) -> None:
    assert Writer().uvarint(value).getvalue() == encoded
    assert Reader(encoded, "test").uvarint() == value


def test_compact_strings_and_arrays_carry_their_length_plus_one() -> None:
    body = Writer().compact_string("ab").compact_string(None).compact_strings(["x", "yz"]).no_tags().getvalue()
    assert body == b"\x03ab" + b"\x00" + b"\x03\x02x\x03yz" + b"\x00"
    reader = Reader(body, "test")
    assert reader.compact_string() == "ab" and reader.compact_string() is None
    assert reader.compact_array(lambda r: r.compact_string()) == ["x", "yz"]
    reader.skip_tags()
    assert reader.remaining == 0


def test_fixed_width_fields_and_tagged_fields_are_read_and_skipped() -> None:
    topic = uuid.uuid4()
    body = (
        Writer().int8(-1).int16(-2).int32(70000).boolean(True).string("héllo").string(None).getvalue()
        + topic.bytes
        + b"\x02"  # two tagged fields
        + b"\x00\x03abc"  # tag 0, 3 bytes
        + b"\x05\x00"  # tag 5, empty
        + b"\x00\x00\x00\x02\x00\x01\x00\x02"  # a fixed-width array of two int16
    )
    reader = Reader(body, "test")
    assert (reader.int8(), reader.int16(), reader.int32(), reader.boolean()) == (-1, -2, 70000, True)
    assert reader.string() == "héllo" and reader.string() is None
    assert reader.uuid() == topic
    reader.skip_tags()
    assert reader.array(lambda r: r.int16()) == [1, 2]
    assert reader.remaining == 0


@pytest.mark.parametrize(
    "data, read",
    [
        (b"\x05ab", lambda r: r.compact_string()),  # a string longer than the answer
        (b"\xff\xff\xff\xff\x0f", lambda r: r.compact_array(lambda x: x.int8())),  # 4 billion elements
        (b"\x00\x00\x10\x00" + b"\x01" * 10, lambda r: r.array(lambda x: x.int8())),  # 4096 in 10 bytes
        (b"\xff\xff\xff\xff\xff\x01", lambda r: r.uvarint()),  # a varint past 5 bytes
        (b"\x01\x00\xff\xff\xff\x0f", lambda r: r.skip_tags()),  # a tagged field of 4 GB
        (b"\x03\xff\xfe", lambda r: r.compact_string()),  # not UTF-8
        (b"\x00", lambda r: r.int32()),
    ],
    ids=["string", "compact array", "array", "varint", "tag", "utf-8", "int32"],
)
def test_a_reader_refuses_lengths_past_its_answer(data: bytes, read: object) -> None:
    with pytest.raises(KafkaProtocolError, match="from a test broker"):
        read(Reader(data, "from a test broker"))  # type: ignore[operator]


def test_a_writer_refuses_what_kafka_cannot_carry() -> None:
    with pytest.raises(ValueError):
        Writer().uvarint(-1)
    with pytest.raises(ValueError):
        Writer().compact_string("x" * 32768)
    with pytest.raises(ValueError):
        Writer().string("x" * 32768)


def test_bootstrap_servers_drop_a_protocol_scheme_and_refuse_anything_else() -> None:
    assert parse_servers("PLAINTEXT://a:9092, b:9093,[::1]:9094,SASL_SSL://c:9095") == [
        Address("a", 9092),
        Address("b", 9093),
        Address("::1", 9094),
        Address("c", 9095),
    ]
    assert str(Address("::1", 9094)) == "[::1]:9094"
    for bad in ["", "a", "a:port", "a:99999", "a:٩٠٩٢", "HTTP://a:9093", "ssl://a"]:
        with pytest.raises(KafkaProtocolError):
            parse_servers(bad)


def test_compact_bytes_and_int64_round_trip() -> None:
    written = Writer().compact_bytes(b"token").compact_bytes(b"").getvalue()
    assert written == b"\x06token\x01"
    reader = Reader(written + b"\x00" + (2**40).to_bytes(8, "big"), "test")
    assert (reader.compact_bytes(), reader.compact_bytes(), reader.compact_bytes(), reader.int64()) == (
        b"token",
        b"",
        b"",
        2**40,
    )


def test_a_flexible_request_carries_an_empty_tag_buffer_after_its_client_id() -> None:
    plain = request_frame(18, 3, 9, "wb", b"body", flexible=False)
    flexible = request_frame(18, 3, 9, "wb", b"body", flexible=True)
    assert plain == struct.pack(">ihhih", len(plain) - 4, 18, 3, 9, 2) + b"wb" + b"body"
    assert flexible == struct.pack(">ihhih", len(flexible) - 4, 18, 3, 9, 2) + b"wb" + b"\x00" + b"body"
