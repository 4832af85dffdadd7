"""What MirrorMaker calls things on the target: a source topic's remote name, by the
profile's replication policy."""

from __future__ import annotations

from workbench.config import Profile

__all__ = ["remote_topic", "separator"]


def remote_topic(profile: Profile, topic: str, *, source: str | None = None) -> str:
    """The name `topic` of the source cluster has on the target under MirrorMaker's
    default policy (`<source alias>.<topic>`); the identity policy keeps the name.
    `source` names the other way's source (`b`, for a flow b->a); the profile's by default."""
    policy = str(profile.replication.properties.get("replication.policy.class", ""))
    if policy.endswith("IdentityReplicationPolicy"):
        return topic
    return f"{source or profile.replication.source}{separator(profile)}{topic}"


def separator(profile: Profile) -> str:
    """What MirrorMaker's default policy puts between an alias and a topic (`replication.policy.separator`)."""
    return str(profile.replication.properties.get("replication.policy.separator", "."))
