"""`Stack.temporary_topics`: the one way to use throw-away topics, deleted whatever happens."""

from __future__ import annotations

import uuid

import pytest

from workbench import kafka
from workbench.errors import KafkaError
from workbench.stack import Stack


def _names(prefix: str, count: int) -> dict[str, int]:
    return {f"{prefix}-{i}": 1 + i % 3 for i in range(count)}


def test_topics_are_created_in_batches_and_deleted_with_those_added_later(stack: Stack) -> None:
    conf = stack.kafka_config("admin")
    prefix = f"temp-{uuid.uuid4().hex[:8]}"
    wanted = _names(prefix, 5)
    with stack.temporary_topics(wanted, batch=2) as created:
        assert created.names == list(wanted) and created.create_seconds > 0
        assert [len(kafka.describe_topic(conf, n).partitions) for n in wanted] == list(wanted.values())
        created.create({f"{prefix}-late": 2})
        assert f"{prefix}-late" in kafka.list_topics(conf)
    assert [t for t in kafka.list_topics(conf) if t.startswith(prefix)] == []


def test_topics_are_deleted_when_the_block_fails_and_kept_when_asked(stack: Stack) -> None:
    conf = stack.kafka_config("admin")
    prefix = f"temp-{uuid.uuid4().hex[:8]}"
    with pytest.raises(RuntimeError, match="inside"), stack.temporary_topics(_names(prefix, 2)):
        raise RuntimeError("inside")
    assert [t for t in kafka.list_topics(conf) if t.startswith(prefix)] == []
    with stack.temporary_topics({f"{prefix}-kept": 1}, keep=True):
        pass
    assert f"{prefix}-kept" in kafka.list_topics(conf)
    stack.delete_topics([f"{prefix}-kept"])


def test_a_topic_that_existed_before_is_refused_and_left_alone(stack: Stack) -> None:
    conf = stack.kafka_config("admin")
    existing = f"temp-{uuid.uuid4().hex[:8]}-existing"
    stack.create_topics({existing: 1})
    try:
        with pytest.raises(KafkaError, match="cannot create topic"), stack.temporary_topics({existing: 1}):
            pass
        assert existing in kafka.list_topics(conf)
    finally:
        stack.delete_topics([existing])
