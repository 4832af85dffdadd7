"""What a notebook section runs: each point of a sweep in turn, stopping with one line where
the cluster will not do what the section needs.

On someone else's cluster a section may meet a broker that refuses a topic's log settings
(no compaction, no permission to alter configs) or never acts on them in the time it
watches; the notebook says so in one line and goes on (the README's promise), with the
points that did run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench.errors import ProxyError
from workbench.retention.errors import RetentionError, TopicConfigRefused

__all__ = ["Sweep", "sweep_points"]


@dataclass
class Sweep:
    """The runs of a section's points that completed, by label, and why the rest did not."""

    runs: dict[str, Any] = field(default_factory=dict)
    #: One line saying what the cluster refused, or None when every point ran.
    refused: str | None = None

    def rows(self) -> pd.DataFrame:
        """One contract row per completed run (a run's `.row`, or the run when it is a row)."""
        return pd.DataFrame([getattr(run, "row", run) for run in self.runs.values()])

    def note(self, what: str) -> str:
        """A line for the notebook: empty when every point ran, else what could not and why."""
        if self.refused is None:
            return ""
        done = f" ({len(self.runs)} point(s) ran before it)" if self.runs else ""
        return f"**{what} could not run here{done}:** {self.refused}"


def sweep_points(points: Mapping[str, Callable[[], Any]]) -> Sweep:
    """Run each point (label → a call with no arguments) in order; the first one the cluster
    refuses (`TopicConfigRefused`, a `RetentionError` such as retention never acting, a REST
    proxy's error) ends the sweep with its one-line reason."""
    sweep = Sweep()
    for label, run in points.items():
        try:
            sweep.runs[label] = run()
        except (TopicConfigRefused, RetentionError, ProxyError) as exc:
            sweep.refused = f"{label}: {exc}"
            break
    return sweep
