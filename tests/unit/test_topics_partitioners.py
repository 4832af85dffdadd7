"""Key → partition as the Java client and librdkafka compute it, checked against their own vectors.

Java vectors: Apache Kafka's `UtilsTest.testMurmur2` (clients/src/test/java/org/apache/
kafka/common/utils/UtilsTest.java). librdkafka vectors: `unittest_murmur2` in
src/rdmurmur2.c (labelled Java-compatible there) and `unittest_fnv1a` in src/rdfnv1a.c.
CRC-32 values for `consistent` are zlib's, which librdkafka's rd_crc32 computes.
"""

from __future__ import annotations

import pytest

from workbench.errors import WorkbenchError
from workbench.topics import PARTITIONERS, TopicDesignError, fnv1a, murmur2, partition_for

JAVA_MURMUR2 = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}

_UNALIGNED = b"PreAmbleWillBeRemoved,ThePrePartThatIs"
LIBRDKAFKA_MURMUR2 = {
    b"kafka": 0xD067CF64,
    b"giberish123456789": 0x8F552B0C,
    b"1234": 0x9FC97B14,
    b"234": 0xE7C009CA,
    b"34": 0x873930DA,
    b"4": 0x5A4B5CA1,
    _UNALIGNED: 0x78424F1C,
    _UNALIGNED[1:]: 0x4A62B377,
    _UNALIGNED[2:]: 0xE0E4E09E,
    _UNALIGNED[3:]: 0x62B8B43F,
    b"": 0x106E08D9,
}

LIBRDKAFKA_FNV1A = {
    b"kafka": 0x0D33C4E1,
    b"giberish123456789": 0x77A58295,
    b"1234": 0x023BDD03,
    b"234": 0x2DEA3CD2,
    b"34": 0x740FA83E,
    b"4": 0x310CA263,
    _UNALIGNED: 0x65CBD69C,
    _UNALIGNED[1:]: 0x6E49C79A,
    _UNALIGNED[2:]: 0x69EED356,
    _UNALIGNED[3:]: 0x6ABCC023,
    b"": 0x7EE3623B,
}


@pytest.mark.parametrize(("key", "expected"), JAVA_MURMUR2.items())
def test_murmur2_matches_the_java_clients_own_test_vectors(key: bytes, expected: int) -> None:
    assert murmur2(key) == expected


@pytest.mark.parametrize(("key", "expected"), LIBRDKAFKA_MURMUR2.items())
def test_murmur2_matches_librdkafkas_test_vectors(key: bytes, expected: int) -> None:
    assert murmur2(key) & 0xFFFFFFFF == expected


@pytest.mark.parametrize(("key", "expected"), LIBRDKAFKA_FNV1A.items())
def test_fnv1a_matches_librdkafkas_test_vectors(key: bytes, expected: int) -> None:
    assert fnv1a(key) == expected


def test_java_default_partition_is_the_positive_hash_modulo_the_count() -> None:
    # "21" hashes to -973932308; & 0x7fffffff gives 1173551340, which is 0 mod 4 and 4 mod 8.
    assert partition_for(b"21", 4) == 0
    assert partition_for(b"21", 8) == 4
    assert partition_for(b"foobar", 8, "murmur2_random") == 1357151166 % 8 == 6
    assert partition_for(b"abc", 5) == 479470107 % 5 == 2


def test_consistent_is_crc32_modulo_the_count() -> None:
    assert partition_for(b"kafka", 10, "consistent") == 0x5BBC7517 % 10 == 9
    assert partition_for(b"user-123", 10, "consistent_random") == 0xA2686A4E % 10 == 0
    assert partition_for(b"giberish123456789", 50, "consistent") == 21


def test_fnv1a_partition_uses_the_absolute_hash() -> None:
    assert partition_for(b"kafka", 10, "fnv1a") == 0x0D33C4E1 % 10 == 5
    assert partition_for(b"giberish123456789", 50, "fnv1a_random") == 23


def test_text_keys_are_hashed_as_utf8_like_the_client_sends_them() -> None:
    assert partition_for("device-é", 12) == partition_for("device-é".encode(), 12)


@pytest.mark.parametrize("partitioner", PARTITIONERS)
def test_a_null_key_is_left_to_the_clients_own_choice(partitioner: str) -> None:
    assert partition_for(None, 6, partitioner) is None


def test_an_empty_key_is_hashed_except_by_consistent_random_and_random() -> None:
    assert partition_for(b"", 7, "murmur2") == 0x106E08D9 % 7
    assert partition_for(b"", 7, "consistent") == 0  # CRC-32 of nothing is 0
    assert partition_for(b"", 7, "fnv1a_random") == 0x7EE3623B % 7
    assert partition_for(b"", 7, "consistent_random") is None
    assert partition_for(b"x", 7, "random") is None


def test_unknown_partitioner_is_a_clear_error_listing_the_known_ones() -> None:
    with pytest.raises(TopicDesignError, match=r"unknown partitioner 'murmur3'; use one of .*murmur2_random"):
        partition_for(b"k", 3, "murmur3")


@pytest.mark.parametrize("count", [0, -1, 2.5, True])
def test_partition_count_must_be_a_whole_number_of_at_least_one(count: object) -> None:
    with pytest.raises(TopicDesignError, match="num_partitions must be a whole number ≥ 1"):
        partition_for(b"k", count)  # type: ignore[arg-type]


def test_a_key_of_another_type_is_refused_with_the_way_out() -> None:
    with pytest.raises(WorkbenchError, match="a key must be bytes or str, not int"):
        partition_for(42, 3)  # type: ignore[arg-type]
