"""How the workbench writes a measured number: counts exact, rates rounded.

One rule for notebook tables, CLI tables, reports and the formulas `topics.sizing` spells
out, so a figure reads the same wherever it appears.
"""

from __future__ import annotations

from typing import Any

__all__ = ["format_number"]


def format_number(value: Any) -> str:
    """`200000.0` → "200,000", `474270.95` → "474,271", `0.4217` → "0.422"; text stays text.

    Whole numbers are counts and keep every digit; other values of 1,000 or more lose
    their decimals; smaller ones keep three significant digits.
    """
    import numpy as np

    if isinstance(value, np.integer | np.floating):  # a DataFrame's cells: counts and rates all the same
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if value != value:  # NaN: nothing was measured
        return "n/a"
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"
