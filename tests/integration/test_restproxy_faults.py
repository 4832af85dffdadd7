"""The proxy under faults: poison records, a full producer queue, a proxy dying under load
behind nginx, and a proxy killed inside the embedded stack.

Trust rules (design.md): no silent loss (acknowledge only after the delivery report,
never move a consumer or its commits past a record the client did not receive), nothing
stalls the event loop, and the stack supervises what it runs. Every test starts the
processes it needs on free ports against the session's broker and stops exactly those,
by PID; the supervision test starts a whole stack of its own.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psutil
import pytest
import requests
from confluent_kafka import TopicPartition
from proxy_http import JSON_V2, V2, post
from proxy_processes import ProxyProcess, start_nginx, start_proxy

from workbench import kafka
from workbench.stack import Stack

TIMEOUT = 20.0


@dataclass
class OwnProxy:
    """This module's own proxy, restarted when a test killed it (that test has failed already)."""

    bootstrap_servers: str
    log_dir: Path
    current: ProxyProcess | None = None

    def get(self) -> ProxyProcess:
        if self.current is None or not self.current.alive():
            if self.current is not None:
                self.current.stop()
            self.current = start_proxy(self.bootstrap_servers, self.log_dir)
        return self.current


@pytest.fixture(scope="module")
def own_proxy(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnProxy]:
    holder = OwnProxy(stack.bootstrap_servers, tmp_path_factory.mktemp("faults-proxy"))
    yield holder
    if holder.current is not None:
        holder.current.stop()


@pytest.fixture
def proxy(own_proxy: OwnProxy) -> Iterator[ProxyProcess]:
    """A proxy of this module's own (a poison record that kills it breaks no other test); one that died
    during the test errors at teardown with its exit status and log."""
    started = own_proxy.get()
    yield started
    time.sleep(0.2)  # a process that is dying gets the moment to finish, for its exit status
    assert started.alive(), f"the proxy died (exit status {started.proc.poll()}):\n{started.log_tail()}"


@contextmanager
def new_consumer(http: requests.Session, proxy: ProxyProcess, topic: str, group: str) -> Iterator[str]:
    """A json consumer from the earliest offset, auto-commit on, assigned to partition 0 (no group join).

    It is deleted on the way out, before the `topic` fixture deletes the topic: librdkafka on this broker
    crashes (SIGSEGV) when a topic is deleted under an assigned consumer (see the test below).
    """
    created = post(
        http,
        f"{proxy.url}/consumers/{group}",
        {"format": "json", "auto.offset.reset": "earliest", "auto.commit.enable": "true"},
        timeout=TIMEOUT,
    )
    assert created.status_code == 200, created.text
    base = str(created.json()["base_uri"])
    try:
        assignment = {"partitions": [{"topic": topic, "partition": 0}]}
        assert post(http, f"{base}/assignments", assignment, timeout=TIMEOUT).status_code == 204
        yield base
    finally:
        with suppress(requests.RequestException):
            http.delete(base, timeout=TIMEOUT)


def read_until_error(http: requests.Session, base: str, limit: float = 30.0) -> tuple[list[dict[str, Any]], Any]:
    """Records calls until one is not 200: (records delivered before it, the failing response).

    Stops early (response None) when a record at or past the poison's offset (5) is delivered.
    """
    delivered: list[dict[str, Any]] = []
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        response = http.get(f"{base}/records", headers={"Accept": JSON_V2}, timeout=TIMEOUT)
        if response.status_code != 200:
            return delivered, response
        delivered += response.json()
        if any(r["offset"] >= 5 for r in delivered):
            return delivered, None
    return delivered, None


def fetch(http: requests.Session, base: str, count: int, limit: float = 30.0) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    deadline = time.monotonic() + limit
    while len(records) < count and time.monotonic() < deadline:
        response = http.get(f"{base}/records", headers={"Accept": JSON_V2}, timeout=TIMEOUT)
        assert response.status_code == 200, response.text
        records += response.json()
    return records


