"""Topic design: layouts (strategies), key placement (partitioners), growth, sizing, costs.

    from workbench.topics import KeyedTopic, TopicPerDevice, BucketedTopics, partition_for
    partition_for(b"car-7", 12)                      # where the Java client puts the key
    moved_keys(keys, 4, 5).moved_fraction            # keys that change partition on growth
    partitions_needed(40, 4, 8, margin=0.5)          # max(t/t_p, t/t_c) with a margin

`count_cost`, `read_cost` and `device_io` run experiments on a broker and import
confluent-kafka; everything else is pure computation, so the calculator works without a
stack.
"""

from workbench.topics.errors import TopicDesignError
from workbench.topics.growth import GrowthReport, expected_moved_fraction, growth_table, moved_keys
from workbench.topics.partitioners import (
    JAVA_DEFAULT,
    LIBRDKAFKA_DEFAULT,
    PARTITIONERS,
    fnv1a,
    murmur2,
    partition_for,
)
from workbench.topics.sizing import (
    Estimate,
    PartitionPlan,
    capacity,
    open_file_handles,
    partitions_needed,
    producer_buffer_memory,
    proxy_heap,
    replication_latency,
    unavailability_window,
)
from workbench.topics.strategies import (
    BucketedTopics,
    KeyedTopic,
    Route,
    Subscription,
    TopicPerDevice,
    TopicStrategy,
    device_ids,
)

__all__ = [
    "BucketedTopics",
    "Estimate",
    "GrowthReport",
    "JAVA_DEFAULT",
    "KeyedTopic",
    "LIBRDKAFKA_DEFAULT",
    "PARTITIONERS",
    "PartitionPlan",
    "Route",
    "Subscription",
    "TopicDesignError",
    "TopicPerDevice",
    "TopicStrategy",
    "capacity",
    "device_ids",
    "expected_moved_fraction",
    "fnv1a",
    "growth_table",
    "moved_keys",
    "murmur2",
    "open_file_handles",
    "partition_for",
    "partitions_needed",
    "producer_buffer_memory",
    "proxy_heap",
    "replication_latency",
    "unavailability_window",
]
