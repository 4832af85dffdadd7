"""What an exercise is: a question put in the run's own numbers, a reference answer and a check.

An exercise never compares with a number fixed in advance. It reads the figures it
needs from what the notebook just measured (`figures`), states the question with them
(`question`), derives the reference answer from them (`solve`) and judges an answer
against them (`judge`). Measurements a profile could not make raise `NotMeasured`, so
the exercise is skipped with a reason instead of failing; an answer that is not even
of the right kind raises `AnswerError`, which the check turns into a failed attempt
with a hint, never a traceback.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from workbench.errors import WorkbenchError

__all__ = [
    "AnswerError",
    "Exercise",
    "Figures",
    "NearTheBest",
    "NotMeasured",
    "PredictedFigure",
    "as_choice",
    "as_number",
    "as_point",
    "catalogue",
    "find",
    "frame_with",
    "measured_point",
    "measured_rows",
    "medians",
    "number_text",
    "plain",
    "point_for",
    "prediction",
    "register",
    "settings_text",
    "within",
]

Figures = dict[str, Any]

_REGISTRY: dict[tuple[str, str], Exercise] = {}


class AnswerError(WorkbenchError):
    """The answer is not of the form the exercise asks for (the message says which form)."""


class NotMeasured(WorkbenchError):
    """The run did not measure what the exercise needs, e.g. a profile without a REST proxy."""


class Exercise:
    """One exercise of one notebook; subclasses fill in the class attributes and four methods.

    Attributes:
        notebook: the notebook's number, `"02"`.
        key: the exercise's name within it, `"double_default"`.
        number: its place in the notebook, so `"02.1"` names it in tables.
        title: one line a progress table can show.
        section: the section of the notebook to re-read when the answer is wrong.
        form: the answer's expected form, shown with the question and in every error.
    """

    notebook: ClassVar[str]
    key: ClassVar[str]
    number: ClassVar[int]
    title: ClassVar[str]
    section: ClassVar[str]
    form: ClassVar[str]

    @property
    def label(self) -> str:
        """`"02.1"`: notebook and place, the name a teacher sees."""
        return f"{self.notebook}.{self.number}"

    #: The measured figures the exercise uses, read from the notebook's results (a method
    #: whose parameters are the notebook's variables); raises `NotMeasured` when the run
    #: could not make the measurement.
    figures: Callable[..., Figures]

    def question(self, figures: Figures) -> str:
        """The question in this run's numbers (Markdown), without its answer."""
        raise NotImplementedError

    def solve(self, figures: Figures) -> Any:
        """The reference answer derived from the figures."""
        raise NotImplementedError

    def judge(self, answer: Any, figures: Figures) -> tuple[bool, str]:
        """Whether the answer is right, and why, in the run's numbers.

        Raises:
            AnswerError: the answer is not of the expected form.
        """
        raise NotImplementedError


class NearTheBest(Exercise):
    """Choose settings among a sweep's measured points whose median msg/s reaches `goal` of the
    best point's: the shape of every "within N % of the fastest" exercise. A subclass names
    the settings (`keys`), the goal, who reads and which rate is the best (for the question),
    and what a sweep that measured nothing means; `remark` may add a word on a point.
    """

    keys: ClassVar[tuple[str, ...]]
    goal: ClassVar[float]
    #: How the judgement names the best point: "the fastest", "the best proxy point".
    best_name: ClassVar[str]
    #: Who reaches the goal, as the question says it: "one native consumer reading".
    reader: ClassVar[str]
    #: The rate the goal is a share of, as the question says it: "the fastest median rate of section 1".
    best_rate: ClassVar[str]
    #: Why the exercise is skipped when the sweep measured no point.
    missing: ClassVar[str]

    def figures(self, sweep: Any) -> Figures:
        """The sweep's points (settings and median msg/s) and the best median rate."""
        points = medians(sweep, self.keys, ["msg_s"], self.missing)
        return {"best_msg_s": max(p["msg_s"] for p in points), "points": points}

    def question(self, figures: Figures) -> str:
        settings = " and ".join(f"`{k}`" for k in self.keys)
        return (
            f"Goal: {self.reader} at least **{self.goal * 100:.0f} %** of {self.best_rate} "
            f"(≥ {self.goal * figures['best_msg_s']:,.0f} msg/s). Choose {settings} among "
            f"{settings_text(figures['points'], self.keys)}."
        )

    def solve(self, figures: Figures) -> dict[str, Any]:
        best = max(figures["points"], key=lambda p: p["msg_s"])
        return {k: best[k] for k in self.keys}

    def judge(self, answer: Any, figures: Figures) -> tuple[bool, str]:
        point, unmeasured = measured_point(answer, figures["points"], self.keys)
        if point is None:
            return False, unmeasured
        share = point["msg_s"] / figures["best_msg_s"]
        said = f"{point['msg_s']:,.0f} msg/s, {share:.0%} of {self.best_name}{self.remark(point, figures)}"
        return share >= self.goal, said

    def remark(self, point: Mapping[str, Any], figures: Figures) -> str:
        """What the judgement adds about the chosen point (nothing by default)."""
        return ""


