"""Benchmarks, run by ``make bench`` (``python -m benchmarks``); each figure is one JSON line."""
