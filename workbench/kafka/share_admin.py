"""Share groups as the cluster knows them (KIP-932): listed and described over Kafka's
own protocol, since confluent-kafka 2.16 has no call for either.

librdkafka 2.16 has no share-group admin API: `list_consumer_groups` leaves share groups
out (its group types are consumer and classic), `describe_consumer_groups` calls one
DEAD, and a ShareConsumer tells neither its member id nor its assignment. The broker
answers both questions to anyone who asks, so this module asks, with `wire`:

- `list_groups`: Metadata for the brokers, then ListGroups v5 filtered to the `share`
  type on each broker (a group lives on its coordinator, so every broker is asked);
- `describe_groups`: FindCoordinator v4+ (batched, key type GROUP) for each group's
  coordinator, then ShareGroupDescribe v1 there: state, epochs, and every member with
  its member id, client id, host, subscription and assigned partitions.

A broker without share groups (Kafka before 4.1, Tansu) does not list ShareGroupDescribe
v1 in its ApiVersions: that is `ShareGroupsUnsupported`, said in one line. Coordinators
that are loading or moving are asked again (0.1 s, doubling to 1 s) until the call's one
deadline. TLS and SASL PLAIN / SCRAM as the client's librdkafka settings ask
(`security.Security`), which says when they ask for more (GSSAPI, OAUTHBEARER, a
keystore...), and a caller uses what it has instead.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from workbench.backoff import Backoff
from workbench.errors import KafkaError
from workbench.kafka.security import Security
from workbench.kafka.wire import Address, Connection, KafkaProtocolError, Reader, Writer, parse_servers

__all__ = [
    "Broker",
    "ShareGroup",
    "ShareGroupAdmin",
    "ShareGroupNotFound",
    "ShareGroupsUnsupported",
    "ShareMember",
]

_METADATA, _FIND_COORDINATOR, _LIST_GROUPS, _SHARE_GROUP_DESCRIBE = 3, 10, 16, 77
#: Kafka's error codes this module tells apart (org.apache.kafka.common.protocol.Errors).
_ERROR_NAMES = {
    14: "COORDINATOR_LOAD_IN_PROGRESS",
    15: "COORDINATOR_NOT_AVAILABLE",
    16: "NOT_COORDINATOR",
    24: "INVALID_GROUP_ID",
    29: "TOPIC_AUTHORIZATION_FAILED",
    30: "GROUP_AUTHORIZATION_FAILED",
    31: "CLUSTER_AUTHORIZATION_FAILED",
    35: "UNSUPPORTED_VERSION",
    42: "INVALID_REQUEST",
    69: "GROUP_ID_NOT_FOUND",
}
#: Errors that pass: a coordinator loading its groups, not yet chosen, or moved.
_RETRIABLE = {14, 15, 16}
_NOT_FOUND = {24, 69}
#: Groups named in one ShareGroupDescribe (its answer grows with their members).
_DESCRIBE_BATCH = 100
_FIRST_BACKOFF_S, _MAX_BACKOFF_S = 0.1, 1.0


class ShareGroupsUnsupported(KafkaError):
    """The cluster has no share groups (KIP-932 needs Apache Kafka 4.1 or newer)."""


class ShareGroupNotFound(KafkaError):
    """No share group of that id (none at all, or a group of another type)."""


@dataclass(frozen=True)
class Broker:
    """A broker as the cluster's metadata names it."""

    node_id: int
    host: str
    port: int


@dataclass(frozen=True)
class ShareMember:
    """One member of a share group, as its coordinator describes it."""

    member_id: str
    client_id: str
    client_host: str
    rack_id: str | None
    member_epoch: int
    subscribed_topics: tuple[str, ...]
    #: (topic, partition), sorted: the partitions the coordinator assigned it.
    assignment: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ShareGroup:
    """A share group: its state (the broker's word: Empty, Stable, Dead, Unknown), epochs
    and members. `coordinator` is None where the group was not described by the cluster."""

    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor: str
    coordinator: Broker | None
    members: tuple[ShareMember, ...]

    @property
    def partitions(self) -> list[tuple[str, int]]:
        """Every partition assigned to a member, sorted."""
        return sorted({tp for member in self.members for tp in member.assignment})