def assert_names_the_poison(response: requests.Response | None, delivered: list[dict[str, Any]]) -> dict[str, Any]:
    """A 4xx in upstream's error body naming partition 0 and offset 5, and how to move on."""
    assert response is not None, f"no error at the poison record; delivered {[r['offset'] for r in delivered]}"
    assert 400 <= response.status_code < 500, f"{response.status_code} {response.text[:400]}"
    body = orjson.loads(response.content)
    assert isinstance(body.get("error_code"), int) and isinstance(body.get("message"), str), body
    message = body["message"]
    as_fields = body.get("partition") == 0 and body.get("offset") == 5
    as_text = re.search(r"partition\D{0,3}0\b", message, re.I) and re.search(r"offset\D{0,3}5\b", message, re.I)
    assert as_fields or as_text, f"the error does not name partition 0, offset 5: {body}"
    assert re.search(r"seek|positions|binary", message, re.I), f"the error does not say how to move on: {message}"
    return dict(body)


def committed_offset(stack: Stack, group: str, topic: str) -> int:
    """The group's committed offset for partition 0 as the broker has it (negative: none)."""
    client = kafka.consumer(stack.kafka_config("consumer"), group_id=group)
    try:
        return int(client.committed([TopicPartition(topic, 0)], timeout=10)[0].offset)
    finally:
        client.close()


POISONS = {
    "not-json": b"\xff not json",
    # valid JSON the proxy cannot write back out: orjson serialises at most 255 levels
    "nested-300": b"[" * 300 + b"1" + b"]" * 300,
}


def produce_with_poison(stack: Stack, topic: str, poison: bytes) -> None:
    """Natively, in order, to partition 0: {"n": 0..4}, the poison at offset 5, {"n": 6..10}."""
    values = [orjson.dumps({"n": i}) for i in range(11)]
    values[5] = poison
    kafka.produce(stack.kafka_config("producer"), topic, [(None, v) for v in values], partition=0)


def delivered_intact(records: list[dict[str, Any]], poison: bytes) -> bool:
    """True when the proxy delivered the 300-deep value as it is stored: then it is no poison for it."""
    at_five = [r for r in records if r["offset"] == 5]
    return poison == POISONS["nested-300"] and len(at_five) == 1 and at_five[0]["value"] == orjson.loads(poison)


@pytest.mark.parametrize("poison", POISONS.values(), ids=POISONS.keys())
def test_a_poison_record_stops_the_consumer_at_it_and_seek_moves_on(
    stack: Stack, proxy: ProxyProcess, topic: Callable[..., str], poison: bytes
) -> None:
    """5 good, 1 poison, 5 good: the 5 arrive, then the same error at offset 5 until a seek to 6, then the
    other 5, each exactly once; the committed offset never passes the poison. (A proxy that writes the
    300-deep value back out intact instead delivers all 11, each exactly once; that passes too.)"""
    name = topic(partitions=1)
    produce_with_poison(stack, name, poison)
    http = requests.Session()
    with new_consumer(http, proxy, name, f"poison-{uuid.uuid4().hex[:8]}") as base:
        check_poison_contract(http, base, name, poison)


def check_poison_contract(http: requests.Session, base: str, name: str, poison: bytes) -> None:
    delivered, failure = read_until_error(http, base)
    if failure is None and delivered_intact(delivered, poison):
        delivered += fetch(http, base, 11 - len(delivered))
        assert [r["offset"] for r in delivered] == list(range(11))
        assert [r["value"] for r in delivered if r["offset"] != 5] == [{"n": i} for i in range(11) if i != 5]
        return
    assert [(r["offset"], r["value"]) for r in delivered] == [(i, {"n": i}) for i in range(5)]
    first = assert_names_the_poison(failure, delivered)
    again = http.get(f"{base}/records", headers={"Accept": JSON_V2}, timeout=TIMEOUT)
    assert again.status_code == failure.status_code, f"the position moved past the poison: {again.text[:300]}"
    assert orjson.loads(again.content)["error_code"] == first["error_code"]

    asked = {"partitions": [{"topic": name, "partition": 0}]}
    committed = http.request(
        "GET", f"{base}/offsets", data=orjson.dumps(asked), headers={"Content-Type": V2}, timeout=TIMEOUT
    )
    assert committed.status_code == 200, committed.text
    assert all(o["offset"] <= 5 for o in committed.json()["offsets"]), committed.text

    seek = {"offsets": [{"topic": name, "partition": 0, "offset": 6}]}
    assert post(http, f"{base}/positions", seek, timeout=TIMEOUT).status_code == 204
    rest = fetch(http, base, 5)
    assert [(r["offset"], r["value"]) for r in rest] == [(i, {"n": i}) for i in range(6, 11)]
    assert fetch(http, base, 1, limit=1.5) == [], "nothing after the end, nothing twice"


