"""The `_schemas` topic's records in Confluent's layout, and the rules every registry
instance applies to them in order (`LogState`). `store` writes and reads the topic.

Records (keys are compact JSON with upstream's field order, so equal keys are equal
bytes and compaction keeps the last):

    {"keytype":"SCHEMA","subject":s,"version":n,"magic":1}  {"subject","version","id","schema",
                                                             "schemaType"?,"references"?,"deleted"}
    {"keytype":"CONFIG","subject":s,"magic":0}               {"compatibilityLevel": ...}  (no subject: global)
    {"keytype":"DELETE_SUBJECT","subject":s,"magic":0}       {"subject","version"}  (read, never written)
    {"keytype":"NOOP","magic":0}                             null: a write barrier

A null value removes its key (hard delete, config reset). Unknown key types are skipped.

**Ids across instances and restarts.** There is no leader. Before a registration the
writer produces a NOOP and reads up to it (a barrier), so it has seen every earlier
write; an identical schema (same identity, see `schemas.identity`) reuses its id in
any subject, as Confluent does; a new one takes max id seen + 1. Two instances racing
may both pick the same id, or the same subject version. Every reader applies the log
in order with the same rules, so all agree on the outcome: a SCHEMA record is ignored
when its id already belongs to another schema, when its schema already has another
id, or when its subject version already holds another schema. The writer reads its
own record back; if it was ignored it retries (after another barrier it finds the
winner's id for the same schema, or the next free one), and when its record landed on
the winner's key it first writes the winner's record again, so that after compaction
the key still holds the winner. Ids are never reused: the maximum counts every id ever
seen, deleted ones included.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from workbench.registry.schemas import Reference, identity, loose_identity

__all__ = ["LogState", "NOOP_KEY", "SchemaVersion", "config_key", "deletion"]

log = logging.getLogger("workbench.registry")


@dataclass(frozen=True)
class SchemaVersion:
    """One version of a subject, as stored."""

    subject: str
    version: int
    id: int
    schema: str
    schema_type: str = "AVRO"
    references: tuple[Reference, ...] = ()
    deleted: bool = False

    @property
    def identity(self) -> str:
        return identity(self.schema_type, self.schema, self.references)

    @property
    def loose_identity(self) -> str:
        return loose_identity(self.schema_type, self.schema, self.references)

    def to_json(self) -> dict[str, Any]:
        """The REST answer for this version (Confluent 7.x shape: AVRO's type omitted)."""
        body: dict[str, Any] = {"subject": self.subject, "version": self.version, "id": self.id}
        if self.schema_type != "AVRO":
            body["schemaType"] = self.schema_type
        if self.references:
            body["references"] = [r.to_json() for r in self.references]
        body["schema"] = self.schema
        return body

    def record(self) -> tuple[bytes, bytes]:
        key = orjson.dumps({"keytype": "SCHEMA", "subject": self.subject, "version": self.version, "magic": 1})
        value: dict[str, Any] = {"subject": self.subject, "version": self.version, "id": self.id, "schema": self.schema}
        if self.schema_type != "AVRO":
            value["schemaType"] = self.schema_type
        if self.references:
            value["references"] = [r.to_json() for r in self.references]
        value["deleted"] = self.deleted
        return key, orjson.dumps(value)


def config_key(subject: str | None) -> bytes:
    if subject is None:
        return orjson.dumps({"keytype": "CONFIG", "magic": 0})
    return orjson.dumps({"keytype": "CONFIG", "subject": subject, "magic": 0})


NOOP_KEY = orjson.dumps({"keytype": "NOOP", "magic": 0})


@dataclass
class LogState:
    """What the log says, applied in order by the rules above: every instance that reads
    the same records reaches the same state."""

    subjects: dict[str, dict[int, SchemaVersion]] = field(default_factory=dict)
    ids: dict[int, SchemaVersion] = field(default_factory=dict)  # the first version that took the id
    by_identity: dict[str, int] = field(default_factory=dict)
    configs: dict[str | None, str] = field(default_factory=dict)
    max_id: int = 0

    def apply(self, key: dict[str, Any], value: dict[str, Any] | None) -> None:
        keytype = key.get("keytype")
        subject = key.get("subject")
        if keytype == "SCHEMA" and isinstance(subject, str) and isinstance(key.get("version"), int):
            version = int(key["version"])
            if value is None:
                self.subjects.get(subject, {}).pop(version, None)
                if subject in self.subjects and not self.subjects[subject]:
                    del self.subjects[subject]
                return
            self._schema(subject, version, value)
        elif keytype == "CONFIG":
            level = value.get("compatibilityLevel") if value else None
            if isinstance(level, str):
                self.configs[subject if isinstance(subject, str) else None] = level
            else:
                self.configs.pop(subject if isinstance(subject, str) else None, None)
        elif keytype == "DELETE_SUBJECT" and isinstance(subject, str) and value:
            upto = value.get("version")
            for number, stored in list(self.subjects.get(subject, {}).items()):
                if isinstance(upto, int) and number <= upto:
                    self.subjects[subject][number] = replace(stored, deleted=True)

    def _schema(self, subject: str, version: int, value: dict[str, Any]) -> None:
        try:
            refs = tuple(
                Reference(str(r["name"]), str(r["subject"]), int(r["version"])) for r in value.get("references") or []
            )
            schema_type = str(value.get("schemaType") or "AVRO")
            stored = SchemaVersion(
                subject, version, int(value["id"]), str(value["schema"]), schema_type, refs, bool(value.get("deleted"))
            )
        except (KeyError, TypeError, ValueError):
            log.warning("skipping a malformed schema record for %r version %d", subject, version)
            return
        self.max_id = max(self.max_id, stored.id)
        key = stored.identity
        owner = self.ids.get(stored.id)
        if owner is not None and owner.identity != key and owner.loose_identity != stored.loose_identity:
            return  # the id belongs to another schema: this record lost a race
        known = self.by_identity.get(key)
        if known is not None and known != stored.id:
            return  # this schema already has another id
        current = self.subjects.get(subject, {}).get(version)
        if current is not None and (current.id != stored.id or current.identity != key):
            return  # the subject version holds another schema
        self.ids.setdefault(stored.id, stored)
        self.by_identity[key] = stored.id
        self.subjects.setdefault(subject, {})[version] = stored


def deletion(stored: SchemaVersion, permanent: bool) -> tuple[bytes, bytes | None]:
    """The record that deletes a version: its tombstone (hard), or it marked deleted (soft)."""
    return (stored.record()[0], None) if permanent else replace(stored, deleted=True).record()
