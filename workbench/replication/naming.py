"""What MirrorMaker calls things on the target: a source topic's remote name, by the
profile's replication policy."""

from __future__ import annotations

from workbench.config import Profile

__all__ = ["remote_topic"]


def remote_topic(profile: Profile, topic: str) -> str:
    """The name `topic` of the source cluster has on the target under MirrorMaker's
    default policy (`<source alias>.<topic>`); the identity policy keeps the name."""
    policy = str(profile.replication.properties.get("replication.policy.class", ""))
    if policy.endswith("IdentityReplicationPolicy"):
        return topic
    separator = str(profile.replication.properties.get("replication.policy.separator", "."))
    return f"{profile.replication.source}{separator}{topic}"
