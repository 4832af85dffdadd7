"""MirrorMaker's topic and group filters, read as it reads them: which runs a flow would never copy."""

from __future__ import annotations

import pytest

from workbench.config import Profile, load_profile
from workbench.replication.preflight import left_out


def _with(properties: dict[str, str]) -> Profile:
    profile = load_profile("local-geo")
    settings = profile.replication.model_copy(update={"properties": properties})
    return profile.model_copy(update={"replication": settings})


@pytest.mark.parametrize(
    ("properties", "name", "says"),
    [
        ({}, "wb-geo-1234", None),
        ({"a->b.topics": "orders.*"}, "wb-geo-1234", "a->b.topics 'orders.*' does not match topic 'wb-geo-1234'"),
        ({"topics": "orders.*"}, "wb-geo-1234", "topics 'orders.*' does not match"),
        ({"topics": "orders.*", "a->b.topics": "wb-.*"}, "wb-geo-1234", None),
        ({"a->b.topics": "orders, wb-geo-.*"}, "wb-geo-1234", None),
        ({"a->b.topics": "wb-geo"}, "wb-geo-1234", "does not match"),  # a whole-name match, as Java's matches()
        ({"a->b.topics": ""}, "wb-geo-1234", "does not match"),  # an empty list copies nothing
        ({}, "audit-internal", "default topics.exclude"),
        ({}, "__consumer_offsets", "default topics.exclude"),
        ({"topics.exclude": "wb-.*"}, "wb-geo-1234", "topics.exclude 'wb-.*' matches topic 'wb-geo-1234'"),
        ({"topics.exclude": ""}, "__mine", None),
        ({"a->b.topics": "(unclosed"}, "wb-geo-1234", None),  # MirrorMaker judges a pattern Python cannot read
        ({"a->b.topics": "x" * 10_000}, "wb-geo-1234", "a->b.topics '" + "x" * 80 + "…' does not match"),
    ],
)
def test_a_topic_the_flow_would_never_copy_is_named_with_the_setting(
    properties: dict[str, str], name: str, says: str | None
) -> None:
    reason = left_out(_with(properties), name)
    if says is None:
        assert reason is None
    else:
        assert reason is not None and says in reason and "\n" not in reason, reason


def test_groups_and_the_other_way_read_their_own_keys() -> None:
    profile = _with({"a->b.groups": "orders-.*", "b->a.topics": "mine"})
    assert "a->b.groups 'orders-.*' does not match group 'wb-failover-1'" in str(
        left_out(profile, "wb-failover-1", kind="groups")
    )
    assert left_out(profile, "wb-failover-1", kind="groups", source="b") is None
    assert left_out(profile, "console-consumer-7", kind="groups", source="b") is not None  # the default exclude
    assert "b->a.topics 'mine' does not match" in str(left_out(profile, "wb-geo-1", source="b"))
    assert "would never sync it" in str(left_out(profile, "wb-failover-1", kind="groups"))
