"""Cluster Autoscaler flags a faster-than-real-time run sets that are not timers.

CA 1.36 skips scale-up, and scale-down with it, in a loop whose unschedulable pods are all
younger than 2 s (``unschedulablePodTimeBuffer`` in ``core/static_autoscaler.go``; 30 s when a
pod asks for a GPU): "Unschedulable pods are very new, waiting one iteration". It is a Go
constant on the wall clock, so no flag scales it: at speed *s* it costs 2·*s* seconds of
trace time per scale-up (40 s at speed 20) where production waits 2 s and a scan. CA skips
the check whenever ``--bypassed-scheduler-names`` is non-empty; naming a scheduler no pod uses
changes nothing else (CA treats pods of a bypassed scheduler that the scheduler has not looked
at yet as unschedulable, and there are none).

At speed 1 the wait is production's, and it does more than delay: it lets a burst of pods
arrive before CA plans, so the burst gets one plan (``large 1->3``) instead of one node per
loop as the pods turn unschedulable one by one. So ``env up``'s CA and the fidelity
benchmark's ground truth keep it, and only runs faster than real time bypass it; there the
run's clock is held while the scheduler and CA react (ctrl/holding.py), so the plans CA makes
one pod at a time all fall at the burst's trace time. Below speed 1 the wait cannot be
lengthened; it stays, shorter in trace time than production's.
"""

from __future__ import annotations

from collections.abc import Sequence

from simkube.core.simtime import TimeScale

BYPASSED_SCHEDULER = "simkube-no-such-scheduler"
BYPASSED_FLAG = "bypassed-scheduler-names"
ALLOWED_FLAG = "allowed-scheduler-names"


def _value(argv: Sequence[str], flag: str) -> str:
    """The last ``--flag=value`` of ``argv`` (as pflag reads it); "" when absent."""
    found = ""
    for arg in argv:
        name, equals, value = arg.partition("=")
        if equals and name == f"--{flag}":
            found = value
    return found


def replay_flags(*, scale: TimeScale, argv: Sequence[str]) -> dict[str, str]:
    """Flags to put on CA's command line ``argv`` for a run at ``scale`` (name → value)."""
    if not scale.faster_than_real_time or _value(argv, BYPASSED_FLAG):
        return {}  # real time keeps production's wait; a user's bypass already removes it
    flags = {BYPASSED_FLAG: BYPASSED_SCHEDULER}
    allowed = _value(argv, ALLOWED_FLAG)
    if allowed:
        # CA refuses to start when a bypassed scheduler is not among the allowed ones.
        flags[ALLOWED_FLAG] = f"{allowed},{BYPASSED_SCHEDULER}"
    return flags
