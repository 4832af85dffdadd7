"""The registry of experiments: the names `sweep` and `workbench bench` accept.

Adding one is one entry: a load generator (a function of a stack and keyword
parameters returning one row of the contract, see `workbench.measure.contract`) and a
line saying what it answers. The topic and Spark experiments are imported like the
others: their modules stand on `workbench.measure`, not on this package, and import
pyspark only inside the functions that run Spark.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, get_type_hints

from pydantic import TypeAdapter, ValidationError

from workbench.bench._run import TOPIC_SETTING
from workbench.bench.burst import lag_burst
from workbench.bench.burst_plan import plan_burst
from workbench.bench.efficiency import proxy_vs_native
from workbench.bench.failover import leader_failover
from workbench.bench.formats import format_produce
from workbench.bench.http_floor import http_floor
from workbench.bench.instance_cost import instance_cost
from workbench.bench.native import native_consume, native_produce, native_round_trip
from workbench.bench.proxy_load import proxy_consume, proxy_produce
from workbench.bench.rolling_restart import rolling_restart, rolling_restart_run
from workbench.bench.schema_registry import registry_lookups
from workbench.bench.share import share_consume
from workbench.bench.waterfall import latency_waterfall, waterfall_run
from workbench.errors import BenchError
from workbench.replication import (
    active_active,
    active_active_run,
    consumer_failover,
    consumer_failover_run,
    cut_link,
    cut_link_run,
    disaster,
    disaster_run,
    offset_shift,
    offset_shift_run,
    replication_lag,
    replication_lag_run,
    whole_path,
    whole_path_run,
    worker_kill,
    worker_kill_run,
)
from workbench.retention import (
    COMPACTION_DEFAULTS,
    LOG_SETTINGS,
    RETENTION_DEFAULTS,
    compaction_progress,
    compaction_run,
    reader_behind_retention,
    replay,
    retention_deletes,
    retention_run,
)
from workbench.streaming.ingestion import (
    spark_aggregate,
    spark_ingest,
    spark_real_time,
    spark_restart,
    spark_topic_layout,
    spark_trigger_latency,
)
from workbench.topics.count_cost import topic_count
from workbench.topics.read_cost import device_read

__all__ = ["EXPERIMENTS", "Experiment", "get_experiment"]


@dataclass(frozen=True)
class Experiment:
    """A named load generator."""

    name: str
    #: The load generator: `generator(stack, topic_prefix=..., **params)` → one contract row.
    generator: Callable[..., dict[str, Any]]
    question: str
    #: True when it passes unknown dotted keys through to librdkafka.
    kafka_settings: bool = False
    #: True when it takes the fresh topic's settings as `topic.`-prefixed keys (`topic.max.message.bytes`).
    topic_settings: bool = False
    #: What it needs beyond the broker (`"spark"`: Java and PySpark), for tests and listings.
    needs: str = ""
    #: The columns `workbench bench` prints for it (empty: throughput, latency and CPU).
    shown: tuple[str, ...] = ()
    #: The metrics whose spread over repeats `workbench bench --repeat` prints.
    spread_of: tuple[str, ...] = ("msg_s",)
    #: Where its parameters are declared, when the row comes from a richer run whose
    #: function takes them (`waterfall_run`, `plan_burst`): names, defaults and types are
    #: read from that function's keyword-only parameters instead of the generator's.
    parameters: Callable[..., Any] | None = None
    #: The topic log settings it takes as parameters by Kafka's own names (`retention.ms`),
    #: with the defaults it runs with; None when it takes none.
    log_settings: Mapping[str, Any] | None = None

    @property
    def run(self) -> Callable[..., dict[str, Any]]:
        """The load generator itself: `run(stack, topic_prefix=..., **params)` → one contract row."""
        return self.generator

    def defaults(self) -> dict[str, Any]:
        """Its own parameters and their defaults (librdkafka settings not included)."""
        skip = {"stack", "topic_prefix", "timeline", "urls", "keep_topic"}
        own = {
            name: p.default
            for name, p in inspect.signature(self.parameters or self.run).parameters.items()
            if p.kind is p.KEYWORD_ONLY and name not in skip
        }
        return {**own, **(self.log_settings or {})}

    def check(self, params: dict[str, Any]) -> None:
        """Reject parameter names the generator does not take, listing the ones it does.

        Raises:
            BenchError: an unknown parameter (dotted names pass when `kafka_settings`).
        """
        known = self.defaults()
        unknown = [
            k
            for k in params
            if k not in known
            and not (self.kafka_settings and ("." in k or k == "acks"))
            and not (self.topic_settings and k.startswith(TOPIC_SETTING))
            and not (self.log_settings is not None and k in LOG_SETTINGS)
        ]
        if unknown:
            hint = "; librdkafka settings are dotted (linger.ms)" if self.kafka_settings else ""
            if self.log_settings is not None:
                hint = f"; log settings by Kafka's names: {', '.join(LOG_SETTINGS)}"
            raise BenchError(
                f"{self.name} has no parameter {', '.join(sorted(unknown))}; it takes {sorted(known)}{hint}"
            )
        try:
            hints = get_type_hints(self.parameters or self.run)
        except NameError:  # an annotation only imported for type checkers (SparkSession): no check
            hints = {}
        for name, value in params.items():
            if name in known and name in hints:
                _check_type(self.name, name, value, hints[name])


def _check_type(experiment: str, name: str, value: Any, hint: Any) -> None:
    """A value the generator's annotation accepts, or a one-line error naming what it wants.

    Pydantic's lax mode decides, so `500` is an int and `5` a float, but `abc` is not an int.
    """
    try:
        TypeAdapter(hint).validate_python(value)
    except ValidationError:
        wanted = getattr(hint, "__name__", None) or str(hint).replace("typing.", "")
        raise BenchError(f"{experiment}: --param {name}={value!r} is not {_article(wanted)} {wanted}") from None


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment(
            "native_round_trip",
            native_round_trip,
            "whether every acknowledged record comes back exactly once, and how fast each way",
        ),
        Experiment(
            "native_produce",
            native_produce,
            "what linger.ms, batch.size, compression, acks and idempotence buy one native producer",
            True,
        ),
        Experiment(
            "native_consume",
            native_consume,
            "what fetch settings buy one native consumer, and how steady it reads",
            True,
        ),
        Experiment(
            "proxy_produce",
            proxy_produce,
            "what records per call, session reuse, threads and format buy through the REST proxy",
            topic_settings=True,
        ),
        Experiment(
            "proxy_consume", proxy_consume, "what max_bytes, timeout and fetch.min.bytes buy a REST proxy consumer"
        ),
        Experiment(
            "http_floor",
            http_floor,
            "what HTTP alone costs a Python proxy and its clients per MB (a bare app, no Kafka)",
        ),
        Experiment(
            "proxy_vs_native",
            proxy_vs_native,
            "the proxy's MB/s and CPU per MB against the native client's (and the bare HTTP app's), in one run",
            shown=(
                "mb_s",
                "native_mb_s",
                "mb_s_ratio",
                "proxy_ms_per_mb",
                "native_client_ms_per_mb",
                "floor_ms_per_mb",
                "cpu_ratio",
                "proxy_broker_ms_per_mb",
                "native_broker_ms_per_mb",
                "client_saturated",
            ),
            spread_of=("mb_s_ratio", "cpu_ratio"),
        ),
        Experiment(
            "instance_cost",
            instance_cost,
            "what a consumer or share-consumer instance costs its proxy process in memory and CPU, idle and fetching",
            shown=(
                "kind",
                "protocol",
                "instances",
                "rss_before_mb",
                "idle_mb_per_instance",
                "fetching_mb_per_instance",
                "idle_cpu_pct",
                "fetching_cpu_pct",
                "records",
            ),
            spread_of=("idle_mb_per_instance", "fetching_mb_per_instance"),
        ),
        Experiment(
            "format_produce",
            format_produce,
            "what binary, JSON, Avro, JSON Schema and Protobuf cost, natively and through the proxy",
        ),
        Experiment(
            "registry_lookups",
            registry_lookups,
            "what a Schema Registry lookup by id costs, from the client's cache and over HTTP",
        ),
        Experiment(
            "latency_waterfall",
            latency_waterfall,
            "where a record's time goes, hop by hop from the client to the reader, at a fixed offered rate",
            True,
            parameters=waterfall_run,
            shown=(
                "offered_msg_s",
                "path",
                "reader",
                "latency_p50_ms",
                "latency_p99_ms",
                "closed_loop_p99_ms",
                "ack_p99_ms",
                "schedule_slips",
                "lost",
            ),
            spread_of=("latency_p50_ms", "latency_p99_ms"),
        ),
        Experiment(
            "lag_burst",
            lag_burst,
            "how high consumer lag climbs in a burst above capacity and how long it takes to clear, "
            "for a native member, a REST consumer or Spark (consumer=spark needs Spark)",
            parameters=plan_burst,
            shown=(
                "consumer",
                "capacity_msg_s",
                "burst_msg_s",
                "baseline_lag",
                "lag_peak",
                "lag_peak_s",
                "clear_s",
                "predicted_clear_s",
                "catch_up_msg_s",
                "sent",
                "read",
                "lost",
                "schedule_slips",
            ),
            spread_of=("clear_s", "lag_peak"),
        ),
        Experiment(
            "leader_failover",
            leader_failover,
            "what a partition leader's death costs a producer (stall, election) and what the log keeps, by acks",
            needs="brokers",
            shown=("acks", "idempotence", "stall_ms", "new_leader_ms", "acknowledged", "failed", "lost", "duplicates"),
            spread_of=("stall_ms",),
        ),
        Experiment(
            "rolling_restart",
            rolling_restart,
            "what restarting the proxies one at a time costs a group reading through them, by group protocol",
            parameters=rolling_restart_run,
            needs="proxies",
            shown=(
                "protocol",
                "heartbeat_ms",
                "auto_commit",
                "restart_s",
                "gap_before_s",
                "gap_median_s",
                "gap_max_s",
                "redelivered",
                "lost",
                "produce_failed",
            ),
            spread_of=("gap_median_s", "gap_max_s"),
        ),
        Experiment(
            "share_consume",
            share_consume,
            "records/s of a share group against a consumer group, by members and processing time per record",
            needs="share groups",
            shown=("kind", "members", "processing_ms", "records", "msg_s", "busy_members", "duplicates"),
        ),
        Experiment(
            "topic_count",
            topic_count,
            "what N topics cost: creation, Metadata size, produce spread over N topics vs N partitions, regex join",
        ),
        Experiment(
            "device_read",
            device_read,
            "what reading one device's history costs from its own topic, its keyed partition or the whole topic",
        ),
        Experiment(
            "replication_lag",
            replication_lag,
            "how long MirrorMaker 2 takes to copy a record from cluster a to cluster b, by offered rate",
            parameters=replication_lag_run,
            needs="replication",
            shown=(
                "rate",
                "partitions",
                "records",
                "replicated",
                "missing",
                "duplicates",
                "latency_p50_ms",
                "latency_p99_ms",
                "pickup_s",
                "slips",
            ),
            spread_of=("latency_p50_ms",),
        ),
        Experiment(
            "consumer_failover",
            consumer_failover,
            "what a consumer group re-reads or skips when it moves from cluster a to its copy on b",
            parameters=consumer_failover_run,
            needs="replication",
            shown=(
                "records",
                "partitions",
                "read_on_a",
                "read_on_b",
                "reread",
                "reread_max_partition",
                "skipped",
                "sync_s",
            ),
            spread_of=("reread",),
        ),
        Experiment(
            "offset_shift",
            offset_shift,
            "where records land on b after deleted, aborted and transactional ones on a, and where a checkpoint points",
            parameters=offset_shift_run,
            needs="replication",
            shown=(
                "records",
                "deleted_copied",
                "aborted_copied",
                "shift_max",
                "committed_on_a",
                "checkpoint_on_b",
                "true_position_on_b",
                "reread",
                "skipped",
            ),
            spread_of=("reread",),
        ),
        Experiment(
            "cut_link",
            cut_link,
            "the flow from a to b stopped under load for cut_s, then resumed: backlog, time and rate to catch up",
            parameters=cut_link_run,
            needs="replication",
            shown=(
                "rate",
                "cut_s",
                "backlog",
                "first_copy_s",
                "catch_up_s",
                "catch_up_msg_s",
                "lag_max_ms",
                "missing",
                "duplicates",
            ),
            spread_of=("catch_up_s",),
        ),
        Experiment(
            "worker_kill",
            worker_kill,
            "the MirrorMaker worker running the flow's task killed under load: the gap on b, catch-up, copies twice",
            parameters=worker_kill_run,
            needs="replication",
            shown=(
                "rate",
                "killed",
                "silence_s",
                "copying_again_s",
                "catch_up_s",
                "lag_max_ms",
                "task_moved",
                "missing",
                "duplicates",
            ),
            spread_of=("copying_again_s",),
        ),
        Experiment(
            "active_active",
            active_active,
            "a <-> b at once under MirrorMaker's default policy: each record on each cluster once, no loop",
            parameters=active_active_run,
            needs="replication",
            shown=(
                "rate",
                "per_side",
                "replicated",
                "duplicates",
                "loop_topics",
                "counts_stable",
                "a_to_b_p50_ms",
                "b_to_a_p50_ms",
                "pattern_read_a",
                "pattern_read_b",
            ),
            spread_of=("latency_p50_ms",),
        ),
        Experiment(
            "disaster",
            disaster,
            "every node of cluster a SIGKILLed under acks=all load: acknowledged records b lacked (the RPO)",
            parameters=disaster_run,
            needs="replication",
            shown=(
                "rate",
                "acked",
                "rpo_records",
                "rpo_s",
                "lag_before_p99_ms",
                "in_flight_expected",
                "restart_s",
                "lost_for_good",
                "duplicates",
            ),
            spread_of=("rpo_records",),
        ),
        Experiment(
            "whole_path",
            whole_path,
            "records posted to a's REST proxy, copied by MirrorMaker, read on b through b's proxy and by Spark",
            parameters=whole_path_run,
            needs="replication",
            shown=(
                "records",
                "acked",
                "posted_msg_s",
                "latency_p50_ms",
                "proxy_b_read",
                "proxy_b_missing",
                "spark_b_read",
                "spark_b_missing",
            ),
            spread_of=("latency_p50_ms",),
        ),
        Experiment(
            "retention_deletes",
            retention_deletes,
            "how long a record really lives against retention.ms, by segment.ms and segment.bytes",
            parameters=retention_run,
            log_settings=RETENTION_DEFAULTS,
            shown=(
                "retention.ms",
                "segment.ms",
                "records",
                "deleted",
                "first_deleted_s",
                "survival_p50_s",
                "survival_max_s",
                "overstay_p50_s",
                "segments_max",
            ),
            spread_of=("survival_p50_s",),
        ),
        Experiment(
            "compaction_progress",
            compaction_progress,
            "how long stale values and tombstones stay in a compacted topic, by dirty ratio and compaction lag",
            parameters=compaction_run,
            log_settings=COMPACTION_DEFAULTS,
            shown=(
                "keys",
                "min.cleanable.dirty.ratio",
                "records",
                "stale_peak",
                "stale_final",
                "records_final",
                "first_compacted_s",
                "tombstones_gone_s",
                "table_matches",
            ),
            spread_of=("stale_final",),
        ),
        Experiment(
            "reader_behind_retention",
            reader_behind_retention,
            "what a group that stopped longer than retention finds when it resumes, by auto.offset.reset",
            shown=("reset", "through", "committed", "log_start_at_resume", "first_read_after", "missed", "duplicates"),
            spread_of=("missed",),
        ),
        Experiment(
            "replay",
            replay,
            "records/s of a group rewound to the beginning, an offset or a moment, natively and through the proxy",
            shown=(
                "to",
                "through",
                "expected_offset",
                "landed_offset",
                "replayed",
                "msg_s",
                "live_msg_s",
                "duplicates",
            ),
        ),
        Experiment(
            "spark_ingest",
            spark_ingest,
            "how fast Spark reads a topic by partitions, sink and source options, against one plain consumer",
            needs="spark",
        ),
        Experiment(
            "spark_aggregate",
            spark_aggregate,
            "what spark.sql.shuffle.partitions does to the per-device windowed aggregation",
            needs="spark",
        ),
        Experiment(
            "spark_trigger_latency",
            spark_trigger_latency,
            "record latency of a processing-time query at a fixed offered rate, by trigger interval",
            needs="spark",
        ),
        Experiment(
            "spark_real_time",
            spark_real_time,
            "end-to-end latency of a Kafka -> Kafka query in Spark's real-time mode against micro-batches",
            needs="spark",
            shown=(
                "mode",
                "trigger",
                "offered_msg_s",
                "latency_p50_ms",
                "latency_p99_ms",
                "delivered",
                "missing",
                "duplicates",
                "schedule_slips",
            ),
            spread_of=("latency_p50_ms", "latency_p99_ms"),
        ),
        Experiment(
            "spark_topic_layout",
            spark_topic_layout,
            "Spark reading one topic per device by pattern against one shared topic",
            needs="spark",
        ),
        Experiment(
            "spark_restart",
            spark_restart,
            "whether a restart from the checkpoint loses or duplicates records (a check: no rates)",
            needs="spark",
        ),
    )
}


def get_experiment(name: str) -> Experiment:
    """The experiment called `name`.

    Raises:
        BenchError: no such experiment; the message lists them.
    """
    try:
        return EXPERIMENTS[name]
    except KeyError:
        raise BenchError(f"no experiment {name!r}; experiments: {', '.join(sorted(EXPERIMENTS))}") from None
