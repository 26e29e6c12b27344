"""An autoscaler's command line: its environment tuning with the user's flags on top.

Cluster Autoscaler and Karpenter take ``--name=value`` flags. ``env up --autoscaler-flag``
replaces a default by name, and refuses what is not a flag or what wires the process to the
environment (its kubeconfig, ports, cloud provider), which skctl alone sets. The merging
itself is ``core.flags.with_flags``, the same sk-ctrl's timer targets use.
"""

from __future__ import annotations

from simkube.core.errors import EnvironmentStateError
from simkube.core.flags import flag_name, with_flags


def merge_flags(*, defaults: tuple[str, ...], extra: tuple[str, ...], wiring: tuple[str, ...],
                owner: str, example: str) -> list[str]:
    """``defaults`` with ``extra`` replacing same-named flags; errors name the flag."""
    chosen: dict[str, str] = {}
    for flag in (*defaults, *extra):
        name = flag_name(flag)
        if name is None or len(name) < 3:
            raise EnvironmentStateError(
                f"--autoscaler-flag {flag!r} is not of the form --name=value",
                hint=f"for example --autoscaler-flag={example}")
        if name in wiring:
            raise EnvironmentStateError(
                f"--autoscaler-flag {flag!r}: {name} wires {owner} to this environment and "
                "is set by skctl")
        chosen[name.removeprefix("--")] = flag.partition("=")[2]
    return with_flags((), flags=chosen)
