"""The registry's state, kept in a compacted Kafka topic (`_schemas`) in Confluent's layout.

Every instance reads the whole topic on start (to the true end: `workbench.kafka.end_offsets`,
since Tansu's ListOffsets can stop short by a batch) before it serves, and
keeps reading it in a background thread. Reads are answered from memory; a write is
produced with `acks=all` and answered only once this instance has read it back, so
what a client was told is in the log, and any instance that reads the log agrees.

The records' layout, and the rules by which every instance agrees on ids and versions
without a leader, are in `registry.log`.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import orjson

from workbench.config import KafkaConf
from workbench.registry.compatibility import DEFAULT_LEVEL, incompatibilities
from workbench.registry.errors import (
    INCOMPATIBLE,
    INVALID_SCHEMA,
    REFERENCE_EXISTS,
    SCHEMA_NOT_FOUND,
    STORE_ERROR,
    STORE_TIMEOUT,
    SUBJECT_NOT_FOUND,
    SUBJECT_NOT_SOFT_DELETED,
    SUBJECT_SOFT_DELETED,
    VERSION_NOT_FOUND,
    VERSION_NOT_SOFT_DELETED,
    VERSION_SOFT_DELETED,
    RegistryError,
)
from workbench.registry.log import NOOP_KEY, LogState, SchemaVersion, config_key, deletion
from workbench.registry.schemas import ParsedSchema, Reference, Resolved, identity, parse_schema

__all__ = ["MAX_REFERENCES", "MAX_REFERENCE_DEPTH", "ProducerFactory", "SchemaStore"]

log = logging.getLogger("workbench.registry")

#: Attempts of one registration that lost a race to another instance before giving up (50001).
_MAX_ATTEMPTS = 5

#: How long the broker may hold the reader's fetch when the log has nothing new: an idle
#: reader sends a fetch this often. Kafka answers a held fetch as soon as a record comes,
#: so there the wait costs a registration nothing: the idle default stack's broker spent
#: 3.2-2.3 % of a core over its first two minutes with 500 ms and 2.6-1.5 % with 5 s (4 %
#: with 100 ms; measured in 15 s windows). Tansu answers only when the time is up, so there
#: a write, which waits for this instance to read it back, takes about this long: measured
#: on Tansu, 20 s idle and 40 registrations, 10 ms cost it 4-7 % of a core doing nothing
#: and 14 ms a registration; 100 ms, 1.4 % and 104 ms.
_READER_FETCH_WAIT_MS = {"kafka": 5000, "tansu": 100}


def _reader_fetch_wait_ms(conf: KafkaConf) -> int:
    """The reader's fetch wait for this cluster: Tansu's (declared to need the end-offset
    probe, `workbench.kafka.offsets`) or Kafka's."""
    from workbench.kafka.offsets import needs_end_probe

    return _READER_FETCH_WAIT_MS["tansu" if needs_end_probe(conf) else "kafka"]


ProducerFactory = Callable[[KafkaConf], Any]

#: How deep references may nest, and how many a schema may need in all (counted along every
#: path, so a diamond counts twice): bounds on what one request can make the registry resolve.
MAX_REFERENCE_DEPTH = 32
MAX_REFERENCES = 1000


def _references(references: tuple[Reference, ...], normalize: bool) -> tuple[Reference, ...]:
    """As given, or sorted without duplicates under `normalize` (Confluent's normalize())."""
    return tuple(sorted(set(references))) if normalize else references


