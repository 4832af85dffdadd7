"""What a replication run says, in sentences computed from its rows."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.config import Profile
from workbench.numbers import format_number
from workbench.replication.preflight import flow_unavailable
from workbench.stack.mirror_plan import NOTEBOOK_INTERVALS

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = [
    "active_active_sentence",
    "copies_sentence",
    "cut_link_sentence",
    "disaster_sentence",
    "failover_sentence",
    "lag_sentence",
    "offset_shift_sentence",
    "offsets_claim_sentence",
    "pickup_sentence",
    "refresh_seconds",
    "setup_sentence",
    "whole_path_sentence",
    "worker_kill_sentence",
]


def lag_sentence(rows: pd.DataFrame) -> str:
    """The median p50 and p99 lag at each offered rate, and how the p50 moved with the rate."""
    by_rate = rows.groupby("rate")[["latency_p50_ms", "latency_p99_ms"]].median().sort_index()
    if by_rate.empty:
        return "No replication run was measured."
    parts = [
        f"{p50:.0f} ms (p99 {p99:.0f} ms) at {format_number(rate)} records/s" for rate, (p50, p99) in by_rate.iterrows()
    ]
    sentence = "A record reached b after it reached a in a median " + "; ".join(parts) + "."
    if len(by_rate) > 1:
        low, high = round(by_rate["latency_p50_ms"].iloc[0]), round(by_rate["latency_p50_ms"].iloc[-1])
        moved = f"went from {low} to {high} ms" if low != high else f"stayed at {low} ms"
        sentence += (
            f" From {format_number(by_rate.index[0])} to {format_number(by_rate.index[-1])} records/s the median "
            f"{moved}."
        )
    return sentence


def copies_sentence(rows: pd.DataFrame) -> str:
    """Whether every offered record reached b once, and at which offset."""
    offered, arrived = int(rows["records"].sum()), int(rows["replicated"].sum())
    missing, duplicates = int(rows["missing"].sum()), int(rows["duplicates"].sum())
    shift = int(rows["offset_shift_max"].max())
    whole = (
        f"All {format_number(offered)} records offered reached b"
        if missing == 0
        else f"{format_number(missing)} of {format_number(offered)} records offered never reached b"
    )
    once = "each once" if duplicates == 0 else f"{format_number(duplicates)} of them more than once"
    where = (
        "each at the offset it had on a"
        if shift == 0
        else f"at offsets up to {format_number(shift)} away from those they had on a"
    )
    return f"{whole}, {once}, {where} ({format_number(arrived)} copies counted on b)."


def pickup_sentence(rows: pd.DataFrame, refresh_s: float) -> str:
    """How long MirrorMaker took to start copying a new topic, against its refresh interval."""
    pickup = rows["pickup_s"].dropna()
    if pickup.empty:
        return ""
    every = f"every {refresh_s:g} s" if math.isfinite(refresh_s) else "at the interval its own settings give"
    return (
        f"MirrorMaker started copying each new topic {pickup.min():.1f}-{pickup.max():.1f} s after its first "
        f"record: it looks for new topics {every} (refresh.topics.interval.seconds)."
    )


def offsets_claim_sentence(rows: pd.DataFrame) -> str:
    """MapR's "offsets are preserved in all replicated copies", against the offsets measured."""
    shift = int(rows["offset_shift_max"].max())
    if shift == 0:
        return (
            "Here every copy kept its offset, because each topic was copied from its first record and held "
            "nothing MirrorMaker skips; that is a property of these runs, not a promise: where the source "
            "lost records to retention before the flow began, or held transaction markers, the copies' offsets "
            "differ, and a consumer moving to b needs the translated offsets of MirrorMaker's checkpoints."
        )
    return (
        f"Copies sat up to {format_number(shift)} offsets away from their originals: MirrorMaker does not "
        "preserve offsets, as MapR claims its replication does, and a consumer moving to b needs the "
        "translated offsets of its checkpoints."
    )


