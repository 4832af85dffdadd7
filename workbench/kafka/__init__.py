"""Native Kafka helpers: topic admin, true end offsets, producers and consumers.

Settings are librdkafka dictionaries; take them from a stack (`stack.kafka_config(role)`)
so the profile's client settings reach every client.
"""

from workbench.kafka.admin import (
    PartitionInfo,
    TopicInfo,
    admin_client,
    broker_answers,
    create_topic,
    create_topics,
    delete_topics,
    describe_topic,
    list_topics,
)
from workbench.kafka.clients import (
    READER_SETTINGS,
    ProduceResult,
    Record,
    TimedRead,
    consumer,
    gc_paused,
    produce,
    producer,
    read_records,
    timed_read,
)
from workbench.kafka.offsets import (
    OffsetReader,
    Partition,
    end_offsets,
    record_ranges,
    reported_offsets,
    total_records,
)

__all__ = [
    "OffsetReader",
    "Partition",
    "PartitionInfo",
    "ProduceResult",
    "READER_SETTINGS",
    "Record",
    "TimedRead",
    "TopicInfo",
    "admin_client",
    "broker_answers",
    "consumer",
    "create_topic",
    "create_topics",
    "delete_topics",
    "describe_topic",
    "end_offsets",
    "gc_paused",
    "list_topics",
    "produce",
    "producer",
    "read_records",
    "record_ranges",
    "reported_offsets",
    "timed_read",
    "total_records",
]
