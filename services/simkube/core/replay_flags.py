"""Cluster Autoscaler flags a faster-than-real-time run sets that are not timers.

CA 1.36 skips scale-up, and scale-down with it, in a loop whose unschedulable pods are all
younger than 2 s (``unschedulablePodTimeBuffer`` in ``core/static_autoscaler.go``; 30 s when a
pod asks for a GPU): "Unschedulable pods are very new, waiting one iteration". It is a Go
constant on the wall clock, so no flag scales it: at speed *s* it costs 2·*s* seconds of
trace time per scale-up (40 s at speed 20) where production waits 2 s and a scan. CA skips
the check whenever ``--bypassed-scheduler-names`` is non-empty.

At speed 1 the wait is production's, and it does more than delay: it lets a burst of pods
arrive before CA plans, so the burst gets one plan (``large 1->3``) instead of one node per
loop as the pods turn unschedulable one by one. So ``env up``'s CA and the fidelity
benchmark's ground truth keep it, and only runs faster than real time bypass it; there the
run's clock is held while the scheduler and CA react (ctrl/holding.py), and two more flags
keep a burst's plan whole, as the wait did in production:

- ``--bypassed-scheduler-names=default-scheduler``: besides skipping the wait, CA counts the
  pods of a bypassed scheduler that it has not ruled on yet (``ArrangePodsBySchedulability``'s
  "unprocessed" pods, which CA first tries to fit on existing nodes itself). A loop then
  sees every pod of the burst that exists, not only those with a verdict so far.
- ``--frequent-loops-enabled=false``: CA's pod observer otherwise starts a loop at the first
  pod ruled unschedulable, while the rest of the burst is still being created, and that
  loop plans for part of it (fidelity runs 7 and 8: ``small +1, large +1, large +1`` in three
  loops where every truth planned ``large +2``). Without it CA loops one scan interval
  after the previous loop ended; the holder waits for a loop that started after the pods
  were there (it then counts loops by ``main`` alone: ``ctrl/autoscaler_loops.py``).

Bypassing the wait also bypasses what it decides: when production plans. sk-ctrl plays that
in trace time with CA's own per-pod ``pod-scale-up-delay`` annotation (``ctrl/scale_up_gate.py``).

Where the gate plays production's loop moments, CA's own scan serves only to start a loop
soon after the gate lifts a wave, and each of those waits holds the run's clock. On the
scan interval ÷ speed (1 s of wall time at 10x) a hold took about a second per moment, and
moments come every scan interval of trace time while planned pods wait for their nodes:
holds then took half the run's wall time, their cap (``ctrl/holding.py``), and the rest of
the run went unheld (fidelity run 26 at 10x: 99 holds skipped, a wave planned 11 s late). So a
gated run's CA scans every ``GATED_SCAN_MS`` of wall time at most (``run_flags``). That also
brings back some of what frequent loops give production and a scan-only CA lacks: a loop
soon after one that scaled up or down (production's starts at once). What it changes: CA
notices an unneeded node, and removes one unneeded for long enough, at its next loop; on
the shorter scan that is sooner than production's scan-interval loops would be
(docs/simulated-time.md has the measured effect).

Below speed 1 the wait cannot be lengthened; it stays, shorter in trace time than
production's. A command line that already sets a flag keeps its own value.
"""

from __future__ import annotations

from collections.abc import Sequence

from simkube.core.durations import go_duration
from simkube.core.simtime import TimerPlan, TimeScale
from simkube.core.timers import SCAN_INTERVAL, Component

# CA leaves a pod younger than this annotation's duration out of scale-up (``filterOutYoungPods``);
# a held replay's pods carry it until sk-ctrl releases them (``ctrl/scale_up_gate.py``).
SCALE_UP_DELAY_ANNOTATION = "cluster-autoscaler.kubernetes.io/pod-scale-up-delay"
GATED_DELAY = "87600h"  # ten years: out of scale-up until the annotation is removed
BYPASSED_SCHEDULER = "default-scheduler"  # the environment's kube-scheduler, every pod's default
BYPASSED_FLAG = "bypassed-scheduler-names"
ALLOWED_FLAG = "allowed-scheduler-names"
FREQUENT_LOOPS_FLAG = "frequent-loops-enabled"
GATED_SCAN_MS = 250  # wall: a gated run's CA scans at least this often (see above)


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
    if not scale.faster_than_real_time:
        return {}  # real time keeps production's wait and loop triggers
    flags: dict[str, str] = {}
    if not _value(argv, FREQUENT_LOOPS_FLAG):
        flags[FREQUENT_LOOPS_FLAG] = "false"
    if _value(argv, BYPASSED_FLAG):
        return flags  # a user's bypass already removes the wait
    flags[BYPASSED_FLAG] = BYPASSED_SCHEDULER
    allowed = _value(argv, ALLOWED_FLAG)
    if allowed and BYPASSED_SCHEDULER not in allowed.split(","):
        # CA refuses to start when a bypassed scheduler is not among the allowed ones.
        flags[ALLOWED_FLAG] = f"{allowed},{BYPASSED_SCHEDULER}"
    return flags


def skips_age_wait(*, scale: TimeScale, argv: Sequence[str]) -> bool:
    """Whether a run at ``scale`` starts CA (command line ``argv``) without production's
    pod-age wait because of ``replay_flags``; a user's own bypass is not counted, as the
    run then has no production wait to put back."""
    return BYPASSED_FLAG in replay_flags(scale=scale, argv=argv)


def run_flags(*, plan: TimerPlan, argv: Sequence[str], gated: bool) -> dict[str, str]:
    """Every flag a run puts on CA's command line ``argv``: its timers (``plan``), the
    replay's flags, and, where sk-ctrl gates scale-up (``gated``), a scan of
    ``GATED_SCAN_MS`` at most."""
    flags = {**plan.flags(Component.CLUSTER_AUTOSCALER),
             **replay_flags(scale=plan.scale, argv=argv)}
    if gated and plan.wall_ms(SCAN_INTERVAL.key) > GATED_SCAN_MS:
        flags[SCAN_INTERVAL.name] = go_duration(GATED_SCAN_MS)
    return flags
