"""Progress events become one tidy row per batch; offsets behind come from the source's report."""

from __future__ import annotations

import pandas as pd

from workbench.streaming.progress import offsets_behind, progress_frame
from workbench.viz import progress_figure

EVENT = {
    "batchId": 3,
    "timestamp": "2026-11-22T20:00:00.000Z",
    "numInputRows": 500,
    "inputRowsPerSecond": 250.0,
    "processedRowsPerSecond": 1000.0,
    "durationMs": {"triggerExecution": 500, "latestOffset": 20, "addBatch": 400, "walCommit": 30},
    "eventTime": {"watermark": "2026-11-22T19:59:40.000Z"},
    "sources": [
        {"endOffset": '{"t":{"0":100,"1":50}}', "latestOffset": '{"t":{"0":130,"1":50,"2":7}}'},
    ],
}


def test_offsets_behind_sums_what_the_batch_left_in_each_partition() -> None:
    assert offsets_behind('{"t":{"0":100,"1":50}}', {"t": {"0": 130, "1": 50, "2": 7}}) == 37
    assert offsets_behind(None, '{"t":{"0":1}}') is None


def test_progress_frame_has_one_row_per_batch_with_durations() -> None:
    frame = progress_frame([EVENT, {**EVENT, "batchId": 4, "numInputRows": 0, "sources": []}])
    assert frame["batch_id"].tolist() == [3, 4]
    assert frame["rows"].tolist() == [500, 0]
    first = frame.iloc[0]
    assert (first["trigger_ms"], first["addBatch_ms"], first["queryPlanning_ms"]) == (500, 400, 0)
    assert first["offsets_behind"] == 37
    assert pd.isna(frame.iloc[1]["offsets_behind"])  # no source report: unknown, not zero
    assert len(progress_figure(frame).data) == 2 + 6  # two rate lines, one bar per trigger phase
