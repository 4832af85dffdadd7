"""How long records stay: retention, compaction and replay, measured on a real broker.

    from workbench.retention import retention_run, compaction_run, replay
    run = retention_run(stack, **{"retention.ms": 3000, "segment.ms": 1000})
    run.records["survived_s"].median()          # how long a record lived, against 3 s
    compaction_run(stack, keys=50).scans        # stale records and tombstones over time

Each experiment makes its own topic with the log settings it is given by Kafka's names,
through the REST proxy's v3 config API when `through="proxy"` and the admin client
otherwise, and returns a row of the experiment contract (`workbench bench
retention_deletes`, `compaction_progress`, `reader_behind_retention`, `replay`).

Modules:

    log_settings     a topic's log settings by Kafka's names: checked, set, read back
    log_state        where a partition's log starts and ends, its segments on disk, over time
    writing          records written at a steady rate, each one's offset and time kept
    reading          one reader of a partition, native or REST, that resumes, rewinds and counts
    deletion         when retention really deletes: survival time against retention.ms
    compaction       when compaction really compacts: stale values, tombstones, the table left
    behind           a reader behind retention, resumed with each auto.offset.reset
    twins            the same changelog written to a compacted topic and one kept whole
    replay           a group rewound to the beginning, an offset or a moment, and read again
    conclusions      what a run says, in sentences computed from its rows
    sections         a notebook section's points, stopping in one line where the cluster refuses
    errors           `RetentionError` and `TopicConfigRefused`
"""

from workbench.retention.behind import reader_behind_retention
from workbench.retention.compaction import (
    COMPACTION_DEFAULTS,
    CompactionRun,
    LogScan,
    compaction_progress,
    compaction_run,
    scan_log,
)
from workbench.retention.deletion import RETENTION_DEFAULTS, RetentionRun, retention_deletes, retention_run
from workbench.retention.errors import RetentionError, TopicConfigRefused
from workbench.retention.log_settings import LOG_SETTINGS, apply_log_settings, log_settings, topic_log_settings
from workbench.retention.log_state import LogSnapshot, LogWatch
from workbench.retention.reading import PartitionReader, ReaderOutOfRange
from workbench.retention.replay import REWIND_TARGETS, replay
from workbench.retention.sections import Sweep, sweep_points
from workbench.retention.twins import ChangelogTwins, changelog_twins

__all__ = [
    "COMPACTION_DEFAULTS",
    "ChangelogTwins",
    "CompactionRun",
    "LOG_SETTINGS",
    "LogScan",
    "LogSnapshot",
    "LogWatch",
    "PartitionReader",
    "RETENTION_DEFAULTS",
    "REWIND_TARGETS",
    "ReaderOutOfRange",
    "RetentionError",
    "RetentionRun",
    "Sweep",
    "TopicConfigRefused",
    "apply_log_settings",
    "changelog_twins",
    "compaction_progress",
    "compaction_run",
    "log_settings",
    "reader_behind_retention",
    "replay",
    "retention_deletes",
    "retention_run",
    "scan_log",
    "sweep_points",
    "topic_log_settings",
]
