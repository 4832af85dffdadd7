"""A background sampler's lifecycle, once: a reading now, then one every interval in a
thread, a last one at the end, and errors that surface where the caller can see them.

`ThroughputMeter`, `LagSampler` and `ResourceMonitor` each take their own readings; how
they start, stop and fail is this class's:

- `start` (or entering the `with` block) takes the first reading in the caller's thread,
  so a broker that does not answer fails there, before any thread exists;
- a reading that fails in the thread ends the sampling; `stop` raises it;
- `stop` (or leaving the block normally) joins the thread, takes a last reading and
  releases what the readings held (`_close`, in the caller's thread: Kafka clients must
  not be destroyed by a garbage collection in another thread, confluent-kafka-python
  #1761);
- leaving the block with an error stops and releases without a last reading and without
  raising the sampler's own error, so the block's error is the one seen.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Self

__all__ = ["Sampler"]


class Sampler:
    """Subclasses give `_first`, `_read` (and, as needed, `_last`, `_close`, `_wait`)."""

    #: The sampling thread's name, as a profiler or `py-spy` shows it.
    thread_name = "workbench-sampler"

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    @property
    def error(self) -> BaseException | None:
        """What ended the sampling early, if anything (raised again by `stop`)."""
        return self._error

    def start(self) -> Self:
        """Take the first reading now and keep sampling in a background thread."""
        try:
            self._first()
        except BaseException:
            self._close()
            raise
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop sampling, take a last reading and release; raises a reading's failure."""
        self._join()
        try:
            if self._error is None:
                self._last()
        finally:
            self._close()
        if self._error is not None:
            raise self._error

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc is None:
            self.stop()
            return
        self._join()  # the block's own error is the one to see, not a sampler's
        self._close()

    def _join(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        try:
            while not self._stop.wait(self._wait()):
                self._read()
        except BaseException as exc:  # raised by stop(), never swallowed
            self._error = exc

    def _first(self) -> None:
        """The first reading, in the caller's thread."""
        self._read()

    def _read(self) -> None:
        """One reading."""
        raise NotImplementedError

    def _last(self) -> None:
        """The last reading, once the thread has stopped."""
        self._read()

    def _close(self) -> None:
        """Release what the readings held; runs once, in the caller's thread."""

    def _wait(self) -> float:
        """Seconds until the next reading."""
        return self.interval_s