@pytest.mark.parametrize("poison", POISONS.values(), ids=POISONS.keys())
def test_closing_a_consumer_stopped_at_a_poison_commits_nothing_past_it(
    stack: Stack, proxy: ProxyProcess, topic: Callable[..., str], poison: bytes
) -> None:
    """Closing an auto-commit consumer commits what it delivered: at most offset 5, never the poison or beyond
    (librdkafka stores every offset it hands to the application unless the proxy stores them itself)."""
    name = topic(partitions=1)
    produce_with_poison(stack, name, poison)
    http = requests.Session()
    group = f"poison-close-{uuid.uuid4().hex[:8]}"
    with new_consumer(http, proxy, name, group) as base:
        delivered, failure = read_until_error(http, base)
        if failure is None and delivered_intact(delivered, poison):
            pytest.skip("this proxy delivers the 300-deep value intact: it is no poison here")
        assert [r["offset"] for r in delivered] == [0, 1, 2, 3, 4]
        assert_names_the_poison(failure, delivered)
        assert http.delete(base, timeout=TIMEOUT).status_code == 204
    assert committed_offset(stack, group, name) <= 5


def test_deleting_a_topic_under_an_assigned_consumer_does_not_kill_the_proxy(stack: Stack, proxy: ProxyProcess) -> None:
    """A client deletes a topic (v3 DELETE) that a consumer instance of the same proxy is assigned to and has
    read: the process lives on and the instance answers (200 or a 4xx). Measured on this broker: a plain
    confluent-kafka consumer in that position dies with SIGSEGV, so the proxy has to guard against it."""
    http = requests.Session()
    name = kafka.create_topic(stack.kafka_config("admin"), f"doomed-{uuid.uuid4().hex[:8]}", 1)
    kafka.produce(stack.kafka_config("producer"), name, [(None, orjson.dumps({"n": i})) for i in range(5)], partition=0)
    created = post(
        http,
        f"{proxy.url}/consumers/doomed-{uuid.uuid4().hex[:8]}",
        {"format": "json", "auto.offset.reset": "earliest"},
        timeout=TIMEOUT,
    )
    base = str(created.json()["base_uri"])
    try:
        assignment = {"partitions": [{"topic": name, "partition": 0}]}
        assert post(http, f"{base}/assignments", assignment, timeout=TIMEOUT).status_code == 204
        assert len(fetch(http, base, 5)) == 5
        cluster = http.get(f"{proxy.url}/v3/clusters", timeout=TIMEOUT).json()["data"][0]["cluster_id"]
        deleted = http.delete(f"{proxy.url}/v3/clusters/{cluster}/topics/{name}", timeout=TIMEOUT)
        assert deleted.status_code == 204, deleted.text
        time.sleep(3)
        assert proxy.alive(), f"the proxy died (exit status {proxy.proc.poll()}):\n{proxy.log_tail()}"
        after = http.get(f"{base}/records", headers={"Accept": JSON_V2}, timeout=TIMEOUT)
        assert after.status_code == 200 or 400 <= after.status_code < 500, after.text
        assert http.delete(base, timeout=TIMEOUT).status_code == 204
        assert http.get(f"{proxy.url}/topics", timeout=TIMEOUT).status_code == 200
    finally:
        with suppress(requests.RequestException):
            http.delete(base, timeout=TIMEOUT)
        kafka.delete_topics(stack.kafka_config("admin"), [name])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def test_a_full_producer_queue_stalls_neither_the_process_nor_the_request(
    stack: Stack, topic: Callable[..., str], tmp_path: Path
) -> None:
    """400,000 records through a 2,000-message producer queue: metadata calls keep answering meanwhile, and the
    big request ends (200: every record acknowledged, or failed with 50003), the log holding exactly the
    acknowledged ones. The records limit is raised for this proxy (default producer.max.records.per.request
    is 100,000)."""
    proxy = start_proxy(
        stack.bootstrap_servers,
        tmp_path,
        KAFKA_REST_PRODUCER_QUEUE_BUFFERING_MAX_MESSAGES="2000",
        KAFKA_REST_PRODUCER_MAX_RECORDS_PER_REQUEST="1000000",
    )
    try:
        name = topic(partitions=2)
        body = b'{"records":[' + b",".join([b'{"value":null}'] * 400_000) + b"]}"
        outcome: dict[str, Any] = {}

        def big() -> None:
            try:
                outcome["response"] = requests.post(
                    f"{proxy.url}/topics/{name}", data=body, headers={"Content-Type": JSON_V2}, timeout=120
                )
            except requests.RequestException as exc:
                outcome["error"] = exc

        sender = threading.Thread(target=big)
        sender.start()
        statuses, latencies = [], []
        http = requests.Session()
        while sender.is_alive():
            started = time.perf_counter()
            statuses.append(http.get(f"{proxy.url}/topics", timeout=TIMEOUT).status_code)
            latencies.append(time.perf_counter() - started)
            time.sleep(0.02)
        sender.join()
        print(
            f"\nGET /topics during the big produce: {len(latencies)} calls, p50 "
            f"{percentile(latencies, 0.5) * 1000:.1f} ms, p99 {percentile(latencies, 0.99) * 1000:.1f} ms, "
            f"max {max(latencies, default=0) * 1000:.1f} ms"
        )
        assert statuses and set(statuses) == {200}, Counter(statuses)
        assert "error" not in outcome, f"the big request did not end: {outcome.get('error')!r}"
        response = outcome["response"]
        assert response.status_code == 200, response.text[:400]
        offsets = response.json()["offsets"]
        assert len(offsets) == 400_000
        acknowledged = {(o["partition"], o["offset"]) for o in offsets if o["error_code"] is None}
        failed = [o for o in offsets if o["error_code"] is not None]
        assert all(o["error_code"] == 50003 and o["error"] for o in failed), failed[:3]
        assert len(acknowledged) + len(failed) == 400_000, "two records acknowledged at the same offset"
        print(f"acknowledged {len(acknowledged)}, failed with 50003: {len(failed)}")
        assert kafka.total_records(stack.kafka_config("admin"), name) == len(acknowledged)
        assert proxy.alive(), proxy.log_tail()
    finally:
        proxy.stop()


