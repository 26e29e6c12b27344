"""Every timer of the simulated cluster that shapes what a replay does, with its production default.

A replay at speed *s* is faithful only if every timer runs *s* times faster together
(DESIGN §7: dividing Cluster Autoscaler's flags alone made cost worse). This catalogue is the
one list of those timers: who reads it (``Component``), under which flag or config key, its
production default in trace time, and what the component accepts (whole seconds with a 1 s
minimum for the scheduler's backoffs). ``simtime`` turns it into wall-time values for a run.

Deliberately left out, and why:
- compute budgets (CA's ``--max-binpacking-time``, ``--scale-down-simulation-timeout``, …)
  bound CA's own CPU work, which does not get faster with the replay;
- liveness and plumbing (``--max-inactivity``, ``--max-failing-time``, leader election, log
  flushing): scaled down they would only make a healthy CA restart itself;
- node health (``--node-monitor-grace-period``): KWOK heartbeats in wall time and a replay's
  nodes never fail, so it decides nothing here;
- Karpenter's hard-coded waits (sigs.k8s.io/karpenter v1.13.0, pkg/controllers/disruption):
  ``pollingPeriod`` (10 s) and ``commandValidationDelay`` (15 s) are Go constants, not
  settings; the project's Karpenter main divides them (and every other wait of its clock)
  by ``SIMKUBE_SPEED``, which the environment sets on restart (env/autoscalers/karpenter.py),
  so they need no entry here. Its compute budgets (``SingleNodeConsolidationTimeoutDuration``
  3 m, ``MultiNodeConsolidationTimeoutDuration`` 1 m) bound its own CPU work like CA's, and
  its NodeClaim timeouts (``launchTimeout`` 5 m, ``registrationTimeout`` 15 m in
  nodeclaim/lifecycle) only fire for instances that never come, which KWOK's always do.

Karpenter's ``consolidateAfter`` is a NodePool field that ``skctl env up --consolidate-after``
sets for the environment, so its default is the environment's (``from_environment``): a user
who chose 5 m there gets 5 m of trace time in every run whose Simulation leaves it unset;
``default_ms`` (0 s, Karpenter's own) only applies where no environment says otherwise. It
may also be ``Never`` (``NEVER``): consolidation off, whatever the speed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

NEVER = -1  # trace (and wall) milliseconds of a timer switched off; see Timer.may_be_never


class Component(StrEnum):
    """The component that reads a timer, named as the Simulation spec's section is."""

    CLUSTER_AUTOSCALER = "clusterAutoscaler"
    KUBE_SCHEDULER = "scheduler"
    KUBE_CONTROLLER_MANAGER = "controllerManager"
    KARPENTER = "karpenter"
    CLOUDPROV = "nodeGroups"
    METRICS_SERVER = "metricsServer"


@dataclass(frozen=True, kw_only=True)
class Timer:
    component: Component
    name: str  # the flag (without --) or configuration key the component reads
    default_ms: int  # the production default, in trace time
    whole_seconds: bool = False  # the component takes an integer number of seconds
    min_wall_ms: int = 0  # the smallest value the component accepts
    # The component keeps this timer on the run's own clock (the project's paced builds,
    # toolchain/pacing): it is given the trace value, which whole_seconds and min_wall_ms
    # then bound, and lasts that value ÷ speed of wall time.
    paced: bool = False
    may_be_never: bool = False  # the component takes "Never" (NEVER): the timer is off
    # Unset in a Simulation, the environment's own setting applies (the timer target says
    # which), not ``default_ms``: it is something the user chose when starting it.
    from_environment: bool = False
    # Unset in a Simulation, a run uses this (trace time) instead of ``default_ms``: for a
    # timer whose production effect the trace already carries (see METRICS_SERVER).
    replay_ms: int | None = None
    # Wall milliseconds of its own work a component adds to each cycle of this period: it
    # waits the period again only once a cycle's work is done, so its cycle is period + work.
    # That work does not get faster with the replay, so at speed s it would stretch every
    # cycle by s x work of trace time where the source's took work; a run shortens the wall
    # period by the difference (``simtime``). 0: the component keeps a fixed rhythm.
    work_ms: int = 0

    @property
    def key(self) -> str:
        return f"{self.component.value}.{self.name}"


