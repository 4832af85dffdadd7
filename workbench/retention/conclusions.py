"""What a run of the retention experiments says, in sentences computed from its rows: what
notebook 14 concludes, never written in advance."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from workbench.measure.contract import is_measured
from workbench.retention.log_state import WATCH_INTERVAL_S

__all__ = ["behind_sentences", "compaction_sentences", "replay_sentences", "retention_sentences"]


def _s(value: Any) -> str:
    return f"{float(value):.1f} s" if is_measured(value) else "not measured"


def retention_sentences(rows: pd.DataFrame, check_ms: int | None, watch_s: float = WATCH_INTERVAL_S) -> list[str]:
    """One line per run (by `segment.ms`) on how long its records lived against `retention.ms`,
    then what the runs share; a deletion is seen up to `watch_s` late (the log is looked at
    that often), which the bound allows for."""
    lines = []
    check = f"{check_ms / 1000:g} s" if check_ms is not None else "an interval this cluster does not tell"
    for values in rows.to_dict("records"):
        retention_s, segment_s = int(values["retention.ms"]) / 1000, int(values["segment.ms"]) / 1000
        lived = (
            f"lived {_s(values['survival_min_s'])} to {_s(values['survival_max_s'])} (median "
            f"{_s(values['survival_p50_s'])})"
        )
        kept = (
            f"all {int(values['records']):,} records were deleted"
            if values["kept"] == 0
            else f"{int(values['kept']):,} of {int(values['records']):,} were still there when the watch ended"
        )
        lines.append(
            f"With segment.ms = {segment_s:g} s, records {lived} against retention.ms = {retention_s:g} s: "
            f"{_s(values['overstay_p50_s'])} past it at the median; the first deletion came "
            f"{_s(values['first_deleted_s'])} after the first write, and {kept}."
        )
    if len(rows) and int(rows["deleted"].sum()) == 0:
        lines.append(
            "No run saw a record deleted, though each watched until retention.ms + segment.ms and some seconds more "
            f"had passed: this broker did not apply retention.ms in that time (its check interval: {check}). A "
            "broker that never deletes keeps the topic growing whatever its settings say (Tansu 0.6, measured: "
            "docs/brokers.md)."
        )
    measured = rows.dropna(subset=["survival_min_s", "survival_max_s"])
    if len(measured):
        retention = measured["retention.ms"].astype(int) / 1000
        bound = retention + measured["segment.ms"].astype(int) / 1000 + (check_ms or 0) / 1000 + watch_s
        early = int((measured["survival_min_s"] < retention).sum())
        late = int((measured["survival_max_s"] > bound).sum())
        lines.append(
            (
                "No run deleted a record before retention.ms"
                if not early
                else f"{early} run(s) deleted a record before retention.ms"
            )
            + (
                f", and none kept one past retention.ms + segment.ms + the broker's check interval ({check}; "
                f"a deletion is seen up to {watch_s:g} s late)"
                if not late
                else f"; {late} run(s) kept one past retention.ms + segment.ms + the check interval "
                f"({check}; a deletion is seen up to {watch_s:g} s late): the broker looked later than its "
                "interval says"
            )
            + ". Retention deletes whole segments, so a record waits for the newest record of its segment; a "
            "smaller segment.ms deletes closer to retention.ms, at the cost of more segment files."
        )
        overstay = float((measured["survival_max_s"] - retention).max())
        lines.append(
            f"Here a record outlived retention.ms by {overstay:.1f} s at most. The same rule on a stock broker adds up "
            "to segment.ms (7 days by default) and the 5-minute check, so a topic told to keep records for a "
            "minute keeps a quiet partition's records until its active segment closes. MapR Streams states its "
            "time-to-live per stream (7 days by default), one setting for all of the stream's topics."
        )
    return lines


def compaction_sentences(rows: pd.DataFrame, keys: int) -> list[str]:
    """One line per run (by dirty ratio) on stale records, tombstones and the table left."""
    lines = []
    for row in rows.to_dict("records"):
        gone = (
            f"the tombstones were gone {_s(row['tombstones_gone_s'])} after they were written"
            if is_measured(row["tombstones_gone_s"])
            else f"{int(row['tombstones_final'])} tombstone(s) were still visible at the end"
        )
        table = "matched" if row["table_matches"] else "did **not** match"
        lived = (
            f"a stale value stayed readable {_s(row['stale_gone_p50_s'])} (median; at most "
            f"{_s(row['stale_gone_max_s'])}) after the write that superseded it; "
            if is_measured(row.get("stale_gone_p50_s"))
            else ""
        )
        lines.append(
            f"{_settings(row)}: {lived}up to {int(row['stale_peak']):,} stale records; "
            f"{int(row['records_final']):,} records left for {int(row['live_keys']):,} live keys "
            f"({int(row['stale_final']):,} of them stale at the end); "
            f"first compaction {_s(row['first_compacted_s'])} after the first write; {gone}; the latest value "
            f"per key {table} what was written."
        )
    if len(rows) and rows["first_compacted_s"].isna().all():
        lines.append(
            f"No run saw the topic shrink: it ended with {int(rows['records_final'].max()):,} records for {keys} "
            "keys, every one written still there. This broker did not compact in the time watched (Tansu 0.6, "
            "measured, never does: docs/brokers.md), so here a compacted topic grows like any other."
        )
    elif len(rows):
        best, worst = rows.loc[rows["records_final"].idxmin()], rows.loc[rows["records_final"].idxmax()]
        fewest = int(best["records_final"])
        lines.append(
            f"Once compacted the topic held {fewest / keys:.1f}x its {keys} keys at best ({_settings(best)}) and "
            f"{int(worst['records_final']) / keys:.1f}x at worst ({_settings(worst)}), from "
            f"{int(rows['records'].max()):,} records written: "
            + (
                "the best within twice the table, as the seed says a compacted topic stays"
                if fewest <= 2 * keys
                else "even the best well above the table: the cleaner had not yet compacted the newest segments "
                "when the watch ended"
            )
            + ". What is left stale sits in segments the cleaner has not taken yet: the active one, which it never "
            "takes, and any whose dirty share is under the ratio."
        )
    return lines


def _settings(row: Any) -> str:
    """A compaction run's settings as the sentences name them: the dirty ratio, and the lag if set."""
    lag = row.get("min.compaction.lag.ms")
    lagged = f", min.compaction.lag.ms {int(lag) / 1000:g} s" if lag is not None and not pd.isna(lag) else ""
    return f"dirty ratio {row['min.cleanable.dirty.ratio']}{lagged}"


