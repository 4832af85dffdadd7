"""Starting and stopping an embedded stack: `up`, `down`, a node or a service restarted, a stack for a block.

Every start is recorded in the state file before it is waited on, so a failed start is
cleaned up; every stop is by PID and start time (`stack.process`), never by name.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from workbench.config import Profile, load_profile
from workbench.errors import StackError
from workbench.stack import process, supervisor
from workbench.stack.handle import Stack
from workbench.stack.health import health_check
from workbench.stack.kafka import kafka_nodes, peer_nodes, restart_node
from workbench.stack.log_ends import check_log_ends
from workbench.stack.mirror import MirrorWorker, mirror_workers
from workbench.stack.nginx import INSTALL_HINT, find_nginx
from workbench.stack.services import Balancer, PeerProxy, ProxyInstance, SchemaRegistry, Service, TansuBroker
from workbench.stack.spark import spark_services
from workbench.stack.state import ServiceRecord, StackState, locked

__all__ = [
    "ServiceRestart",
    "attach",
    "down",
    "restart_broker",
    "restart_brokers",
    "restart_mirror_worker",
    "restart_service",
    "running",
    "services_for",
    "up",
]

log = logging.getLogger(__name__)


def services_for(profile: Profile) -> list[Service]:
    """The services an embedded profile runs, in start order (`up` starts them by
    `Service.wave`, the services of one wave side by side).

    The broker (Kafka's nodes, or Tansu), the Schema Registry when `schema_registry.enabled` (before the proxies,
    which get its URL), then `proxy.instances` REST proxies, then nginx in front of them
    when there is more than one and nginx is installed (without it, a warning, and
    clients round-robin over the instance URLs), a replication profile's proxy for its second
    cluster (`replication.target_proxy`), then a Spark standalone master and
    `spark.workers` workers when the profile asks for them (`workbench.stack.spark`). A
    replication profile adds its second cluster's nodes after the first's, and its
    MirrorMaker workers last, once both clusters answer (`workbench.stack.mirror`).
    A profile that names `kafka.bootstrap.servers` runs its services around that running
    broker and starts none (a side stack's proxies beside the notebook's broker,
    `workbench.bench.scale.side_stack`).
    """
    services: list[Service] = []
    if not profile.kafka.bootstrap_servers:
        services = kafka_nodes(profile) if profile.broker.kind == "kafka" else [TansuBroker(profile)]
    if profile.replication.enabled:
        services += peer_nodes(profile)
    if profile.schema_registry.enabled:
        services.append(SchemaRegistry(profile))
    services += [ProxyInstance(profile, index=i) for i in range(profile.proxy.instances)]
    if profile.replication.enabled and profile.replication.target_proxy:
        services.append(PeerProxy(profile))
    if profile.proxy.instances > 1:
        if find_nginx() is not None:
            services.append(Balancer(profile))
        else:
            log.warning("%s", INSTALL_HINT)
    if profile.spark.workers:
        services += spark_services(profile)
    if profile.replication.enabled:
        services += mirror_workers(profile)
    return services


def up(profile: Profile | str | None = None) -> Stack:
    """Start the embedded services (or find them running); a cluster profile starts nothing.

    Raises:
        StackError: a service did not start; the ones already started are stopped again.
    """
    profile = _profile(profile)
    if not profile.embedded:
        return _cluster(profile)
    run_dir = profile.path(profile.run_dir)
    with locked(run_dir):
        existing = _own_state(profile, run_dir)
        if existing and _all_alive(existing.services):
            return Stack(profile, existing.services)
        if existing:  # a half-dead stack (a crash, a reboot): clear what is left of it
            _stop_all(existing.services)
            StackState.remove(run_dir)
        state = StackState(profile=profile.name)
        try:
            _start_in_waves(services_for(profile), run_dir, state)
        except BaseException:
            _stop_all(state.services)
            StackState.remove(run_dir)
            raise
    return Stack(profile, state.services, started_here=True)


def restart_broker(stack: Stack, name: str) -> Stack:
    """Start again a Kafka node of this embedded stack that died or was killed, on its own
    data, and record it: a failover experiment kills a leader and restores the cluster.

    Raises:
        StackError: no such node, it still runs, or it did not come back.
    """
    return restart_brokers(stack, [name])


def restart_brokers(stack: Stack, names: Sequence[str]) -> Stack:
    """Start again several killed Kafka nodes of this embedded stack at once, on their own data:
    a whole cluster lost and restored. At once, because a KRaft node does not answer until a
    majority of its quorum is back, so nodes restarted one by one would wait on each other.

    Raises:
        StackError: no such node, one still runs, or one did not come back.
    """
    run_dir = stack.profile.path(stack.profile.run_dir)
    with locked(run_dir):
        state = StackState.load(run_dir)
        known = state.services if state is not None else {}
        unknown = [name for name in names if name not in known or known[name].kind != "broker"]
        if state is None or unknown:
            raise StackError(
                f"{(unknown or [*names])[0]!r} is not a broker of the running {stack.profile.name!r} stack"
            )
        with ThreadPoolExecutor(max_workers=max(1, len(names))) as pool:
            fresh = list(pool.map(restart_node, [state.services[name] for name in names]))
        for record in fresh:
            state.services[record.name] = record
        state.save(run_dir)
    return Stack(stack.profile, state.services, stack.started_here)


def restart_mirror_worker(stack: Stack, name: str) -> Stack:
    """Start again a MirrorMaker worker of this embedded stack that died or was killed, with
    the profile's properties, and record it: an experiment that kills a worker restores the
    flow's workers. Returns once it says it started and the flows have settled again: its
    return rebalances the workers' group, and a flow measured meanwhile stops.

    Raises:
        StackError: no such worker, it still runs, or it did not start (MirrorMaker's cause).
    """
    run_dir = stack.profile.path(stack.profile.run_dir)
    with locked(run_dir):
        state = StackState.load(run_dir)
        old = state.services.get(name) if state is not None else None
        if state is None or old is None or old.kind != MirrorWorker.kind:
            raise StackError(f"{name!r} is not a MirrorMaker worker of the running {stack.profile.name!r} stack")
        if process.is_ours(old.pid, old.create_time):
            raise StackError(f"{name} is still running (pid {old.pid})")
        process.stop(old.pid, old.create_time)  # reaps it, when it was this process's child
        _start(MirrorWorker(stack.profile, name, awaits_flows=True), run_dir, state)
    return Stack(stack.profile, state.services, stack.started_here)


@dataclass(frozen=True)
class ServiceRestart:
    """One supervised service restarted on request: when it was asked and when it answered again
    (`time.monotonic()` seconds), and the serving process before and after."""

    name: str
    asked_at: float
    answering_at: float
    old_pid: int
    new_pid: int

    @property
    def seconds(self) -> float:
        """From the request to the new process answering: the graceful stop and the start."""
        return self.answering_at - self.asked_at


def restart_service(stack: Stack, name: str, *, timeout: float = 90.0) -> ServiceRestart:
    """Restart one supervised service of this embedded stack (a proxy) as an upgrade would:
    its supervisor stops the process gracefully (SIGTERM, its own shutdown runs to its end) and
    starts it again at once; returns once the new process answers on the same address.

    Raises:
        StackError: no such supervised service, or it did not answer again within `timeout`.
    """
    record = stack.services.get(name)
    if record is None or "supervisor_state" not in record.extra:
        supervised = sorted(n for n, r in stack.services.items() if "supervisor_state" in r.extra)
        raise StackError(f"{name!r} is not a supervised service of this stack; these are: {', '.join(supervised)}")
    state = Path(record.extra["supervisor_state"])
    before = supervisor.facts(state)
    if not process.is_ours(record.pid, record.create_time) or not before.get("serving_pid"):
        raise StackError(f"{name} is not running; `workbench status` says why")
    asked_at = time.monotonic()
    os.kill(record.pid, signal.SIGHUP)
    deadline = asked_at + timeout
    while time.monotonic() < deadline:
        now = supervisor.facts(state)
        renewed = (now.get("requested_restarts") or 0) > (before.get("requested_restarts") or 0)
        if renewed and now.get("serving_pid") and health_check(stack.profile, record):
            return ServiceRestart(name, asked_at, time.monotonic(), int(before["serving_pid"]), int(now["serving_pid"]))
        if not process.is_ours(record.pid, record.create_time):
            raise StackError(f"{name}'s supervisor exited during the restart; see {record.log}")
        time.sleep(0.02)
    raise StackError(f"{name} did not answer again within {timeout:.0f} s of a restart; see {record.log}")


def down(profile: Profile | str | None = None) -> list[ServiceRecord]:
    """Stop exactly the processes `up` started, newest first; returns those it stopped.

    Raises:
        StackError: the run directory holds another profile's stack (stopped by its own `down`).
    """
    profile = _profile(profile)
    run_dir = profile.path(profile.run_dir)
    with locked(run_dir):
        state = _own_state(profile, run_dir)
        if state is None:
            return []
        stopped = _stop_all(state.services)
        StackState.remove(run_dir)
    return stopped


def attach(profile: Profile | str | None = None) -> Stack | None:
    """The stack already running for this profile, or None (another profile's stack is not
    this one's); starts nothing."""
    profile = _profile(profile)
    if not profile.embedded:
        return _cluster(profile)
    state = StackState.load(profile.path(profile.run_dir))
    if state and state.profile == profile.name and _all_alive(state.services):
        return Stack(profile, state.services)
    return None


@contextmanager
def running(profile: Profile | str | None = None) -> Iterator[Stack]:
    """A stack for the duration of a `with` block; stops only what it started itself."""
    stack = up(profile)
    try:
        yield stack
    finally:
        if stack.started_here:
            down(stack.profile)


def _cluster(profile: Profile) -> Stack:
    """A cluster profile's stack, its cluster checked once for log ends reported short
    (`log_ends`): here, where notebooks, the CLI and experiments find a cluster, and not
    in every `Stack(...)`, which must stay free of network calls."""
    stack = Stack(profile)
    check_log_ends(stack)
    return stack


def _own_state(profile: Profile, run_dir: Path) -> StackState | None:
    """The run directory's state file, if this profile wrote it. One run directory may be
    named for several profiles (`WORKBENCH_RUN_DIR`, a copied profile): taking another
    profile's stack for this one's would hand out its ports as this profile's, and `down`
    would stop a stack the user did not name.

    Raises:
        StackError: another profile's stack is recorded there.
    """
    state = StackState.load(run_dir)
    if state is not None and state.profile != profile.name:
        raise StackError(
            f"{run_dir} holds the stack of profile {state.profile!r}, not {profile.name!r}: stop it with "
            f"`workbench down --profile {state.profile}`, or give {profile.name!r} a run_dir of its own"
        )
    return state


def _profile(profile: Profile | str | None) -> Profile:
    return profile if isinstance(profile, Profile) else load_profile(profile)


def _start(service: Service, run_dir: Path, state: StackState) -> None:
    _start_in_waves([service], run_dir, state)


def _start_in_waves(services: Sequence[Service], run_dir: Path, state: StackState) -> None:
    """Start `services` wave by wave (`Service.wave`), each wave's processes at once and
    awaited in parallel: two clusters' JVMs, or two MirrorMaker workers, start side by side
    instead of one after the other.

    Raises:
        StackError: the first service, in start order, that did not answer; the others of its
            wave are not waited for (the caller stops them all).
    """
    for _, wave in groupby(sorted(services, key=lambda s: s.wave), key=lambda s: s.wave):
        started: list[tuple[Service, ServiceRecord]] = []
        for service in wave:
            record = service.start(run_dir, state.services)
            state.services[record.name] = record
            state.save(run_dir)  # saved before waiting, so a failed start can still be cleaned up
            started.append((service, record))
        _await_ready(started)


def _await_ready(started: Sequence[tuple[Service, ServiceRecord]]) -> None:
    """Wait until every started service answers; raise the first failure in start order as
    soon as one is known, without waiting out the others' timeouts."""
    if len(started) == 1:
        service, record = started[0]
        service.wait_ready(record, service.startup_timeout)
        return
    pool = ThreadPoolExecutor(max_workers=len(started), thread_name_prefix="wait-ready")
    try:
        futures = [pool.submit(s.wait_ready, r, s.startup_timeout) for s, r in started]
        wait(futures, return_when=FIRST_EXCEPTION)  # all done, unless one failed first
        for future in futures:
            if future.done():
                future.result()  # the first failure in start order
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _all_alive(services: Mapping[str, ServiceRecord]) -> bool:
    return bool(services) and all(process.is_ours(r.pid, r.create_time) for r in services.values())


#: The kinds of Kafka node: the profile's cluster, and a replication profile's second one.
_BROKER_KINDS = ("broker", "peer-broker")


#: Kinds stopped together, each group at once: a Kafka cluster's nodes (one stopped alone while
#: the others wait would lose its controller quorum half-way through its shutdown) and the
#: MirrorMaker workers (one stopped alone hands its tasks to the others, which start them only
#: to stop them a moment later).
_STOPPED_TOGETHER = (_BROKER_KINDS, (MirrorWorker.kind,))


def _stop_all(services: Mapping[str, ServiceRecord]) -> list[ServiceRecord]:
    """Stop the services newest first, each group of `_STOPPED_TOGETHER` at once, then wipe the
    Kafka nodes' data unless the profile keeps it."""
    stopped: list[ServiceRecord] = []
    records = list(reversed(list(services.values())))
    groups = [[r for r in records if r.kind in kinds] for kinds in _STOPPED_TOGETHER]
    for record in records:
        group = next((g for g in groups if record in g), None)
        if group is None:
            stopped += [record] if _stop(record) else []
        elif record is group[0]:
            with ThreadPoolExecutor(max_workers=len(group)) as pool:
                stopped += [r for r, done in zip(group, pool.map(_stop, group), strict=True) if done]
            for broker in (r for r in group if r.kind in _BROKER_KINDS):
                _wipe_data(broker)
    return stopped


def _stop(record: ServiceRecord) -> bool:
    return process.stop(record.pid, record.create_time, float(record.extra.get("stop_grace", process.GRACE_SECONDS)))


def _wipe_data(record: ServiceRecord) -> None:
    """Remove a stopped Kafka node's logs, unless it was started with `broker.keep_data`."""
    data_dir = record.extra.get("data_dir")
    if data_dir and not record.extra.get("keep_data") and not process.is_ours(record.pid, record.create_time):
        shutil.rmtree(str(data_dir), ignore_errors=True)
