"""The raw Metadata client against the real embedded broker: what it decodes is what the admin API sees."""

from __future__ import annotations

from collections.abc import Callable

from workbench import kafka
from workbench.kafka.metadata import fetch_metadata
from workbench.kafka.wire import parse_servers
from workbench.stack import Stack


def test_a_raw_metadata_answer_lists_every_topic_with_its_partitions(stack: Stack, topic: Callable[..., str]) -> None:
    name = topic(partitions=3)
    conf = stack.kafka_config("admin")
    answer = fetch_metadata(parse_servers(str(conf["bootstrap.servers"]))[0], timeout=30)
    topics = {t.name: t for t in answer.response.topics}
    assert topics[name].partitions == (0, 1, 2) and topics[name].error_code == 0
    assert set(kafka.list_topics(conf)) <= set(topics)
    assert answer.response.brokers and answer.response.correlation_id == 2  # after ApiVersions, 1
    assert answer.size_bytes > 0 and answer.seconds > 0


def test_each_topic_adds_the_bytes_its_name_and_partitions_take(stack: Stack, topic: Callable[..., str]) -> None:
    address = parse_servers(str(stack.kafka_config("admin")["bootstrap.servers"]))[0]
    before = fetch_metadata(address, timeout=30).size_bytes
    name = topic(partitions=2)
    after = fetch_metadata(address, timeout=30).size_bytes
    # error code 2 + name (2 + length) + internal 1 + partition array 4, and per partition
    # error 2 + index 4 + leader 4 + replicas (4 + 4 per replica) + isr (4 + 4 per replica).
    replicas = len(kafka.describe_topic(stack.kafka_config("admin"), name).partitions[0].replicas)
    assert after - before == 2 + 2 + len(name) + 1 + 4 + 2 * (2 + 4 + 4 + 2 * (4 + 4 * replicas))
