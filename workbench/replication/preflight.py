"""What a replication run checks before it writes a record: both clusters answer, and the
flow's filters copy the run's topic and group.

MirrorMaker copies a topic only when one of its `topics` patterns matches the whole name
and none of its `topics.exclude` patterns does (`DefaultTopicFilter`), and syncs a group's
offsets under the same rule with `groups` and `groups.exclude` (`DefaultGroupFilter`). A
flow's own key (`a->b.topics`) wins over the top-level one. A profile that narrows the flow
to `orders.*` copies nothing a run writes: unchecked, the run would wait a minute for a
copy that never comes and then blame MirrorMaker. A cluster that does not answer would
surface as a topic that cannot be created, naming neither the cluster nor the setting.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from workbench.config import Profile
from workbench.errors import BenchError, StackError
from workbench.kafka.admin import broker_answers

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = ["ANSWER_TIMEOUT_S", "FILTER_DEFAULTS", "check_flow", "flow_unavailable", "left_out"]

#: MirrorMaker's own defaults for the four filter settings (DefaultTopicFilter, DefaultGroupFilter).
FILTER_DEFAULTS: dict[str, str] = {
    "topics": ".*",
    "topics.exclude": r".*[\-\.]internal, .*\.replica, __.*",
    "groups": ".*",
    "groups.exclude": "console-consumer-.*, connect-.*, __.*",
}
#: Seconds each cluster has to answer a metadata request before a run.
ANSWER_TIMEOUT_S = 5.0


def left_out(
    profile: Profile, name: str, *, kind: Literal["topics", "groups"] = "topics", source: str | None = None
) -> str | None:
    """Why the flow from `source` (the profile's source by default) does not copy the topic
    (or, with `kind="groups"`, sync the group) `name`, in one line; None when it does.

    A pattern Python cannot read is taken to match: MirrorMaker (Java's regex) is the judge
    of its own settings, and refuses an unreadable one at start with its own message.
    """
    settings = profile.replication
    source = source or settings.source
    target = settings.target if source == settings.source else settings.source
    flow = f"{source}->{target}"
    include_key, include = _setting(profile, flow, kind)
    exclude_key, exclude = _setting(profile, flow, f"{kind}.exclude")
    verb = "copy" if kind == "topics" else "sync"
    if _matches(include, name) is False:
        return (
            f"MirrorMaker's {include_key} {_shown(include)} does not match {kind[:-1]} {name!r}, so the flow {flow} "
            f"would never {verb} it: widen it in the profile's replication.properties"
        )
    if _matches(exclude, name):
        return (
            f"MirrorMaker's {exclude_key} {_shown(exclude)} matches {kind[:-1]} {name!r}, so the flow {flow} "
            f"would never {verb} it: narrow it in the profile's replication.properties"
        )
    return None


def check_flow(stack: Stack, topic: str, *, group: str | None = None, both_ways: bool = False) -> None:
    """Before a run writes to `topic` (and commits for `group`): both clusters answer a
    metadata request, and the flow a->b (and b->a too, with `both_ways`) copies the topic
    and syncs the group.

    Raises:
        BenchError: one line naming the cluster and the setting to look at, or the filter
            that leaves the topic or group out.
        StackError: the profile has no second cluster, or its embedded one is not running.
    """
    settings = stack.profile.replication
    clusters = [
        (settings.source, stack.bootstrap_servers, stack.kafka_config("admin"), "kafka.bootstrap.servers"),
        (settings.target, stack.peer_bootstrap_servers, stack.peer_config("admin"), "replication.target_bootstrap"),
    ]
    for alias, servers, conf, key in clusters:
        if not broker_answers(servers, timeout=ANSWER_TIMEOUT_S, conf=conf):
            where = "see `workbench status`" if stack.profile.embedded else f"is the profile's {key} right?"
            raise BenchError(f"cluster {alias} ({servers}) did not answer within {ANSWER_TIMEOUT_S:.0f} s: {where}")
    for source in (settings.source, settings.target) if both_ways else (settings.source,):
        reason = left_out(stack.profile, topic, source=source)
        if reason is None and group is not None:
            reason = left_out(stack.profile, group, kind="groups", source=source)
        if reason is not None:
            raise BenchError(reason)


def flow_unavailable(stack: Stack) -> str | None:
    """Why no run can measure the flow of `stack`, in one line (a cluster that does not
    answer, filters that leave the runs' topics or groups out); None when runs can. The
    names checked are those of the runs' defaults (`wb-geo-…`, `wb-failover-…`)."""
    try:
        check_flow(stack, "wb-geo-00000000", group="wb-failover-00000000")
    except (BenchError, StackError) as error:
        return str(error)
    return None


def _setting(profile: Profile, flow: str, key: str) -> tuple[str, str]:
    """The setting MirrorMaker reads for this flow (the flow's own key, the top-level one, or
    its default, said so) and its value."""
    properties = profile.replication.properties
    for name in (f"{flow}.{key}", key):
        if name in properties:
            return name, str(properties[name])
    return f"default {key}", FILTER_DEFAULTS[key]


def _shown(value: str, limit: int = 80) -> str:
    """A setting's value as a message quotes it: a 10,000-character pattern is cut, not pasted."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


def _matches(patterns: str, name: str) -> bool | None:
    """Whether any of the comma-separated patterns matches all of `name`; None when Python
    cannot read one of them. An empty list matches nothing, as MirrorMaker's does."""
    parts = [part.strip() for part in patterns.split(",") if part.strip()]
    try:
        return any(re.fullmatch(part, name) for part in parts)
    except re.error:
        return None
