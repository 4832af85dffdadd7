"""Share groups through the REST proxy: explicit instances, the affinity-free fetch, and the
trust rule (no record accepted before the answer holding it was written; a cut answer
releases its records), on the session's Kafka with two proxy processes of this module's
own behind nginx. Every group gets a 1 s record lock, so redeliveries come in seconds.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from proxy_http import V2, error, post
from proxy_processes import Nginx, ProxyProcess, start_nginx, start_proxy

from workbench import kafka
from workbench.errors import ProxyError
from workbench.proxy import ProxyClient, ProxyRecord, ProxyUnavailableError
from workbench.stack import Stack
from workbench.topics.share_groups import configure_share_group

#: Give-up bound of a reading loop: a bug that loses records ends the test, never hangs it.
GIVE_UP_S = 120.0
PROXY_ENV = {"KAFKA_REST_CONSUMER_REQUEST_TIMEOUT_MS": "1000"}


@dataclass
class Pair:
    """Two proxy processes of this module's own and nginx in front of them."""

    proxies: list[ProxyProcess]
    nginx: Nginx
    admin: dict[str, Any]

    @property
    def urls(self) -> list[str]:
        return [p.url for p in self.proxies]


def _start_pair(stack: Stack, log_dir: Path) -> Pair:
    proxies = [start_proxy(stack.bootstrap_servers, log_dir, KAFKA_REST_ID=f"p{i}", **PROXY_ENV) for i in range(2)]
    nginx = start_nginx(log_dir, [p.address for p in proxies])
    return Pair(proxies, nginx, stack.kafka_config("admin"))


def _stop_pair(pair: Pair) -> None:
    pair.nginx.stop()
    for proxy in pair.proxies:
        proxy.stop()


