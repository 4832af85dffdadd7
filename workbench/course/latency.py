"""Exercises of notebook 12 (where a record's time goes), each judged with the run's own figures."""

from __future__ import annotations

import pandas as pd

from workbench.bench.waterfall_study import knob_effect
from workbench.course.exercise import (
    Figures,
    NotMeasured,
    PredictedFigure,
    frame_with,
    plain,
    register,
)

__all__ = ["ClearTime", "LingerWait"]


@register
class LingerWait(PredictedFigure):
    notebook, key, number = "12", "linger_wait", 1
    title = "Predict how much linger.ms adds to the hop it moves, at a steady offered rate"
    section = "3 · Which knob moves which hop"
    form = "a number of milliseconds (the change of that hop's mean)"
    measured, wanted, unit, tolerance, floor = "change_ms", "a number of milliseconds", "ms", 0.35, 2.0
    how = (
        "the hop `{hop}`: records arrive spread over the linger window, so the first in a batch "
        "waits all of it and the last almost none"
    )

    def figures(self, frame: pd.DataFrame) -> Figures:
        if frame is None or "linger.ms" not in frame or frame["linger.ms"].nunique() < 2:
            raise NotMeasured("section 3 measured no pair of linger.ms values")
        effect = knob_effect(frame, "linger.ms")
        moved = effect[effect["moved"]].iloc[0]
        values = sorted(frame["linger.ms"].unique())
        return {
            "low": plain(values[0]),
            "high": plain(values[-1]),
            "rate": plain(frame["offered_msg_s"].iloc[0]),
            "hop": str(moved["hop"]),
            "change_ms": float(moved["change_ms"]),
        }

    def question(self, figures: Figures) -> str:
        return (
            f"Records are due every {1_000 / figures['rate']:,.2g} ms ({figures['rate']:,}/s). The native producer's "
            f"`linger.ms` goes from {figures['low']} to **{figures['high']} ms**: a batch leaves once its first record "
            "has waited that long. Before reading section 3's table, by how many **ms** does the mean of the hop it "
            "moves grow? Within 35 % (or 2 ms) of the run passes."
        )


@register
class ClearTime(PredictedFigure):
    notebook, key, number = "12", "clear_time", 2
    title = "Predict how long a burst's backlog takes to clear from the consumer's capacity"
    section = "4 · A burst: lag over time, its peak, and the time to clear it"
    form = "a number of seconds (from the burst's end to the lag back at its baseline)"
    measured, wanted, unit, tolerance, floor = "clear_s", "a number of seconds", "s", 0.35, 1.0
    how = (
        "the backlog the burst leaves (what it offered above the capacity, times its length) drains at the "
        "capacity's spare rate at the normal load; the run adds what the consumer's fetching and committing cost"
    )

    def figures(self, frame: pd.DataFrame) -> Figures:
        frame = frame_with(frame, ["consumer", "clear_s"], "section 4 ran no burst")
        cleared = frame[frame["cleared"].astype(bool)]
        if cleared.empty:
            raise NotMeasured("no consumer's backlog cleared within its deadline")
        row = cleared.iloc[0]
        return {
            "consumer": str(row["consumer"]),
            "capacity": plain(row["capacity_msg_s"]),
            "normal": plain(row["normal_msg_s"]),
            "burst": plain(row["burst_msg_s"]),
            "burst_s": plain(row["burst_s"]),
            "clear_s": float(row["clear_s"]),
            "predicted_s": float(row["predicted_clear_s"]),
        }

    def question(self, figures: Figures) -> str:
        return (
            f"The {figures['consumer']} consumer processes at most **{figures['capacity']:,} records/s**. The producer "
            f"offered {figures['normal']:,}/s, then **{figures['burst']:,}/s for {figures['burst_s']} s**, then "
            f"{figures['normal']:,}/s again. Before reading section 4, how many **seconds** after the burst's end "
            "is its lag back at the baseline? Within 35 % (or 1 s) of the run passes."
        )
