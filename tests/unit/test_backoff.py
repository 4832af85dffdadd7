"""The one exponential backoff: doubling waits up to a ceiling, by attempt or in order."""

from __future__ import annotations

import itertools

from workbench.backoff import Backoff


def test_waits_double_up_to_the_ceiling_and_stay_there() -> None:
    assert list(itertools.islice(Backoff(0.5, 3.0).delays(), 5)) == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_the_wait_before_an_attempt_is_the_same_rule() -> None:
    backoff = Backoff(0.1, 2.0)
    assert [backoff.delay(n) for n in (1, 2, 3, 5, 6, 60)] == [0.1, 0.2, 0.4, 1.6, 2.0, 2.0]
    assert backoff.delay(0) == 0.1  # no attempt before the first waits less
