"""Progress a teacher can see: every check's outcome as a row of the `course_progress` results table.

A row says who (`learner`), which exercise, the outcome (`pass`, `fail`, `skipped`), the
how-many-th attempt it was, the answer, the measured figures it was judged with (JSON),
and whether the notebook ran with `solutions=True`, so a teacher can tell a reference
answer from a learner's own. The table lives with the other results
(`<results_dir>/course_progress.parquet`), carries the same run metadata, and stays on
the learner's machine: a teacher collects the files and passes them to `workbench course`.
"""

from __future__ import annotations

import getpass
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workbench import results
from workbench.config import Profile, load_profile
from workbench.course.exercise import catalogue
from workbench.errors import ConfigError

__all__ = ["EXPERIMENT", "learner_name", "load_progress", "progress_table", "record_attempt"]

EXPERIMENT = "course_progress"


def learner_name(profile: Profile, given: str = "") -> str:
    """Who is learning: the notebook's `learner` parameter, else the profile's (`WORKBENCH_LEARNER`), else the login."""
    if given.strip():
        return given.strip()
    if profile.learner.strip():
        return profile.learner.strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in a bare container
        return "anonymous"


def record_attempt(profile: Profile, row: Mapping[str, Any]) -> int:
    """Append one check's outcome; returns which attempt of this learner at this exercise it was."""
    previous = results.load(EXPERIMENT, profile=profile)
    attempts = 1
    if not previous.empty:
        same = (previous["learner"] == row["learner"]) & (previous["exercise"] == row["exercise"])
        attempts += int(same.sum())
    results.record(EXPERIMENT, {**row, "attempts": attempts}, profile=profile)
    return attempts


def load_progress(profile: Profile | None = None, files: Iterable[Path] = ()) -> pd.DataFrame:
    """This profile's progress rows and those of progress files collected from learners' machines.

    Raises:
        ConfigError: a named file is missing or not a progress table.
    """
    frames = [results.load(EXPERIMENT, profile=profile or load_profile())]
    for file in files:
        try:
            frame = pd.read_parquet(file)
        except (OSError, ValueError) as exc:
            raise ConfigError(file, None, f"cannot read it as a progress table: {exc}") from None
        if not {"learner", "exercise", "outcome"} <= set(frame.columns):
            raise ConfigError(file, None, "not a course progress table (no learner/exercise/outcome columns)")
        frames.append(frame)
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True).drop_duplicates() if frames else pd.DataFrame()


def _cell(attempts: pd.DataFrame) -> str:
    """What one learner did at one exercise: the best outcome so far and the attempts it took."""
    outcomes = list(attempts["outcome"])
    tries = len(outcomes)
    if "pass" in outcomes:
        own = not attempts.loc[attempts["outcome"] == "pass", "with_solutions"].fillna(False).astype(bool).all()
        return f"pass ({outcomes.index('pass') + 1}/{tries})" + ("" if own else " [solution]")
    if "fail" in outcomes:
        return f"fail ({tries})"
    return "skipped"


def progress_table(frame: pd.DataFrame, learner: str | None = None) -> pd.DataFrame:
    """Per exercise (rows, course order) and learner (columns): what passed, after how many attempts.

    A cell reads `pass (2/3)` (passed at the second of three attempts), `fail (3)`,
    `skipped` (the learner's profile could not measure it) or is empty (not tried).
    `[solution]` marks a pass that only a `solutions=True` run produced.
    """
    exercises = catalogue()
    index = pd.MultiIndex.from_tuples([(e.label, e.title) for e in exercises], names=["exercise", "title"])
    if frame.empty:
        return pd.DataFrame(index=index)
    if learner is not None:
        frame = frame[frame["learner"] == learner]
    frame = frame.sort_values("recorded_at") if "recorded_at" in frame else frame
    if "with_solutions" not in frame:
        frame = frame.assign(with_solutions=False)
    table = pd.DataFrame(index=index, columns=sorted(frame["learner"].unique()), data="")
    for (name, label), attempts in frame.groupby(["learner", "exercise"]):
        titled = [key for key in index if key[0] == label]
        if titled:
            table.loc[titled[0], name] = _cell(attempts)
    return table
