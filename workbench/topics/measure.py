"""The topic experiments under one name, as notebooks 06 and 07 and the tests import them.

Each concern has its own module; this one only gathers their public names:

- `count_cost`: what N topics cost (`topic_count`, `topic_count_cost`, `metadata_cost`,
  `produce_spread`, `regex_join_time`);
- `read_cost`: what reading one device's history costs per layout (`device_read`,
  `device_read_cost`, `READ_METHODS`);
- `device_io`: writing a fleet's records through a strategy and reading them back
  (`write_devices`, `read_device`, `read_group`, `read_partitions`, `device_value`);
- the raw Metadata wire client is `workbench.kafka.metadata`, and throw-away topics are
  `Stack.temporary_topics`.
"""

from workbench.topics.count_cost import (
    metadata_cost,
    produce_spread,
    regex_join_time,
    topic_count,
    topic_count_cost,
)
from workbench.topics.device_io import (
    DeviceRead,
    DeviceWrite,
    GroupRead,
    device_value,
    read_device,
    read_group,
    read_partitions,
    write_devices,
)
from workbench.topics.read_cost import READ_METHODS, device_read, device_read_cost

__all__ = [
    "DeviceRead",
    "DeviceWrite",
    "GroupRead",
    "READ_METHODS",
    "device_read",
    "device_read_cost",
    "device_value",
    "metadata_cost",
    "produce_spread",
    "read_device",
    "read_group",
    "read_partitions",
    "regex_join_time",
    "topic_count",
    "topic_count_cost",
    "write_devices",
]
