"""Topic design: layouts (strategies), key placement (partitioners), growth, sizing, costs.

    from workbench.topics import KeyedTopic, TopicPerDevice, BucketedTopics, partition_for
    partition_for(b"car-7", 12)                      # where the Java client puts the key
    moved_keys(keys, 4, 5).moved_fraction            # keys that change partition on growth
    partitions_needed(40, 4, 8, margin=0.5)          # max(t/t_p, t/t_c) with a margin

`count_cost`, `read_cost` and `device_io` run experiments on a broker and import
confluent-kafka; everything else is pure computation, so the calculator works without a
stack.

Modules:

    strategies       three layouts of device data in topics, behind one interface
    partitioners     key → partition, as the Java client and librdkafka compute it
    growth           where keyed records land when a topic grows
    live_growth      a topic grown on the broker, its keys before and after
    sizing           partition counts and the capacity they cost, as formulas
    count_cost       what topic count costs on the real broker
    read_cost        what reading one device's history costs in each layout
    device_io        every device's records written through a layout and read back exactly
    group_join       how long a group takes to hand out partitions: classic against KIP-848
    share_groups     share groups against consumer groups: who helps, what order holds
    share_redelivery  a released record and a killed member's: what comes again, and when
    errors           `TopicDesignError` and `PartitionGrowthRefused`
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
    "BucketedTopics", "Estimate", "GrowthReport", "JAVA_DEFAULT", "KeyedTopic",
    "LIBRDKAFKA_DEFAULT", "PARTITIONERS", "PartitionPlan", "Route", "Subscription",
    "TopicDesignError", "TopicPerDevice", "TopicStrategy", "capacity", "device_ids",
    "expected_moved_fraction", "fnv1a", "growth_table", "moved_keys", "murmur2",
    "open_file_handles", "partition_for", "partitions_needed", "producer_buffer_memory",
    "proxy_heap", "replication_latency", "unavailability_window"
]  # fmt: skip
