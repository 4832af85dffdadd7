"""Native Kafka helpers: topic admin, true end offsets, producers and consumers.

Settings are librdkafka dictionaries; take them from a stack (`stack.kafka_config(role)`)
so the profile's client settings reach every client.

Modules:

    admin            topic administration: topics are created explicitly, never by a produce
    clients          producers and consumers from a stack's settings, and exact read-back
    producing        the produce loop every producer needs, once
    offsets          true log-end offsets, also on brokers that report them short
    record_limits    what a record of a given size needs from each size limit on its way
    java_names       Java client settings and their librdkafka spelling
    wire             Kafka's wire protocol by hand: framing, encodings, one connection
    metadata         a raw Metadata request: the exact size of its answer
    share_admin      share groups listed and described over Kafka's own protocol
    security         how the hand-written client reaches a secured listener
    sasl             PLAIN and SCRAM for the hand-written client
"""

from workbench.kafka.admin import (
    PartitionInfo,
    TopicInfo,
    admin_client,
    broker_answers,
    create_topic,
    create_topics,
    delete_records,
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
    "OffsetReader", "Partition", "PartitionInfo", "ProduceResult", "READER_SETTINGS", "Record",
    "TimedRead", "TopicInfo", "admin_client", "broker_answers", "consumer", "create_topic",
    "create_topics", "delete_records", "delete_topics", "describe_topic", "end_offsets",
    "gc_paused", "list_topics", "produce", "producer", "read_records", "record_ranges",
    "reported_offsets", "timed_read", "total_records"
]  # fmt: skip
