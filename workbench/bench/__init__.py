"""Benchmark toolkit: load generators that each return one tidy row, sweeps, a meter.

    from workbench.bench import native_produce, proxy_produce, sweep, ThroughputMeter
    row = native_produce(stack, records=100_000, **{"linger.ms": 10})
    rows = sweep("proxy_produce", {"records_per_call": [1, 10, 100]}, repeat=3, stack=stack)

Every row has its parameters as columns, then records, bytes, seconds, msg/s, MB/s,
latency p50/p95/p99/max (what the latency is of is in `latency_of`), CPU seconds and
peak RSS of the broker and proxy processes, and the run metadata. Speed is measured
here, never asserted by tests.

Modules:

    experiments        the registry of experiments: the names `sweep` and `workbench bench` accept
    _run               what every load generator shares: a throw-away topic, the result row
    sweep              an experiment over a grid, repeats interleaved, rows kept
    command            `workbench bench`: an experiment from the shell, printed as a table
    native             native producers and consumers: the ceiling the rest is compared with
    payload            record values that compress like real events
    meter              `ThroughputMeter`: msg/s from true end offsets, sampled under load
    proxy_load         REST proxy produce and consume: records arrays, sessions, threads, formats
    proxy_calls        produce calls to a proxy, from threads, client processes or wrk
    loadgen            wrk, the compiled HTTP load generator
    http_floor         what HTTP alone costs a Python proxy before it touches a record
    instance_cost      what a consumer instance costs the proxy process holding it, idle and fetching
    rolling_restart    proxies restarted one at a time under a reading group, by group protocol
    rolling_clients    a rolling restart's writer and readers, and what they saw
    efficiency         the proxy against the native client: MB/s and CPU per MB as ratios
    scale              proxies configured otherwise than the stack's, for one experiment
    formats            binary, JSON, Avro, JSON Schema and Protobuf: what a format costs
    schema_registry    what a schema id costs a consumer, cached and uncached
    message_size       large records against Kafka's size limits: who refuses, what must change
    burst              `lag_burst`: lag over time and the time to clear a backlog
    burst_plan         a burst's settings checked, and the capacity and time to clear they promise
    burst_consumers    the three consumers a burst is read by
    share              `share_consume`: a share group against a consumer group
    failover           a partition leader killed under load
    waterfall          per-hop latency from the HTTP client to the reader
    waterfall_stamps   the per-record stamp table every hop writes into
    waterfall_readers  the waterfall's readers: native, REST consumer instance, Spark query
    waterfall_study    reading waterfall rows: the slow hop, which hop a knob moved
    warmup             a JVM broker's warm-up curve, and the load that warms it
"""

from workbench.bench.efficiency import proxy_vs_native
from workbench.bench.experiments import Experiment, get_experiment
from workbench.bench.formats import format_produce
from workbench.bench.http_floor import http_floor
from workbench.bench.instance_cost import instance_cost, instance_cost_sentence, instance_cost_sweep
from workbench.bench.message_size import LADDER_COLUMNS, ladder_story, limit_ladder, needed_settings
from workbench.bench.meter import Sample, ThroughputMeter
from workbench.bench.native import fill_topic, native_consume, native_produce, native_round_trip
from workbench.bench.proxy_load import proxy_consume, proxy_produce
from workbench.bench.rolling_restart import ROLLING_DEFAULTS, rolling_restart_run
from workbench.bench.scale import ProxySetup, missing_setup, proxy_counts, proxy_setup, setup_sweep, side_stack
from workbench.bench.schema_registry import registry_lookups
from workbench.bench.sweep import delete_bench_topics, grid_points, sweep
from workbench.bench.waterfall import Waterfall, latency_waterfall, waterfall_run
from workbench.errors import BenchError
from workbench.measure.failures import DeliveryError, check_complete, check_delivered
from workbench.measure.latency import latency_summary
from workbench.measure.resources import ResourceMonitor, cpu_per_mb
from workbench.measure.timeline import timeline_rates
from workbench.results import spread

__all__ = [
    "BenchError", "DeliveryError", "Experiment", "LADDER_COLUMNS", "ProxySetup", "ROLLING_DEFAULTS",
    "ResourceMonitor", "Sample", "ThroughputMeter", "Waterfall", "check_complete",
    "check_delivered", "cpu_per_mb", "delete_bench_topics", "fill_topic", "format_produce",
    "get_experiment", "grid_points", "http_floor", "instance_cost", "instance_cost_sentence",
    "instance_cost_sweep", "ladder_story", "latency_summary", "latency_waterfall", "limit_ladder",
    "missing_setup", "native_consume", "native_produce", "native_round_trip", "needed_settings",
    "proxy_consume", "proxy_counts", "proxy_produce", "proxy_setup", "proxy_vs_native",
    "registry_lookups", "rolling_restart_run", "setup_sweep", "side_stack", "spread", "sweep",
    "timeline_rates", "waterfall_run"
]  # fmt: skip
