"""The `timestamps` form of `POST …/positions`: the moment a client names becomes the
millisecond Kafka's offsets-for-times looks up, exactly, and a bad one is a 422."""

from __future__ import annotations

import pytest

from workbench.httpserver.errors import RestError
from workbench.restproxy.consumers import _timestamp_ms


@pytest.mark.parametrize(
    ("value", "ms"),
    [
        ("2026-11-29T07:40:44.123Z", 1_795_938_044_123),
        ("2026-11-29T07:40:44.123+00:00", 1_795_938_044_123),
        ("2026-11-29T08:40:44.123+01:00", 1_795_938_044_123),
        ("2026-11-29T07:40:44.1231Z", 1_795_938_044_124),  # a fraction of a ms: the next whole one
        ("2026-11-29T07:40:44Z", 1_795_938_044_000),
        ("1970-01-01T00:00:00Z", 0),
        (1_795_938_044_123, 1_795_938_044_123),
    ],
)
def test_a_moment_becomes_its_exact_millisecond(value: object, ms: int) -> None:
    assert _timestamp_ms(value) == ms


@pytest.mark.parametrize("value", ["1969-12-31T23:59:59.999Z", -1, -2, "yesterday", None, "", 2**63, "9" * 400])
def test_a_moment_before_the_epoch_or_not_a_moment_is_a_422(value: object) -> None:
    with pytest.raises(RestError) as raised:
        _timestamp_ms(value)
    assert raised.value.status == 422
