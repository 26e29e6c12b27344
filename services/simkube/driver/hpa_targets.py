"""While a replay's HPAs are active, their targets' recorded replica counts stay out of it.

A trace of a workload under an HPA records each of the HPA's scalings as a change of the
workload's ``spec.replicas``. Replaying those changes would fight the replay's own HPA: every
recorded scaling would force the recorded count back (server-side apply with force) and the
replica curve would follow the trace whatever the HPA decided, which would also hide any
what-if on the HPA. So after a target's first apply (its creation keeps the recorded count,
the state the HPA starts from) ``spec.replicas`` is left out of every later apply of it.

Once the replay's HPA has scaled the target, the field is the controller-manager's (an update
takes ownership) and leaving it out changes nothing. If a recorded change comes before the
replay's HPA has scaled at all, the driver still owns the field, and leaving it out resets it
to the API default (1) until the HPA's next sync: harmless when the workload started at one
replica, a short dip otherwise (docs/hpa.md).
"""

from __future__ import annotations

import copy

from simkube.trace import KubeObject

Target = tuple[str, str, str]  # kind, namespace, name (a scaleTargetRef in its namespace)


def _is_hpa(obj: KubeObject) -> bool:
    return (obj.get("kind") == "HorizontalPodAutoscaler"
            and str(obj.get("apiVersion", "")).startswith("autoscaling/"))


def _ref(obj: KubeObject) -> Target:
    metadata = obj.get("metadata") or {}
    return (str(obj.get("kind", "")), str(metadata.get("namespace") or "default"),
            str(metadata.get("name", "")))


class HpaTargets:
    """Sees every applied object in replay order; ``strip`` returns what to apply."""

    def __init__(self) -> None:
        self._targets: set[Target] = set()
        self._applied: set[Target] = set()

    def note(self, objects: list[KubeObject]) -> None:
        """Learn the targets of the HPAs among ``objects`` (call before ``strip``)."""
        for obj in objects:
            if not _is_hpa(obj):
                continue
            spec = obj.get("spec")
            target = spec.get("scaleTargetRef") if isinstance(spec, dict) else None
            if isinstance(target, dict) and target.get("kind") and target.get("name"):
                self._targets.add((str(target["kind"]), _ref(obj)[1], str(target["name"])))

    def strip(self, obj: KubeObject) -> KubeObject:
        """``obj``, or a copy without ``spec.replicas`` when it is an HPA's target applied
        before."""
        ref = _ref(obj)
        first = ref not in self._applied
        self._applied.add(ref)
        spec = obj.get("spec")
        if first or ref not in self._targets or not isinstance(spec, dict) \
                or "replicas" not in spec:
            return obj
        stripped = {key: value for key, value in obj.items() if key != "spec"}
        stripped["spec"] = {k: copy.deepcopy(v) for k, v in spec.items() if k != "replicas"}
        return stripped
