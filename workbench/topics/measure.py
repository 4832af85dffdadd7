"""The topic experiments under one name, as notebooks 06 and 07 and the tests import them.

Each concern has its own module; this one only gathers their public names:

- `count_cost`: what N topics cost (`topic_count`, `topic_count_cost`, `metadata_cost`,
  `produce_spread`, `regex_join_time`);
- `read_cost`: what reading one device's history costs per layout (`device_read`,
  `device_read_cost`, `READ_METHODS`);
- `device_io`: writing a fleet's records through a strategy and reading them back
  (`write_devices`, `read_device`, `read_group`, `read_partitions`, `device_value`);
- `live_growth`: a topic grown with CreatePartitions and where its keys land, against the
  computed movement (`measure_growth`, `grow_live`, `add_partitions`);
- `group_join`: a consumer group's join, rebalance and leave times, classic against
  KIP-848 (`group_join_timing`, `join_timing`, `join_verdict`, `member_settings`,
  `broker_group_settings`);
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
from workbench.topics.group_join import (
    PHASES,
    PROTOCOLS,
    JoinTiming,
    broker_group_settings,
    group_join_timing,
    join_timing,
    join_verdict,
    member_settings,
)
from workbench.topics.live_growth import GrowthRun, LiveGrowth, add_partitions, grow_live, measure_growth
from workbench.topics.read_cost import READ_METHODS, device_read, device_read_cost

__all__ = [
    "DeviceRead",
    "DeviceWrite",
    "GroupRead",
    "GrowthRun",
    "JoinTiming",
    "LiveGrowth",
    "PHASES",
    "PROTOCOLS",
    "READ_METHODS",
    "add_partitions",
    "broker_group_settings",
    "device_read",
    "device_read_cost",
    "device_value",
    "group_join_timing",
    "grow_live",
    "join_timing",
    "join_verdict",
    "measure_growth",
    "member_settings",
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
