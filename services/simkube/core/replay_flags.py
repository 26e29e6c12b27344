"""Cluster Autoscaler flags every simulated run sets that are not timers: CA's fixed waits.

CA 1.36 skips scale-up, and scale-down with it, in a loop whose unschedulable pods are all
younger than 2 s (``unschedulablePodTimeBuffer`` in ``core/static_autoscaler.go``; 30 s when a
pod asks for a GPU): "Unschedulable pods are very new, waiting one iteration". It is a Go
constant on the wall clock, so no flag scales it: at speed *s* it would cost 2·*s* seconds of
trace time (40 s at speed 20), and the answer would depend on the speed picked. CA skips the
check whenever ``--bypassed-scheduler-names`` is non-empty; naming a scheduler no pod uses
changes nothing else (CA treats pods of a bypassed scheduler that the scheduler has not looked
at yet as unschedulable, and there are none).

So every CA the project runs bypasses it — the fidelity benchmark's ground truth at speed 1
as much as a replay at 50 — and truth and replays react alike. What that gives up against a
production CA: for a burst of new pods production skips the loop the burst triggers and plans
at its next scan (10 s later by default); a simulated CA plans in the first loop, up to one
scan interval of trace time sooner (docs/simulated-time.md).
"""

from __future__ import annotations

from collections.abc import Sequence

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


def replay_flags(*, argv: Sequence[str]) -> dict[str, str]:
    """Flags to put on CA's command line ``argv`` for a simulated run (name → value)."""
    if _value(argv, BYPASSED_FLAG):
        return {}  # a user's own bypass already removes the wait
    flags = {BYPASSED_FLAG: BYPASSED_SCHEDULER}
    allowed = _value(argv, ALLOWED_FLAG)
    if allowed:
        # CA refuses to start when a bypassed scheduler is not among the allowed ones.
        flags[ALLOWED_FLAG] = f"{allowed},{BYPASSED_SCHEDULER}"
    return flags
