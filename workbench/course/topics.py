"""Exercises of the topic-design notebooks (06-08, 11), each judged with the run's own figures."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from workbench.course.exercise import (
    Exercise,
    Figures,
    NotMeasured,
    PredictedFigure,
    as_number,
    measured_rows,
    plain,
    register,
)
from workbench.numbers import format_number

__all__ = [
    "ConsumerGroupCeiling",
    "CreateTenThousand",
    "KeysMoved",
    "MetadataAtFiveThousand",
    "OneDevicesPartition",
    "PartitionsForTarget",
]


@register
class MetadataAtFiveThousand(PredictedFigure):
    notebook, key, number = "06", "metadata_5000", 1
    title = "Predict the Metadata response at 5,000 topics from the per-topic slope"
    section = "The experiment (the `metadata_bytes` column) and What the run says"
    form = "a size in kilobytes (1 KB = 1,000 bytes)"
    wanted, unit, tolerance = "a size in KB", "KB", 0.10
    how = "{metadata_bytes:,} B at {topics:,} topics, plus the per-topic slope for each topic added"

    def figures(self, frame: pd.DataFrame) -> Figures:
        rows = measured_rows(
            frame, ["topics", "metadata_bytes"], "the Metadata size is not measurable on this listener"
        )
        if len(rows) < 2:
            raise NotMeasured("the per-topic slope needs two topic counts at least")
        small, large = rows.iloc[0], rows.iloc[-1]
        slope = (large["metadata_bytes"] - small["metadata_bytes"]) / (large["topics"] - small["topics"])
        return {
            "topics": plain(large["topics"]),
            "metadata_bytes": plain(large["metadata_bytes"]),
            "slope_bytes": float(slope),
        }

    def expected(self, figures: Figures) -> float:
        return float(figures["metadata_bytes"] + figures["slope_bytes"] * (5_000 - figures["topics"])) / 1e3

    def question(self, figures: Figures) -> str:
        return (
            "The table above gives the full Metadata response's size for each topic count. Extrapolate from the "
            "measured per-topic slope: how many **KB** would it be at **5,000 topics**? Within 10 % passes."
        )


@register
class CreateTenThousand(PredictedFigure):
    notebook, key, number = "06", "create_10000", 2
    title = "Predict the seconds to create 10,000 topics"
    section = "The experiment (`create_s` per topic count)"
    form = "a number of seconds"
    unit, tolerance, digits = "s", 0.20, 2
    how = "the seconds for {topics:,} topics, scaled to 10,000"

    def figures(self, frame: pd.DataFrame) -> Figures:
        rows = measured_rows(frame, ["topics", "create_s"], "no topic creation was timed")
        large = rows.iloc[-1]
        return {"topics": plain(large["topics"]), "create_s": float(large["create_s"])}

    def expected(self, figures: Figures) -> float:
        return float(figures["create_s"]) / float(figures["topics"]) * 10_000

    def question(self, figures: Figures) -> str:
        return (
            f"Creating {figures['topics']:,} topics was timed above. Assuming the cost per topic stays the same, "
            "how many **seconds** would creating **10,000** topics take? Within 20 % passes."
        )


@register
class OneDevicesPartition(PredictedFigure):
    notebook, key, number = "07", "partition_scan", 1
    title = "Predict how many records a keyed read of one device's partition scans"
    section = "Reading one device's history as the data grows, and the note after What the run says"
    form = "a number of records"
    measured, unit, tolerance, digits = "scanned", "records", 0.50, None
    how = (
        "a device's partition holds itself and, on average, (devices - 1) / partitions other "
        "devices, all of which the read scans"
    )

    def figures(self, reads: pd.DataFrame) -> Figures:
        rows = measured_rows(
            reads,
            ["method", "records_per_device", "devices", "partitions", "scanned"],
            "the one-device reads were not measured",
        )
        biggest = rows[rows["records_per_device"] == rows["records_per_device"].max()]
        part = biggest[biggest["method"] == "keyed: its partition"]
        if part.empty:
            raise NotMeasured("the keyed partition read was not measured")
        row = part.iloc[0]
        return {name: plain(row[name]) for name in ("records_per_device", "devices", "partitions", "scanned")}

    def question(self, figures: Figures) -> str:
        return (
            f"{figures['devices']:,} devices with {figures['records_per_device']:,} records each share a keyed "
            f"topic of {figures['partitions']} partitions. Reading **one device's** history from its own "
            "partition: predict how many **records** the consumer scans. Within 50 % passes (the hash does not "
            "share devices out evenly)."
        )


@register
class PartitionsForTarget(Exercise):
    notebook, key, number = "08", "partitions_500", 1
    title = "The minimum partition count for 500 MB/s from the measured t_p and t_c"
    section = "One partition's throughput, measured (the formula)"
    form = "a whole number of partitions"

    def figures(self, plan: Any) -> Figures:
        try:
            t_p, t_c = float(plan.produce_per_partition), float(plan.consume_per_partition)
        except (AttributeError, TypeError, ValueError):
            raise NotMeasured("no partition plan was computed") from None
        if not (t_p > 0 and t_c > 0):
            raise NotMeasured("the per-partition rates were not measured")
        return {"t_p": t_p, "t_c": t_c, "target": 500.0}

    def question(self, figures: Figures) -> str:
        return (
            "A topic must carry **500 MB/s**. With the t_p and t_c measured above and no margin, what is the "
            "**minimum** number of partitions?"
        )

    def solve(self, figures: Figures) -> int:
        return int(max(math.ceil(figures["target"] / figures["t_p"]), math.ceil(figures["target"] / figures["t_c"])))

    def judge(self, answer: Any, figures: Figures) -> tuple[bool, str]:
        count, reference = as_number(answer, "a whole number of partitions"), self.solve(figures)
        formula = (
            f"max(⌈500 / {figures['t_p']:,.2f}⌉, ⌈500 / {figures['t_c']:,.2f}⌉) = {reference:,}; "
            "the slower side decides"
        )
        if count == reference:
            return True, formula
        return False, ("too few: " if count < reference else "enough, but not the minimum: ") + formula


@register
class KeysMoved(Exercise):
    notebook, key, number = "08", "keys_moved", 2
    title = "Predict the share of keys that move when 6 partitions become 9"
    section = "Adding partitions later moves keys"
    form = "a fraction (0.25) or a percentage as text ('25%')"

    def figures(self, keys: Sequence[str]) -> Figures:
        from workbench.topics import moved_keys

        if not keys:
            raise NotMeasured("no keys to move")
        report = moved_keys(keys, 6, 9)
        return {"keys": len(keys), "moved_fraction": float(report.moved_fraction)}

    def question(self, figures: Figures) -> str:
        return (
            f"The topic of the {figures['keys']:,} keys above grows from **6** to **9** partitions. What share of "
            "the keys lands on another partition? The check computes it with the producer's own partitioner "
            "(within 3 percentage points passes)."
        )

    def solve(self, figures: Figures) -> float:
        return round(float(figures["moved_fraction"]), 3)

    def judge(self, answer: Any, figures: Figures) -> tuple[bool, str]:
        text = answer.strip() if isinstance(answer, str) else None
        share = as_number(text.rstrip("%") if text else answer, "a fraction or a percentage")
        share = share / 100 if (text and text.endswith("%")) or share > 1 else share
        moved = figures["moved_fraction"]
        ok = abs(share - moved) <= 0.03
        how = "a key keeps its partition only when its hash leaves the same remainder divided by 6 and by 9"
        if ok:
            return True, f"{share:.1%}; {moved:.1%} of the keys moved ({how}; ideally 1 - 6/18 = 66.7 %)"
        return False, f"{share:.1%} is {'too high' if share > moved else 'too low'}: {how}"


@register
class ConsumerGroupCeiling(PredictedFigure):
    notebook, key, number = "11", "group_ceiling", 1
    title = "Predict a consumer group's records/s with more members than partitions"
    section = "1 · Members past the partition count"
    form = "a number of records per second"
    measured, wanted, unit, tolerance, digits = "msg_s", "records per second", "records/s", 0.25, None

    def figures(self, grid: pd.DataFrame) -> Figures:
        rows = measured_rows(
            grid, ["kind", "members", "processing_ms", "msg_s"], "section 1 measured no consumer group"
        )
        groups = rows[rows["kind"] == "consumer group"]
        if groups.empty:
            raise NotMeasured("section 1 measured no consumer group")
        slowest = float(groups["processing_ms"].max())
        at = groups[groups["processing_ms"] == slowest]
        most = int(at["members"].max())
        partitions = int(at["topic_partitions"].iloc[0]) if "topic_partitions" in at else 4
        return {
            "processing_ms": plain(slowest),
            "members": most,
            "partitions": partitions,
            "msg_s": float(at[at["members"] == most]["msg_s"].median()),
        }

    def question(self, figures: Figures) -> str:
        return (
            f"A consumer group of **{figures['members']} members** reads a topic of {figures['partitions']} "
            f"partitions, spending **{format_number(figures['processing_ms'])} ms** on each record. Before looking "
            "at section 1's chart, how many records per second does the group process? Within 25 % of the run "
            "passes."
        )

    def reasoning(self, figures: Figures) -> str:
        bound = min(figures["members"], figures["partitions"]) * 1000 / max(figures["processing_ms"], 0.001)
        return (
            f"only {min(figures['members'], figures['partitions'])} members hold a partition, each at most "
            f"1,000 / {format_number(figures['processing_ms'])} records/s: at most {bound:,.0f} records/s"
        )
