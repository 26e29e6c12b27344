"""A point's input files, written into its folder before its environment starts.

A point whose trace or node groups differ from the base gets its own copy: the trace with
``skctl trace edit``'s own steps applied (replicas times k is ``scale-replicas``; requests times k
is ``scale-resources`` on requests *and* limits, so no request ends above its limit, which
the API server would refuse), the node groups as ``nodegroups.apply`` built them. Points
without such settings use the base files as they are. The copies stay in the point's folder
beside its results, so what a point ran is on disk with what it measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from simkube.sweep import nodegroups
from simkube.sweep.axes import TraceEdit
from simkube.sweep.points import Point
from simkube.sweep.spec import Sweep
from simkube.trace import open_trace
from simkube.trace.tools.convert import write_converted
from simkube.trace.tools.edit import apply_edits
from simkube.trace.tools.edit_steps import EditStep, ScaleReplicas, ScaleResources

TRACE_FILE = "trace.sktrace"
NODE_GROUPS_FILE = "node-groups.yaml"


@dataclass(frozen=True, kw_only=True)
class Inputs:
    trace: Path
    node_groups: Path | None  # None: the environment's shipped node groups


def edit_steps(point: Point) -> list[EditStep]:
    """The point's trace what-ifs as ``skctl trace edit`` steps, in axis order."""
    steps: list[EditStep] = []
    for edit, factor in point.trace_edits:
        if edit is TraceEdit.REPLICAS:
            steps.append(ScaleReplicas(factor=factor))
        else:
            steps.append(ScaleResources(cpu=factor, memory=factor))
    return steps


def write_inputs(sweep: Sweep, point: Point, *, folder: Path) -> Inputs:
    """The files ``point`` runs with, written into ``folder`` where they differ from the base."""
    folder.mkdir(parents=True, exist_ok=True)
    trace = sweep.base.trace
    steps = edit_steps(point)
    if steps:
        source = open_trace(trace)
        trace = folder / TRACE_FILE
        write_converted(apply_edits(source, steps), source, trace)
    groups = sweep.base.node_groups
    if point.node_groups is not None:
        groups = nodegroups.write(point.node_groups, folder / NODE_GROUPS_FILE)
    return Inputs(trace=trace, node_groups=groups)
