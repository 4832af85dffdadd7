"""What the proxy client puts on the wire: encoded names, record bodies, retry policy."""

from __future__ import annotations

import base64
import json

import pytest

from workbench.proxy import ProduceResult, ProxyClient, RecordOffset, Retries, Timeout, encode_records, encode_topic


def test_mapr_stream_topics_are_one_percent_encoded_path_segment() -> None:
    assert encode_topic("/streams/test:topic1") == "%2Fstreams%2Ftest%3Atopic1"
    assert encode_topic("orders") == "orders"
    assert encode_topic("a b/c") == "a%20b%2Fc"


def test_binary_records_are_base64_and_keep_keys_and_partitions() -> None:
    encoded = encode_records([b"v1", (b"k2", b"v2"), {"key": "k3", "value": None, "partition": 2}])
    body = json.loads(encoded.body)
    assert encoded.count == 3 and encoded.format == "binary"
    assert body["records"][0] == {"value": base64.b64encode(b"v1").decode()}
    assert body["records"][1] == {"key": base64.b64encode(b"k2").decode(), "value": base64.b64encode(b"v2").decode()}
    assert body["records"][2] == {"key": base64.b64encode(b"k3").decode(), "value": None, "partition": 2}


def test_json_records_travel_unchanged_and_a_partition_applies_to_each() -> None:
    encoded = encode_records([{"value": {"x": 1}}, {"value": [1, 2], "partition": 3}], "json", partition=0)
    assert json.loads(encoded.body) == {
        "records": [{"value": {"x": 1}, "partition": 0}, {"value": [1, 2], "partition": 3}]
    }


def test_bad_formats_and_values_are_refused() -> None:
    with pytest.raises(ValueError, match="format must be one of"):
        encode_records([b"x"], "xml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="only go with the schema formats"):
        encode_records([b"x"], "json", value_schema_id=3)
    with pytest.raises(ValueError, match="binary format needs bytes, str or None, got int"):
        encode_records([1])


def test_schema_formats_carry_their_schema_in_the_body() -> None:
    encoded = encode_records([{"value": {"a": 1}}], "avro", value_schema='"int"', key_schema_id=4)
    assert json.loads(encoded.body) == {"key_schema_id": 4, "value_schema": '"int"', "records": [{"value": {"a": 1}}]}
    assert encoded.format == "avro"


def test_produce_result_counts_per_record_failures() -> None:
    result = ProduceResult((RecordOffset(0, 5), RecordOffset(None, None, 50002, "too large"), RecordOffset(1, 7)))
    assert (result.acknowledged, result.failed) == (2, 1)
    assert [f.error_code for f in result.errors] == [50002]


def test_retries_back_off_exponentially_up_to_a_ceiling() -> None:
    retries = Retries(attempts=5, backoff=0.1, max_backoff=0.5)
    assert [retries.delay(n) for n in (1, 2, 3, 4)] == [0.1, 0.2, 0.4, 0.5]


def test_client_settings_accept_plain_numbers_and_strip_trailing_slashes() -> None:
    client = ProxyClient(["http://a:8082/", "http://b:8082"], timeout=5, retries=1, session_reuse=False)
    assert client.urls == ["http://a:8082", "http://b:8082"]
    assert client.timeout == Timeout(5, 5) and client.retries.attempts == 1
    assert [client._rotation_order()[0] for _ in range(4)] == ["http://a:8082", "http://b:8082"] * 2
    with pytest.raises(ValueError, match="at least one base URL"):
        ProxyClient([])