class PredictedFigure(Exercise):
    """Predict one figure of the run, passing within a relative `tolerance` (or an absolute
    `floor`): the shape of every "predict …, within N % passes" exercise. A subclass says which
    figure is expected (`measured`, or its own `expected`), in what `unit`, and `how` it follows
    from the run; the verdict is `prediction`'s, so a miss never gives the figure away.
    """

    #: The figure the answer is compared with, when `expected` is not overridden.
    measured: ClassVar[str] = ""
    unit: ClassVar[str]
    tolerance: ClassVar[float]
    floor: ClassVar[float] = 0.0
    #: The reference answer's decimals (None: a whole number).
    digits: ClassVar[int | None] = 1
    #: What a wrong kind of answer is told it should be, when that is shorter than `form`.
    wanted: ClassVar[str] = ""
    #: How the figure follows from the run, said with every verdict; `{name}` fields are the figures'.
    how: ClassVar[str]

    def expected(self, figures: Figures) -> float:
        """The figure a right answer is near."""
        return float(figures[self.measured])

    def reasoning(self, figures: Figures) -> str:
        """`how`, in this run's figures."""
        return self.how.format(**figures)

    def solve(self, figures: Figures) -> float:
        return round(self.expected(figures), self.digits)

    def judge(self, answer: Any, figures: Figures) -> tuple[bool, str]:
        value, expected = as_number(answer, self.wanted or self.form), self.expected(figures)
        passed = within(value, expected, self.tolerance, self.floor)
        return prediction(value, expected, passed, self.unit, self.reasoning(figures))


def register(cls: type[Exercise]) -> type[Exercise]:
    """Class decorator: add an exercise to the course."""
    exercise = cls()
    _REGISTRY[(exercise.notebook, exercise.key)] = exercise
    return cls


def _load_definitions() -> None:
    from workbench.course import ingestion, latency, replication, retention, topics, tuning  # noqa: F401  (they register on import)


def find(notebook: str, key: str) -> Exercise:
    """The exercise `key` of notebook `notebook` (`"02"` or `"02_producer_tuning"`).

    Raises:
        AnswerError: no such exercise; the message lists the notebook's exercises.
    """
    _load_definitions()
    number = str(notebook)[:2]
    exercise = _REGISTRY.get((number, key))
    if exercise is None:
        known = sorted(k for n, k in _REGISTRY if n == number)
        raise AnswerError(f"notebook {number} has no exercise {key!r}; its exercises: {known}")
    return exercise


def catalogue() -> list[Exercise]:
    """Every exercise of the course, in notebook and exercise order."""
    _load_definitions()
    return sorted(_REGISTRY.values(), key=lambda e: (e.notebook, e.number))


def as_number(answer: Any, what: str = "a number") -> float:
    """A finite number from an int, a float or numeric text ("1,200" included).

    Raises:
        AnswerError: anything else, `True`/`False` and NaN included.
    """
    value: Any = answer
    if isinstance(answer, str):
        try:
            value = float(answer.replace(",", "").replace("_", "").strip())
        except ValueError:
            raise AnswerError(f"expected {what}, got the text {answer!r}") from None
    if isinstance(value, bool) or (not isinstance(value, int | float) and not hasattr(value, "__float__")):
        raise AnswerError(f"expected {what}, got {type(answer).__name__} {answer!r}")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise AnswerError(f"expected {what}, got {answer!r}") from None
    if not math.isfinite(number):
        raise AnswerError(f"expected {what}, got {answer!r}")
    return number


def as_point(answer: Any, names: Sequence[str]) -> dict[str, float]:
    """A settings mapping with exactly `names` as keys and numbers as values.

    Raises:
        AnswerError: not a mapping, missing or unknown keys, or a value that is no number.
    """
    form = "{" + ", ".join(f'"{n}": …' for n in names) + "}"
    if not isinstance(answer, Mapping):
        raise AnswerError(f"expected a dictionary {form}, got {type(answer).__name__} {answer!r}")
    missing = [n for n in names if n not in answer]
    unknown = [str(k) for k in answer if k not in names]
    if missing or unknown:
        raise AnswerError(f"expected the keys {list(names)}; missing {missing}, unknown {unknown}")
    return {n: as_number(answer[n], f"a number for {n!r}") for n in names}


