"""Run every registered benchmark module's ``run()`` and print one JSON line per figure.

Register a module by adding it to ``BENCHMARKS``; ``python -m benchmarks NAME...`` runs only
the named ones (e.g. ``python -m benchmarks trace_format``).
"""

from __future__ import annotations

import importlib
import json
import sys

BENCHMARKS = [
    "trace_format",
    "environment",
    "cloudprov",
    "cloudprov_calls",
    "tracer",
    "driver",
    "simulation",
    "autoscaler",
    "autoscaler_loop",
    "autoscaler_study",
    "fidelity",
    "fidelity_hpa",
    "scaleup_chain",
    "sweep_throughput",
    "usage_replay",
]


def main(argv: list[str]) -> int:
    unknown = [name for name in argv if name not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; known: {BENCHMARKS}", file=sys.stderr)
        return 2
    for name in argv or BENCHMARKS:
        module = importlib.import_module(f"benchmarks.{name}")
        for figure in module.run():
            print(json.dumps(figure), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
