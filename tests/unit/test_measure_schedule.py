"""An open-loop schedule: records due by phase, the inverse (when each is due), slips counted."""

from __future__ import annotations

import math
import time
from itertools import pairwise

import numpy as np
import pytest

from workbench.measure.schedule import Phase, RateSchedule, run_open_loop

BURST = RateSchedule([Phase("lead-in", 5, 200), Phase("burst", 3, 2_000), Phase("after", 10, 200)])


def test_records_are_due_by_the_integral_of_the_rates() -> None:
    assert BURST.total == 5 * 200 + 3 * 2_000 + 10 * 200
    assert BURST.due(-0.1) == 0
    assert BURST.due(0.0) == 1  # record 0 is due at the start
    assert BURST.due(5.0) == 1_001
    assert BURST.due(5.5) == 1_000 + 1_000 + 1
    assert BURST.due(1e9) == BURST.total
    assert BURST.window("burst") == (5.0, 8.0) and BURST.seconds == 18.0


def test_when_each_record_is_due_is_the_inverse_of_due() -> None:
    assert BURST.due_at(0) == 0.0
    assert BURST.due_at(1_000) == 5.0
    assert BURST.due_at(2_000) == pytest.approx(5.5)
    for index in (0, 1, 999, 1_000, 6_999, 7_000, BURST.total - 1):
        at = BURST.due_at(index)
        assert BURST.due(at) == index + 1, index  # due exactly then, not before
        assert BURST.due(at - 1e-6) == index
    indexes = np.array([0, 999, 1_000, 6_999, 7_000, BURST.total - 1])
    assert BURST.due_times(indexes) == pytest.approx([BURST.due_at(int(i)) for i in indexes])
    with pytest.raises(IndexError):
        BURST.due_at(BURST.total)


def test_rates_and_the_step_line_follow_the_phases() -> None:
    assert [BURST.rate_at(t) for t in (-1, 0, 4.99, 5, 7.99, 8, 17.99, 18)] == [0, 200, 200, 2_000, 2_000, 200, 200, 0]
    assert BURST.mean_rate(4.0, 6.0) == pytest.approx((200 + 2_000) / 2)
    assert math.isnan(BURST.mean_rate(1.0, 1.0))
    step = BURST.frame(until=6.0)
    assert step["t"].tolist() == [0.0, 5.0, 5.0, 6.0]
    assert step["offered_msg_s"].tolist() == [200, 200, 2_000, 2_000]


@pytest.mark.parametrize(
    "phase", [Phase("x", 0, 10), Phase("x", 1, 0), Phase("x", math.nan, 1), Phase("x", 1, math.inf)]
)
def test_a_phase_without_time_or_rate_is_refused(phase: Phase) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        RateSchedule([phase])


def test_an_open_loop_run_sends_every_record_once_in_order_and_counts_late_ones() -> None:
    schedule = RateSchedule([Phase("only", 0.2, 500)])
    handed: list[tuple[int, int]] = []

    def send(first: int, upto: int) -> None:
        handed.append((first, upto))
        if first == 0:
            time.sleep(0.12)  # the sender stalls: the records due meanwhile go out late

    run = run_open_loop(schedule, send, started=time.perf_counter(), reading_every_s=0.05)
    assert run.sent == schedule.total == 100
    assert handed[0][0] == 0 and handed[-1][1] == 100
    assert all(a[1] == b[0] for a, b in pairwise(handed))  # contiguous, none twice
    assert run.slips >= 25  # about 0.07 s x 500 records/s were more than 50 ms late
    assert run.readings[0] == (0.0, 0) and run.readings[-1][1] == 100


def test_an_open_loop_run_stops_when_told() -> None:
    schedule = RateSchedule([Phase("only", 10, 100)])
    run = run_open_loop(schedule, lambda a, b: None, started=time.perf_counter(), stop=lambda now: now > 0.1)
    assert 0 < run.sent < schedule.total
    assert run.readings[-1] == (run.seconds, run.sent)