def _ca(name: str, default_s: float) -> Timer:
    return Timer(component=Component.CLUSTER_AUTOSCALER, name=name,
                 default_ms=round(default_s * 1000))


# Cluster Autoscaler 1.36.1's duration flags that decide when it scales (config/flags).
CLUSTER_AUTOSCALER = (
    _ca("scan-interval", 10), _ca("scale-down-unneeded-time", 600),
    _ca("scale-down-unready-time", 1200), _ca("scale-down-delay-after-add", 600),
    # 0 means "the scan interval", which is itself scaled.
    _ca("scale-down-delay-after-delete", 0), _ca("scale-down-delay-after-failure", 180),
    _ca("max-node-provision-time", 900), _ca("max-node-startup-time", 900),
    _ca("new-pod-scale-up-delay", 0), _ca("node-delete-delay-after-taint", 5),
    _ca("node-deletion-delay-timeout", 120), _ca("node-deletion-batcher-interval", 0),
    _ca("unremovable-node-recheck-timeout", 300), _ca("max-pod-eviction-time", 120),
    _ca("initial-node-group-backoff-duration", 300),
    _ca("max-node-group-backoff-duration", 1800),
    _ca("node-group-backoff-reset-timeout", 10800), _ca("max-bulk-soft-taint-time", 3),
    Timer(component=Component.CLUSTER_AUTOSCALER, name="max-graceful-termination-sec",
          default_ms=600_000, whole_seconds=True, min_wall_ms=1000),
)

# kube-scheduler: the backoffs are whole seconds in KubeSchedulerConfiguration (minimum 1);
# the unschedulable-pods flush is a (deprecated, still honoured) command-line flag. All three
# are read by the scheduling queue, which the project's build keeps on the run's clock
# (toolchain/kube-scheduler), so they are given in trace time: divided, the backoffs' 1 s
# floor made every retry speed seconds of trace (10 s at 10x, where production's grow
# 1, 2, 4, 8, 10 s).
KUBE_SCHEDULER = (
    Timer(component=Component.KUBE_SCHEDULER, name="podInitialBackoffSeconds",
          default_ms=1000, whole_seconds=True, min_wall_ms=1000, paced=True),
    Timer(component=Component.KUBE_SCHEDULER, name="podMaxBackoffSeconds",
          default_ms=10_000, whole_seconds=True, min_wall_ms=1000, paced=True),
    Timer(component=Component.KUBE_SCHEDULER, name="pod-max-in-unschedulable-pods-duration",
          default_ms=300_000, paced=True),
)

# kube-controller-manager: the periods that decide how workloads scale (HPA) in a replay.
# The HPA controller queues an HPA again a sync period after it has reconciled it (a fixed-
# interval rate limiter, pkg/controller/podautoscaler), so each sync adds its reconcile: the
# HPA benchmark measured 21 ms a cycle in its truth and 29 ms in a 10x replay (15.29 s of
# trace a cycle: 9 s late after 27 syncs, enough to read the next usage sample a sync early).
# Less than the smallest measured is taken out, so that a replay's cycle stays longer than the
# period as a source's always is: the downscale stabilization window is a whole number of
# periods (5 m = 20 syncs), and with cycles a hair shorter the recommendation of 20 syncs
# before would still count, holding a scale-down one sync (seen at 10x with 25 ms).
HPA_RECONCILE_MS = 12
KUBE_CONTROLLER_MANAGER = (
    Timer(component=Component.KUBE_CONTROLLER_MANAGER,
          name="horizontal-pod-autoscaler-sync-period", default_ms=15_000,
          work_ms=HPA_RECONCILE_MS),
    *(Timer(component=Component.KUBE_CONTROLLER_MANAGER, name=name, default_ms=ms)
      for name, ms in (("horizontal-pod-autoscaler-downscale-stabilization", 300_000),
                       ("horizontal-pod-autoscaler-cpu-initialization-period", 300_000),
                       ("horizontal-pod-autoscaler-initial-readiness-delay", 30_000))),
    # The node lifecycle controller's health pass: a Node's not-ready:NoExecute taint goes
    # at the first pass after it turns Ready, and Karpenter counts a node initialized (a
    # consolidation candidate, first choice for a drained node's pods) only then: up to 5 s
    # of wall time, 50 s of trace at 10x. Floored so 1,000 nodes are not walked 20 times a
    # second at 100x.
    Timer(component=Component.KUBE_CONTROLLER_MANAGER, name="node-monitor-period",
          default_ms=5_000, min_wall_ms=250),
)

