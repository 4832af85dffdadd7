"""Names and numbers a client sends, checked before they reach librdkafka.

librdkafka trusts its caller: a group id holding a NUL byte fails an assertion in
`Consumer_init` and ends the whole process, an offset past int64 overflows in the
C layer, and a topic name Kafka would refuse still costs a metadata round trip.
So every name and number from a request is checked here, at the edge, and answered
with the error upstream sends for it.

The rules are Kafka's own: a topic is 1-249 characters of `[A-Za-z0-9._-]` and not
`.` or `..` (MapR stream topics, `/stream/path:topic`, are accepted in their own form);
partitions are int32, offsets int64. Group and instance names may be any text Kafka
stores, but never control characters, never over 255 characters, and never a dot
segment (`.`, `..`), which HTTP clients normalise away so the instance could never be
reached again.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.httpserver.errors import RestError
from workbench.restproxy.errors import TOPIC_NOT_FOUND

__all__ = [
    "INT32_MAX",
    "INT64_MAX",
    "INVALID_CONSUMER_CONFIG",
    "NAME_MAX",
    "TOPIC_MAX",
    "check_group",
    "check_instance_name",
    "check_offset",
    "check_path",
    "check_topic",
    "topic_problem",
]

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
#: The longest group or instance name accepted (Kafka has no limit; URLs and logs do).
NAME_MAX = 255
TOPIC_MAX = 249

_TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
INVALID_CONSUMER_CONFIG = 42204


def topic_problem(name: str) -> str | None:
    """Why `name` cannot be a Kafka topic, or None when it can."""
    if name.startswith("/") and ":" in name:  # MapR: /volume/path/stream:topic
        path, _, topic = name.rpartition(":")
        if _CONTROL.search(path) or len(path) > 1024:
            return "a stream path without control characters, at most 1024 characters"
        name = topic
    if len(name) > TOPIC_MAX:
        return f"at most {TOPIC_MAX} characters, got {len(name)}"
    if name in (".", ".."):
        return "not '.' or '..'"
    if not _TOPIC.fullmatch(name):
        return "only ASCII letters, digits, '.', '_' and '-'"
    return None


def _shown(name: str) -> str:
    text = repr(name)
    return text if len(text) <= 80 else f"{text[:60]}...' ({len(name)} characters)"


def check_topic(name: str, status: int = 404, code: int = TOPIC_NOT_FOUND) -> str:
    """`name` when it is a legal topic name; else upstream's answer for a missing topic.

    A name Kafka would refuse names no topic, so a path that holds one is 404 / 40401
    (the caller picks another status for a create, where it is the client's mistake).
    """
    problem = topic_problem(name)
    if problem is not None:
        what = f"Topic {_shown(name)} not found" if status == 404 else f"Invalid topic name {_shown(name)}"
        raise RestError(status, code, f"{what}: a topic name is {problem}")
    return name


def _name_problem(name: str) -> str | None:
    if not name:
        return "must not be empty"
    if len(name) > NAME_MAX:
        return f"must be at most {NAME_MAX} characters, got {len(name)}"
    if name in (".", ".."):
        return "must not be '.' or '..' (HTTP clients drop dot segments from URLs)"
    if _CONTROL.search(name):
        return "must be free of control characters"
    return None


def check_group(group: str) -> str:
    """A consumer group id from a create request; 422 / 42204 when unusable."""
    problem = _name_problem(group)
    if problem is not None:
        raise RestError(422, INVALID_CONSUMER_CONFIG, f"Invalid consumer group {_shown(group)}: it {problem}")
    return group


def check_instance_name(name: Any) -> str:
    """A consumer instance name from a create body; 422 / 42204 when unusable."""
    if not isinstance(name, str):
        raise RestError(422, INVALID_CONSUMER_CONFIG, f"Invalid consumer instance name {name!r}: it must be a string")
    problem = _name_problem(name) or ("must not contain '/'" if "/" in name else None)
    if problem is not None:
        raise RestError(422, INVALID_CONSUMER_CONFIG, f"Invalid consumer instance name {_shown(name)}: it {problem}")
    return name


def check_offset(value: Any, what: str = "offset") -> int:
    """An offset from a body: 0 to int64's maximum minus one (a commit stores offset + 1)."""
    if type(value) is not int or not 0 <= value < INT64_MAX:
        raise RestError(422, 422, f"{what} must be an integer from 0 to {INT64_MAX - 1}, got {value!r}")
    return value


def check_path(params: dict[str, str], v3: bool) -> None:
    """Names in a matched path, checked before any handler (or librdkafka) sees them.

    An illegal topic in a path names no topic (404: 40401 in v2, 40403 in v3, as upstream
    answers for a missing one); an instance path with an unusable group or instance name
    names no instance (404 / 40403). A group in `POST /consumers/{group}` is checked by
    the create handler, where a bad one is the request's fault (422 / 42204).
    """
    topic = params.get("topic")
    if topic is not None:
        check_topic(topic, 404, 40403 if v3 else TOPIC_NOT_FOUND)
    group = params.get("group")
    instance = params.get("instance")
    if instance is not None and group is not None:
        if _name_problem(group) or _name_problem(instance) or "/" in instance:
            raise RestError(
                404, 40403, f"Consumer instance not found: group {_shown(group)}, instance {_shown(instance)}."
            )
    elif v3 and group is not None and _name_problem(group):
        raise RestError(404, 404, f"Consumer group {_shown(group)} not found.")