def offset_shift_sentence(row: Mapping[str, Any]) -> str:
    """Where copies landed after gaps on a, and what the checkpoint made of a group's position."""
    head = (
        "the deleted head had been copied before its deletion"
        if row["deleted_copied"]
        else f"the {format_number(row['deleted'])} records deleted before the copy left no trace on b"
    )
    aborted = (
        f"MirrorMaker copied the {format_number(row['aborted'])} records of the aborted transaction, which on b "
        "are plain records every reader sees (its consumer reads uncommitted records unless "
        "`consumer.isolation.level=read_committed` is set for the flow)"
        if row["aborted_copied"]
        else f"the {format_number(row['aborted'])} records of the aborted transaction were not copied"
    )
    return (
        f"After gaps on a, {head}, {aborted}, and each transaction marker took an offset on a and none on b: "
        f"the last copy sat {format_number(row['shift_max'])} offsets below its original. A group at offset "
        f"{format_number(row['committed_on_a'])} on a was checkpointed at {format_number(row['checkpoint_on_b'])} "
        f"on b, where its next unread record sat at {format_number(row['true_position_on_b'])}: it reads "
        f"{format_number(row['reread'])} records again and skips {format_number(row['skipped'])}. Offsets are not "
        "preserved, as MapR says its replicas' are: they are translated, and conservatively."
    )


def cut_link_sentence(row: Mapping[str, Any]) -> str:
    """What a cut link cost: the backlog, MirrorMaker's first copy after it, and the time to be current again."""
    if not math.isfinite(row["catch_up_s"]):
        return (
            f"After a {row['cut_measured_s']:.1f} s cut, b held a backlog of {format_number(row['backlog'])} records "
            "and the flow never got back to its lag before the cut while the load lasted."
        )
    return (
        f"A {row['cut_measured_s']:.1f} s cut at {format_number(row['rate'])} records/s left "
        f"{format_number(row['backlog'])} records on a and not on b; MirrorMaker copied again "
        f"{row['first_copy_s']:.1f} s after the link came back and was current {row['catch_up_s']:.1f} s after it, "
        f"copying {format_number(round(row['catch_up_msg_s']))} records/s meanwhile, "
        f"{row['catch_up_msg_s'] / row['rate']:.1f}x the offered rate; "
        f"{format_number(row['missing'])} records missing, {format_number(row['duplicates'])} copied twice."
    )


def failover_sentence(row: Mapping[str, Any]) -> str:
    """What a group that moved from a to b skipped and read again, against `offset.lag.max`."""
    skipped, reread, worst = int(row["skipped"]), int(row["reread"]), int(row["reread_max_partition"])
    lag_max = int(row["offset_lag_max"])
    said = (
        f"A group read {format_number(row['read_on_a'])} records on a and committed; b held its translated "
        f"offsets {row['sync_s']:.1f} s later. Moved to b with its group id alone, it "
        + ("skipped no record" if skipped == 0 else f"skipped {format_number(skipped)} records")
        + f" and read {format_number(reread)} again (at most {format_number(worst)} in one partition"
    )
    within = "within" if worst <= lag_max else "beyond"
    return (
        said
        + f", {within} offset.lag.max = {format_number(lag_max)}, the gap MirrorMaker lets its offset syncs leave)."
    )


