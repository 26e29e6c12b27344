"""Results of a simulation run: the recorder that writes them and the reader of them.

During a run, ``Recorder`` records the simulated cluster from watches into
``<results>/<simulation>/run-<n>/`` (timeline.csv, pods.csv, scaling.csv, hpas.csv, summary.json);
``load_run`` reads such a directory back as typed rows for the report. Format: docs/reports.md.
"""

from simkube.results.model import (
    DriverSummary,
    GroupSummary,
    HpaRow,
    PodRow,
    PodsSummary,
    ResultsError,
    RunResults,
    RunSummary,
    ScalingRow,
    TimelineRow,
)
from simkube.results.reading import load_run
from simkube.results.recorder import Recorder, run_dir

__all__ = [
    "DriverSummary",
    "GroupSummary",
    "HpaRow",
    "PodRow",
    "PodsSummary",
    "Recorder",
    "ResultsError",
    "RunResults",
    "RunSummary",
    "ScalingRow",
    "TimelineRow",
    "load_run",
    "run_dir",
]
