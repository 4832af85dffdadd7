"""What MirrorMaker says about its flows, read from Kafka Connect's own status topic.

Each flow `a->b` is a Kafka Connect cluster of its own whose workers keep their state in
topics on the target: `mm2-status.a.internal` holds the latest state of each connector
(`MirrorSourceConnector`, `MirrorCheckpointConnector`, `MirrorHeartbeatConnector`) and
each of their tasks, as Connect's JSON (`{"state": "RUNNING", "trace": null, ...}`). A
REST client of Connect would ask `/connectors/<name>/status`; MirrorMaker's dedicated
mode serves no such endpoint, so the topic is what there is to read, on any cluster.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from workbench import kafka
from workbench.config import KafkaConf
from workbench.errors import KafkaError

__all__ = ["CONNECTORS", "ConnectorState", "SETTLED_S", "flow_states", "source_task", "status_topic"]

#: The connectors MirrorMaker runs for each flow.
CONNECTORS = ("MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector")


@dataclass(frozen=True)
class ConnectorState:
    """One connector's or task's latest state: `name` is `MirrorSourceConnector` or `MirrorSourceConnector-0`;
    `worker` the worker that wrote it, as MirrorMaker names it: its internal REST listener's
    `host:port` (KIP-710) and the flow, `127.0.0.1:32009/a->b`; `generation` the workers' group
    generation it was written in (each rebalance starts a new one)."""

    name: str
    state: str
    trace: str | None = None
    worker: str | None = None
    generation: int = -1

    @property
    def is_task(self) -> bool:
        return self.name.rsplit("-", 1)[-1].isdigit()


#: Seconds a flow's status must stay the same to count as settled. A worker joins its group,
#: and takes over tasks, a few seconds after it says it started: the leader waits up to
#: `scheduled.rebalance.max.delay.ms` (5 s here) before it moves work to a newcomer.
SETTLED_S = 8.0


def source_task(states: Mapping[str, ConnectorState]) -> tuple[str | None, int]:
    """Where the flow's copier runs, `host:port` of its worker (None: not running, or nowhere
    said), and the newest group generation in the status: what changes when work moves."""
    generation = max((s.generation for s in states.values()), default=-1)
    connector, task = states.get("MirrorSourceConnector"), states.get("MirrorSourceConnector-0")
    if connector is None or task is None or connector.state != "RUNNING" or task.state != "RUNNING":
        return None, generation
    return (task.worker or "").split("/", 1)[0] or None, generation  # MirrorMaker names a worker `host:port/a->b`


def status_topic(source_alias: str) -> str:
    """The status topic of flow `<source_alias>->target`, on the target (MirrorMaker's default name)."""
    return f"mm2-status.{source_alias}.internal"


def flow_states(target_conf: KafkaConf, source_alias: str, *, timeout: float = 10.0) -> dict[str, ConnectorState]:
    """The latest state of each connector and task of the flow from `source_alias`, by name;
    empty while the flow's workers have written none (or its status topic does not exist yet).

    Raises:
        KafkaError: the target cluster did not answer within `timeout`.
    """
    topic = status_topic(source_alias)
    if topic not in kafka.list_topics(target_conf):
        return {}
    latest: dict[str, tuple[int, ConnectorState | None]] = {}
    for record in kafka.read_records(target_conf, topic, timeout=timeout):
        name = _name(record.key)
        if name is None:
            continue
        generation, state = _state(name, record.value)
        # A worker leaving a rebalance may write its UNASSIGNED after the new owner's RUNNING:
        # Connect keeps the state of the newest group generation, and so does this.
        if name not in latest or generation >= latest[name][0] or state is None:
            latest[name] = (generation, state)
    return {name: state for name, (_, state) in latest.items() if state is not None}


def _name(key: bytes | None) -> str | None:
    text = (key or b"").decode(errors="replace")
    for prefix in ("status-connector-", "status-task-"):
        if text.startswith(prefix):
            return text[len(prefix) :]
    return None  # topic-usage entries (status-topic-...) and anything else


def _state(name: str, value: bytes | None) -> tuple[int, ConnectorState | None]:
    """The record's group generation and state (None: deleted)."""
    if value is None:
        return -1, None
    try:
        body = json.loads(value)
    except ValueError:
        raise KafkaError(f"the MirrorMaker status of {name} is not Connect's JSON: {value[:80]!r}") from None
    found, worker = body.get("generation"), body.get("worker_id")
    generation = found if isinstance(found, int) else -1
    state = ConnectorState(
        name,
        str(body.get("state", "UNKNOWN")),
        body.get("trace"),
        worker if isinstance(worker, str) else None,
        generation,
    )
    return generation, state