@dataclass
class Load:
    """Client threads producing unique values through one URL; only 200 answers count as acknowledged.

    A batch that got no answer (connection error, 502/503/504 from nginx) is retried as is, through nginx
    to whichever proxy is still there; it is counted only once a retry is acknowledged.
    """

    url: str
    topic: str
    clients: int = 4
    batch: int = 20
    acknowledged: list[tuple[int, int, bytes]] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    retries: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)

    def prime(self, partitions: int) -> None:
        """One acknowledged record in each partition, sent alone, before the concurrent load.

        The embedded broker loses a partition's first batch when two connections write it at
        the same moment (measured: 3 of 100 fresh two-partition topics written by 4 producers
        at once lost it, 0 of 80 once each partition held a record; see docs/brokers.md). That
        is Tansu's fault, not the proxy's, and not what this load is for."""
        for partition in range(partitions):
            value = orjson.dumps({"prime": partition})
            response = requests.post(
                f"{self.url}/topics/{self.topic}/partitions/{partition}",
                data=b'{"records":[{"value":' + value + b"}]}",
                headers={"Content-Type": JSON_V2},
                timeout=30,
            )
            assert response.status_code == 200, response.text
            (offset,) = response.json()["offsets"]
            self.acknowledged.append((offset["partition"], offset["offset"], value))

    def start(self) -> None:
        self.threads = [threading.Thread(target=self._client, args=(n,)) for n in range(self.clients)]
        for thread in self.threads:
            thread.start()

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=60)

    def count(self) -> int:
        with self.lock:
            return len(self.acknowledged)

    def _client(self, number: int) -> None:
        http = requests.Session()
        sequence = 0
        while not self.stop.is_set():
            values = [orjson.dumps({"client": number, "seq": sequence + i}) for i in range(self.batch)]
            sequence += self.batch
            response = self._send(http, b'{"records":[' + b",".join(b'{"value":' + v + b"}" for v in values) + b"]}")
            if response is None:
                continue
            if response.status_code != 200:
                with self.lock:
                    self.unexpected.append(f"{response.status_code} {response.text[:200]}")
                continue
            with self.lock:
                for value, offset in zip(values, response.json()["offsets"], strict=True):
                    if offset["error_code"] is None:
                        self.acknowledged.append((offset["partition"], offset["offset"], value))
                    else:
                        self.unexpected.append(f"record error {offset}")

    def _send(self, http: requests.Session, body: bytes) -> requests.Response | None:
        for _ in range(50):
            try:
                response = http.post(
                    f"{self.url}/topics/{self.topic}", data=body, headers={"Content-Type": JSON_V2}, timeout=30
                )
            except requests.RequestException:
                response = None
            if response is not None and response.status_code not in (502, 503, 504):
                return response
            with self.lock:
                self.retries += 1
            time.sleep(0.05)
        return None


