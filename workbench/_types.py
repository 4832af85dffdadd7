"""Shapes that recur across the package, defined once here.

It imports nothing, so a module as light as `streaming.offsets` (which Spark's Python
workers import) can share them with `kafka` and `restproxy` without importing either.
"""

from __future__ import annotations

__all__ = ["Partition"]

#: A topic-partition as a plain tuple, `("orders", 3)`: easy to sort, hash, print and pickle.
Partition = tuple[str, int]
