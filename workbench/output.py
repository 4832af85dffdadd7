"""Command output for people and for scripts: tables that never cut a cell, and the same rows as records.

rich fits a table to the terminal by ending cells in "…": at 80 columns a run id read `20261…`
and a throughput `20,…`, which neither a person nor a log can use. `print_table` lays the table
out itself: a cell wraps only between words (an id or a number is one word, so it stays whole),
a column made with `no_wrap=True` (a verdict, an interval) keeps each cell on one line, and when
even that is wider than the terminal, the table is printed at its own width and the terminal
wraps its lines: longer lines, nothing lost.

`write_records` is the form for scripts and schedulers (`--format json` or `--format csv`): the
rows on stdout and nothing else there, so notes and progress bars go to stderr.

    print_table(Console(), table)
    write_records(frame, OutputFormat.JSON, sys.stdout)
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TextIO

from rich.console import Console
from rich.measure import Measurement
from rich.segment import Segments
from rich.table import Table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["OutputFormat", "print_table", "write_record", "write_records"]

#: Wide enough to measure any cell without wrapping it.
_UNBOUNDED = 1_000_000


class OutputFormat(StrEnum):
    """What a listing command writes: a table for people, records for scripts."""

    TABLE = "table"
    JSON = "json"
    CSV = "csv"


def print_table(console: Console, table: Table) -> None:
    """Print `table` with every word of every cell whole: wrap between words, never cut.

    Args:
        console: where to print; its width is the terminal's.
        table: a rich table with its rows added; its columns' widths are set here. A column
            made with `no_wrap=True` keeps each cell on one line (a verdict, "0.78 to 0.81").

    Usage: `print_table(Console(), comparison_table(frame, a, b))`.
    """
    lows, highs = _column_widths(console, table)
    for column, low in zip(table.columns, lows, strict=True):
        column.width, column.overflow = low, "fold"  # fold only as a guard: no word is wider than its column
    least = _table_width(console, table)
    spare = max(0, console.width - least)
    for column, width in zip(table.columns, _share(spare, lows, highs), strict=True):
        column.width = width
    width = max(console.width, _table_width(console, table))
    # Console.print never renders wider than the console: render at the table's own width and
    # print the lines uncropped, so a terminal narrower than the table wraps them instead.
    console.print(Segments(console.render(table, console.options.update_width(width))), crop=False)


def write_records(frame: pd.DataFrame, fmt: OutputFormat, file: TextIO) -> None:
    """Write `frame`'s rows for a script: JSON records (NaN and NaT as null) or CSV with a header row.

    Raises:
        ValueError: `fmt` is `OutputFormat.TABLE`, which is for people (`print_table`).

    Usage: `write_records(catalog.runs(profile), OutputFormat.CSV, sys.stdout)`.
    """
    if fmt is OutputFormat.JSON:
        file.write(json.dumps(_records(frame), indent=2, ensure_ascii=False) + "\n")
    elif fmt is OutputFormat.CSV:
        frame.to_csv(file, index=False, lineterminator="\n")
    else:
        raise ValueError(f"write_records writes json or csv, not {fmt.value!r}")


def write_record(record: Mapping[str, Any], fmt: OutputFormat, file: TextIO) -> None:
    """Write one record: a JSON object, or CSV with a header row and one line.

    Usage: `write_record(catalog.show(run_id, profile), OutputFormat.JSON, sys.stdout)`.
    """
    import pandas as pd  # here, not at the top: the `workbench` command imports this module to start

    frame = pd.DataFrame([dict(record)])
    if fmt is OutputFormat.JSON:
        file.write(json.dumps(_records(frame)[0], indent=2, ensure_ascii=False) + "\n")
    else:
        write_records(frame, fmt, file)


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows as JSON values: pandas writes NaN and NaT as null, timestamps as ISO 8601."""
    text = frame.to_json(orient="records", date_format="iso", date_unit="us", force_ascii=False)
    records: list[dict[str, Any]] = json.loads(text or "[]")
    return records


def _column_widths(console: Console, table: Table) -> tuple[list[int], list[int]]:
    """Each column's least width (its longest word, or its longest cell when it must not wrap) and its widest."""
    options = console.options.update_width(_UNBOUNDED)
    lows: list[int] = []
    highs: list[int] = []
    for column in table.columns:
        cells = [column.header, *column.cells] if table.show_header else list(column.cells)
        sizes = [Measurement.get(console, options, cell) for cell in cells]
        high = max((size.maximum for size in sizes), default=1)
        words = max((size.minimum for size in sizes), default=1)
        lows.append(high if column.no_wrap else words)
        highs.append(high)
    return lows, highs


def _table_width(console: Console, table: Table) -> int:
    """The width `table` takes with its columns' widths as set: cells, padding and borders."""
    return Measurement.get(console, console.options.update_width(_UNBOUNDED), table).maximum


def _share(spare: int, lows: list[int], highs: list[int]) -> list[int]:
    """Widths from `lows` up towards `highs`, sharing `spare` in proportion to what each column lacks."""
    wants = [high - low for low, high in zip(lows, highs, strict=True)]
    if sum(wants) <= spare:
        return list(highs)
    given = [math.floor(spare * want / sum(wants)) for want in wants]
    left = spare - sum(given)
    for index in sorted(range(len(wants)), key=lambda i: wants[i] - given[i], reverse=True)[:left]:
        given[index] += 1
    return [low + extra for low, extra in zip(lows, given, strict=True)]
