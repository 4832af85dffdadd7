"""What every kind of consumer instance shares: the state a REST client names by
`{group}/instances/{name}`, and the manager that runs its blocking Kafka work.

v2 consumer instances (`consumer_instances`) and share-consumer instances
(`share_instances`) differ in their librdkafka client and in what they track, not in how
they live: each is created from a checked body (group, name, format, a per-process
limit), its librdkafka calls run one at a time on the manager's worker pool (never on the
event loop), it expires after `consumer.instance.timeout.ms` idle, and deleting it closes
its client in a worker thread. `InstanceManager` is that life, once; a subclass says how
its client closes and how its not-found and limit errors read.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from confluent_kafka import KafkaException

from workbench.httpserver.errors import RestError
from workbench.restproxy.errors import CONSUMER_NOT_FOUND
from workbench.restproxy.formats import FORMATS, SCHEMA_FORMATS, no_registry
from workbench.restproxy.schemas import SchemaFormats
from workbench.restproxy.settings import RestProxySettings
from workbench.restproxy.validation import check_group, check_instance_name

__all__ = ["CLOSE_TIMEOUT_S", "Instance", "InstanceManager", "close_within"]

log = logging.getLogger("workbench.restproxy")

_T = TypeVar("_T")
_I = TypeVar("_I", bound="Instance")

#: How long closing one librdkafka client may take before the proxy stops waiting for it.
#: A close normally takes milliseconds (leave the group, commit); one was seen blocked for
#: an hour in CI, holding a pool thread and the process's shutdown with it.
CLOSE_TIMEOUT_S = 15.0


def close_within(what: str, close: Callable[[], object], timeout_s: float = CLOSE_TIMEOUT_S) -> bool:
    """Run a client's blocking `close` on a thread of its own and wait `timeout_s` at most.

    A close that does not return in time is left to finish on its daemon thread (its
    librdkafka threads leak until then) and logged: the proxy's worker pool, the instance's
    lock and the process's exit never wait on it. Returns whether the close finished.
    """
    done = threading.Event()

    def run() -> None:
        try:
            close()
        except Exception as exc:  # a failed close is logged, never raised into a request
            log.warning("closing %s: %s", what, exc)
        finally:
            done.set()

    threading.Thread(target=run, name=f"close-{what}"[:60], daemon=True).start()
    if done.wait(timeout_s):
        return True
    log.warning("closing %s did not finish within %g s; left to finish on its own thread", what, timeout_s)
    return False


@dataclass(kw_only=True)
class Instance:
    """One consumer instance of either kind: its name, format and life."""

    group: str
    name: str
    format: str
    expires: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    topics: list[str] = field(default_factory=list)
    closed: bool = False
    #: The registry client of a schema-format instance (None for binary and json).
    schemas: SchemaFormats | None = None
    #: The librdkafka settings its client was made with, to make it again.
    conf: dict[str, Any] = field(default_factory=dict)


class InstanceManager(Generic[_I]):
    """All instances of one kind in this process, their worker pool and their expiry.

    A subclass sets `kind` ("Consumer", "Share consumer": the start of its messages),
    `limit_property` and `name_prefix`, and defines `close_client` (blocking, run on the
    pool) and `limit`."""

    kind: ClassVar[str] = "Consumer"
    limit_property: ClassVar[str] = "consumer.instances.max"
    name_prefix: ClassVar[str] = "rest-consumer"
    thread_prefix: ClassVar[str] = "consumer"

    def __init__(self, settings: RestProxySettings, schemas: SchemaFormats | None = None) -> None:
        self.settings = settings
        #: The Schema Registry client the avro/jsonschema/protobuf formats decode with.
        self.schemas = schemas
        threads = settings.consumer_threads if settings.consumer_threads > 0 else 256
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=self.thread_prefix)
        self.instances: dict[tuple[str, str], _I] = {}
        self.timeout_s = settings.consumer_instance_timeout_ms / 1000

    def __len__(self) -> int:
        return len(self.instances)

    @property
    def limit(self) -> int:
        """The most instances of this kind one process holds."""
        return self.settings.consumer_instances_max

    def close_client(self, instance: _I) -> None:
        """Close the instance's librdkafka client (blocking; on the pool)."""
        raise NotImplementedError

    def not_found(self, group: str, name: str) -> RestError:
        return RestError(404, CONSUMER_NOT_FOUND, f"{self.kind} instance not found: group {group}, instance {name}.")

    def visible(self, instance: _I) -> bool:
        """Whether a client may name the instance (all, unless a subclass hides some)."""
        return True

    async def run(self, instance: _I, function: Callable[..., _T], *args: Any) -> _T:
        """Run a blocking call for one instance on the pool, one call at a time."""
        async with instance.lock:
            return await self.run_locked(instance, function, *args)

    async def run_locked(self, instance: _I, function: Callable[..., _T], *args: Any) -> _T:
        """`run`, for a caller already holding the instance's lock."""
        if instance.closed:
            raise self.not_found(instance.group, instance.name)
        self.touch(instance)
        try:
            return await asyncio.get_running_loop().run_in_executor(self.pool, function, *args)
        finally:
            self.touch(instance)

    def touch(self, instance: _I) -> None:
        instance.expires = time.monotonic() + self.timeout_s

    def get(self, group: str, name: str) -> _I:
        instance = self.instances.get((group, name))
        if instance is None or not self.visible(instance):
            raise self.not_found(group, name)
        self.touch(instance)
        return instance

    def checked_name(self, group: str, body: dict[str, Any]) -> str:
        """The new instance's name (the body's `id` or `name`, else a fresh one), checked,
        and not taken in `group` (409 / 40902)."""
        check_group(group)
        name = body.get("id") or body.get("name")
        if name is None:
            prefix = f"{self.name_prefix}-{self.settings.id}-" if self.settings.id else f"{self.name_prefix}-"
            name = f"{prefix}{uuid.uuid4()}"
        check_instance_name(name)
        if (group, name) in self.instances:
            raise RestError(
                409, 40902, f"{self.kind} with specified consumer ID {name} already exists in group {group}."
            )
        return str(name)

    def checked_format(self, body: dict[str, Any]) -> str:
        """The body's embedded format (binary when none); 422 when unknown, 42205 for a
        schema format without a registry."""
        fmt = str(body.get("format") or "binary").lower()
        if fmt in SCHEMA_FORMATS and self.schemas is None:
            raise no_registry(fmt)
        if fmt not in FORMATS and fmt not in SCHEMA_FORMATS:
            raise RestError(
                422, 422, f"Invalid format type {body.get('format')!r}: binary, json, avro, jsonschema or protobuf"
            )
        return fmt

    def check_room(self) -> None:
        """429 when this process holds `limit` instances of this kind already."""
        if len(self.instances) >= self.limit:
            raise RestError(
                429,
                429,
                f"Too many {self.kind.lower()} instances in this proxy process ({self.limit_property} = "
                f"{self.limit}); delete instances no longer used",
                headers={"Retry-After": "5"},
            )

    def client(self, make: Callable[[dict[str, Any]], _T], conf: dict[str, Any]) -> _T:
        """A new instance's librdkafka client, made from `conf` once this process has room
        for one more instance (`check_room`); 422 / 42204 when librdkafka refuses the settings."""
        self.check_room()
        try:
            return make(conf)
        except KafkaException as exc:
            raise RestError(422, 42204, f"Invalid {self.kind.lower()} configuration: {exc.args[0].str()}") from None

    def add(self, instance: _I) -> _I:
        """Keep a new instance under its group and name, where `get` finds it."""
        self.instances[(instance.group, instance.name)] = instance
        return instance

    def schemas_for(self, fmt: str) -> SchemaFormats | None:
        return self.schemas if fmt in SCHEMA_FORMATS else None

    async def delete(self, instance: _I) -> None:
        """Forget the instance and close its client (which leaves its group)."""
        self.instances.pop((instance.group, instance.name), None)
        async with instance.lock:
            if not instance.closed:
                instance.closed = True
                await asyncio.get_running_loop().run_in_executor(self.pool, self.close_client, instance)

    def expiry_note(self, instance: _I) -> str:
        """What the expiry log line adds about the instance (a subclass's held records)."""
        return ""

    async def expire_forever(self) -> None:
        """Close instances idle for longer than `consumer.instance.timeout.ms`."""
        period = min(1.0, max(0.05, self.timeout_s / 4))
        while True:
            await asyncio.sleep(period)
            now = time.monotonic()
            for instance in [i for i in self.instances.values() if i.expires < now and not i.lock.locked()]:
                log.info(
                    "%s %s/%s expired after %.0f s idle%s",
                    self.kind.lower(),
                    instance.group,
                    instance.name,
                    self.timeout_s,
                    self.expiry_note(instance),
                )
                await self.delete(instance)

    async def close_all(self) -> None:
        """Close every instance (each leaves its group), then the pool; a fetch in flight
        ends within its timeout."""
        await asyncio.gather(*(self.delete(i) for i in list(self.instances.values())), return_exceptions=True)
        await asyncio.to_thread(self.pool.shutdown, wait=True)