class ShareGroupAdmin:
    """Lists and describes a cluster's share groups; every call opens its own connections
    and closes them, so one admin serves many threads.

    Args:
        bootstrap_servers: the cluster's `bootstrap.servers`.
        timeout_s: the deadline of each call, connections and retries included.
        client_id: the client id the brokers see.
        security: TLS and SASL for every connection (`Security.from_conf(conf)`);
            None is PLAINTEXT.

    Raises:
        KafkaProtocolError: `bootstrap_servers` cannot be read (an entry without
            host:port, or a scheme that is not a Kafka security protocol).

    Usage: `ShareGroupAdmin("127.0.0.1:9092").describe_group("workers").members`
    """

    def __init__(
        self,
        bootstrap_servers: str,
        *,
        timeout_s: float = 10.0,
        client_id: str = "workbench-admin",
        security: Security | None = None,
    ) -> None:
        self.servers = parse_servers(bootstrap_servers)
        self.timeout_s = timeout_s
        self.client_id = client_id
        self.security = security or Security()

    def list_groups(self) -> list[str]:
        """The ids of every share group of the cluster, sorted.

        Raises:
            ShareGroupsUnsupported: the cluster has none (no ShareGroupDescribe v1).
            KafkaError: a broker refused (its error name is the code) or did not answer.
        """
        with _Talk(self) as talk:
            found: set[str] = set()
            for broker in talk.brokers():
                found.update(talk.list_share_groups(broker))
            return sorted(found)

    def describe_groups(self, groups: Sequence[str]) -> dict[str, ShareGroup]:
        """The named share groups as their coordinators describe them; a group that does
        not exist (or is not a share group) is left out.

        Raises:
            ShareGroupsUnsupported: the cluster has none.
            KafkaError: a broker refused or did not answer, or a group id is longer than
                Kafka takes (32,767 bytes).
        """
        for group in groups:
            if len(group.encode()) > 0x7FFF:
                raise KafkaError(f"a group id of {len(group.encode())} bytes is longer than Kafka takes (32767)")
        with _Talk(self) as talk:
            return talk.describe(list(dict.fromkeys(groups)))

    def describe_group(self, group: str) -> ShareGroup:
        """One share group; `ShareGroupNotFound` when there is none of that id."""
        found = self.describe_groups([group]).get(group)
        if found is None:
            raise ShareGroupNotFound(f"share group {_shown(group)} does not exist", "GROUP_ID_NOT_FOUND")
        return found


