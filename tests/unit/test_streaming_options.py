"""Source options are checked like Spark's own Kafka source checks them, without Spark."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.streaming.options import EARLIEST, LATEST, KafkaOptionError, TimestampOffsets, parse_options

BASE = {"kafka.bootstrap.servers": "host:9092"}


def test_keys_are_case_insensitive_and_defaults_follow_the_mode() -> None:
    stream = parse_options({**BASE, "SUBSCRIBE": "a, b ,", "MaxOffsetsPerTrigger": "100"}, streaming=True)
    assert stream.strategy == ("subscribe", ("a", "b"))
    assert stream.starting == "latest" and stream.max_offsets_per_trigger == 100
    batch = parse_options({**BASE, "subscribe": "a"}, streaming=False)
    assert batch.starting == "earliest" and batch.ending == "latest"


def test_offsets_json_keeps_the_earliest_and_latest_sentinels() -> None:
    options = parse_options(
        {**BASE, "assign": '{"t":[1,0]}', "startingOffsets": '{"t":{"0":-2,"1":-1}}'}, streaming=True
    )
    assert options.strategy == ("assign", {"t": [0, 1]})
    assert options.starting == {("t", 0): EARLIEST, ("t", 1): LATEST}


def test_timestamps_win_over_offsets_and_the_global_one_over_the_per_partition_one() -> None:
    """Spark's precedence: `startingTimestamp`, then `startingOffsetsByTimestamp`, then
    `startingOffsets`; a partition with no record that late fails unless the strategy says
    latest, and an ending timestamp with no such record ends at the log's end."""
    both = {"startingTimestamp": "1000", "startingOffsetsByTimestamp": '{"t":{"0":5}}', "startingOffsets": "earliest"}
    options = parse_options({**BASE, "subscribe": "t", **both}, streaming=True)
    assert options.starting == TimestampOffsets("startingTimestamp", 1000, "error")
    per_partition = parse_options(
        {
            **BASE,
            "subscribe": "t",
            "startingOffsetsByTimestamp": '{"t":{"0":5,"1":7}}',
            "startingOffsetsByTimestampStrategy": "LATEST",
            "endingTimestamp": "9",
        },
        streaming=False,
    )
    stamps = {("t", 0): 5, ("t", 1): 7}
    assert per_partition.starting == TimestampOffsets("startingOffsetsByTimestamp", stamps, "latest")
    assert per_partition.ending == TimestampOffsets("endingTimestamp", 9, "latest")


def test_java_names_are_translated_for_librdkafka() -> None:
    options = parse_options(
        {
            **BASE,
            "subscribe": "a",
            "kafka.fetch.max.wait.ms": "10",
            "kafka.max.poll.records": "5",
            "kafka.sasl.jaas.config": 'org.apache...PlainLoginModule required username="u" password="p";',
        },
        streaming=True,
    )
    assert options.kafka == {
        "bootstrap.servers": "host:9092",
        "fetch.wait.max.ms": 10,
        "sasl.username": "u",
        "sasl.password": "p",
    }


def test_a_given_group_id_is_used_else_one_is_generated_from_the_prefix() -> None:
    given = parse_options({**BASE, "subscribe": "a", "kafka.group.id": "mine"}, streaming=True)
    assert given.group_id == "mine" and "group.id" not in given.kafka
    generated = parse_options({**BASE, "subscribe": "a", "groupIdPrefix": "lab"}, streaming=True)
    assert generated.group_id.startswith("lab-")


@pytest.mark.parametrize(
    ("options", "streaming", "message"),
    [
        ({"subscribe": "a", "kafka.bootstrap.servers": None}, True, "'kafka.bootstrap.servers' must be specified"),
        ({}, True, "One of the following options must be specified for Kafka source: subscribe"),
        ({"subscribe": "a", "subscribePattern": "a.*"}, True, "Only one of the following options can be specified"),
        ({"subscribePattern": "  "}, True, "Pattern to subscribe is empty"),
        ({"subscribePattern": "a("}, True, "not a valid regular expression"),
        ({"assign": "{not json"}, True, 'Expected e.g. {"topicA":\\[0,1\\]'),
        ({"subscribe": "a", "startingOffsets": "{}"}, True, "Expected 'earliest', 'latest' or e.g."),
        ({"subscribe": "a", "startingOffsets": '{"a":{"0":"x"}}'}, True, "Expected 'earliest', 'latest'"),
        ({"subscribe": "a", "endingOffsets": "latest"}, True, "ending offset not valid in streaming queries"),
        ({"subscribe": "a", "startingOffsets": "latest"}, False, "starting offset can't be latest for batch"),
        ({"subscribe": "a", "endingOffsets": "earliest"}, False, "ending offset can't be earliest for batch"),
        (
            {"subscribe": "a", "startingOffsets": '{"a":{"0":-1}}', "endingOffsets": '{"a":{"0":5}}'},
            False,
            "startingOffsets for a-0 can't be latest",
        ),
        ({"subscribe": "a", "kafka.auto.offset.reset": "latest"}, True, "'auto.offset.reset' is not supported"),
        ({"subscribe": "a", "kafka.key.deserializer": "x"}, True, "'key.deserializer' is not supported"),
        ({"subscribe": "a", "kafka.enable.auto.commit": "true"}, True, "'enable.auto.commit' is not supported"),
        ({"subscribe": "a", "minPartitions": "-1"}, True, "must be a positive integer"),
        ({"subscribe": "a", "maxOffsetsPerTrigger": "ten"}, True, "must be a positive integer"),
        (
            {"subscribe": "a", "minOffsetsPerTrigger": "10", "maxOffsetsPerTrigger": "5"},
            True,
            "minOffsetPerTrigger\\(10\\) is higher than the maxOffsetsPerTrigger\\(5\\)",
        ),
        ({"subscribe": "a", "failOnDataLoss": "maybe"}, True, "must be true or false"),
        ({"subscribe": "a", "endingTimestamp": "5"}, True, "ending timestamp not valid in streaming queries"),
        ({"subscribe": "a", "startingTimestamp": "-5"}, True, "'startingTimestamp', must be a timestamp in ms"),
        ({"subscribe": "a", "startingOffsetsByTimestamp": '{"a":{"0":-1}}'}, True, 'Expected e.g. {"topicA"'),
        ({"subscribe": "a", "endingOffsetsByTimestamp": "[]"}, False, 'Expected e.g. {"topicA"'),
        ({"subscribe": "a", "startingOffsetsByTimestampStrategy": "oldest"}, True, "must be error or latest"),
    ],
)
def test_bad_options_are_refused_with_the_official_message(
    options: dict[str, Any], streaming: bool, message: str
) -> None:
    merged = {k: v for k, v in {**BASE, **options}.items() if v is not None}
    with pytest.raises(KafkaOptionError, match=message):
        parse_options(merged, streaming=streaming)


def test_the_error_is_a_workbench_error_and_a_value_error() -> None:
    from workbench.errors import WorkbenchError

    with pytest.raises(WorkbenchError) as caught:
        parse_options(BASE, streaming=True)
    assert isinstance(caught.value, ValueError)