def worker_kill_sentence(row: Mapping[str, Any]) -> str:
    """What a killed worker cost: how long b received nothing, when it was current again, what came twice."""
    if not math.isfinite(row["copying_again_s"]):
        return (
            f"After {row['killed']} was killed, b received nothing more while the load lasted: its task did not "
            f"move to another worker within {row['after_s']:.0f} s."
        )
    waited = row["session_timeout_s"] + row["rebalance_delay_s"]
    expected = (
        f" (the workers are set to wait the {row['session_timeout_s']:.0f} s session timeout plus a "
        f"{row['rebalance_delay_s']:.0f} s rebalance delay, {waited:.0f} s)"
        if math.isfinite(waited)
        else ""
    )
    current = (
        f" and b was current again {row['copying_again_s'] + row['catch_up_s']:.1f} s after the kill"
        if math.isfinite(row["catch_up_s"])
        else " but b was not current again before the load ended"
    )
    return (
        f"Killing {row['killed']}, the worker running the flow's task, at {format_number(row['rate'])} records/s "
        f"left b without a new record for {row['silence_s']:.1f} s; the task copied again "
        f"{row['copying_again_s']:.1f} s after the kill{expected}, "
        + ("on the other worker" if row["task_moved"] else "on the same worker")
        + f"{current}. {format_number(row['missing'])} records were lost and {format_number(row['duplicates'])} "
        + (
            "copied twice: with exactly-once delivery (KIP-618) on, the task resumed from the last "
            "transaction it had committed on b."
            if row.get("exactly_once")
            else "copied twice: the task restarted from the source offsets its worker had last committed."
        )
    )


def disaster_sentence(row: Mapping[str, Any]) -> str:
    """What losing cluster a cost: acknowledged records b lacked, set against the estimate an
    operator makes from the lag (rate times mean lag), and whether a's restart returned them."""
    lost, expected = int(row["rpo_records"]), row["in_flight_expected"]
    said = (
        f"Killing every node of cluster a at {format_number(row['rate'])} records/s, acks=all, left b without "
        f"{format_number(lost)} of the {format_number(row['acked'])} records a had acknowledged"
    )
    said += f" (the last {row['rpo_s'] * 1000:.0f} ms of acknowledged writes)" if lost else ""
    if math.isfinite(expected):
        compared = "fewer than" if lost < expected else "no fewer than"
        said += (
            f": {compared} the {format_number(round(expected))} that the rate times the mean lag just before "
            f"({row['lag_before_mean_ms']:.0f} ms, p99 {row['lag_before_p99_ms']:.0f} ms) would predict"
        )
        if lost < expected:
            said += (
                ", because a record is at risk only until MirrorMaker has fetched it: its workers run beside b, "
                "and what they had fetched still reached b after a died"
            )
    said += "."
    if row["lost_for_good"] == 0:
        said += (
            f" Here a's disk survived: restarted on it ({row['restart_s']:.0f} s), a still held every acknowledged "
            "record and MirrorMaker copied the rest. A data centre that burns gives no such second chance."
        )
    else:
        said += f" Even after a's restart, b lacks {format_number(row['lost_for_good'])} acknowledged records."
    return said


def active_active_sentence(row: Mapping[str, Any]) -> str:
    """What both ways at once did: every record on each cluster once, loops counted, and
    what a consumer subscribed by pattern read; set against MapR's loops "without problems"."""
    per_side, twice = row["per_side"], row["duplicates"] + row["pattern_twice"]
    copied = "every one" if row["missing"] == 0 else f"all but {format_number(row['missing'])}"
    said = (
        f"Both ways at once, {format_number(per_side)} records offered on each cluster: {copied} reached the other "
        f"cluster (a->b p50 {row['a_to_b_p50_ms']:.0f} ms, b->a {row['b_to_a_p50_ms']:.0f} ms), "
        f"{format_number(twice)} twice. "
    )
    if row["loop_topics"] == 0 and row["counts_stable"]:
        said += (
            f"After {row['waited_s']:.0f} s more, cluster a held `{row['topics_on_a'].replace(',', '`, `')}` and b "
            f"`{row['topics_on_b'].replace(',', '`, `')}`, their counts unchanged: no loop, because each copy is "
            "named after the cluster it came from and MirrorMaker never copies a topic to the cluster its name says "
            "it came from. "
        )
    else:
        said += (
            f"{format_number(row['loop_topics'])} topics were copies of copies, or counts still moved after "
            f"{row['waited_s']:.0f} s: a loop, which MirrorMaker's default policy should prevent (check "
            "`replication.policy.class`). "
        )
    return said + (
        f"One group subscribed by pattern read {format_number(row['pattern_read_a'])} records on a and "
        f'{format_number(row["pattern_read_b"])} on b, local and remote. MapR\'s loops "without problems" hold '
        "here too; the price is that each cluster names the other's records differently, so a reader subscribes "
        "by pattern or to both names."
    )


