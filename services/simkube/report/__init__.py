"""Reports on recorded simulation runs: summary tables, plots, HTML pages and comparisons.

``skctl report`` and ``skctl compare`` are built on this package; ``curve_difference`` is the
replay-fidelity measure (docs/reports.md). Importing it is cheap: matplotlib loads only when
plots are drawn.
"""

from simkube.report.fidelity import CurveDifference, curve_difference, step_difference
from simkube.report.loading import RunData, load

__all__ = ["CurveDifference", "RunData", "curve_difference", "load", "step_difference"]
