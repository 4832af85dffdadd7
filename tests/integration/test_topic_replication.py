"""Every topic an experiment creates carries the profile's replication settings.

On three Kafka nodes (`conf/local-3.yaml`, RF 3 and min ISR 2): each topic an experiment
creates has three replicas and `min.insync.replicas` 2 as a topic config. Experiments
delete their topics at the end; the test keeps them by recording the deletions instead
of performing them, reads each one back, then deletes them itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pytest
from confluent_kafka.admin import ConfigResource

from workbench import kafka, results
from workbench.bench import native_produce, native_round_trip, proxy_produce
from workbench.config import TopicSettings
from workbench.kafka.admin import admin_client
from workbench.stack import Stack
from workbench.streaming.ingestion import telemetry_topic
from workbench.topics.count_cost import topic_count_cost

REPLICATION = TopicSettings(replication_factor=3, min_insync_replicas=2)


@pytest.fixture
def replicated(three_brokers: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Stack, list[str]]]:
    """Three brokers under a profile asking for RF 3 / min ISR 2; topics kept until the end."""
    stack = three_brokers
    kept: list[str] = []
    delete = kafka.delete_topics

    def keep(conf: object, names: Iterable[str], **_: object) -> None:
        kept.extend(names)

    monkeypatch.setattr(kafka, "delete_topics", keep)
    profile = stack.profile.model_copy(update={"topics": REPLICATION})
    yield Stack(profile, stack.services), kept
    delete(stack.kafka_config("admin"), kept)


def _min_insync(conf: dict[str, object], topic: str) -> str:
    client = admin_client(conf)  # must outlive the future
    (future,) = client.describe_configs([ConfigResource("topic", topic)]).values()
    return str(future.result()["min.insync.replicas"].value)


def test_experiments_create_topics_with_the_profiles_replication(replicated: tuple[Stack, list[str]]) -> None:
    active, kept = replicated
    rows = [
        native_produce(active, records=200, partitions=2),
        native_round_trip(active, records=200, partitions=2),
        proxy_produce(active, records=200, records_per_call=100),
    ]
    topic_count_cost(active, [2], records=100, join=False, repeats=1)
    with telemetry_topic(active, records=100, partitions=2):
        pass

    conf = active.kafka_config("admin")
    assert len(kept) >= 6  # 3 load generators, 2 + 1 topics of the count cost, 1 telemetry topic
    for topic in kept:
        info = kafka.describe_topic(conf, topic)
        assert all(len(p.replicas) == 3 for p in info.partitions), (topic, info)
        assert _min_insync(conf, topic) == "2", topic
    stamped = results.record("replication_check", rows, profile=active.profile)
    assert (stamped["replication_factor"] == 3).all() and (stamped["min_insync_replicas"] == 2).all()
