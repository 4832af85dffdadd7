"""A replication run on the user's own clusters refuses in one line, before it writes a
record, when the second cluster does not answer or MirrorMaker's filters leave its topic or
group out; `status` lists the second cluster. Cluster a is the session's embedded broker."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from workbench import kafka
from workbench.config import load_profile
from workbench.errors import BenchError
from workbench.replication import consumer_failover_run, replicating_stack, replication_lag_run, setup_sentence
from workbench.stack import Stack, status


def _clusters(stack: Stack, tmp_path: Path, target: str, properties: dict[str, Any] | None = None) -> Stack:
    """A cluster profile: a is the embedded broker, b is `target`; MirrorMaker is the user's."""
    path = tmp_path / "geo-theirs.yaml"
    raw = {
        "embedded": False,
        "broker": {"kind": "kafka"},
        "kafka": {"bootstrap.servers": stack.bootstrap_servers},
        "replication": {"enabled": True, "target_bootstrap": target, "properties": properties or {}},
    }
    path.write_text(yaml.safe_dump(raw))
    return Stack(load_profile(str(path)))


def _topics(stack: Stack) -> set[str]:
    return {name for name in kafka.list_topics(stack.kafka_config("admin")) if name.startswith("wb-geo")}


def test_a_second_cluster_that_does_not_answer_is_named_with_its_setting(stack: Stack, tmp_path: Path) -> None:
    theirs = _clusters(stack, tmp_path, "127.0.0.1:1")
    before = _topics(stack)
    began = time.monotonic()
    with pytest.raises(BenchError) as refused:
        replication_lag_run(theirs, seconds=1)
    message = str(refused.value)
    assert message.startswith("cluster b (127.0.0.1:1) did not answer") and "replication.target_bootstrap" in message
    assert "\n" not in message and time.monotonic() - began < 30, "one line, not a wait for a copy"
    assert _topics(stack) == before, "nothing written to a"
    services = status(theirs.profile)["services"]
    assert services["broker"]["healthy"] and not services["b-broker"]["healthy"], services
    assert services["b-broker"]["kind"] == "peer-broker"


def test_notebook_13_on_clusters_it_cannot_measure_says_why_instead_of_failing(stack: Stack, tmp_path: Path) -> None:
    theirs = _clusters(stack, tmp_path, stack.bootstrap_servers, {"a->b.topics": "orders.*"})
    assert replicating_stack(theirs) is None, "the notebook's sections run only on a stack they can measure"
    said = setup_sentence(None, theirs)
    assert "names a second cluster, but no run can measure its flow" in said and "'orders.*'" in said, said


@pytest.mark.parametrize(
    ("properties", "says"),
    [
        ({"a->b.topics": "orders.*"}, "MirrorMaker's a->b.topics 'orders.*' does not match topic 'wb-geo-"),
        ({"topics.exclude": "wb-.*"}, "MirrorMaker's topics.exclude 'wb-.*' matches topic 'wb-geo-"),
    ],
)
def test_a_topic_pattern_that_leaves_the_run_s_topic_out_is_refused_before_a_record(
    stack: Stack, tmp_path: Path, properties: dict[str, Any], says: str
) -> None:
    theirs = _clusters(stack, tmp_path, stack.bootstrap_servers, properties)
    before = _topics(stack)
    with pytest.raises(BenchError, match=re.escape(says)):
        replication_lag_run(theirs, seconds=1)
    assert _topics(stack) == before, "no topic made on either side"


def test_a_group_pattern_that_leaves_the_run_s_group_out_is_refused(stack: Stack, tmp_path: Path) -> None:
    theirs = _clusters(stack, tmp_path, stack.bootstrap_servers, {"groups": "orders-.*"})
    with pytest.raises(BenchError, match=re.escape("groups 'orders-.*' does not match group 'wb-failover-")):
        consumer_failover_run(theirs, topic_prefix="wb-geo-failover")
