"""Exercises of notebook 14 (retention, compaction, replay), each judged with the run's own figures."""

from __future__ import annotations

from typing import Any

import pandas as pd

from workbench.course.exercise import (
    Figures,
    NotMeasured,
    PredictedFigure,
    frame_with,
    measured_rows,
    plain,
    register,
)

__all__ = ["DeletedBy", "MissedAfterLatest"]


def _row(frame: Any, columns: list[str], missing: str) -> pd.Series:
    """The frame's first row with every column measured (NotMeasured when there is none)."""
    return measured_rows(frame, columns, missing).iloc[0]


@register
class DeletedBy(PredictedFigure):
    notebook, key, number = "14", "deleted_by", 1
    title = "Predict the latest moment a record written now is deleted, from the topic's settings"
    section = "When retention really deletes"
    form = "a number of seconds after the record is written"
    wanted, unit, tolerance, digits = "a number of seconds", "s", 0.1, 2
    how = (
        "a record can be the first of its segment, which closes segment.ms later; the closed segment goes once "
        "its newest record is retention.ms old, at the broker's next look"
    )

    def figures(self, frame: pd.DataFrame) -> Figures:
        row = _row(frame, ["retention.ms", "segment.ms", "survival_max_s"], "no record was deleted in this run")
        check_ms = row.get("check_interval_ms")
        if check_ms is None or pd.isna(check_ms):
            raise NotMeasured("this cluster does not say how often its broker looks for segments past retention")
        return {
            "retention_s": plain(int(row["retention.ms"]) / 1000),
            "segment_s": plain(int(row["segment.ms"]) / 1000),
            "check_s": plain(float(check_ms) / 1000),
            "measured_max_s": float(row["survival_max_s"]),
        }

    def expected(self, figures: Figures) -> float:
        return float(figures["retention_s"] + figures["segment_s"] + figures["check_s"])

    def question(self, figures: Figures) -> str:
        return (
            f"The first run's topic keeps records `retention.ms` = {figures['retention_s'] * 1000:,.0f} ms in segments "
            f"closed every `segment.ms` = {figures['segment_s'] * 1000:,.0f} ms (at the first append after), and this "
            f"broker looks for expired segments every {figures['check_s']:g} s. A record is written while records keep "
            "coming: at the **latest**, how many **seconds** after it was written is it deleted? Within 10 % passes."
        )

    def judge(self, answer: Any, figures: Figures) -> tuple[bool, str]:
        passed, why = super().judge(answer, figures)
        if passed:
            why += f"; the longest any record of the run lived was {figures['measured_max_s']:.2f} s"
        return passed, why


@register
class MissedAfterLatest(PredictedFigure):
    notebook, key, number = "14", "missed_latest", 2
    title = "Count the records a group that resumes with auto.offset.reset=latest never sees"
    section = "A reader behind retention"
    form = "a whole number of records"
    unit, tolerance, digits = "records", 0.0, None  # a count: only the exact number passes
    how = (
        "an offset outside the log is reset to the end, so everything from the committed offset to the end "
        "is skipped: the deleted records and the ones still there"
    )

    def figures(self, frame: pd.DataFrame) -> Figures:
        frame = frame_with(frame, ["reset"], "the reader behind retention did not run")
        row = _row(
            frame[frame["reset"] == "latest"],
            ["committed", "log_start_at_resume", "log_end_at_resume", "first_read_after"],
            "the run with auto.offset.reset=latest read nothing after resuming",
        )
        return {
            "committed": plain(row["committed"]),
            "start": plain(row["log_start_at_resume"]),
            "end": plain(row["log_end_at_resume"]),
            "first_read": plain(row["first_read_after"]),
        }

    def question(self, figures: Figures) -> str:
        return (
            f"The group committed offset {figures['committed']:,} and stopped. When it came back, retention had "
            f"moved the log start to {figures['start']:,}, and the log ended at {figures['end']:,}. It resumes with "
            "`auto.offset.reset=latest`: how many records (offsets) did it **never** read?"
        )

    def expected(self, figures: Figures) -> float:
        return float(figures["end"] - figures["committed"])
