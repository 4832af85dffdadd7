"""Fixtures shared by every tier.

The whole test session runs in its own sandbox: its own run directory, results and
reports folders, and free ports, all set through the profile's environment overrides
before anything starts. So tests never touch a stack the user has up, and every child
process (the CLI, papermill kernels, proxies) inherits the same sandbox.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

if TYPE_CHECKING:
    from workbench.stack import ServiceRecord, Stack

_SANDBOX = Path(tempfile.mkdtemp(prefix="workbench-tests-"))
_OVERRIDES = {
    "WORKBENCH_RUN_DIR": str(_SANDBOX / "run"),
    "WORKBENCH_RESULTS_DIR": str(_SANDBOX / "results"),
    "WORKBENCH_REPORTS_DIR": str(_SANDBOX / "reports"),
    "WORKBENCH_BROKER__PORT": "0",
    "WORKBENCH_PROXY__FIRST_PORT": "0",
    "WORKBENCH_BALANCER__PORT": "0",
    "WORKBENCH_SCHEMA_REGISTRY__PORT": "0",
    "WORKBENCH_SPARK__MASTER_PORT": "0",
    "WORKBENCH_SPARK__MASTER_UI_PORT": "0",
    # A hung notebook cell fails its test well inside pytest's own 600 s timeout.
    "WORKBENCH_CELL_TIMEOUT": "300",
    # Tests assert behaviour, not speed: no stack they start spends seconds warming its
    # broker (`test_stack_warm_up.py` warms one on purpose).
    "WORKBENCH_BROKER__WARM_UP_S": "0",
}


#: Where the workers tell the controller which tests form one unit of work (see `_group`).
_GROUPS_ENV = "WB_TESTS_XDIST_GROUPS"

#: Each collected test's unit of work (`_group`), for stopping a group's stacks after its last test.
_ITEM_GROUPS: dict[str, str] = {}

#: The stacks of `ONE_WORKER_FIXTURES` running now, by fixture name, with what stops them.
_GROUP_STACKS: dict[str, tuple[Stack, ExitStack]] = {}


#: The JVMs the tests start (Spark drivers and executors, a standalone master and workers)
#: live for seconds to minutes, and the tests assert behaviour, never speed: the quick
#: compiler alone (C1) spends about 40 % less CPU on a session's start and first queries
#: than the default tiered compilation, whose optimising compiler pays off only later.
_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"


def pytest_configure(config: pytest.Config) -> None:
    os.environ.update(_OVERRIDES)
    if _JAVA_OPTIONS not in os.environ.get("JDK_JAVA_OPTIONS", ""):
        os.environ["JDK_JAVA_OPTIONS"] = f"{os.environ.get('JDK_JAVA_OPTIONS', '')} {_JAVA_OPTIONS}".strip()
    # Set by the controller; its workers, started after this, inherit it.
    os.environ.setdefault(_GROUPS_ENV, str(_SANDBOX / "xdist-groups.json"))


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_SANDBOX, ignore_errors=True)


#: Session fixtures started once per run rather than once per worker: every test using
#: one goes to the same worker (a second Spark JVM costs seconds of CPU and a GB).
ONE_WORKER_FIXTURES = {"spark": "spark", "three_brokers": "three-brokers", "geo": "geo", "geo_both_ways": "geo"}

#: Order in which units of work are handed to the workers, longest first, so that no
#: worker picks up a minutes-long unit when the others are nearly done: the two clusters'
#: tests (about nine minutes of one worker: MirrorMaker's failures, both ways), notebook 13
#: (about five, a unit of its own: `geo-notebook`, where it starts its clusters itself),
#: the Spark tests (the standalone cluster, the shared session's tests, notebook 09) and
#: the three Kafka nodes' tests (a leader killed and restarted, notebook 02 on them), the
#: notebooks, the rest. Handed out after the notebooks, the geo unit ran alone for its last
#: five minutes while the other workers had finished.
_RANK = {"long": 0, "notebooks": 1, "integration": 2, "unit": 3}
_LONG_GROUPS = ("geo", "spark", "three-brokers")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its tier, taken from the folder it lives in; put the long tiers
    first; and, in an xdist worker, write down which tests form one unit of work."""
    tiers = {"unit": pytest.mark.unit, "integration": pytest.mark.integration, "notebooks": pytest.mark.notebook}
    rank: dict[str, int] = {}
    groups: dict[str, str] = {}
    for item in items:
        parts = Path(str(item.fspath)).relative_to(Path(__file__).parent).parts
        if parts and parts[0] in tiers:
            item.add_marker(tiers[parts[0]])
        group = _group(item)
        if group is not None:
            groups[item.nodeid] = group
        long = group is not None and group.startswith(_LONG_GROUPS)
        rank[item.nodeid] = _RANK.get("long" if long else (parts[0] if parts else ""), len(_RANK))
    _ITEM_GROUPS.update(groups)
    # A group's tests one after the other (in one process too), so its stacks stop after its last.
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        first.setdefault(groups.get(item.nodeid, item.nodeid), index)
    items.sort(key=lambda item: (rank[item.nodeid], first[groups.get(item.nodeid, item.nodeid)]))
    if os.environ.get("PYTEST_XDIST_WORKER") == "gw0":  # every worker collects the same tests
        path = Path(os.environ[_GROUPS_ENV])
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps(groups))
        partial.replace(path)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection imported out of the garbage collector's passes: every benchmark
    point a test runs collects garbage three times (`ResourceMonitor`), and a full pass over
    a worker's ~200,000 objects took 100 ms (see `freeze_startup_objects`)."""
    from workbench.measure.resources import freeze_startup_objects

    freeze_startup_objects()


