"""Exercises of notebook 13 (geo-replication), each judged with the run's own figures."""

from __future__ import annotations

import pandas as pd

from workbench.course.exercise import (
    Figures,
    NotMeasured,
    PredictedFigure,
    frame_with,
    plain,
    register,
)

__all__ = ["CutBacklog", "InFlight"]


@register
class InFlight(PredictedFigure):
    notebook, key, number = "13", "in_flight", 1
    title = "Predict how many acknowledged records are on a but not yet on b at any moment"
    section = "Replication lag by offered rate"
    form = "a number of records"
    # 10 %, or a tenth of a record when fewer than one is in flight.
    unit, tolerance, floor = "records", 0.1, 0.1
    how = (
        "records arrive at the offered rate and each stays in flight for the lag, so the records in flight "
        "are the rate times the lag in seconds (Little's law)"
    )

    def figures(self, frame: pd.DataFrame) -> Figures:
        frame = frame_with(frame, ["latency_p50_ms", "rate"], "no replication run was measured on this profile")
        runs = frame.dropna(subset=["latency_p50_ms"])
        if runs.empty:
            raise NotMeasured("no record reached the second cluster in this run")
        fastest = runs.loc[runs["rate"].idxmax()]
        return {"rate": plain(fastest["rate"]), "lag_ms": round(float(fastest["latency_p50_ms"]), 1)}

    def question(self, figures: Figures) -> str:
        return (
            f"At {figures['rate']:,} records/s offered on cluster a, a record reached cluster b a median "
            f"{figures['lag_ms']:,} ms after cluster a had it. At any moment of such a run, about how many records "
            "has a acknowledged that b does not hold yet: the records a failover to b would lose if a vanished "
            "then? Within 10 % passes."
        )

    def expected(self, figures: Figures) -> float:
        # Rounded as the reference answer is, so the answer that fills the cell is judged against itself.
        return round(float(figures["rate"]) * float(figures["lag_ms"]) / 1000, 1)


@register
class CutBacklog(PredictedFigure):
    notebook, key, number = "13", "cut_backlog", 2
    title = "Predict the backlog a cut link leaves for MirrorMaker to copy"
    section = "A cut link"
    form = "a number of records"
    measured, unit, tolerance, floor = "backlog", "records", 0.1, 0.1
    how = (
        "the run counted {backlog:,}: every record offered while the link was down waits, so the "
        "backlog is the rate times the cut, plus the few in flight when it began"
    )

    def figures(self, frame: pd.DataFrame) -> Figures:
        missing = "no link was cut on this profile (the workbench cuts only a link it started)"
        frame = frame_with(frame, ["backlog", "cut_measured_s"], missing)
        longest = frame.loc[frame["cut_measured_s"].idxmax()]
        return {
            "rate": plain(longest["rate"]),
            "cut_s": round(float(longest["cut_measured_s"]), 2),
            "backlog": int(longest["backlog"]),
        }

    def question(self, figures: Figures) -> str:
        return (
            f"Cluster a takes {figures['rate']:,} records/s, and the link to b is down for {figures['cut_s']} s: "
            "MirrorMaker copies nothing meanwhile. When the link comes back, about how many records does a hold "
            "that b does not? Within 10 % of this run's count passes."
        )

    def solve(self, figures: Figures) -> float:
        # From the rate and the cut, as the learner works it out; the run's own count is what judges.
        return round(float(figures["rate"]) * float(figures["cut_s"]))
