"""What a notebook talks to: ask an exercise, fill in its reference answer, check an answer.

A notebook makes one `Exercises` for itself and then, per exercise, three thin cells:
`exercises.ask(key, *measured)`, the learner's `answer = ...` (with `solutions=True`
filled in by `exercises.solution(key, *measured)`), and `exercises.check(key, answer,
*measured)`. The `measured` arguments are the notebook's own results (data frames and
rows), so every check is judged against this run of this learner's stack.

Nothing a learner types can raise here: a wrong type, `None` where a value is wanted or
nonsense text is a failed attempt whose message says the expected form and the section
to re-read; a measurement the profile could not make is a skip with the reason.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from workbench.config import Profile
from workbench.course.exercise import AnswerError, Exercise, NotMeasured, find
from workbench.course.progress import learner_name, record_attempt

__all__ = ["Exercises", "Question", "Verdict"]

log = logging.getLogger("workbench.course")

_MARK = {
    "pass": "✅ **Pass**",
    "fail": "❌ **Not yet**",
    "skipped": "⏭️ **Skipped**",
    "unanswered": "✍️ **No answer yet**",
}


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check, shown in the notebook and recorded as progress."""

    exercise: str
    outcome: str  # "pass", "fail", "skipped" or "unanswered"
    message: str
    hint: str = ""
    attempts: int = 0

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"

    def __str__(self) -> str:
        text = f"{self.exercise}: {self.outcome}: {self.message}"
        return f"{text} Hint: {self.hint}" if self.hint else text

    def _repr_markdown_(self) -> str:
        lines = [f"{_MARK[self.outcome]} · exercise {self.exercise}: {self.message}"]
        if self.hint:
            lines.append(f"\n\n*Hint:* {self.hint}")
        if self.attempts:
            lines.append(f"\n\n<small>attempt {self.attempts}, recorded</small>")
        return "".join(lines)


@dataclass(frozen=True)
class Question:
    """An exercise's question in this run's numbers, displayed as Markdown."""

    exercise: str
    title: str
    text: str
    form: str

    def __str__(self) -> str:
        return f"{self.exercise} · {self.title}\n{self.text}\nAnswer: {self.form}"

    def _repr_markdown_(self) -> str:
        return f"**Exercise {self.exercise} · {self.title}**\n\n{self.text}\n\n*Answer:* {self.form}"


class Exercises:
    """The exercises of one notebook, checked against that notebook's measurements.

    Args:
        notebook: the notebook's number or name (`"02"`, `"02_producer_tuning"`).
        profile: the profile the notebook runs with; progress goes to its results folder.
        learner: the name to record; empty: the profile's `learner` (`$WORKBENCH_LEARNER`), else the login name.
        solutions: whether the notebook runs with reference answers filled in (recorded with each check).

    Usage: `exercises = course.Exercises("02", active.profile, learner=learner, solutions=solutions)`.
    """

    def __init__(self, notebook: str, profile: Profile, *, learner: str = "", solutions: bool = False) -> None:
        self.notebook = str(notebook)[:2]
        self.profile = profile
        self.learner = learner_name(profile, learner)
        self.solutions = bool(solutions)

    def ask(self, key: str, *measured: Any) -> Question:
        """The question of exercise `key`, put in the numbers of this run."""
        exercise = find(self.notebook, key)
        try:
            text = exercise.question(exercise.figures(*measured))
        except NotMeasured as skipped:
            text = f"This run could not measure what the exercise needs: {skipped}. The check will skip it."
        return Question(exercise.label, exercise.title, text, exercise.form)

    def solution(self, key: str, *measured: Any) -> Any:
        """The reference answer of exercise `key`, derived from this run's figures (None when skipped)."""
        exercise = find(self.notebook, key)
        try:
            return exercise.solve(exercise.figures(*measured))
        except NotMeasured:
            return None

    def check(self, key: str, answer: Any, *measured: Any) -> Verdict:
        """Judge `answer` against this run's figures, record the outcome, and say pass or fail with a hint."""
        exercise = find(self.notebook, key)
        if answer is Ellipsis:
            return Verdict(exercise.label, "unanswered", f"replace `...` in the answer cell with {exercise.form}.")
        try:
            figures = exercise.figures(*measured)
        except NotMeasured as skipped:
            return self._record(exercise, answer, {}, Verdict(exercise.label, "skipped", f"{skipped}."))
        try:
            passed, why = exercise.judge(answer, figures)
        except AnswerError as wrong:
            passed, why = False, f"{wrong}. Expected {exercise.form}"
        verdict = Verdict(
            exercise.label,
            "pass" if passed else "fail",
            why + ".",
            "" if passed else f"re-read «{exercise.section}», then try again.",
        )
        return self._record(exercise, answer, figures, verdict)

    def _record(self, exercise: Exercise, answer: Any, figures: dict[str, Any], verdict: Verdict) -> Verdict:
        row = {
            "learner": self.learner,
            "notebook": exercise.notebook,
            "exercise": exercise.label,
            "exercise_key": exercise.key,
            "outcome": verdict.outcome,
            "passed": verdict.passed,
            "answer": repr(answer)[:200],
            "measured": json.dumps(figures, default=str, sort_keys=True),
            "with_solutions": self.solutions,
        }
        try:
            attempts = record_attempt(self.profile, row)
        except (OSError, ValueError) as exc:  # a full disk must not cost the learner the verdict
            log.warning("progress of exercise %s not recorded: %s", exercise.label, exc)
            return verdict
        return Verdict(verdict.exercise, verdict.outcome, verdict.message, verdict.hint, attempts)
