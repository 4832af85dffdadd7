"""A Python streaming source that reads nothing: the least any Python data source's
micro-batch can cost.

Spark's own floor (its `rate` source into `noop`) runs in the JVM alone. A Python data
source also pays, on every trigger, for asking its Python runner for the latest offset
and the partitions, for starting a Python task and for handing its Arrow batch to the
JVM. This source does all of that and no more: its offsets count the rows that `rate`
rows/s would have made by now, and a task yields those rows from memory. So the
distance between our Kafka source and this one is what reading Kafka costs, and the
distance between this one and Spark's floor is what the Python Data Source API costs.

    spark.dataSource.register(NullSource)
    spark.readStream.format(NULL_FORMAT).option("rowsPerSecond", 2000).load()
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit
from pyspark.sql.types import LongType, StructField, StructType

from workbench.errors import ConfigError

__all__ = ["MAX_ROWS_PER_SECOND", "NULL_FORMAT", "NullSource"]

#: The format name: `spark.readStream.format(NULL_FORMAT)`.
NULL_FORMAT = "workbench_null"
#: The most `rowsPerSecond` may ask: a batch holds every row since the last one, in memory.
MAX_ROWS_PER_SECOND = 1_000_000


class NullSource(DataSource):
    """Rows `0, 1, 2, ...` at `rowsPerSecond` (default 1,000), made in memory; one column `value`."""

    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        self.rate = _rows_per_second(options.get("rowsPerSecond", "1000"))  # checked when the DataFrame is defined

    @classmethod
    def name(cls) -> str:
        return NULL_FORMAT

    def schema(self) -> StructType:
        return StructType([StructField("value", LongType())])

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return _NullStreamReader(self.rate)


class _Range(InputPartition):
    def __init__(self, start: int, end: int) -> None:
        super().__init__((start, end))
        self.start, self.end = start, end


class _NullStreamReader(DataSourceStreamReader):
    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.started = time.monotonic()  # in the driver's runner process, which lives as long as the query

    def initialOffset(self) -> dict[str, int]:
        return {"rows": 0}

    def latestOffset(self, start: dict[str, int] | None = None, limit: ReadLimit | None = None) -> dict[str, int]:
        return {"rows": int((time.monotonic() - self.started) * self.rate)}

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[InputPartition]:
        return [_Range(start["rows"], end["rows"])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _Range)
        if partition.end > partition.start:
            values = pa.array(np.arange(partition.start, partition.end, dtype=np.int64))
            yield pa.RecordBatch.from_arrays([values], names=["value"])

    def commit(self, end: dict[str, int]) -> None:
        pass


def _rows_per_second(text: object) -> float:
    """`rowsPerSecond` as a number of rows in (0, MAX_ROWS_PER_SECOND]."""
    try:
        rate = float(str(text))
    except ValueError:
        rate = math.nan
    if not 0 < rate <= MAX_ROWS_PER_SECOND:  # NaN fails the comparison too
        raise ConfigError(
            None,
            "rowsPerSecond",
            f"must be a number above 0 and at most {MAX_ROWS_PER_SECOND:,}, got {str(text)[:40]!r}",
        )
    return rate
