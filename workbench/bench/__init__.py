"""Measurements: each function runs one experiment point and returns one tidy row."""

from workbench.bench.native import native_round_trip

__all__ = ["native_round_trip"]
