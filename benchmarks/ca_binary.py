"""The Cluster Autoscaler binary a CA benchmark runs, or the line saying why it cannot run.

CA cannot be built from this project's registries (README), so every benchmark that needs it
looks for the user's binary the same way and, without one, prints one ``ran: false`` line
instead of failing ``make bench``.
"""

from __future__ import annotations

import os
from typing import Any

from simkube.core.errors import EnvironmentStateError
from simkube.env.autoscalers.cluster_autoscaler import resolve


def missing_ca(figure: str) -> dict[str, Any] | None:
    """None when a CA binary is found (and exported for skctl); else the figure's line."""
    try:
        binary = resolve(None)
    except EnvironmentStateError as exc:
        return {"figure": figure, "ran": False, "reason": f"no Cluster Autoscaler binary: {exc}"}
    os.environ.setdefault("SIMKUBE_CLUSTER_AUTOSCALER", str(binary.path))
    return None
