"""Numbers in tables: counts exact, large rates without decimals, small values to 3 digits."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.viz import format_number


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (200_000.0, "200,000"),
        (4, "4"),
        (474_270.95, "474,271"),
        (0.4217, "0.422"),
        (47.427, "47.4"),
        (float("nan"), "n/a"),
        (True, "True"),
        ("proxy", "proxy"),
        (np.int64(500_000), "500,000"),  # a DataFrame's cells are numpy numbers
        (np.float64(11_373.014577), "11,373"),
        (np.bool_(True), "True"),
    ],
)
def test_format_number(value: object, shown: str) -> None:
    assert format_number(value) == shown
