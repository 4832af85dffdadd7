"""The retention toolkit's own errors: a log setting the workbench or the broker refuses.

    WorkbenchError
    ├── RetentionError            an unknown log setting, or an experiment input out of range
    └── KafkaError
        └── TopicConfigRefused    the broker (or the proxy in front of it) refused a topic's
                                  log settings; nothing on the topic changed

Like every workbench error, the message names the offending value and the way out.
"""

from __future__ import annotations

from workbench.errors import KafkaError, WorkbenchError

__all__ = ["RetentionError", "TopicConfigRefused"]


class RetentionError(WorkbenchError):
    """A log setting's name is not one of Kafka's, or an experiment input is out of range."""


class TopicConfigRefused(KafkaError):
    """The cluster refused a topic's log settings; the message holds the broker's reason.

    Its own type because a notebook reports it as what the cluster allows (a broker without
    compaction, no permission to alter configs) rather than as a failure of the run.
    """
