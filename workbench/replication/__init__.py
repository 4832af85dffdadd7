"""Where records live: two Kafka clusters and MirrorMaker 2 between them, measured.

    from workbench.replication import flow_states, remote_topic
    stack = workbench.stack.up("local-geo")          # clusters a and b, MirrorMaker a -> b
    stack.peer_config("consumer")                   # a client of cluster b
    remote_topic(stack.profile, "orders")            # "a.orders": its name on b
    flow_states(stack.peer_config(), "a")            # Connect's own state of each connector and task

The stack runs MirrorMaker as a user does, its own jars in dedicated mode (`stack.mirror`),
plans its properties (`stack.mirror_plan`) and reads its flows' state from Connect's status
topic (`stack.mirror_status`), re-exported here. This package measures what it does.

Modules:

    naming      a source topic's name on the target, by the replication policy
    geo_stack   the stack a notebook measures: the active one, or `local-geo` started beside it
    load        the load every flow run stands on: stamped topics, pick-up, records offered, a disruption in it
    lag         replication lag: each record's append on a against its append on b, open-loop load
    failover    a consumer group moved from a to b: records re-read, records skipped
    offset_shift  where records land on b after gaps on a, and where a group's checkpoint points
    cut_link    the flow stopped under load, then resumed: backlog, catch-up time and rate
    worker_kill  the worker running the flow's task killed under load: the gap, catch-up, copies twice
    active_active  a <-> b at once: every copy counted on both clusters for a loop, read by pattern
    disaster    cluster a killed under load: acknowledged records b lacked (the RPO), a restarted
    whole_path  a's REST proxy → MirrorMaker → b's REST proxy and Spark on b, every record counted
    internal_topics  MirrorMaker's offset syncs and checkpoints, decoded, and its translation rule
    numbered    numbered records, found on both clusters whatever their offsets
    preflight   before a run: both clusters answer, and the flow's filters copy its topic and group
    flows       a flow's connectors and tasks as a table
    conclusions  what a run says, in sentences computed from its rows
"""

from workbench.replication.active_active import (
    ActiveActiveRun,
    active_active,
    active_active_run,
    active_active_unavailable,
)
from workbench.replication.conclusions import (
    active_active_sentence,
    copies_sentence,
    cut_link_sentence,
    disaster_sentence,
    failover_sentence,
    lag_sentence,
    offset_shift_sentence,
    offsets_claim_sentence,
    pickup_sentence,
    refresh_seconds,
    setup_sentence,
    whole_path_sentence,
    worker_kill_sentence,
)
from workbench.replication.cut_link import CutLinkRun, catch_up, cut_link, cut_link_run, cut_link_unavailable
from workbench.replication.disaster import DisasterRun, disaster, disaster_run, disaster_unavailable
from workbench.replication.failover import FailoverRun, consumer_failover, consumer_failover_run
from workbench.replication.flows import flow_table
from workbench.replication.geo_stack import BOTH_WAYS_PROFILE, GEO_PROFILE, both_ways_stack, release, replicating_stack
from workbench.replication.internal_topics import Checkpoint, OffsetSync, checkpoints, offset_syncs, translate
from workbench.replication.lag import ReplicationLagRun, replication_lag, replication_lag_run
from workbench.replication.naming import remote_topic
from workbench.replication.offset_shift import OffsetShiftRun, offset_shift, offset_shift_run, phase_table
from workbench.replication.whole_path import WholePathRun, whole_path, whole_path_run, whole_path_unavailable
from workbench.replication.worker_kill import worker_kill, worker_kill_run, worker_kill_unavailable
from workbench.stack.mirror_plan import NOTEBOOK_INTERVALS, REBALANCE_DELAY_MS, flows, mirror_properties
from workbench.stack.mirror_status import CONNECTORS, ConnectorState, flow_states, status_topic

__all__ = [
    "ActiveActiveRun", "BOTH_WAYS_PROFILE", "CONNECTORS", "Checkpoint", "ConnectorState", "CutLinkRun", "DisasterRun",
    "FailoverRun", "GEO_PROFILE", "NOTEBOOK_INTERVALS", "OffsetShiftRun", "OffsetSync", "REBALANCE_DELAY_MS",
    "ReplicationLagRun", "WholePathRun", "active_active", "active_active_run", "active_active_sentence",
    "active_active_unavailable", "both_ways_stack", "catch_up", "checkpoints", "consumer_failover",
    "consumer_failover_run", "copies_sentence", "cut_link", "cut_link_run", "cut_link_sentence", "cut_link_unavailable",
    "disaster", "disaster_run", "disaster_sentence", "disaster_unavailable", "failover_sentence", "flow_states",
    "flow_table", "flows", "lag_sentence", "mirror_properties", "offset_shift", "offset_shift_run",
    "offset_shift_sentence", "offset_syncs", "offsets_claim_sentence", "phase_table", "pickup_sentence",
    "refresh_seconds", "release", "remote_topic", "replicating_stack", "replication_lag", "replication_lag_run",
    "setup_sentence", "status_topic", "translate", "whole_path", "whole_path_run", "whole_path_sentence",
    "whole_path_unavailable", "worker_kill", "worker_kill_run", "worker_kill_sentence", "worker_kill_unavailable"
]  # fmt: skip