def _group(item: pytest.Item) -> str | None:
    """The unit of work a test belongs to, or None when it may run in any worker.

    `make test` runs the tests in parallel workers (pytest-xdist); each worker is a session
    of its own, with its own sandbox, stack and ports. A `@pytest.mark.xdist_group("name")`
    puts tests together by hand. Otherwise, tests using a fixture of `ONE_WORKER_FIXTURES`
    share one worker for the run, and tests sharing a module-, class- or package-scoped
    fixture stay in one worker, so the fixture is still made once.
    """
    marker = item.get_closest_marker("xdist_group")
    if marker is not None:
        return str(marker.args[0] if marker.args else marker.kwargs.get("name", "default"))
    names = set(getattr(item, "fixturenames", ()))
    for fixture, group in ONE_WORKER_FIXTURES.items():
        if fixture in names:
            return group
    info = getattr(item, "_fixtureinfo", None)
    definitions = info.name2fixturedefs.values() if info is not None else ()
    scopes = {defs[-1].scope for defs in definitions if defs}
    if "package" in scopes:
        return str(Path(item.nodeid.split("::")[0]).parent)
    if scopes & {"module", "class"}:
        return item.nodeid.split("::")[0]
    return None


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Hand out units of work (see `_group`) one at a time, in collection order.

    xdist's own `--dist loadgroup` cannot see `xdist_group` marks under pytest 9 (it
    renames a node attribute pytest no longer reads), so the controller takes the groups
    from the file the first worker wrote while collecting."""
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist ships no types
        groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.groups is None:  # read once, when every worker has finished collecting
                path = Path(os.environ[_GROUPS_ENV])
                self.groups = json.loads(path.read_text()) if path.exists() else {}
            return self.groups.get(nodeid, nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            # A unit that finished on a worker which crashed later comes back into the
            # queue with nothing left to run; sent, it would be an empty batch that never
            # reports back. It is dropped here, where units leave the queue.
            while self.workqueue and all(next(iter(self.workqueue.values())).values()):
                self.workqueue.popitem(last=False)
            if self.workqueue:
                super()._assign_work_unit(node)

        def _reschedule(self, node: Any) -> None:
            # When a worker crashes, LoadScopeScheduling puts its units back in the queue
            # and offers them to every worker at once, the replacement included. Two more
            # ways that hung the run: a replacement still collecting raised a KeyError, and
            # a worker holds its last test until it is sent more or told to stop, so a
            # replacement handed a single test waited for ever. So a worker gets units once
            # its collection has arrived, and always has two tests or the order to stop.
            if node not in self.registered_collections:
                return
            super()._reschedule(node)
            while not node.shutting_down and self.workqueue and self._pending_of(self.assigned_work[node]) < 2:
                self._assign_work_unit(node)
            if not node.shutting_down and not self.workqueue:
                node.shutdown()

    return GroupScheduling(config, log)


@pytest.fixture(scope="session")
def sandbox() -> Path:
    """The session's private folder (run dir, results, reports)."""
    return _SANDBOX


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    """The embedded stack, started once for the session and stopped at its end."""
    from workbench.stack import running

    with running() as active:
        yield active
        _warn_of_stuck_services(active)