def behind_sentences(rows: pd.DataFrame) -> list[str]:
    """One line per reset policy (and path) on what a group behind retention found."""
    lines: list[str] = []
    said_deleted = False
    for row in rows.to_dict("records"):
        where = f"{row['reset']} ({row['through']})"
        if row["out_of_range_error"]:
            lines.append(
                f"{where}: stopped with an error and read nothing, so the application knows: "
                f"“{row['out_of_range_error'][:160]}…”"
            )
            continue
        deleted = int(row["log_start_at_resume"]) - int(row["committed"])
        if deleted > 0 and not said_deleted:
            said_deleted = True
            lines.append(
                f"Retention deleted {deleted:,} records this group had not read: records are kept by the topic's "
                "policy, as the Kafka chapter puts it, \u201cwithout any regard paid to whether particular consumers "
                "have consumed the message yet\u201d."
            )
        lines.append(
            f"{where}: committed {int(row['committed']):,}, resumed at {int(row['first_read_after']):,}: "
            f"{int(row['missed']):,} records never read ({deleted:,} deleted by retention, "
            f"{int(row['missed']) - deleted:,} skipped though still there), with no error, "
            f"{int(row['duplicates'])} read twice."
        )
    return lines


def replay_sentences(rows: pd.DataFrame) -> list[str]:
    """One line per replay on where it landed and how fast it read against reading live."""
    lines = []
    for row in rows.to_dict("records"):
        landed = "landed on" if row["landed_right"] else _missed(row)
        ratio = (
            row["msg_s"] / row["live_msg_s"] if row["live_msg_s"] and not math.isnan(row["live_msg_s"]) else math.nan
        )
        lines.append(
            f"{row['through']}, to the {row['to']}: {landed} offset {int(row['expected_offset']):,}, replayed "
            f"{int(row['replayed']):,} records at {row['msg_s']:,.0f} records/s ({ratio:.2f}x reading live at "
            f"{row['live_msg_s']:,.0f}/s), {int(row['duplicates'])} twice."
        )
    return lines


def _missed(row: dict[str, Any]) -> str:
    """Where a replay that missed its target landed instead, and the likely cause."""
    landed, expected = row["landed_offset"], int(row["expected_offset"])
    if not is_measured(landed):
        return "read nothing, so did **not** land on"
    early = expected - int(landed)
    if early > 0 and row["to"] == "timestamp":
        return (
            f"landed {early:,} records early, at {int(landed):,}: the broker's offsets-for-times named an earlier "
            "record than the first stamped at or after the moment (Tansu 0.6 does, as if it named the start of the "
            "batch holding it: docs/brokers.md), not"
        )
    return f"landed at {int(landed):,}, not"
