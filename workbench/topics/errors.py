"""The topic toolkit's own errors: a design input is wrong, or the cluster will not grow a topic.

    WorkbenchError
    ├── TopicDesignError          an unknown partitioner, a non-positive count or rate, a device
    │                             id that cannot be a Kafka topic name...
    └── KafkaError
        └── PartitionGrowthRefused  the cluster answered CreatePartitions with an error (a
                                  broker without it, an ACL, a policy); `code` is its name

Like every workbench error, the message names the offending value and the way out.
"""

from __future__ import annotations

from workbench.errors import KafkaError, WorkbenchError

__all__ = ["PartitionGrowthRefused", "TopicDesignError"]


class TopicDesignError(WorkbenchError):
    """A topic-design, partitioner or sizing input is invalid; the message says which and why."""


class PartitionGrowthRefused(KafkaError):
    """The cluster did not add partitions to a topic; `code` is the error it answered with.

    Its own type because it is an outcome a notebook reports (this broker cannot grow a
    topic) rather than a failure of the run.
    """
