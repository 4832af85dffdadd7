"""What the course's checks recorded in a report run: one outcome per exercise."""

from __future__ import annotations

from collections.abc import Iterable

from workbench import course, results
from workbench.config import Profile
from workbench.report import Report


def exercise_outcomes(report: Report, profile: Profile) -> dict[str, str]:
    """Exercise label → the outcome its check recorded in this report run."""
    rows = results.load(course.EXPERIMENT, run_id=report.run_id, profile=profile)
    return dict(zip(rows["exercise"], rows["outcome"], strict=True)) if len(rows) else {}


def exercise_labels(notebooks: Iterable[str]) -> set[str]:
    """The labels (`02.1`) of every exercise of these notebooks."""
    numbers = {name[:2] for name in notebooks}
    return {e.label for e in course.catalogue() if e.notebook in numbers}


def assert_every_exercise_passes(report: Report, profile: Profile, notebooks: Iterable[str]) -> None:
    """With `solutions=True` each exercise was checked once, with its reference answer, and passed."""
    notebooks = list(notebooks)
    outcomes = exercise_outcomes(report, profile)
    assert outcomes == dict.fromkeys(sorted(exercise_labels(notebooks)), "pass"), outcomes
    rows = results.load(course.EXPERIMENT, run_id=report.run_id, profile=profile)
    assert rows["with_solutions"].all() and (rows["attempts"] >= 1).all()
