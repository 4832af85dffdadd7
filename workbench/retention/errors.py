"""The retention toolkit's own errors: a log setting the workbench or the broker refuses.

    WorkbenchError
    ├── RetentionError            an unknown log setting, or an experiment input out of range
    └── KafkaError
        └── TopicConfigRefused    the broker (or the proxy in front of it) refused a topic's
                                  log settings; nothing on the topic changed

Like every workbench error, the message names the offending value and the way out.
"""

from __future__ import annotations

import math

from workbench.errors import KafkaError, WorkbenchError

__all__ = ["RetentionError", "TopicConfigRefused", "check_ranges"]


class RetentionError(WorkbenchError):
    """A log setting's name is not one of Kafka's, or an experiment input is out of range."""


class TopicConfigRefused(KafkaError):
    """The cluster refused a topic's log settings; the message holds the broker's reason.

    Its own type because a notebook reports it as what the cluster allows (a broker without
    compaction, no permission to alter configs) rather than as a failure of the run.
    """


def check_ranges(*checks: tuple[str, object, float, float]) -> None:
    """Each `(name, value, low, high)`: a finite number from low to high, else a one-line
    `RetentionError` naming it and its range."""
    for name, value, low, high in checks:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise RetentionError(f"{name} must be a number from {low:g} to {high:g}, got {value!r}")
        if not low <= value <= high:
            raise RetentionError(f"{name} must be from {low:g} to {high:g}, got {value!r}")
