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

Modules:

    exercise         what an exercise is: a question in the run's numbers, an answer, a check
    tutor            what a notebook talks to: ask, fill in the reference answer, check
    progress         every check's outcome as a row a teacher can see
    tuning           the exercises of notebooks 00-05
    topics           the exercises of notebooks 06-08 and 11
    ingestion        the exercises of notebooks 09-10
    latency          the exercises of notebook 12
    replication      the exercises of notebook 13
    retention        the exercises of notebook 14
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