def _warn_of_stuck_services(active: Stack) -> None:
    """A warning in the run's summary, with the threads' stacks, for every service its
    supervisor found answering nothing and restarted: the tests it failed say only that
    it did not answer, and its log goes with the sandbox."""
    for name, record in active.services.items():
        text = Path(record.log).read_text(errors="replace") if record.log and Path(record.log).exists() else ""
        at = text.find("answered no request for")
        if at >= 0:
            message = f"{name} stopped answering and was restarted; its log from there:\n{text[at : at + 20_000]}"
            warnings.warn(message, stacklevel=2)


@pytest.fixture
def three_brokers(sandbox: Path) -> Stack:
    """A second embedded stack, `conf/local-3.yaml`: three Kafka nodes (RF 3, min ISR 2)
    and a proxy on free ports, in a run directory of its own. Tests using it share one
    worker (`ONE_WORKER_FIXTURES`) and run one after the other, so it starts once per run
    and stops after the last of them (`_group_stack`)."""
    return _group_stack("three_brokers", partial(_three_nodes, sandbox))


@contextmanager
def _three_nodes(sandbox: Path) -> Iterator[Stack]:
    from workbench.config import conf_dir, load_profile
    from workbench.stack import down, up

    raw = yaml.safe_load((conf_dir() / "local-3.yaml").read_text())
    raw["schema_registry"]["enabled"] = False
    path = sandbox / "local-3.yaml"
    path.write_text(yaml.safe_dump(raw))
    # Free ports come from the session's overrides; the run directory must differ from the
    # session stack's, which WORKBENCH_RUN_DIR names for every profile.
    profile = load_profile(str(path)).model_copy(update={"run_dir": sandbox / "run-3"})
    try:
        yield up(profile)
    finally:
        down(profile)


@pytest.fixture
def geo(sandbox: Path) -> Stack:
    """A third embedded stack, `conf/local-geo.yaml`: two Kafka clusters and MirrorMaker 2 in
    two workers, on free ports, in a run directory of its own; stopped after the last test
    using it (`_group_stack`), and then no process of it may run and none of its ports may
    listen. Tests using it share one worker (`ONE_WORKER_FIXTURES`)."""
    return _group_stack("geo", partial(_two_clusters, sandbox, "local-geo"))


