"""MirrorMaker 2's properties for a profile: the flows, the clusters, the stack's defaults.

MirrorMaker's own defaults suit a data centre, not a notebook: a new topic is noticed
within 10 minutes (`refresh.topics.interval.seconds`), groups too, and checkpoints and
group offsets move once a minute. The embedded stack shortens each so that a learner
sees a topic replicated, a checkpoint emitted and a group's offsets synced within seconds;
the profile's `replication.properties` (MirrorMaker's own names) go on top, so every
setting a user knows from `connect-mirror-maker.properties` is set the same way here.
"""

from __future__ import annotations

from collections.abc import Mapping

from workbench.config import Profile

__all__ = ["NOTEBOOK_INTERVALS", "REBALANCE_DELAY_MS", "flows", "mirror_properties"]

#: MirrorMaker settings the embedded stack shortens (MirrorMaker's defaults in the comments).
NOTEBOOK_INTERVALS: dict[str, str] = {
    "refresh.topics.interval.seconds": "2",  # 600
    "refresh.groups.interval.seconds": "2",  # 600
    "emit.checkpoints.interval.seconds": "1",  # 60
    "emit.heartbeats.interval.seconds": "1",  # 1
    "sync.group.offsets.enabled": "true",  # false
    "sync.group.offsets.interval.seconds": "1",  # 60
    "sync.topic.configs.interval.seconds": "5",  # 600
    "sync.topic.acls.enabled": "false",  # true: the embedded clusters have no authorizer
}

#: Milliseconds a flow's workers wait for a dead worker to return before its tasks move
#: (`scheduled.rebalance.max.delay.ms`; Connect's default is 300000).
REBALANCE_DELAY_MS = 5_000


def mirror_properties(
    profile: Profile, source_servers: str, target_servers: str, *, listener: str | None = None
) -> dict[str, str]:
    """MirrorMaker's properties file for one dedicated-mode worker, as a dict.

    `listener` (`http://127.0.0.1:port`) turns on the internal REST server KIP-710 added,
    so workers of one flow forward task configurations to its leader and tasks move to
    the survivors when a worker dies; each worker has its own.
    """
    settings = profile.replication
    a, b = settings.source, settings.target
    source_rf = str(min(profile.broker.nodes, profile.topics.replication_factor))
    # A target of three nodes is asked for to be a replicated target: every node holds a copy.
    target_rf = str(settings.target_nodes)
    values = {
        "clusters": f"{a}, {b}",
        f"{a}.bootstrap.servers": source_servers,
        f"{b}.bootstrap.servers": target_servers,
        f"{a}->{b}.enabled": "true",
        f"{b}->{a}.enabled": "false",
        # Every topic at the replication its cluster's nodes allow. MirrorMaker runs a worker
        # for each direction, the disabled one too (it still emits heartbeats), and each
        # creates Connect's own topics and its flow's on its target: a setting for both
        # directions at once asked cluster a (one node) for three replicas when b had three
        # nodes, and the b -> a worker died creating them.
        **_flow_replication(f"{a}->{b}", source_rf=source_rf, target_rf=target_rf),
        **_flow_replication(f"{b}->{a}", source_rf=target_rf, target_rf=source_rf),
        **{f"{alias}.{key}": rf for alias, rf in ((a, source_rf), (b, target_rf)) for key in _CONNECT_TOPICS},
        **NOTEBOOK_INTERVALS,
        # A worker that dies is out of the group after its session timeout (10 s); Connect
        # then waits this long for it to come back before giving its tasks to the others
        # (Connect's default 300000: five minutes without replication). Worker settings take
        # the target's alias: MirrorMaker builds each flow's worker from `<target>.` keys.
        f"{b}.scheduled.rebalance.max.delay.ms": str(REBALANCE_DELAY_MS),
        # Find the connectors by their ServiceLoader manifests instead of scanning every jar
        # (Connect's default, `hybrid_warn`, says they all have one): MirrorMaker's own
        # plugins, and each flow's worker (configured by the target's alias) its own.
        "plugin.discovery": "service_load",
        f"{a}.plugin.discovery": "service_load",
        f"{b}.plugin.discovery": "service_load",
    }
    if listener is not None:
        values["dedicated.mode.enable.internal.rest"] = "true"
        values["listeners"] = listener
    own = {k: _text(v) for k, v in settings.properties.items()}
    # A connector reads a flow's setting before the one for every flow: a replication factor
    # the profile gives for every flow must not be hidden by the stack's per-flow ones. (A
    # worker reads the top-level `*.storage.*` settings after its cluster's: those need nothing.)
    shadowed = {f"{flow}.{key}" for flow in (f"{a}->{b}", f"{b}->{a}") for key in _FLOW_TOPICS if key in own}
    return {k: v for k, v in values.items() if k not in shadowed} | own


#: Connect's own topics, which a worker keeps on the cluster it writes to (its target).
_CONNECT_TOPICS = (
    "offset.storage.replication.factor",
    "status.storage.replication.factor",
    "config.storage.replication.factor",
)


#: A flow's topics by where they live: its copies, checkpoints and heartbeats on its target,
#: its offset syncs on its source (MirrorMaker's default location).
_FLOW_TOPICS = {
    "replication.factor": "target",
    "checkpoints.topic.replication.factor": "target",
    "heartbeats.topic.replication.factor": "target",
    "offset-syncs.topic.replication.factor": "source",
}


def _flow_replication(flow: str, *, source_rf: str, target_rf: str) -> dict[str, str]:
    """A flow's topic replication, each topic at what the cluster it lives on allows."""
    return {f"{flow}.{key}": target_rf if side == "target" else source_rf for key, side in _FLOW_TOPICS.items()}


def flows(properties: Mapping[str, str]) -> list[str]:
    """The enabled flows of a properties dict, as `a->b`, in the order of `clusters`."""
    aliases = [c.strip() for c in properties.get("clusters", "").split(",") if c.strip()]
    return [
        f"{x}->{y}"
        for x in aliases
        for y in aliases
        if x != y and properties.get(f"{x}->{y}.enabled", "false").lower() == "true"
    ]


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