def wait_for(condition: Callable[[], bool], limit: float, what: str) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_proxy_dying_under_load_behind_nginx_loses_no_acknowledged_record(
    stack: Stack, topic: Callable[..., str], tmp_path: Path, sig: signal.Signals
) -> None:
    """Two proxies behind nginx, four clients; one proxy gets `sig` mid-load. Every acknowledged record is in the
    log at its partition and offset, byte for byte. After SIGTERM (graceful: requests in flight are answered,
    the producer flushed) no value is in the log twice. After SIGKILL a batch the dead process had produced but
    not yet answered is retried through the other proxy and may be in the log twice: duplicates of records
    that were never acknowledged are allowed there, losses are not."""
    with ThreadPoolExecutor(2) as pool:
        proxies = list(pool.map(lambda i: start_proxy(stack.bootstrap_servers, tmp_path / f"p{i}"), range(2)))
    balancer = None
    try:
        balancer = start_nginx(tmp_path / "run", [p.address for p in proxies])
        name = topic(partitions=2)
        load = Load(balancer.url, name)
        load.prime(partitions=2)
        load.start()
        try:
            wait_for(lambda: load.count() >= 400, 30, "the load did not get going through nginx")
            proxies[0].proc.send_signal(sig)
            status = proxies[0].proc.wait(timeout=30)
            at_death = load.count()
            wait_for(lambda: load.count() >= at_death + 400, 30, "the surviving proxy did not take the load")
        finally:
            load.finish()
        print(
            f"\n{sig.name}: exit {status}, {load.count()} acknowledged ({at_death} before the exit), "
            f"{load.retries} retries"
        )
        if sig == signal.SIGTERM:
            assert status in (0, -signal.SIGTERM), status
        assert load.unexpected == []
        records = list(kafka.read_records(stack.kafka_config("consumer"), name))
        stored = {(r.partition, r.offset): r.value for r in records}
        wrong = [(p, o, v, stored.get((p, o))) for p, o, v in load.acknowledged if stored.get((p, o)) != v]
        assert wrong == [], (
            f"{len(wrong)} acknowledged records are not in the log as acknowledged: {wrong[:3]}; "
            + _what_the_log_holds(stack, name, records, {v for _, _, v, _ in wrong})
        )
        assert len({(p, o) for p, o, _ in load.acknowledged}) == len(load.acknowledged)
        if sig == signal.SIGTERM:
            twice = [v for v, n in Counter(r.value for r in records).items() if n > 1]
            assert twice == [], f"{len(twice)} values are in the log more than once: {twice[:3]}"
        assert proxies[1].alive(), proxies[1].log_tail()
    finally:
        if balancer is not None:
            balancer.stop()
        for started in proxies:
            started.stop()


