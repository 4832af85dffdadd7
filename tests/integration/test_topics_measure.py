"""The topic-cost experiments run on the real broker, count exactly and clean up after themselves."""

from __future__ import annotations

from workbench import kafka
from workbench.stack import Stack
from workbench.topics import KeyedTopic, count_cost, device_ids, read_cost


def test_topic_count_cost_measures_each_count_and_deletes_its_topics(stack: Stack) -> None:
    before = set(kafka.list_topics(stack.kafka_config()))
    rows = count_cost.topic_count_cost(stack, [1, 30], records=3_000, repeats=1)
    assert [r["topics"] for r in rows] == [1, 30]
    assert [r["assigned"] for r in rows] == [1, 30]  # the regex matched exactly the N topics
    assert rows[1]["metadata_bytes"] > rows[0]["metadata_bytes"] > 0
    assert all(r["topics_msg_s"] > 0 and r["partitions_msg_s"] > 0 for r in rows)
    assert set(kafka.list_topics(stack.kafka_config())) == before


def test_metadata_size_grows_by_the_same_amount_for_each_added_topic_of_one_name_length(stack: Stack) -> None:
    conf = stack.kafka_config()
    base = count_cost.metadata_cost(conf, repeats=1)["metadata_bytes"]
    sizes = []
    for n in (10, 20):
        names = {f"meta-{n:02d}-{i:04d}": 1 for i in range(n)}
        with stack.temporary_topics(names):
            sizes.append(count_cost.metadata_cost(conf, repeats=1)["metadata_bytes"])
    assert base is not None and sizes[0] is not None and sizes[1] is not None
    # Equal-length names, one partition each: every topic adds the same number of bytes.
    assert (sizes[1] - base) == 2 * (sizes[0] - base)


def test_device_read_cost_counts_what_each_method_reads(stack: Stack) -> None:
    rows = read_cost.device_read_cost(stack, devices=6, records_per_device=(10, 40), partitions=3)
    by = {(r["method"], r["records_per_device"]): r for r in rows}
    assert len(rows) == 6
    devices = device_ids(6, width=5)  # the ids device_read_cost writes
    same_partition = sum(
        1
        for d in devices
        if KeyedTopic("x", 3).route(d).expected_partition == KeyedTopic("x", 3).route(devices[0]).expected_partition
    )
    for size in (10, 40):
        assert all(by[(m, size)]["returned"] == size for m, _ in by)
        assert by[("own topic", size)]["scanned"] == size
        assert by[("keyed: its partition", size)]["scanned"] == size * same_partition
        assert by[("keyed: whole topic", size)]["scanned"] == size * 6