# Karpenter 1.13: its batching flags (Go durations) and its NodePools' consolidateAfter (whole
# seconds in the CRD, no minimum: 0s, Karpenter's default, consolidates as soon as it can).
# Its batching flags are passed in trace time during a run: its clock divides them (above).
KARPENTER = (
    # Its batcher waits on the build's paced clock (toolchain/karpenter).
    Timer(component=Component.KARPENTER, name="batch-idle-duration", default_ms=1000,
          paced=True),
    Timer(component=Component.KARPENTER, name="batch-max-duration", default_ms=10_000,
          paced=True),
    Timer(component=Component.KARPENTER, name="consolidateAfter", default_ms=0,
          whole_seconds=True, may_be_never=True, from_environment=True),
)

# metrics-server (env up --metrics-server): how often it scrapes KWOK's kubelets, which is how
# fresh the usage is that the HPA reads, and how long one scrape may take (its own validation
# wants the resolution at least a tenth longer). 15 s is the common production setting
# (upstream's flag default is 60 s) and the HPA's sync period; its upstream floor of 10 s is
# lifted by the project's wrapper (toolchain/metrics-server). A replay scrapes every 2 s of
# trace time instead: recorded usage is what the source's metrics-server served, stamped when
# it served it, so its lag is in the trace already; scraping at the production resolution
# would lag a second time (docs/hpa.md). The wrapper's min-window (0: windows as measured)
# makes a replay's HPA count a new pod's CPU about as late as the source's did: the HPA
# ignores it until one reported window has passed since the pod turned Ready, and the
# source's metrics-server served a new pod's first rate one to two resolutions (15-30 s) after
# it started, where 2 s scrapes serve it within seconds; a replay takes the middle, 1.5
# resolutions. It applies to pods sk-driver does not mark itself: each replayed pod with
# recorded usage is counted at the source's own moment (driver/countable.py,
# toolchain/metrics-server/window.go, docs/hpa.md). The resolution's wall floor,
# 200 ms, keeps a replay's 2 s up to 10x: a scrape adds one to two resolutions before a new
# value is the whole rate, and at 0.5 s (the floor before) that was 5-10 s of trace at 10x,
# as long as the gap between a source's scrape and its HPA's next sync (9.5 s in the HPA
# benchmark's truth). Each scrape is one request per node: 5 a second per node at the floor.
METRICS_SERVER = (
    Timer(component=Component.METRICS_SERVER, name="metric-resolution", default_ms=15_000,
          min_wall_ms=200, replay_ms=2_000),
    Timer(component=Component.METRICS_SERVER, name="kubelet-request-timeout",
          default_ms=10_000, min_wall_ms=100, replay_ms=1_500),
    Timer(component=Component.METRICS_SERVER, name="min-window", default_ms=0,
          replay_ms=22_500),
)

CATALOGUE: tuple[Timer, ...] = (*CLUSTER_AUTOSCALER, *KUBE_SCHEDULER, *KUBE_CONTROLLER_MANAGER,
                                *KARPENTER, *METRICS_SERVER)
BY_KEY = {timer.key: timer for timer in CATALOGUE}
SCAN_INTERVAL = BY_KEY[f"{Component.CLUSTER_AUTOSCALER.value}.scan-interval"]


def replay_defaults() -> dict[str, int]:
    """Timer key → trace ms of the timers a run sets differently from production when the
    Simulation leaves them unset."""
    return {timer.key: timer.replay_ms for timer in CATALOGUE if timer.replay_ms is not None}


def for_component(component: Component) -> tuple[Timer, ...]:
    return tuple(timer for timer in CATALOGUE if timer.component is component)