def _group_stack(fixture: str, start: Callable[[], AbstractContextManager[Stack]]) -> Stack:
    """The stack of a fixture of `ONE_WORKER_FIXTURES`, started by its group's first test.

    Its group's tests run one after the other in one worker, and the stack stops after the
    last of them (`pytest_runtest_teardown`), not at the end of the session: idle, the two
    clusters and MirrorMaker's workers kept 44 % of a core busy (measured over 30 s), for
    the rest of a run of many minutes on a machine of two cores."""
    if fixture not in _GROUP_STACKS:
        exits = ExitStack()
        _GROUP_STACKS[fixture] = (exits.enter_context(start()), exits)
    return _GROUP_STACKS[fixture][0]


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After a group's last test in this worker, stop the stacks only that group uses."""
    group = _ITEM_GROUPS.get(item.nodeid)
    if group is None or (nextitem is not None and _ITEM_GROUPS.get(nextitem.nodeid) == group):
        return
    for fixture in [f for f in _GROUP_STACKS if ONE_WORKER_FIXTURES.get(f) == group]:
        _GROUP_STACKS.pop(fixture)[1].close()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Whatever group stack is still running (a run stopped early) stops with the session."""
    while _GROUP_STACKS:
        _GROUP_STACKS.popitem()[1][1].close()


@pytest.fixture(scope="module")
def geo_both_ways(sandbox: Path) -> Iterator[Stack]:
    """`conf/local-geo-2way.yaml` as `geo` runs `local-geo` (MirrorMaker a -> b and b -> a), for
    one module; in the geo tests' worker, so the two pairs of clusters never start at once.
    Its workers copy with exactly-once delivery (KIP-618) into both clusters: the suite then
    runs MirrorMaker both ways with it and at-least-once (`geo`) without a third pair of clusters."""
    exactly_once = {f"{alias}.exactly.once.source.support": "enabled" for alias in ("a", "b")}
    with _two_clusters(sandbox, "local-geo-2way", exactly_once) as stack:
        yield stack


@contextmanager
def _two_clusters(sandbox: Path, name: str, properties: dict[str, str] | None = None) -> Iterator[Stack]:
    """The profile `name` up in a run directory of its own, its `replication.properties` with
    `properties` added; down at the end, and then none of its processes or ports left."""
    import psutil

    from workbench.config import conf_dir, load_profile
    from workbench.stack import down, process, up

    raw = yaml.safe_load((conf_dir() / f"{name}.yaml").read_text())
    raw["replication"]["properties"] = {**raw["replication"].get("properties", {}), **(properties or {})}
    path = sandbox / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw))
    profile = load_profile(str(path)).model_copy(update={"run_dir": sandbox / f"run-{name}"})
    started: list[ServiceRecord] = []
    try:
        stack = up(profile)
        started = list(stack.services.values())
        yield stack
    finally:
        down(profile)
    assert not [r.name for r in started if process.is_ours(r.pid, r.create_time)], "a geo process outlived down"
    listening = {c.laddr[1] for c in psutil.net_connections("tcp") if c.status == psutil.CONN_LISTEN and c.laddr}
    assert not {int(r.address.rsplit(":", 1)[1]) for r in started} & listening, "a geo port still listens"


@pytest.fixture
def topic(stack: Stack) -> Iterator[Callable[..., str]]:
    """A factory of fresh topics: `topic(partitions=4)`, `config=` their settings; all are deleted after the test."""
    created: list[str] = []

    def make(partitions: int = 1, prefix: str = "test", config: dict[str, str] | None = None) -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:10]}"
        stack.create_topics({name: partitions}, config=config)
        created.append(name)
        return name

    yield make
    _delete_topics(stack, created)


def _delete_topics(stack: Stack, names: list[str]) -> None:
    """Delete through the session proxy's v3 API, as a user would: the proxy first closes
    the consumer instances that knew a topic, which librdkafka needs on this broker (a
    consumer whose topic is deleted under it crashes its process; see docs/brokers.md). A
    topic the proxy cannot delete goes through the admin API."""
    import requests

    from workbench import kafka

    left = list(names)
    if stack.proxy_urls:
        base = stack.proxy_urls[0]
        try:
            cluster = requests.get(f"{base}/v3/clusters", timeout=10).json()["data"][0]["cluster_id"]
            topics = f"{base}/v3/clusters/{cluster}/topics"
            left = [n for n in names if requests.delete(f"{topics}/{n}", timeout=30).status_code != 204]
        except (requests.RequestException, KeyError, IndexError, ValueError):
            left = list(names)
    if left:
        kafka.delete_topics(stack.kafka_config("admin"), left)


@dataclass(frozen=True)
class ForeignCluster:
    """A broker and REST proxies the workbench did not start, and a profile that lists them."""

    bootstrap_servers: str
    proxy_urls: list[str]
    variants: dict[str, tuple[str, dict[str, int]]]
    profile_path: Path


#: Proxies a user might run with other settings, as `proxy.variants` lists them: the
#: unbuffered one stands in for 01's session-reuse proxy, both for its buffer-time sweep.
_VARIANTS = {"unbuffered": {"producer.linger.ms": 0}, "buffered-500ms": {"producer.linger.ms": 500}}


@pytest.fixture
def foreign_cluster(foreign_cluster_started: ForeignCluster) -> ForeignCluster:
    """The worker's foreign cluster, holding no topic when the test starts: a test that
    failed before it cleaned up (a notebook whose kernel died mid-run) has been reported
    already, and the topics it left are deleted here, so that they fail no later test that
    checks "nothing left behind" on the same cluster."""
    from workbench import kafka

    admin = {"bootstrap.servers": foreign_cluster_started.bootstrap_servers}
    left = kafka.list_topics(admin)
    if left:
        logging.getLogger(__name__).warning("topics an earlier test left on the foreign cluster, deleted: %s", left)
        kafka.delete_topics(admin, left)
    return foreign_cluster_started


@pytest.fixture(scope="session")
def foreign_cluster_started(sandbox: Path) -> Iterator[ForeignCluster]:
    """Someone else's cluster: Tansu (the second broker, so that `make test` runs every
    notebook on a Kafka-compatible broker that is not Kafka too) and four REST proxy
    processes started as plain subprocesses, outside the stack's lifecycle (no state
    file, no `workbench up`), and a profile with `embedded: false` naming them, with
    `broker.kind: tansu`. Stopped by PID at the end."""
    from workbench.config import conf_dir
    from workbench.kafka.admin import broker_answers
    from workbench.kafka.offsets import END_PROBE_ENV
    from workbench.stack.probes import probe_http
    from workbench.stack.services import tansu_binary

    logs = sandbox / "foreign"
    logs.mkdir(parents=True, exist_ok=True)
    started: list[subprocess.Popen[bytes]] = []

    def spawn(name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        with (logs / f"{name}.log").open("ab") as out:
            environ = {**os.environ, **(env or {})}
            started.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=environ))

    def wait(ready: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + 60
        while not ready():
            if time.monotonic() > deadline or any(p.poll() is not None for p in started):
                raise RuntimeError(f"{what} did not start; see {logs}")
            time.sleep(0.2)

    try:
        port = _free_port()
        bootstrap = f"127.0.0.1:{port}"
        listener = f"tcp://{bootstrap}"
        spawn(
            "tansu",
            [
                tansu_binary(),
                "broker",
                "--listener-url",
                listener,
                "--advertised-listener-url",
                listener,
                "--storage-engine",
                "memory://tansu/",
                "--cluster-id",
                "someone-else",
            ],
        )
        wait(lambda: broker_answers(bootstrap), "the foreign broker")
        urls: dict[str, str] = {}
        for name, settings in {"main-0": {}, "main-1": {}, **_VARIANTS}.items():
            proxy_port = _free_port()
            # Its operator tells the proxies that Tansu's ListOffsets(latest) is not the end.
            env = {"KAFKA_REST_ID": f"foreign-{name}", END_PROBE_ENV: json.dumps([bootstrap])}
            env.update({"KAFKA_REST_" + k.upper().replace(".", "_"): str(v) for k, v in settings.items()})
            spawn(
                name,
                [
                    sys.executable,
                    "-m",
                    "workbench.cli",
                    "proxy",
                    "--config",
                    str(conf_dir() / "kafka-rest.properties"),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(proxy_port),
                    "--bootstrap-servers",
                    bootstrap,
                ],
                env,
            )
            urls[name] = f"http://127.0.0.1:{proxy_port}"
        for name, url in urls.items():
            wait(partial(lambda address: probe_http(address).healthy, url), f"the foreign proxy {name}")
        profile = {
            "description": "someone else's cluster: a broker and proxies the workbench did not start",
            "embedded": False,
            "data_dir": str(sandbox / "foreign-data"),
            "broker": {"kind": "tansu"},
            "kafka": {
                "bootstrap.servers": bootstrap,
                "common": {"allow.auto.create.topics": False},
                "consumer": {"session.timeout.ms": 6000, "heartbeat.interval.ms": 500, "max.poll.interval.ms": 7000},
            },
            "proxy": {
                "urls": [urls["main-0"], urls["main-1"]],
                "variants": {n: {"urls": [urls[n]], "properties": s} for n, s in _VARIANTS.items()},
            },
            "spark": {"master": "local[2]", "connector": "workbench"},
            "topics": {"replication_factor": 1, "min_insync_replicas": 1},
        }
        path = sandbox / "foreign.yaml"
        path.write_text(yaml.safe_dump(profile, sort_keys=False))
        variants = {n: (urls[n], s) for n, s in _VARIANTS.items()}
        yield ForeignCluster(bootstrap, [urls["main-0"], urls["main-1"]], variants, path)
    finally:
        for proc in reversed(started):
            proc.terminate()
        for proc in reversed(started):
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(20)


def _free_port() -> int:
    from workbench.stack.process import free_port

    return free_port("127.0.0.1")