class _Talk:
    """One call's conversation: its deadline and the connections it opened, by address."""

    def __init__(self, admin: ShareGroupAdmin) -> None:
        self.admin = admin
        self.deadline = time.monotonic() + admin.timeout_s
        self.open: dict[Address, Connection] = {}

    def __enter__(self) -> _Talk:
        return self

    def __exit__(self, *exc: object) -> None:
        for connection in self.open.values():
            connection.close()
        self.open.clear()

    def connect(self, address: Address) -> Connection:
        """The call's connection to `address`, opened (and its share support checked) once."""
        connection = self.open.get(address)
        if connection is None:
            connection = Connection(
                address, self.deadline, client_id=self.admin.client_id, security=self.admin.security
            )
            try:
                connection.open()
            except BaseException:
                connection.close()
                raise
            if connection.version(_SHARE_GROUP_DESCRIBE, 1, 1) is None:
                connection.close()
                raise ShareGroupsUnsupported(
                    f"broker {address} has no share groups (no ShareGroupDescribe v1: KIP-932 needs Apache Kafka "
                    "4.1 or newer)",
                    "UNSUPPORTED_VERSION",
                )
            self.open[address] = connection
        return connection

    def call(self, address: Address, api_key: int, versions: tuple[int, int], body: bytes) -> Reader:
        """One flexible request to `address` at the highest version of `versions` it speaks."""
        connection = self.connect(address)
        version = connection.version(api_key, *versions)
        if version is None:
            raise ShareGroupsUnsupported(
                f"broker {address} speaks no version {versions[0]}-{versions[1]} of API {api_key}, which share "
                "groups need",
                "UNSUPPORTED_VERSION",
            )
        try:
            return connection.call(api_key, version, body, flexible=True)
        except KafkaProtocolError:
            self.open.pop(address, None)
            connection.close()
            raise

    def bootstrap(self) -> Address:
        """The first bootstrap server that answers."""
        failure: KafkaProtocolError | None = None
        for address in self.admin.servers:
            try:
                self.connect(address)
                return address
            except KafkaProtocolError as exc:
                failure = exc
        assert failure is not None  # parse_servers never returns an empty list
        raise KafkaProtocolError(f"no bootstrap server answered; the last: {failure}", failure.code)

    def brokers(self) -> list[Address]:
        """Every broker of the cluster (Metadata v12, no topics)."""
        body = Writer().uvarint(1).boolean(False).boolean(False).no_tags().getvalue()
        answer = self.call(self.bootstrap(), _METADATA, (12, 13), body)
        answer.int32()  # throttle
        brokers = answer.compact_array(_broker)
        if not brokers:
            raise KafkaProtocolError(f"{answer.where}: the cluster's metadata lists no broker")
        return sorted({Address(b.host, b.port) for b in brokers})

    def list_share_groups(self, broker: Address) -> list[str]:
        """The share groups `broker` coordinates (ListGroups v5, types filter `share`)."""
        body = Writer().uvarint(1).compact_strings(["share"]).no_tags().getvalue()
        for backoff in self.backoffs():
            answer = self.call(broker, _LIST_GROUPS, (5, 5), body)
            answer.int32()  # throttle
            error = answer.int16()
            groups = answer.compact_array(_listed_group)
            if error == 0:
                return [group for group, kind in groups if kind.lower() == "share"]
            self.fail_unless_retriable(error, f"ListGroups on broker {broker}", None, backoff)
        raise AssertionError("unreachable: backoffs end by raising")

    def describe(self, groups: list[str]) -> dict[str, ShareGroup]:
        found: dict[str, ShareGroup] = {}
        pending = groups
        for backoff in self.backoffs():
            if not pending:
                break
            retry: list[tuple[str, int, str | None]] = []
            coordinators, waiting = self.coordinators(pending)
            retry += waiting
            for broker, ids in _by_broker(coordinators).items():
                for start in range(0, len(ids), _DESCRIBE_BATCH):
                    described, failed = self.describe_on(broker, ids[start : start + _DESCRIBE_BATCH])
                    found.update(described)
                    retry += failed
            pending = [group for group, _, _ in retry]
            if retry:
                group, error, message = retry[0]
                self.fail_unless_retriable(error, f"describing share group {_shown(group)}", message, backoff)
        return found

    def coordinators(self, groups: list[str]) -> tuple[dict[str, Broker], list[tuple[str, int, str | None]]]:
        """Each group's coordinator (FindCoordinator v4+, batched), and the groups whose
        coordinator is not available yet, with the error."""
        body = Writer().int8(0).compact_strings(groups).no_tags().getvalue()  # key type 0: GROUP
        answer = self.call(self.bootstrap(), _FIND_COORDINATOR, (4, 6), body)
        answer.int32()  # throttle
        found: dict[str, Broker] = {}
        waiting: list[tuple[str, int, str | None]] = []
        for key, broker, error, message in answer.compact_array(_coordinator):
            if error == 0:
                found[key] = broker
            elif error in _RETRIABLE:
                waiting.append((key, error, message))
            else:
                raise _error(error, f"finding the coordinator of group {_shown(key)}", message)
        return found, waiting

    def describe_on(
        self, broker: Broker, groups: list[str]
    ) -> tuple[dict[str, ShareGroup], list[tuple[str, int, str | None]]]:
        """ShareGroupDescribe v1 on one coordinator: the groups described, and those to ask
        again (their coordinator moved or is loading). Groups not found are left out."""
        body = Writer().compact_strings(groups).boolean(False).no_tags().getvalue()
        answer = self.call(Address(broker.host, broker.port), _SHARE_GROUP_DESCRIBE, (1, 1), body)
        answer.int32()  # throttle
        described: dict[str, ShareGroup] = {}
        retry: list[tuple[str, int, str | None]] = []
        for error, message, group in answer.compact_array(lambda r: _described(r, broker)):
            if error == 0 and isinstance(group, ShareGroup):
                described[group.group_id] = group
            elif error in _RETRIABLE:
                retry.append((str(group), error, message))
            elif error not in _NOT_FOUND:
                raise _error(error, f"describing share group {_shown(str(group))}", message)
        return described, retry

    def backoffs(self) -> Iterator[float]:
        """The waits before each attempt of a retried step (the first is 0)."""
        yield 0.0
        yield from Backoff(_FIRST_BACKOFF_S, _MAX_BACKOFF_S).delays()

    def fail_unless_retriable(self, error: int, action: str, message: str | None, wait: float) -> None:
        """Raise for a lasting error, or one that would outlast the deadline; else sleep
        before the next attempt."""
        if error not in _RETRIABLE or time.monotonic() + wait >= self.deadline:
            raise _error(error, action, message)
        time.sleep(max(wait, _FIRST_BACKOFF_S))


