"""Which hop a knob moved: only knobs whose sweep measured two values are judged; a sweep
that could not run on a stack (an empty frame) is left out instead of failing the notebook."""

from __future__ import annotations

import pandas as pd

from workbench.bench.waterfall_study import knob_effects


def _row(linger: int, sent_ms: float, broker_ms: float) -> dict[str, object]:
    return {
        "linger.ms": linger,
        "read_path": "due → sent → appended",
        "hop_due_sent_mean_ms": sent_ms,
        "hop_due_sent_p50_ms": sent_ms,
        "hop_sent_appended_mean_ms": broker_ms,
        "hop_sent_appended_p50_ms": broker_ms,
    }


def test_a_knob_that_moved_one_hop_names_it_and_an_unmeasured_knob_is_left_out() -> None:
    linger = pd.DataFrame([_row(20, 1.0, 25.0), _row(0, 1.0, 3.0)])
    effects = knob_effects({"linger.ms": linger, "proxy.producer.linger.ms": pd.DataFrame()})
    assert list(effects) == ["linger.ms"]
    table = effects["linger.ms"]
    assert table.loc[table["moved"], "hop"].tolist() == ["sent → appended"]
    assert table["change_ms"].tolist() == [0.0, 22.0]


def test_one_value_of_a_knob_is_no_comparison() -> None:
    assert knob_effects({"linger.ms": pd.DataFrame([_row(5, 1.0, 2.0)])}) == {}
