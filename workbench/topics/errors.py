"""The topic toolkit's own error: a topic design, partitioner or sizing input is wrong.

    WorkbenchError
    └── TopicDesignError   an unknown partitioner, a non-positive count or rate, a device
                           id that cannot be a Kafka topic name...

Like every workbench error, the message names the offending value and the way out.
"""

from __future__ import annotations

from workbench.errors import WorkbenchError

__all__ = ["TopicDesignError"]


class TopicDesignError(WorkbenchError):
    """A topic-design, partitioner or sizing input is invalid; the message says which and why."""