def _shown(group: str) -> str:
    """A group id for a message: quoted, and cut past 60 characters."""
    return repr(group) if len(group) <= 60 else f"{group[:60]!r}... ({len(group)} characters)"


def _by_broker(coordinators: dict[str, Broker]) -> dict[Broker, list[str]]:
    grouped: dict[Broker, list[str]] = {}
    for group, broker in coordinators.items():
        grouped.setdefault(broker, []).append(group)
    return grouped


def _error(code: int, action: str, message: str | None) -> KafkaError:
    name = _ERROR_NAMES.get(code, "UNKNOWN_SERVER_ERROR" if code == -1 else f"KAFKA_ERROR_{code}")
    detail = f": {message}" if message else ""
    if code == 35:
        return ShareGroupsUnsupported(f"{action}: the broker answered {name}{detail}", name)
    return KafkaError(f"{action}: the broker answered {name}{detail}", name)


def _broker(reader: Reader) -> Broker:
    node_id, host, port = reader.int32(), reader.compact_string() or "", reader.int32()
    reader.compact_string()  # rack
    reader.skip_tags()
    return Broker(node_id, host, port)


def _listed_group(reader: Reader) -> tuple[str, str]:
    group = reader.compact_string() or ""
    reader.compact_string()  # protocol type
    reader.compact_string()  # state
    kind = reader.compact_string() or ""
    reader.skip_tags()
    return group, kind


def _coordinator(reader: Reader) -> tuple[str, Broker, int, str | None]:
    key, node_id, host, port = reader.compact_string() or "", reader.int32(), reader.compact_string(), reader.int32()
    error, message = reader.int16(), reader.compact_string()
    reader.skip_tags()
    return key, Broker(node_id, host or "", port), error, message


def _described(reader: Reader, coordinator: Broker) -> tuple[int, str | None, ShareGroup | str]:
    """One DescribedGroup: (error, message, the group, or its id when it has an error)."""
    error, message, group_id = reader.int16(), reader.compact_string(), reader.compact_string() or ""
    state, group_epoch, assignment_epoch = reader.compact_string() or "", reader.int32(), reader.int32()
    assignor = reader.compact_string() or ""
    members = reader.compact_array(_member)
    reader.int32()  # authorized operations
    reader.skip_tags()
    if error:
        return error, message, group_id
    group = ShareGroup(group_id, state, group_epoch, assignment_epoch, assignor, coordinator, tuple(members))
    return 0, None, group


def _member(reader: Reader) -> ShareMember:
    member_id, rack_id, epoch = reader.compact_string() or "", reader.compact_string(), reader.int32()
    client_id, client_host = reader.compact_string() or "", reader.compact_string() or ""
    topics = reader.compact_array(lambda r: r.compact_string() or "")
    assignment = reader.compact_array(_topic_partitions)  # the Assignment struct's one field
    reader.skip_tags()  # the Assignment struct's tagged fields
    reader.skip_tags()
    partitions = sorted((topic, p) for pairs in assignment for topic, p in pairs)
    return ShareMember(member_id, client_id, client_host, rack_id, epoch, tuple(topics), tuple(partitions))


def _topic_partitions(reader: Reader) -> list[tuple[str, int]]:
    reader.uuid()  # topic id
    topic = reader.compact_string() or ""
    partitions = reader.compact_array(lambda r: r.int32())
    reader.skip_tags()
    return [(topic, partition) for partition in partitions]
