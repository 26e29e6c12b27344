"""Hypothesis strategies for traces: realistic enough to reach every code path."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from simkube.trace import (
    KubeObject,
    PodLifecycle,
    PodRun,
    Trace,
    TraceEvent,
    TraceHeader,
    TrackedKind,
)

KINDS = [("apps/v1", "Deployment"), ("v1", "Pod"), ("batch/v1", "CronJob"),
         ("v1", "ConfigMap"), ("example.com/v1alpha1", "Widget")]
names = st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True)
json_scalars = st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)


@st.composite
def objects(draw: st.DrawFn) -> KubeObject:
    api_version, kind = draw(st.sampled_from(KINDS))
    metadata: dict[str, Any] = {"name": draw(names)}
    if draw(st.booleans()):
        metadata["namespace"] = draw(names)
    if draw(st.booleans()):
        metadata["labels"] = draw(st.dictionaries(names, names, max_size=3))
    obj: KubeObject = {"apiVersion": api_version, "kind": kind, "metadata": metadata}
    if draw(st.booleans()):
        obj["spec"] = draw(st.dictionaries(st.text(max_size=8), json_values, max_size=4))
    return obj


headers = st.builds(
    lambda kinds, created, cluster: TraceHeader(created_ms=created, source_cluster=cluster,
                                                tracked_kinds=kinds),
    st.lists(st.builds(lambda kind, paths, life, skip: TrackedKind(
        kind_key=f"{kind[0]}.{kind[1]}", pod_template_paths=tuple(paths),
        track_lifecycle=life, skip_owned=skip),
        st.sampled_from(KINDS), st.lists(st.sampled_from(["", "/spec/template"]), max_size=2),
        st.booleans(), st.booleans()), max_size=3, unique_by=lambda k: k.kind_key).map(tuple),
    st.none() | st.integers(0, 2**62), st.none() | names)


@st.composite
def traces(draw: st.DrawFn, *, seconds: bool = False, with_state: bool = True) -> Trace:
    """A trace; ``seconds`` keeps every time a whole second (what SimKube can hold)."""
    unit = 1000 if seconds else 1
    times = sorted(draw(st.lists(st.integers(0, 2**40), max_size=8)))
    events = [TraceEvent(ts_ms=ts * unit, applied=draw(st.lists(objects(), max_size=3)),
                         deleted=draw(st.lists(objects(), max_size=2))) for ts in times]
    owners = draw(st.lists(st.tuples(st.sampled_from(KINDS), names, names), max_size=3,
                           unique=True))
    lifecycles = []
    for (api_version, kind), namespace, name in owners:
        starts = sorted(draw(st.lists(st.integers(0, 2**40), min_size=1, max_size=4)))
        runs = tuple(PodRun(start_ms=start * unit,
                            end_ms=draw(st.none() | st.just((start + 30) * unit)),
                            spec_hash=draw(st.integers(0, 2**64 - 1)) if seconds
                            else draw(st.none() | st.integers(0, 2**64 - 1)))
                     for start in starts)
        lifecycles.append(PodLifecycle(owner_kind=f"{api_version}.{kind}",
                                       owner=f"{namespace}/{name}", runs=runs))
    state = draw(st.lists(objects(), max_size=3)) if with_state else []
    return Trace(header=draw(headers), initial_state=state, events=events,
                 lifecycles=lifecycles)