class SchemaStore:
    """The state in memory, the topic behind it, and the operations of the REST API.

    Every method that writes blocks (produce, read back): call it off the event loop.
    """

    def __init__(self, kafka_conf: KafkaConf, topic: str = "_schemas", timeout_s: float = 30.0) -> None:
        self.kafka_conf = kafka_conf
        self.topic = topic
        self.timeout_s = timeout_s
        self.state = LogState()
        self._lock = threading.RLock()  # guards `state`
        self._applied = threading.Condition(self._lock)
        self._applied_offset = -1
        self._write_lock = threading.Lock()  # one registration at a time in this instance
        self._stop = threading.Event()
        self._reader: threading.Thread | None = None
        self._producer: Any = None
        self._parsed: dict[tuple[str, str, tuple[Resolved, ...], bool], ParsedSchema] = {}

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> None:
        """Create the topic if needed, read it to its true end, then keep reading it.

        Raises:
            RegistryError: 50002 when the topic cannot be read to its end in time.
        """
        from confluent_kafka import Producer

        from workbench.kafka import create_topics, end_offsets
        from workbench.kafka.admin import broker_count
        from workbench.registry.schemas import warm_up

        warm_up()

        # As Confluent's kafkastore.topic.replication.factor (3), down to the brokers there are.
        brokers = broker_count(self.kafka_conf["bootstrap.servers"], self.timeout_s, self.kafka_conf)
        create_topics(
            self.kafka_conf,
            {self.topic: 1},
            exist_ok=True,
            timeout=self.timeout_s,
            replication_factor=max(1, min(3, brokers)),
            config={"cleanup.policy": "compact"},
        )
        end = end_offsets(self.kafka_conf, self.topic, timeout=self.timeout_s)[(self.topic, 0)]
        self._producer = Producer({**self.kafka_conf, "acks": "all", "linger.ms": 0, "logger": log})
        self._reader = threading.Thread(target=self._read_forever, name="registry-reader", daemon=True)
        self._reader.start()
        self._wait_applied(end - 1)
        log.info(
            "read %d records of %s; %d subjects, max id %d",
            end,
            self.topic,
            len(self.state.subjects),
            self.state.max_id,
        )

    def close(self) -> None:
        self._stop.set()
        if self._reader is not None:
            self._reader.join(timeout=10)
        if self._producer is not None:
            self._producer.flush(10)

    def _read_forever(self) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, Message, TopicPartition

        consumer = Consumer(
            {
                **self.kafka_conf,
                "group.id": f"workbench-registry-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "fetch.wait.max.ms": _reader_fetch_wait_ms(self.kafka_conf),
                "logger": log,
            }
        )
        try:
            consumer.assign([TopicPartition(self.topic, 0, OFFSET_BEGINNING)])
            while not self._stop.is_set():
                # What is already fetched, else the next record alone, as soon as it comes:
                # `consume(1000, 0.1)` waits out its 0.1 s whenever fewer than 1,000 arrive,
                # and a registration waits for two records (measured: 200 ms a registration).
                messages: list[Message | None] = [*consumer.consume(num_messages=1000, timeout=0)]
                for message in messages or [consumer.poll(0.1)]:
                    if message is None:
                        continue
                    if message.error() is not None:
                        log.warning("reading %s: %s", self.topic, message.error())
                        continue
                    self._apply(message.key(), message.value(), message.offset() or 0)
        finally:
            consumer.close()

    def _apply(self, key_bytes: bytes | None, value_bytes: bytes | None, offset: int) -> None:
        try:
            key = orjson.loads(key_bytes or b"null")
            value = orjson.loads(value_bytes) if value_bytes else None
        except orjson.JSONDecodeError:
            key, value = None, None
        with self._applied:
            if isinstance(key, dict) and (value is None or isinstance(value, dict)):
                self.state.apply(key, value)
            self._applied_offset = max(self._applied_offset, offset)
            self._applied.notify_all()

    def _wait_applied(self, offset: int) -> None:
        deadline = time.monotonic() + self.timeout_s
        with self._applied:
            while self._applied_offset < offset:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RegistryError(STORE_TIMEOUT, f"Timed out reading {self.topic} up to offset {offset}")
                self._applied.wait(min(left, 0.5))

    def _write(self, key: bytes, value: bytes | None) -> None:
        """Produce with acks=all and wait until this instance has applied it."""
        result: dict[str, Any] = {}

        def delivered(error: Any, message: Any) -> None:
            result["error"], result["offset"] = error, message.offset()

        self._producer.produce(self.topic, value=value, key=key, partition=0, on_delivery=delivered)
        self._producer.flush(self.timeout_s)
        if "offset" not in result:
            raise RegistryError(STORE_TIMEOUT, f"Timed out writing to {self.topic}")
        if result["error"] is not None:
            raise RegistryError(STORE_ERROR, f"Error writing to {self.topic}: {result['error'].str()}")
        self._wait_applied(int(result["offset"]))

    def catch_up(self) -> None:
        """Apply what any instance wrote before now: a schema registered through another
        instance a moment ago is then found through this one too (its reader would have
        got there a few milliseconds later; a client asking at once must not get 404)."""
        from workbench.kafka import end_offsets

        end = end_offsets(self.kafka_conf, [(self.topic, 0)], timeout=self.timeout_s)[(self.topic, 0)]
        self._wait_applied(end - 1)

    def barrier(self) -> None:
        """Read everything written before now, by any instance."""
        self._write(NOOP_KEY, None)

    # -- reads -------------------------------------------------------------------------
    def subjects(self, deleted: bool = False, prefix: str = "") -> list[str]:
        with self._lock:
            return sorted(
                s
                for s, versions in self.state.subjects.items()
                if s.startswith(prefix) and any(deleted or not v.deleted for v in versions.values())
            )

    def versions(self, subject: str, deleted: bool = False) -> list[SchemaVersion]:
        """Versions of a subject, oldest first; 40401 when it has none (live ones unless `deleted`)."""
        with self._lock:
            found = [v for _, v in sorted(self.state.subjects.get(subject, {}).items()) if deleted or not v.deleted]
        if not found:
            raise RegistryError(SUBJECT_NOT_FOUND, f"Subject '{subject}' not found.")
        return found

    def version(self, subject: str, version: int | None, deleted: bool = False) -> SchemaVersion:
        """One version (None: the latest live one); 40401 / 40402 when missing."""
        live = self.versions(subject, deleted=True)
        candidates = [v for v in live if deleted or not v.deleted]
        if not candidates:
            raise RegistryError(SUBJECT_NOT_FOUND, f"Subject '{subject}' not found.")
        if version is None:
            return candidates[-1]
        match = next((v for v in candidates if v.version == version), None)
        if match is None:
            raise RegistryError(VERSION_NOT_FOUND, f"Version {version} not found.")
        return match

    def by_id(self, schema_id: int) -> SchemaVersion:
        with self._lock:
            stored = self.state.ids.get(schema_id)
        if stored is None:
            raise RegistryError(SCHEMA_NOT_FOUND, f"Schema {schema_id} not found")
        return stored

    def uses_of(self, schema_id: int, deleted: bool = False) -> list[SchemaVersion]:
        """Every (subject, version) holding the id; 40403 when none does."""
        self.by_id(schema_id)
        with self._lock:
            found = [
                v
                for versions in self.state.subjects.values()
                for v in versions.values()
                if v.id == schema_id and (deleted or not v.deleted)
            ]
        return sorted(found, key=lambda v: (v.subject, v.version))

    def level(self, subject: str | None) -> str | None:
        with self._lock:
            return self.state.configs.get(subject)

    def effective_level(self, subject: str) -> str:
        with self._lock:
            return self.state.configs.get(subject) or self.state.configs.get(None) or DEFAULT_LEVEL

    def parsed(
        self,
        stored: SchemaVersion | None = None,
        *,
        schema_type: str = "AVRO",
        text: str = "",
        references: tuple[Reference, ...] = (),
        normalize: bool = False,
    ) -> ParsedSchema:
        """The parsed form of a stored or given schema, references resolved; cached.

        Raises:
            RegistryError: 42201 when it does not parse, or its references do not resolve,
                nest deeper than `MAX_REFERENCE_DEPTH`, number more than `MAX_REFERENCES`
                in all, or form a cycle.
        """
        if stored is not None:
            schema_type, text, references = stored.schema_type, stored.schema, stored.references
        # Keyed by what the references resolve to (resolving is a few dict lookups): a
        # reference to `latest` (-1) means another schema once the subject moves on.
        resolved = tuple(self._resolve(references, path=(), budget=[MAX_REFERENCES]))
        key = (schema_type, text, resolved, normalize)
        cached = self._parsed.get(key)
        if cached is None:
            cached = parse_schema(schema_type, text, resolved, normalize=normalize)
            if len(self._parsed) > 10_000:
                self._parsed.clear()
            self._parsed[key] = cached
        return cached

    def _resolve(
        self, references: tuple[Reference, ...], path: tuple[tuple[str, int], ...], budget: list[int]
    ) -> list[Resolved]:
        """The referenced schemas, transitively; `path` is the chain of (subject, version)
        above, to refuse a cycle; `budget` counts every reference resolved, so a schema whose
        references fan out (each level naming the same few many times) stays bounded."""
        if len(path) > MAX_REFERENCE_DEPTH:
            raise RegistryError(
                INVALID_SCHEMA, f"Invalid schema: references nested deeper than {MAX_REFERENCE_DEPTH} levels"
            )
        resolved: list[Resolved] = []
        for ref in references:
            budget[0] -= 1
            if budget[0] < 0:
                raise RegistryError(
                    INVALID_SCHEMA, f"Invalid schema: more than {MAX_REFERENCES} references, counted transitively"
                )
            try:
                target = self.version(ref.subject, None if ref.version == -1 else ref.version, deleted=True)
            except RegistryError:
                raise RegistryError(
                    INVALID_SCHEMA,
                    f"Invalid schema: reference {ref.name!r} names subject "
                    f"{ref.subject!r} version {ref.version}, which does not exist",
                ) from None
            here = (target.subject, target.version)
            if here in path:
                chain = " -> ".join(f"{s}@{v}" for s, v in (*path, here))
                raise RegistryError(INVALID_SCHEMA, f"Invalid schema: references form a cycle: {chain}")
            nested = tuple(self._resolve(target.references, (*path, here), budget))
            resolved.append((ref.name, target.schema_type, target.schema, nested))
        return resolved

    def lookup(
        self,
        subject: str,
        schema_type: str,
        text: str,
        references: tuple[Reference, ...],
        deleted: bool = False,
        normalize: bool = False,
    ) -> SchemaVersion:
        """The version of `subject` holding this schema: 40401 no subject, 40403 not under it."""
        references = _references(references, normalize)
        new = self.parsed(schema_type=schema_type, text=text, references=references, normalize=normalize)
        wanted = {identity(schema_type, new.canonical, references), identity(schema_type, text, references)}
        versions = self.versions(subject, deleted=deleted)
        match = next((v for v in reversed(versions) if v.identity in wanted), None)
        if match is None:
            match = self._same_schema(versions, new, references, normalize)
        if match is None:
            raise RegistryError(SCHEMA_NOT_FOUND, "Schema not found")
        return match

    def _same_schema(
        self, versions: list[SchemaVersion], new: ParsedSchema, references: tuple[Reference, ...], normalize: bool
    ) -> SchemaVersion | None:
        """The latest of `versions` that is `new` once its stored text is made canonical again,
        as Confluent's lookup parses each version of the subject (`canLookup`): a version
        stored in an older canonical form (this registry's before it printed as Confluent
        does) is still found. Versions whose text no longer parses are skipped."""
        for stored in reversed(versions):
            if stored.schema_type != new.schema_type or stored.references != references:
                continue
            with contextlib.suppress(RegistryError):
                if self.parsed(stored, normalize=normalize).canonical == new.canonical:
                    return stored
        return None

    def check(self, subject: str, new: ParsedSchema, version: int | None) -> list[str]:
        """Incompatibilities of `new` under the subject's level: with `version` (None: the
        latest), or with every live version when the level is transitive."""
        level = self.effective_level(subject)
        try:
            live = self.versions(subject)
        except RegistryError:
            live = []
        if version is not None and not level.endswith("_TRANSITIVE"):
            live = [v for v in live if v.version == version]
        return incompatibilities(level, new, [self.parsed(v) for v in live])

    # -- writes ------------------------------------------------------------------------
    def register(
        self,
        subject: str,
        schema_type: str,
        text: str,
        references: tuple[Reference, ...],
        normalize: bool = False,
    ) -> int:
        """Register (or find) the schema under `subject`; returns its id. See the module docstring.

        The schema is stored in its canonical form (`schemas.parse_schema`), as Confluent
        stores its canonical string; a stored record written before that form (the text as
        it was sent) is found by the text as sent too.
        """
        references = _references(references, normalize)
        new = self.parsed(schema_type=schema_type, text=text, references=references, normalize=normalize)
        wanted = identity(schema_type, new.canonical, references)
        as_sent = identity(schema_type, text, references)
        with self._write_lock:
            for _attempt in range(_MAX_ATTEMPTS):
                self.barrier()
                with self._lock:
                    existing = self.state.subjects.get(subject, {})
                    live = [v for _, v in sorted(existing.items()) if not v.deleted]
                    same = next((v for v in live if v.identity in (wanted, as_sent)), None)
                    if same is not None:
                        return same.id
                    schema_id = (
                        self.state.by_identity.get(wanted)
                        or self.state.by_identity.get(as_sent)
                        or self.state.max_id + 1
                    )
                    version = max(existing, default=0) + 1
                    level = self.state.configs.get(subject) or self.state.configs.get(None) or DEFAULT_LEVEL
                same = self._same_schema(live, new, references, normalize)
                if same is not None:
                    return same.id
                problems = incompatibilities(level, new, [self.parsed(v) for v in live])
                if problems:
                    # Confluent's wording around Java's List.toString of the (first ten) problems.
                    raise RegistryError(
                        INCOMPATIBLE,
                        "Schema being registered is incompatible with an earlier "
                        f'schema for subject "{subject}", details: [{", ".join(problems[:10])}]',
                    )
                mine = SchemaVersion(subject, version, schema_id, new.canonical, schema_type, references)
                self._write(*mine.record())
                with self._lock:
                    landed = self.state.subjects.get(subject, {}).get(version)
                if landed is not None and landed.id == schema_id and landed.identity == wanted:
                    return schema_id
                if landed is not None:  # our record sits on the winner's key: put the winner back
                    self._write(*landed.record())
                log.info("registration of %r lost a race (id %d, version %d); retrying", subject, schema_id, version)
        raise RegistryError(STORE_ERROR, f"Could not register under {subject!r}: other instances kept writing first")

    def delete_version(self, subject: str, version: int | None, permanent: bool) -> int:
        """Soft-delete a version, or hard-delete a soft-deleted one; checked in Confluent's order
        (`validateDeleteSchemaVersion`, then `deleteSchemaVersion`): missing 40401 / 40402, a
        soft delete of a soft-deleted version 40406, still referenced 42206, a hard delete of a
        live version 40407."""
        with self._write_lock:
            self.barrier()
            # A named version is found soft-deleted too (to answer 40406); `latest` means the latest live one.
            stored = self.version(subject, version, deleted=permanent or version is not None)
            if stored.deleted and not permanent:
                raise RegistryError(
                    VERSION_SOFT_DELETED,
                    # Confluent's text, its missing space included (Errors.java).
                    f"Subject '{subject}' Version {stored.version} was soft deleted."
                    "Set permanent=true to delete permanently",
                )
            self._refuse_referenced(stored, permanent, from_subject=None)
            if permanent and not stored.deleted:
                raise RegistryError(
                    VERSION_NOT_SOFT_DELETED,
                    f"Subject '{subject}' Version {stored.version} "
                    "was not deleted first before being permanently deleted",
                )
            self._write(*deletion(stored, permanent))
            self._drop_config_if_empty(subject)
            return stored.version

    def delete_subject(self, subject: str, permanent: bool) -> list[int]:
        """Soft-delete a subject's live versions, or hard-delete all of them once soft-deleted;
        checked in Confluent's order (`deleteSubjectOrForward`, then `deleteSubject`, version
        by version): unknown 40401, nothing live to soft-delete 40404, a version another
        subject refers to 42206, a hard delete of a live version 40405."""
        with self._write_lock:
            self.barrier()
            versions = self.versions(subject, deleted=True)
            targets = versions if permanent else [v for v in versions if not v.deleted]
            if not targets:
                raise RegistryError(
                    SUBJECT_SOFT_DELETED,
                    f"Subject '{subject}' was soft deleted.Set permanent=true to delete permanently",
                )
            for stored in targets:
                self._refuse_referenced(stored, permanent, from_subject=subject)
                if permanent and not stored.deleted:
                    raise RegistryError(
                        SUBJECT_NOT_SOFT_DELETED,
                        f"Subject '{subject}' was not deleted first before being permanently deleted",
                    )
            for stored in targets:
                self._write(*deletion(stored, permanent))
            if permanent:
                self._drop_config_if_empty(subject)
            return [v.version for v in targets]

    def _refuse_referenced(self, target: SchemaVersion, permanent: bool, from_subject: str | None) -> None:
        """42206 when a schema refers to `target`, as Confluent 8.x counts referrers
        (`getReferencedBy`, `getReferencedBySubjects`): a soft-deleted referrer only for a hard
        delete (its id still resolves), and for a subject's delete (`from_subject`) only
        referrers in other subjects, so a subject whose versions refer to each other can go."""
        with self._lock:
            referrers = [
                version
                for name, versions in self.state.subjects.items()
                if name != from_subject
                for version in versions.values()
                if (permanent or not version.deleted)
                and any(r.subject == target.subject and r.version == target.version for r in version.references)
            ]
        if referrers:
            # Confluent's RestReferenceExistsException around its SchemaKey's toString.
            key = f"{{magic=1,keytype=SCHEMA,subject={target.subject},version={target.version}}}"
            raise RegistryError(REFERENCE_EXISTS, f"One or more references exist to the schema {key}.")

    def _drop_config_if_empty(self, subject: str) -> None:
        with self._lock:
            empty = not self.state.subjects.get(subject) and subject in self.state.configs
        if empty:
            self._write(config_key(subject), None)

    def set_level(self, subject: str | None, level: str | None) -> None:
        """Set (or with None, remove) the global or a subject's compatibility level."""
        value = orjson.dumps({"compatibilityLevel": level}) if level is not None else None
        with self._write_lock:
            self._write(config_key(subject), value)
