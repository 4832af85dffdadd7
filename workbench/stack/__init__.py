"""The stack a profile describes: started here (embedded) or already running (cluster).

The CLI and Python share one API:

    workbench up       ->  workbench.stack.up(profile)
    workbench status   ->  workbench.stack.status(profile)
    workbench down     ->  workbench.stack.down(profile)

and for notebooks and tests, a stack that is up for exactly as long as it is needed:

    with workbench.stack.running(profile) as stack:
        conf = stack.kafka_config("producer")

`running` reuses a stack that `workbench up` already started and leaves it running;
a stack it started itself it stops again, even when the cell is interrupted.

Modules:

    handle           `Stack`: where the services are, client settings, throw-away topics
    lifecycle        `up`, `down`, `running`, `attach`, a node or a service restarted; which services a profile runs
    health           is each service answering? the rows `workbench status` prints
    services         the services an embedded stack runs, one small class each
    kafka            Apache Kafka as the embedded broker, one node or several; a second cluster
    mirror           MirrorMaker 2 in dedicated mode, replicating between the two clusters
    mirror_plan      MirrorMaker's properties for a profile: flows, clusters, the notebook's short intervals
    mirror_status    each MirrorMaker connector's and task's state, read from Connect's status topic
    log_ends         does a cluster report log ends short of what it acknowledged? checked once, remembered
    spark            a Spark standalone cluster as stack services
    nginx            the round-robin balancer in front of several proxies
    process          child processes: started detached, recognised by PID, stopped by PID
    supervisor       restarts a service that died, and says so
    state            the state file of a running stack
    probes           is a service someone else runs answering? one probe per protocol
    warmth           the brokers' uptime, and whether the warm-up load ran on them
"""

from workbench.stack.handle import CREATE_BATCH, Stack, TemporaryTopics
from workbench.stack.health import broker_description, data_fate, status
from workbench.stack.lifecycle import (
    ServiceRestart,
    attach,
    down,
    restart_broker,
    restart_brokers,
    restart_mirror_worker,
    restart_service,
    running,
    up,
)
from workbench.stack.state import ServiceRecord

__all__ = [
    "CREATE_BATCH",
    "ServiceRecord",
    "ServiceRestart",
    "Stack",
    "TemporaryTopics",
    "attach",
    "broker_description",
    "data_fate",
    "down",
    "restart_broker",
    "restart_brokers",
    "restart_mirror_worker",
    "restart_service",
    "running",
    "status",
    "up",
]