def as_choice(answer: Any, options: Iterable[Any], what: str) -> Any:
    """One of `options` (text compared without case or surrounding blanks, numbers by value).

    Raises:
        AnswerError: not one of them; the message lists them.
    """
    options = list(options)
    if isinstance(answer, str) and any(isinstance(o, str) for o in options):
        matches = [o for o in options if isinstance(o, str) and o.lower() == answer.strip().lower()]
        if matches:
            return matches[0]
    elif answer is not None and not isinstance(answer, bool):
        try:
            number = as_number(answer)
        except AnswerError:
            number = None
        matches = [o for o in options if not isinstance(o, str) and number is not None and float(o) == number]
        if matches:
            return matches[0]
    raise AnswerError(f"expected {what}, one of {options}; got {answer!r}")


def number_text(value: float) -> str:
    """A figure as a learner reads it: `4.05`, `56,735`."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}"


def prediction(value: float, expected: float, passed: bool, unit: str, how: str) -> tuple[bool, str]:
    """A predicted figure's verdict: a pass shows the run's figure, a miss only the direction and the method.

    A miss that printed the right number would turn the second attempt into copying it.
    """
    said = f"{number_text(value)} {unit}"
    if passed:
        return True, f"{said}; this run gives {number_text(expected)} {unit} ({how})"
    return False, f"{said} is {'too high' if value > expected else 'too low'}: {how}"


def within(value: float, expected: float, tolerance: float, floor: float = 0.0) -> bool:
    """Whether `value` is within a relative `tolerance` of `expected` (0.1: ±10 %), or within
    `floor` of it in absolute terms when that is wider (a small figure's noise is absolute)."""
    return abs(value - expected) <= max(tolerance * abs(expected), floor)


def plain(value: Any) -> Any:
    """A numpy or pandas scalar as the Python value it stands for (whole floats as ints)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def frame_with(frame: Any, columns: Sequence[str], missing: str) -> Any:
    """The frame itself, when it is a data frame that has every one of `columns`.

    Raises:
        NotMeasured: with `missing` as the reason, when it is not (None included).
    """
    if frame is None or not hasattr(frame, "columns") or any(c not in frame for c in columns):
        raise NotMeasured(missing)
    return frame


def measured_rows(frame: Any, columns: Sequence[str], missing: str) -> Any:
    """The frame's rows that have every one of `columns` measured.

    Raises:
        NotMeasured: with `missing` as the reason, when there is no such row.
    """
    rows = frame_with(frame, columns, missing).dropna(subset=list(columns))
    if rows.empty:
        raise NotMeasured(missing)
    return rows


def medians(frame: Any, keys: Sequence[str], metrics: Sequence[str], missing: str) -> list[dict[str, Any]]:
    """One dict per measured point of a sweep: its settings and the medians of `metrics` over repeats.

    Raises:
        NotMeasured: with `missing` as the reason, when the frame holds no such points.
    """
    columns = [*keys, *metrics]
    rows = measured_rows(frame, columns, missing)
    grouped = rows.groupby(list(keys), sort=True)[list(metrics)].median().reset_index()
    return [{c: plain(row[c]) for c in columns} for _, row in grouped.iterrows()]


def point_for(answer: Any, points: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> dict[str, Any] | None:
    """The measured point whose settings are the answer's, or None when it was not measured.

    Raises:
        AnswerError: the answer is not a settings mapping with exactly `keys`.
    """
    chosen = as_point(answer, keys)
    for point in points:
        if all(float(point[k]) == chosen[k] for k in keys):
            return dict(point)
    return None


def measured_point(
    answer: Any, points: Sequence[Mapping[str, Any]], keys: Sequence[str]
) -> tuple[dict[str, Any] | None, str]:
    """The measured point the answer names, or None and the judgement that says what was measured.

    Raises:
        AnswerError: the answer is not a settings mapping with exactly `keys`.
    """
    point = point_for(answer, points, keys)
    return point, "" if point is not None else f"{answer} was not measured; measured: {settings_text(points, keys)}"


def settings_text(points: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> str:
    """The measured values of each setting, for a question: `linger.ms` ∈ {0, 5, 20}."""
    return "; ".join(f"`{k}` ∈ {{{', '.join(f'{v:,}' for v in sorted({p[k] for p in points}))}}}" for k in keys)