def whole_path_sentence(row: Mapping[str, Any]) -> str:
    """What the whole path did: records posted on a, copied, read on b by proxy and by Spark."""
    said = (
        f"Posted to a's REST proxy {format_number(row['batch'])} a call, {format_number(row['acked'])} records were "
        f"acknowledged ({format_number(round(row['posted_msg_s']))} records/s); MirrorMaker appended each on b "
        f"a median {row['latency_p50_ms']:.0f} ms after a had (p99 {row['latency_p99_ms']:.0f} ms)."
    )
    clean = True
    for path, reader in (("proxy_b", "b's REST proxy"), ("spark_b", "Spark's batch read on b")):
        if not math.isfinite(float(row[f"{path}_read"])):
            said += f" {reader.capitalize()} was left out of this run."
            continue
        missing, twice, in_order = row[f"{path}_missing"], row[f"{path}_twice"], row[f"{path}_in_order"]
        clean = clean and missing == 0 and twice == 0 and bool(in_order)
        said += (
            f" {reader[0].upper() + reader[1:]} found {format_number(row[f'{path}_read'])}: "
            f"{format_number(missing)} missing, {format_number(twice)} twice, "
            + ("each partition in the order posted." if in_order else "some partition out of the order posted.")
        )
    if clean:
        said += (
            " Across two clusters, two REST proxies and Spark, nothing acknowledged was lost and nothing read twice."
        )
    return said


def refresh_seconds(profile: Profile) -> float:
    """How often MirrorMaker looks for new topics: the profile's setting, the embedded stack's
    (`NOTEBOOK_INTERVALS`), or NaN on a cluster whose MirrorMaker is not the workbench's."""
    key = "refresh.topics.interval.seconds"
    if key in profile.replication.properties:
        return float(profile.replication.properties[key])
    return float(NOTEBOOK_INTERVALS[key]) if profile.embedded else math.nan


def setup_sentence(geo: Stack | None, active: Stack) -> str:
    """Which clusters and flow this run measures, or in one line why it measures nothing."""
    if geo is None and active.profile.replication.enabled and (reason := flow_unavailable(active)):
        return f"Profile `{active.profile.name}` names a second cluster, but no run can measure its flow: {reason}."
    if geo is None:
        return (
            f"Profile `{active.profile.name}` names no second cluster (`replication.enabled` is false) and is not "
            "this machine's to start one beside, so there is no replication to measure here: give the profile "
            "`replication.target_bootstrap` (your second cluster, with MirrorMaker running), or run this notebook "
            "with `profile: local-geo`."
        )
    settings = geo.profile.replication
    route = f"cluster {settings.source} ({geo.bootstrap_servers}) → cluster {settings.target} "
    route += f"({geo.peer_bootstrap_servers})"
    if not geo.profile.embedded:
        return (
            f"Measuring the MirrorMaker you run, {route}. It is yours, so this notebook does not stop a worker "
            "or cut the link between the clusters; it measures lag, copies and offsets."
        )
    workers = [r for r in geo.services.values() if r.kind == "mirror-maker"]
    release = str(workers[0].extra.get("version", "?")) if workers else "?"
    said = f"MirrorMaker 2 ({release}) copies {route} in {len(workers)} worker processes, in dedicated mode."
    if geo is not active:
        said += (
            f" Profile `{active.profile.name}` has one cluster, so these two are profile `{geo.profile.name}`'s, "
            + ("started for this notebook and stopped at its end." if geo.started_here else "already running.")
        )
    return said