def _what_the_log_holds(stack: Stack, topic: str, records: list[Any], missing: set[bytes]) -> str:
    """For a failure message: each partition's (earliest, end) as the broker reports them now,
    what the read returned of it, and where the missing values are, if anywhere (seen once:
    a partition's first 20 acknowledged records absent from the read-back)."""
    ranges = kafka.record_ranges(stack.kafka_config("consumer"), topic)
    read = Counter(r.partition for r in records)
    first = {p: min(r.offset for r in records if r.partition == p) for p in read}
    found = [(r.partition, r.offset, r.value) for r in records if r.value in missing][:3]
    return (
        f"log (earliest, end) {dict(sorted(ranges.items()))}; read per partition {dict(sorted(read.items()))}, "
        f"first offsets read {first}; missing values found at {found or 'no offset'}"
    )


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )


def test_a_killed_proxy_is_restarted_by_the_stack(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A stack of its own (own run dir, free ports), started as a user does. The proxy's record `pid` is a
    supervisor whose child serves; SIGKILL the child: within 30 s `workbench status --json` shows the proxy
    healthy with `"restarts": 1` and its `last_exit`. Then SIGSTOP the new child, which answers nothing
    from then on: after `proxy.unresponsive_s` (5 s here) it is killed and a third serves. `workbench down`
    leaves no process behind."""
    monkeypatch.setenv("WORKBENCH_RUN_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("WORKBENCH_PROXY__INSTANCES", "1")
    monkeypatch.setenv("WORKBENCH_PROXY__UNRESPONSIVE_S", "5")
    known: list[psutil.Process] = []
    try:
        started = cli("up")
        assert started.returncode == 0, started.stderr
        services = status()["services"]
        known += [psutil.Process(row["pid"]) for row in services.values() if row.get("pid")]
        for process in list(known):
            known += process.children(recursive=True)
        row = services["proxy-0"]
        supervisor = psutil.Process(row["pid"])
        children = supervisor.children()
        assert len(children) == 1, f"the proxy's pid {row['pid']} should be a supervisor with one serving child"
        serving = children[0]
        assert requests.get(f"{row['url']}/topics", timeout=TIMEOUT).status_code == 200
        serving.kill()
        serving.wait(10)

        row = _restarted(1)
        assert re.search(r"SIGKILL|kill|-?\b9\b", str(row.get("last_exit") or ""), re.I), row
        assert row["pid"] == supervisor.pid, "the supervisor stays; only its child was replaced"
        replacement = supervisor.children()
        known += replacement
        assert len(replacement) == 1 and replacement[0].pid != serving.pid
        assert row.get("serving_pid", replacement[0].pid) == replacement[0].pid, row
        assert requests.get(f"{row['url']}/topics", timeout=TIMEOUT).status_code == 200

        replacement[0].suspend()  # SIGSTOP: it holds its port and answers nothing
        row = _restarted(2)
        assert "answered no request for" in str(row.get("last_exit")), row
        assert not running(replacement[0]), "the stuck child was killed"
        known += supervisor.children()
        assert requests.get(f"{row['url']}/topics", timeout=TIMEOUT).status_code == 200
    finally:
        stopped = cli("down")
        time.sleep(0.5)
        leftovers = [p for p in known if running(p)]
        for process in leftovers:  # only processes this test saw started, each by its PID
            process.kill()
    assert stopped.returncode == 0, stopped.stderr
    assert leftovers == [], f"`workbench down` left {[p.pid for p in leftovers]}"


def _restarted(restarts: int) -> dict[str, Any]:
    """proxy-0's status row once it is healthy after `restarts` restarts (30 s at most)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        row: dict[str, Any] = status()["services"]["proxy-0"]
        if row["healthy"] and row.get("restarts") == restarts:
            return row
        time.sleep(0.5)
    raise AssertionError(f"proxy-0 was not healthy after {restarts} restart(s) within 30 s: {row}")


def status() -> dict[str, Any]:
    result = cli("status", "--json")
    assert result.returncode == 0, result.stderr
    return dict(orjson.loads(result.stdout))


def running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
