"""The course: exercises in every notebook, checked against the learner's own measurements.

Each notebook ends its conclusions with one to three exercises. An exercise is stated in
the numbers this run measured, the learner answers in a marked cell, and a check (a
function here, not code in the notebook) says pass, or fail with a hint naming the
section to re-read. With the notebook parameter `solutions=True` every answer cell is
filled with the reference answer derived from the same measurements, which is how the
tests prove every exercise solvable. Every check is recorded as progress
(`course_progress` results table) that `workbench course` shows per learner.

    from workbench import course
    exercises = course.Exercises("02", active.profile, learner=learner, solutions=solutions)
    exercises.ask("double_default", batching)
    exercises.check("double_default", {"linger.ms": 5, "batch.size": 1_000_000}, batching)
"""

from workbench.course.exercise import AnswerError, Exercise, NotMeasured, catalogue, find
from workbench.course.progress import EXPERIMENT, learner_name, load_progress, progress_table
from workbench.course.tutor import Exercises, Verdict

__all__ = [
    "AnswerError",
    "EXPERIMENT",
    "Exercise",
    "Exercises",
    "NotMeasured",
    "Verdict",
    "catalogue",
    "find",
    "learner_name",
    "load_progress",
    "progress_table",
]
