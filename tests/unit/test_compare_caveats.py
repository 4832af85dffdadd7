"""A cold or drifting side is named in the verdict and never counts as a regression."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from workbench.compare import FASTER, SLOWER, UNTRUSTED, caveat, compare_rows, comparison_table, regressions


def _rows(values: Sequence[float], *, warmth: str | None = "warm", uptime: float = 120.0) -> pd.DataFrame:
    rows = pd.DataFrame(
        {
            "experiment": "native_produce",
            "params": "records",
            "records": 100_000,
            "msg_s": values,
            "run_index": range(len(values)),
        }
    )
    if warmth is not None:
        rows["broker_warmth"], rows["broker_uptime_s"] = warmth, [uptime + 2 * i for i in range(len(values))]
    return rows


STEADY_A = [300_000, 310_000, 305_000, 298_000, 302_000]
STEADY_B = [240_000, 250_000, 245_000, 238_000, 242_000]  # 20 % slower


def test_two_warm_steady_sides_keep_their_verdict() -> None:
    table = compare_rows(_rows(STEADY_A), _rows(STEADY_B), ["msg_s"])
    assert table["verdict"].tolist() == [SLOWER]
    assert len(regressions(table)) == 1


def test_a_cold_side_is_named_and_is_no_regression() -> None:
    table = compare_rows(_rows(STEADY_A), _rows(STEADY_B, warmth="cold", uptime=8.0), ["msg_s"])
    verdict = table["verdict"].iloc[0]
    assert verdict.startswith(UNTRUSTED) and "B ran 8 s after the broker started: cold" in verdict
    assert verdict.endswith(f"the figures said {SLOWER}")
    assert regressions(table).empty


def test_repeats_that_climb_with_their_order_are_drifting() -> None:
    climbing = [220_787, 260_000, 310_118, 348_727, 368_829, 403_575]
    assert "B's repeats drift with their order" in (caveat(_rows(climbing), "B", "msg_s") or "")
    table = compare_rows(_rows(STEADY_A), _rows(climbing), ["msg_s"])
    assert table["verdict"].iloc[0].startswith(UNTRUSTED)
    assert FASTER not in table["verdict"].tolist()


def test_rows_without_the_facts_have_no_caveat() -> None:
    assert caveat(_rows(STEADY_A, warmth=None).drop(columns="run_index"), "A", "msg_s") is None
    assert caveat(_rows(STEADY_A, warmth="unknown"), "A", "msg_s") is None


def test_the_terminal_table_keeps_an_untrusted_verdict_short_and_explains_it_below() -> None:
    from rich.console import Console

    cold = compare_rows(_rows(STEADY_A), _rows(STEADY_B, warmth="cold", uptime=8.0), ["msg_s"])
    both = pd.concat([cold, cold, compare_rows(_rows(STEADY_A), _rows(STEADY_B), ["msg_s"])], ignore_index=True)
    console = Console(width=200, record=True)
    console.print(comparison_table(both, "a", "b"))
    text = console.export_text()
    assert text.count(f"{UNTRUSTED} [1]") == 2 and "[2]" not in text  # one note per distinct reason
    assert f"[1] B ran 8 s after the broker started: cold; the figures said {SLOWER}" in text
    assert f"│ {SLOWER}" in text
