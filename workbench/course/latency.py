"""Exercises of notebook 12 (where a record's time goes), each judged with the run's own figures."""

from __future__ import annotations

from typing import Any

import pandas as pd

from workbench.bench.waterfall_study import knob_effect
from workbench.course.exercise import Exercise, Figures, NotMeasured, as_number, plain, prediction, register

__all__ = ["LingerWait"]


@register
class LingerWait(Exercise):
    notebook, key, number = "12", "linger_wait", 1
    title = "Predict how much linger.ms adds to the hop it moves, at a steady offered rate"
    section = "3 · Which knob moves which hop"
    form = "a number of milliseconds (the change of that hop's mean)"

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

    def solve(self, figures: Figures) -> float:
        return round(float(figures["change_ms"]), 1)

    def judge(self, answer: Any, figures: Figures) -> tuple[bool, str]:
        ms, expected = as_number(answer, "a number of milliseconds"), float(figures["change_ms"])
        passed = abs(ms - expected) <= max(0.35 * abs(expected), 2.0)
        how = (
            f"the hop `{figures['hop']}`: records arrive spread over the linger window, so the first in a batch "
            "waits all of it and the last almost none"
        )
        return prediction(ms, expected, passed, "ms", how)