@pytest.fixture(scope="module")
def pair(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    started = _start_pair(stack, tmp_path_factory.mktemp("share-pair"))
    try:
        yield started
    finally:
        _stop_pair(started)


def share_group(admin: dict[str, Any], lock_ms: int = 1000) -> str:
    """A fresh share group reading from the earliest record, with a short lock and session."""
    group = f"share-{uuid.uuid4().hex[:8]}"
    configure_share_group(admin, group, lock_ms=lock_ms)
    return group


def _produce_numbered(admin: dict[str, Any], topic: str, count: int, partitions: int, size: int = 0) -> None:
    pad = b"x" * size
    for partition in range(partitions):
        numbers = range(partition, count, partitions)
        kafka.produce(admin, topic, [(None, b"%d:" % n + pad) for n in numbers], partition=partition)


def _number(record: ProxyRecord) -> int:
    return int(bytes(record.value).split(b":", 1)[0])


def _said(pair: Pair) -> str:
    """The proxies' last warnings about share consumers: what a failing count is read against."""
    lines = [line for p in pair.proxies for line in p.log.read_text(errors="replace").splitlines()]
    warned = [line for line in lines if " WARNING " in line and "share" in line][-8:]
    return "the proxies warned: " + (" | ".join(warned) if warned else "nothing about share consumers")


# ---------------------------------------------------------------- explicit acknowledgement


def test_explicit_instances_accept_each_record_once_release_comes_back_reject_never(pair: Pair, topic: Any) -> None:
    """10,000 records on 4 partitions, 6 instances over 2 processes: every 10th record is
    released on its first delivery (it must come back with a higher delivery count, then
    be accepted), every 10th+1 rejected (never seen again), the rest accepted. A delivery
    whose acknowledgement the broker refused (its 1 s lock ran out first, on a busy
    machine) counts for nothing: its record comes again."""
    name = topic(partitions=4, prefix="share-explicit")
    _produce_numbered(pair.admin, name, 10_000, 4)
    group = share_group(pair.admin)
    accepted: Counter[int] = Counter()
    deliveries: dict[int, list[int]] = defaultdict(list)
    rejected: set[int] = set()
    #: How many deliveries a record had when a reject of it was taken: none may follow.
    rejected_after: dict[int, int] = {}
    lock = threading.Lock()
    stop = threading.Event()
    failures: list[str] = []

    def work(client: ProxyClient) -> None:
        with client.share_consumer(group, topics=[name]) as instance:
            while not stop.is_set():
                records = instance.poll(timeout_ms=500)
                acks: list[tuple[str, int, int, Any]] = []
                for record in records:
                    number = _number(record)
                    with lock:
                        deliveries[number].append(record.delivery_count or 0)
                    kind = "accept"
                    if number % 10 == 0 and record.delivery_count == 1:
                        kind = "release"
                    elif number % 10 == 1:
                        kind = "reject"
                    acks.append((record.topic, record.partition, record.offset, kind))
                results = instance.acknowledge(acks)
                with lock:
                    for (t, p, _o, kind), record in zip(acks, records, strict=True):
                        if results.get((t, p)) is not None:
                            continue  # the broker refused them (a lock ran out): they come again
                        if kind == "accept":
                            accepted[_number(record)] += 1
                        elif kind == "reject":
                            rejected.add(_number(record))
                            rejected_after[_number(record)] = len(deliveries[_number(record)])

    clients = [ProxyClient(pair.urls) for _ in range(6)]  # round-robin: 3 instances per process
    threads = [threading.Thread(target=lambda c=c: _guard(work, c, failures)) for c in clients]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + GIVE_UP_S * 2
    while time.monotonic() < deadline and (len(accepted) + len(rejected) < 10_000) and not failures:
        time.sleep(0.5)
    time.sleep(3)  # three more lock durations: anything rejected or accepted that came back would show
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    for client in clients:
        client.close()
    assert not failures, failures
    expected_accept = {n for n in range(10_000) if n % 10 != 1}
    assert set(accepted) == expected_accept
    twice = [n for n, times in accepted.items() if times != 1]
    first = [(n, deliveries[n]) for n in twice[:5]]
    assert twice == [], f"{len(twice)} accepted more than once; delivery counts of the first: {first}; {_said(pair)}"
    assert rejected == {n for n in range(10_000) if n % 10 == 1}
    assert all(len(deliveries[n]) == rejected_after[n] for n in rejected), "a rejected record came back"
    released = [n for n in range(10_000) if n % 10 == 0]
    assert all(len(deliveries[n]) >= 2 and deliveries[n][-1] > deliveries[n][0] for n in released)


def _guard(work: Any, client: ProxyClient, failures: list[str]) -> None:
    try:
        work(client)
    except Exception as exc:  # reported by the test thread
        failures.append(f"{type(exc).__name__}: {exc}")


def test_an_instance_with_records_not_acknowledged_reads_no_more_and_delete_releases_them(
    pair: Pair, topic: Any
) -> None:
    name = topic(partitions=1, prefix="share-held")
    _produce_numbered(pair.admin, name, 20, 1)
    group = share_group(pair.admin, lock_ms=60_000)  # only the delete can hand them on
    with ProxyClient(pair.urls[0]) as client:
        first = client.share_consumer(group, topics=[name])
        with first:
            held = _read_until(first, 1)
            with pytest.raises(ProxyError) as refused:
                first.poll(timeout_ms=100)
            assert (refused.value.status, refused.value.error_code) == (409, 40903)
            with pytest.raises(ProxyError) as unknown:
                first.acknowledge([(name, 0, 10_000, "accept")])
            assert (unknown.value.status, unknown.value.error_code) == (409, 40903)
        with client.share_consumer(group, topics=[name]) as second:
            again = _read_until(second, len(held))
            second.accept(again)
    assert {r.offset for r in held} <= {r.offset for r in again}
    assert all((r.delivery_count or 0) >= 2 for r in again if r.offset in {h.offset for h in held})


def _read_until(instance: Any, count: int) -> list[ProxyRecord]:
    """Answers until one holds records (the first answer's records are kept unacknowledged)."""
    deadline = time.monotonic() + GIVE_UP_S
    while time.monotonic() < deadline:
        records: list[ProxyRecord] = instance.poll(timeout_ms=500)
        if len(records) >= count:
            return records
        if records:
            instance.release(records)
    raise AssertionError(f"no answer with {count} records within {GIVE_UP_S:.0f} s")


def test_an_idle_instance_expires_and_its_records_come_again_and_past_the_limit_is_429(
    stack: Stack, tmp_path: Path, topic: Any
) -> None:
    """A proxy allowing 2 share instances, each expiring after 2 s idle: a third is refused
    with 429, and the records an expired instance held go to the next member at once (its
    1-minute lock never runs out first)."""
    proxy = start_proxy(
        stack.bootstrap_servers,
        tmp_path,
        KAFKA_REST_SHARE_CONSUMER_INSTANCES_MAX="2",
        KAFKA_REST_CONSUMER_INSTANCE_TIMEOUT_MS="2000",
        **PROXY_ENV,
    )
    try:
        name = topic(partitions=1, prefix="share-idle")
        _produce_numbered(stack.kafka_config("admin"), name, 20, 1)
        group = share_group(stack.kafka_config("admin"), lock_ms=60_000)
        with ProxyClient(proxy.url) as client:
            idle = client.share_consumer(group, topics=[name])
            idle.open()
            held = _read_until(idle, 1)  # kept, unacknowledged, and the instance left idle
            other = client.share_consumer(group, topics=[name])
            other.open()
            with pytest.raises(ProxyError) as refused:
                client.share_consumer(group, topics=[name]).open()
            assert refused.value.status == 429
            other.close()
            time.sleep(3.5)  # past the 2 s idle timeout and the sweep that follows it
            with client.share_consumer(group, topics=[name]) as successor:
                again = _read_until(successor, len(held))
                successor.accept(again)
    finally:
        proxy.stop()
    assert {r.offset for r in held} <= {r.offset for r in again}
    assert all((r.delivery_count or 0) >= 2 for r in again if r.offset in {h.offset for h in held})


# ---------------------------------------------------------------- no instance affinity


def test_affinity_free_fetch_through_nginx_survives_a_killed_proxy(stack: Stack, tmp_path: Path, topic: Any) -> None:
    """4 clients fetch through nginx from 2 processes; one process is SIGKILLed midway.
    Every record is read at least once (what the dead process held comes again after its
    lock), and the redelivered ones carry a higher delivery count."""
    pair = _start_pair(stack, tmp_path)
    try:
        name = topic(partitions=4, prefix="share-free")
        _produce_numbered(pair.admin, name, 4000, 4)
        group = share_group(pair.admin)
        seen: Counter[int] = Counter()
        counts: dict[int, int] = {}
        cut: list[int] = []  # answers the kill cut off: their records were never accepted
        lock = threading.Lock()
        stop = threading.Event()
        failures: list[str] = []

        def fetch(client: ProxyClient) -> None:
            while not stop.is_set():
                try:
                    records = client.share_fetch(group, [name], timeout_ms=500, max_bytes=20_000)
                except ProxyUnavailableError:  # the killed process's answer, cut in flight
                    with lock:
                        cut.append(1)
                    continue
                except ProxyError as exc:  # nginx's 502 for a request the dead process had taken
                    if exc.status < 500:
                        raise
                    continue
                with lock:
                    for record in records:
                        number = _number(record)
                        seen[number] += 1
                        counts[number] = max(counts.get(number, 0), record.delivery_count or 0)

        clients = [ProxyClient(pair.nginx.url) for _ in range(4)]
        threads = [threading.Thread(target=lambda c=c: _guard(fetch, c, failures)) for c in clients]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + GIVE_UP_S
        while time.monotonic() < deadline and len(seen) < 1000:
            time.sleep(0.05)
        pair.proxies[1].stop(signal_kill())
        while time.monotonic() < deadline and len(seen) < 4000 and not failures:
            time.sleep(0.2)
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        for client in clients:
            client.close()
        assert not failures, failures
        assert sorted(seen) == list(range(4000)), f"{4000 - len(seen)} records never read"
        duplicates = sum(seen.values()) - 4000
        redelivered = [n for n, c in counts.items() if c >= 2]
        assert len(redelivered) >= duplicates >= 0
    finally:
        _stop_pair(pair)


def signal_kill() -> int:
    import signal

    return signal.SIGKILL


# ---------------------------------------------------------------- the trust rule


def _cut_records_answer(url: str, path: str, accept: str, keep_bytes: int = 65536) -> int:
    """Send a records GET, read the headers and `keep_bytes` of the body, then close the
    connection with the rest unread (the kernel answers the proxy with a reset)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        request = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
        sock.sendall(request.encode())
        got = b""
        while len(got) < keep_bytes:
            chunk = sock.recv(4096)
            if not chunk:
                break
            got += chunk
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # reset
    return len(got)


def test_a_cut_answer_accepts_nothing_and_its_records_come_again(stack: Stack, tmp_path: Path, topic: Any) -> None:
    """An explicit instance's answer of ~25 MB cut after 64 KB: its records are released
    (the same instance reads them again, delivery count 2), and none can be acknowledged
    from the cut answer. Then the same through nginx with the affinity-free fetch: a
    cut answer's records are not accepted, so a second fetch reads them again."""
    proxy = start_proxy(
        stack.bootstrap_servers,
        tmp_path,
        KAFKA_REST_CONSUMER_MAX_PARTITION_FETCH_BYTES="52428800",
        KAFKA_REST_CONSUMER_FETCH_MAX_BYTES="52428800",
        **PROXY_ENV,
    )
    try:
        admin = stack.kafka_config("admin")
        name = topic(partitions=1, prefix="share-cut")
        _produce_numbered(admin, name, 250, 1, size=100_000)
        group = share_group(admin, lock_ms=60_000)  # a release, not the lock, brings them back
        http = requests.Session()
        created = post(http, f"{proxy.url}/share-consumers/{group}", {"format": "binary"})
        base = created.json()["base_uri"]
        assert post(http, f"{base}/subscription", {"topics": [name]}).status_code == 204
        path = base.removeprefix(proxy.url)
        deadline = time.monotonic() + GIVE_UP_S
        # the first answers may be empty while the member joins; cut every one until one was big
        while time.monotonic() < deadline:
            if (
                _cut_records_answer(proxy.url, f"{path}/records?timeout=1000", "application/vnd.kafka.binary.v2+json")
                >= 65536
            ):
                break
        refused = post(
            http,
            f"{base}/acknowledgements",
            {"acknowledgements": [{"topic": name, "partition": 0, "offset": 0, "type": "accept"}]},
        )
        error(refused, 409, 40903)
        again: list[dict[str, Any]] = []
        while time.monotonic() < deadline and not again:
            answer = http.get(
                f"{base}/records?timeout=1000", headers={"Accept": "application/vnd.kafka.binary.v2+json"}
            )
            assert answer.status_code == 200, answer.text
            again = answer.json()
        assert again and again[0]["offset"] == 0 and again[0]["delivery_count"] == 2
        assert proxy.alive()
        assert "not written in full" in proxy.log.read_text(errors="replace")
    finally:
        proxy.stop()


def test_an_affinity_free_answer_cut_behind_nginx_is_not_accepted_and_comes_again(
    stack: Stack, tmp_path: Path, topic: Any
) -> None:
    """The affinity-free fetch through nginx (its `proxy_buffering off` passes the client's
    back-pressure on): an answer of ~25 MB cut by its client after 64 KB is released, not
    accepted, so reading on through nginx finds every record, the cut answer's again with
    delivery count 2, long before their 1-minute lock would bring them back."""
    pair = _start_pair(stack, tmp_path)
    try:
        name = topic(partitions=1, prefix="share-cut-free")
        _produce_numbered(pair.admin, name, 250, 1, size=100_000)
        group = share_group(pair.admin, lock_ms=60_000)
        path = f"/share-consumers/{group}/records?topic={name}&timeout=1000"
        binary = "application/vnd.kafka.binary.v2+json"
        started = time.monotonic()
        deadline = started + 40  # well inside the lock: only a release can bring records back
        while time.monotonic() < deadline and _cut_records_answer(pair.nginx.url, path, binary) < 65536:
            pass
        seen: dict[int, int] = {}
        with ProxyClient(pair.nginx.url) as client:
            while time.monotonic() < deadline and len(seen) < 250:
                for record in client.share_fetch(group, [name], timeout_ms=500):
                    seen[_number(record)] = max(seen.get(_number(record), 0), record.delivery_count or 0)
        assert time.monotonic() - started < 60
        assert sorted(seen) == list(range(250)), f"{250 - len(seen)} records of the cut answer never came again"
        assert seen[0] == 2, "the cut answer's first record came back without a release"
        logs = "".join(p.log.read_text(errors="replace") for p in pair.proxies)
        assert "not written in full" in logs
        assert all(p.alive() for p in pair.proxies)
    finally:
        _stop_pair(pair)


def test_a_records_request_acknowledges_what_the_client_holds(pair: Pair, topic: Any) -> None:
    """`?acknowledge=` on a records request acknowledges every record the client holds, then
    reads on, the acknowledgements travelling with the member's next fetch: 300 records read
    by an instance answering at most 40 a time (`max.poll.records`), its first answer
    released that way (it comes again, delivery count 2), every other accepted that way
    (never again), the last with the acknowledgements call. A new member finds nothing."""
    name = topic(partitions=1, prefix="share-piggyback")
    _produce_numbered(pair.admin, name, 300, 1)
    group = share_group(pair.admin, lock_ms=60_000)  # only an acknowledgement hands records on
    deliveries: dict[int, list[int]] = defaultdict(list)
    sizes: list[int] = []
    released: set[int] = set()
    deadline = time.monotonic() + GIVE_UP_S
    with ProxyClient(pair.urls[0]) as client:
        with client.share_consumer(group, topics=[name], max_poll_records=40) as instance:
            kind: Any = None
            held: list[ProxyRecord] = []  # the last answer's records, not yet acknowledged
            while len(deliveries) < 300 or any(len(deliveries[n]) < 2 for n in released):
                assert time.monotonic() < deadline, "the records did not all come"
                records = instance.poll(timeout_ms=500, acknowledge=kind if held else None)
                held = records  # this request acknowledged the ones before
                if not records:
                    continue
                sizes.append(len(records))
                for record in records:
                    deliveries[_number(record)].append(record.delivery_count or 0)
                if not released:
                    released, kind = {_number(r) for r in records}, "release"
                else:
                    kind = "accept"
            if held:
                assert instance.accept(held) == {(name, 0): None}
        with client.share_consumer(group, topics=[name]) as successor:
            assert successor.poll(timeout_ms=1500) == []
    assert max(sizes) <= 40 and len(sizes) >= 300 // 40
    assert sorted(deliveries) == list(range(300))
    assert all(deliveries[n] == [1, 2] for n in released)
    assert all(deliveries[n] == [1] for n in range(300) if n not in released)


# ---------------------------------------------------------------- per-answer limits


def _record_bytes(record: ProxyRecord) -> int:
    return len(bytes(record.key or b"")) + len(bytes(record.value or b""))


def test_answers_keep_to_their_record_and_byte_limits_and_nothing_left_over_is_lost(
    stack: Stack, tmp_path: Path, topic: Any
) -> None:
    """A proxy answering at most 50 records (`consumer.max.poll.records`): 600 records of
    ~1 KB written in whole batches, so one poll acquires more than an answer may hold. Read
    by an explicit instance with `max_bytes=3500` (3 records an answer), then by one without
    (50 an answer), then by the affinity-free fetch with `max_bytes=3500`: no answer passes
    its limits, and every record is read exactly once. What an answer could not hold was
    answered next by the same instance (delivery count 1); only what an instance still held
    when it was deleted was released, and came once more: the delivery counts above 1 add up
    to exactly the releases the proxy logged."""
    proxy = start_proxy(stack.bootstrap_servers, tmp_path, KAFKA_REST_CONSUMER_MAX_POLL_RECORDS="50", **PROXY_ENV)
    try:
        admin = stack.kafka_config("admin")
        name = topic(partitions=1, prefix="share-limits")
        _produce_numbered(admin, name, 600, 1, size=1000)
        group = share_group(admin, lock_ms=60_000)  # nothing may come back by a lock running out
        seen: Counter[int] = Counter()
        counts: dict[int, int] = {}
        answers: list[int] = []

        def take(records: list[ProxyRecord], max_records: int, max_bytes: int | None) -> None:
            assert len(records) <= max_records
            if max_bytes is not None and len(records) > 1:
                assert sum(_record_bytes(r) for r in records) <= max_bytes
            answers.append(len(records))
            for record in records:
                seen[_number(record)] += 1
                counts[_number(record)] = record.delivery_count or 0

        deadline = time.monotonic() + GIVE_UP_S
        with ProxyClient(proxy.url) as client:
            with client.share_consumer(group, topics=[name]) as small:
                while sum(seen.values()) < 150 and time.monotonic() < deadline:
                    records = small.poll(timeout_ms=500, max_bytes=3500)
                    take(records, 3, 3500)
                    small.accept(records)
            small_answers = len([a for a in answers if a])
            with client.share_consumer(group, topics=[name]) as large:
                while sum(seen.values()) < 450 and time.monotonic() < deadline:
                    records = large.poll(timeout_ms=500)
                    take(records, 50, None)
                    large.accept(records)
            while sum(seen.values()) < 600 and time.monotonic() < deadline:
                take(client.share_fetch(group, [name], timeout_ms=500, max_bytes=3500), 3, 3500)
            time.sleep(1)
            take(client.share_fetch(group, [name], timeout_ms=500), 50, None)  # nothing more comes
    finally:
        proxy.stop()
    assert sorted(seen) == list(range(600)) and set(seen.values()) == {1}, "a record lost or read twice"
    log = proxy.log.read_text(errors="replace")
    released = sum(int(n) for n in re.findall(r"closed; (\d+) record\(s\) released", log))
    assert sum(count - 1 for count in counts.values()) == released
    assert sum(1 for count in counts.values() if count == 1) >= 600 - released
    assert small_answers >= 50 and max(answers) == 50
    assert "not written in full" not in log


# ---------------------------------------------------------------- hostile inputs


def _ack(**change: Any) -> dict[str, Any]:
    return {"acknowledgements": [{"topic": "{t}", "partition": 0, "offset": 0, "type": "accept", **change}]}


_I = "/share-consumers/{g}/instances/inst"
_G = "/v3/clusters/{c}/share-groups"

#: (method, path, body, status, error_code). `{g}` is a real share group with an instance
#: `inst` subscribed to topic `{t}`, `{c}` the cluster id; every case is refused before
#: librdkafka sees it, and the process answers the next one.
HOSTILE: dict[str, tuple[str, str, Any, int, int]] = {
    "create: NUL in the group": ("POST", "/share-consumers/a%00b", {}, 422, 42204),
    "create: control character in the group": ("POST", "/share-consumers/a%01b", {}, 422, 42204),
    "create: group of 256 characters": ("POST", "/share-consumers/" + "g" * 256, {}, 422, 42204),
    "create: NUL in the name": ("POST", "/share-consumers/{g}", {"name": "a\u0000b"}, 422, 42204),
    "create: slash in the name": ("POST", "/share-consumers/{g}", {"name": "a/b"}, 422, 42204),
    "create: name not a string": ("POST", "/share-consumers/{g}", {"name": 7}, 422, 42204),
    "create: the same name again": ("POST", "/share-consumers/{g}", {"name": "inst"}, 409, 40902),
    "create: unknown format": ("POST", "/share-consumers/{g}", {"format": "xml"}, 422, 422),
    "create: bad offset reset": ("POST", "/share-consumers/{g}", {"auto.offset.reset": "none"}, 422, 42204),
    "create: body not an object": ("POST", "/share-consumers/{g}", [1, 2], 422, 422),
    "create: max.poll.records 0": ("POST", "/share-consumers/{g}", {"max.poll.records": 0}, 422, 42204),
    "create: max.poll.records past its ceiling": (
        "POST",
        "/share-consumers/{g}",
        {"max.poll.records": 1_000_001},
        422,
        42204,
    ),
    "create: max.poll.records a float": ("POST", "/share-consumers/{g}", {"max.poll.records": 1.5}, 422, 42204),
    "create: max.poll.records past int64": ("POST", "/share-consumers/{g}", {"max.poll.records": 2**64}, 422, 42204),
    "create: max.poll.records a word": ("POST", "/share-consumers/{g}", {"max.poll.records": "many"}, 422, 42204),
    "instance: NUL in the name": ("DELETE", "/share-consumers/{g}/instances/a%00b", None, 404, 40403),
    "instance: dot name": ("GET", "/share-consumers/{g}/instances/%2E%2E/records", None, 404, 40403),
    "instance: unknown": ("DELETE", "/share-consumers/{g}/instances/nobody", None, 404, 40403),
    "instance: an affinity-free member": (
        "GET",
        "/share-consumers/{g}/instances/affinity-free-0/records",
        None,
        404,
        40403,
    ),
    "subscribe: illegal topic": ("POST", f"{_I}/subscription", {"topics": ["a b"]}, 422, 422),
    "subscribe: NUL in a topic": ("POST", f"{_I}/subscription", {"topics": ["a\u0000"]}, 422, 422),
    "subscribe: no topics": ("POST", f"{_I}/subscription", {"topics": []}, 422, 422),
    "subscribe: topics not a list": ("POST", f"{_I}/subscription", {"topics": "t"}, 422, 422),
    "subscribe: a pattern": ("POST", f"{_I}/subscription", {"topic_pattern": "t.*"}, 422, 422),
    "records: timeout not an integer": ("GET", f"{_I}/records?timeout=1e3", None, 404, 404),
    "records: max_bytes past int64": ("GET", f"{_I}/records?max_bytes=" + "9" * 30, None, 404, 404),
    "records: another embedded format": ("GET", f"{_I}/records", "json-accept", 406, 40601),
    "records: acknowledge an unknown type": ("GET", f"{_I}/records?acknowledge=renew", None, 422, 422),
    "records: acknowledge with NUL": ("GET", f"{_I}/records?acknowledge=accept%00", None, 422, 422),
    "ack: empty list": ("POST", f"{_I}/acknowledgements", {"acknowledgements": []}, 422, 422),
    "ack: not a list": ("POST", f"{_I}/acknowledgements", {"acknowledgements": {}}, 422, 422),
    "ack: negative offset": ("POST", f"{_I}/acknowledgements", _ack(offset=-1), 422, 422),
    "ack: offset past int64": ("POST", f"{_I}/acknowledgements", _ack(offset=2**64), 422, 422),
    "ack: offset a float": ("POST", f"{_I}/acknowledgements", _ack(offset=1.5), 422, 422),
    "ack: partition past int32": ("POST", f"{_I}/acknowledgements", _ack(partition=2**31), 422, 422),
    "ack: negative partition": ("POST", f"{_I}/acknowledgements", _ack(partition=-1), 422, 422),
    "ack: illegal topic": ("POST", f"{_I}/acknowledgements", _ack(topic="a\u0000"), 422, 422),
    "ack: unknown type": ("POST", f"{_I}/acknowledgements", _ack(type="renew"), 422, 422),
    "ack: twice in one request": (
        "POST",
        f"{_I}/acknowledgements",
        {"acknowledgements": _ack()["acknowledgements"] * 2},
        422,
        422,
    ),
    "ack: a record never delivered": ("POST", f"{_I}/acknowledgements", _ack(offset=2**62), 409, 40903),
    "ack: malformed JSON": ("POST", f"{_I}/acknowledgements", b"{", 400, 400),
    "fetch: no topic": ("GET", "/share-consumers/{g}/records", None, 422, 422),
    "fetch: illegal topic": ("GET", "/share-consumers/{g}/records?topic=a%00", None, 404, 40401),
    "fetch: unknown topic": ("GET", "/share-consumers/{g}/records?topic=no-such-topic-here", None, 404, 40401),
    "fetch: NUL in the group": ("GET", "/share-consumers/a%00/records?topic={t}", None, 422, 42204),
    "fetch: 101 topics": ("GET", "/share-consumers/{g}/records?" + "&".join(["topic={t}"] * 101), None, 422, 422),
    "v3: unknown cluster": ("GET", "/v3/clusters/nope/share-groups", None, 404, 404),
    "v3: NUL in the group": ("GET", f"{_G}/a%00", None, 404, 404),
    "v3: a group that does not exist": ("GET", f"{_G}/nobody-here", None, 404, 404),
    "v3: unknown consumer": ("GET", f"{_G}/{{g}}/consumers/nobody", None, 404, 404),
}


@dataclass
class Target:
    url: str
    group: str
    topic: str
    cluster: str


@pytest.fixture(scope="module")
def target(pair: Pair, stack: Stack) -> Iterator[Target]:
    admin = stack.kafka_config("admin")
    name = kafka.create_topic(admin, f"share-hostile-{uuid.uuid4().hex[:8]}", 1)
    group = share_group(admin)
    url = pair.proxies[0].url
    http = requests.Session()
    assert post(http, f"{url}/share-consumers/{group}", {"name": "inst"}).status_code == 200
    assert (
        post(http, f"{url}/share-consumers/{group}/instances/inst/subscription", {"topics": [name]}).status_code == 204
    )
    cluster = http.get(f"{url}/v3/clusters", timeout=30).json()["data"][0]["cluster_id"]
    yield Target(url, group, name, cluster)
    kafka.delete_topics(admin, [name])


@pytest.mark.parametrize("case", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_share_request_is_refused_and_survived(
    pair: Pair, target: Target, case: tuple[str, str, Any, int, int]
) -> None:
    method, path, body, status, code = case
    path = path.replace("{g}", target.group).replace("{t}", target.topic).replace("{c}", target.cluster)
    headers = {"Content-Type": V2}
    if body == "json-accept":
        body, headers["Accept"] = None, "application/vnd.kafka.json.v2+json"
    if isinstance(body, dict | list):
        body = json.dumps(body).replace("{t}", target.topic).encode()  # exact big integers, unlike orjson
    answer = requests.request(method, target.url + path, data=body, headers=headers, timeout=30)
    error(answer, status, code)
    assert pair.proxies[0].alive() and requests.get(f"{target.url}/topics", timeout=30).status_code == 200


def _member_on(url: str, group: str, name: str, topic: str) -> None:
    """An explicit instance `name` of `group` on the proxy at `url`, subscribed to `topic`
    and polled once (it joins the group)."""
    http = requests.Session()
    assert post(http, f"{url}/share-consumers/{group}", {"name": name}).status_code == 200
    base = f"{url}/share-consumers/{group}/instances/{name}"
    assert post(http, f"{base}/subscription", {"topics": [topic]}).status_code == 204
    answer = http.get(f"{base}/records?timeout=200", headers={"Accept": "application/vnd.kafka.binary.v2+json"})
    assert answer.status_code == 200, answer.text


def _v3_get(url: str) -> requests.Response:
    return requests.get(url, timeout=30)


def test_v3_share_groups_show_the_clusters_members_from_every_process(pair: Pair, target: Target, topic: Any) -> None:
    """Members on both processes (and the hostile battery's one): every process, and nginx,
    lists all of them with the broker's member ids, and their assignments cover the topic."""
    name = topic(partitions=4, prefix="share-v3")
    group = share_group(pair.admin)
    _member_on(pair.proxies[0].url, group, "left", name)
    _member_on(pair.proxies[1].url, group, "right", name)
    path = f"/v3/clusters/{target.cluster}/share-groups"
    deadline = time.monotonic() + GIVE_UP_S
    described: dict[str, Any] = {}
    while time.monotonic() < deadline:
        described = _v3_get(f"{pair.urls[0]}{path}/{group}").json()
        if described.get("consumer_count") == 2 and described.get("partition_count") == 4:
            break
        time.sleep(0.2)
    assert described["consumer_count"] == 2 and described["partition_count"] == 4, described
    for url in [*pair.urls, pair.nginx.url]:
        base = f"{url}{path}"
        listed = _v3_get(base)
        assert listed.headers["X-Share-Groups-View"] == "cluster"
        groups = {g["share_group_id"]: g for g in listed.json()["data"]}
        assert groups[group]["consumer_count"] == 2 and groups[target.group]["consumer_count"] >= 1
        one = _v3_get(f"{base}/{group}").json()
        assert one["kind"] == "KafkaShareGroup" and one["state"] == "STABLE"
        coordinator = one["coordinator"]["related"]  # a process's own URL, behind nginx too
        assert coordinator.rpartition("/")[0].endswith(f"/v3/clusters/{target.cluster}/brokers")
        assert coordinator.rpartition("/")[2].isdigit()
        assert [(p["topic_name"], p["partition_id"]) for p in one["assigned_topic_partitions"]] == [
            (name, p) for p in range(4)
        ]
        consumers = _v3_get(f"{base}/{group}/consumers").json()
        assert consumers["kind"] == "KafkaShareGroupConsumerList"
        assert sorted(c["client_id"] for c in consumers["data"]) == ["p0-left", "p1-right"]
        assigned: set[tuple[str, int]] = set()
        for consumer in consumers["data"]:
            member = consumer["consumer_id"]
            assert member not in ("left", "right") and len(member) >= 16  # the broker's member id
            # librdkafka's member ids are base64 with '/' and '+': a path segment quotes them
            one_consumer = _v3_get(f"{base}/{group}/consumers/{quote(member, safe='')}").json()
            unlinked = ("metadata", "assignments")  # behind nginx another process may answer, with its URL
            assert {k: v for k, v in one_consumer.items() if k not in unlinked} == {
                k: v for k, v in consumer.items() if k not in unlinked
            }
            assignments = _v3_get(consumer["assignments"]["related"]).json()
            assert assignments["kind"] == "KafkaShareGroupConsumerAssignmentList"
            assert {a["consumer_id"] for a in assignments["data"]} <= {member}
            assigned |= {(a["topic_name"], a["partition_id"]) for a in assignments["data"]}
        assert assigned == {(name, p) for p in range(4)}


@pytest.mark.parametrize(
    "path, what",
    [
        ("/no-such-group-{u}", "a group that does not exist"),
        ("/{g}/consumers/no-such-member", "a consumer that is not a member"),
        ("/{g}/consumers/" + "m" * 2000, "a 2,000-character consumer id"),
        ("/{g}/consumers/%E2%80%AE%F0%9F%98%80/assignments", "a consumer id of odd characters"),
        ("/%F0%9F%98%80" * 60, "a group id of 240 odd characters"),
        ("/" + "g" * 256, "a group id past 255 characters"),
        ("/a%0Ab/consumers", "a line feed in the group id"),
    ],
)
def test_v3_share_group_lookups_that_find_nothing_are_404(pair: Pair, target: Target, path: str, what: str) -> None:
    path = path.replace("{g}", target.group).replace("{u}", uuid.uuid4().hex)
    answer = _v3_get(f"{pair.urls[1]}/v3/clusters/{target.cluster}/share-groups{path}")
    message = error(answer, 404, 404)
    assert len(message) < 400, what
    assert pair.proxies[1].alive()


# ---------------------------------------------------------------- a broker without share groups


def test_a_broker_without_share_groups_says_so_on_every_new_path(foreign_cluster: Any) -> None:
    """Tansu has no share groups: each new path answers 400 / 40002 in one sentence."""
    url = foreign_cluster.proxy_urls[0]
    http = requests.Session()
    cluster = http.get(f"{url}/v3/clusters", timeout=30).json()["data"][0]["cluster_id"]
    name = f"tansu-share-{uuid.uuid4().hex[:8]}"
    assert (
        post(
            http, f"{url}/v3/clusters/{cluster}/topics", {"topic_name": name, "partitions_count": 1}, "application/json"
        ).status_code
        == 201
    )
    answers = [
        post(http, f"{url}/share-consumers/g", {}),
        http.get(f"{url}/share-consumers/g/records?topic={name}", timeout=30),
        http.get(f"{url}/v3/clusters/{cluster}/share-groups", timeout=30),
        http.get(f"{url}/v3/clusters/{cluster}/share-groups/g", timeout=30),
    ]
    for answer in answers:
        assert "no share groups" in error(answer, 400, 40002)
    http.delete(f"{url}/v3/clusters/{cluster}/topics/{name}", timeout=30)
