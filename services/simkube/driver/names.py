"""The names the driver writes into the cluster, shared with KWOK's stages and sk-ctrl.

They are a contract: ``services/simkube/env/controlplane/kwok-stages.yaml`` (and deploy/kwok/)
select pods by these annotations, and the SimulationRoot CRD (deploy/crds/) defines the group
and kind.
"""

from __future__ import annotations

from simkube.core.kubeapi import SIMULATION_ROOTS

GROUP = SIMULATION_ROOTS.group
ROOT_API_VERSION = SIMULATION_ROOTS.api_version
ROOT_KIND = SIMULATION_ROOTS.kind
ROOT_CRD_NAME = SIMULATION_ROOTS.crd_name
ROOTS_PATH = SIMULATION_ROOTS.path()

FIELD_MANAGER = "simkube-driver"
LIFECYCLE_FIELD_MANAGER = "simkube-driver-lifecycles"

# On every object and pod template the driver applies, so its pods can be found and counted.
SIMULATION_LABEL = f"{GROUP}/simulation"
# On pod templates of owners with recorded lifecycles: the owner as the trace names it
# ("batch/v1.CronJob default/hello"). KWOK's instant Job completion skips such pods; the
# driver matches each new pod to its owner's next recorded run.
LIFECYCLE_OWNER = f"{GROUP}/lifecycle-owner"
# On pod templates (and bare pods) of workloads with recorded usage: the workload as the
# trace names it ("apps/v1.Deployment shop/web"); the usage player finds their pods by it.
USAGE_WORKLOAD = f"{GROUP}/usage-workload"
# Set by the driver on each such pod once the recorded cluster would have counted a pod that
# turned Ready when it did (``driver.countable``); the project's metrics-server keeps the HPA
# from counting a pod with USAGE_WORKLOAD until then. The two names are its too (window.go).
USAGE_COUNTABLE = f"{GROUP}/usage-countable"
# Set by the driver on each such pod: KWOK completes the pod this long after it runs
# (Go duration), plus a random part up to ``POD_LIFETIME_MAX``.
POD_LIFETIME = f"{GROUP}/pod-lifetime"
POD_LIFETIME_MAX = f"{GROUP}/pod-lifetime-max"
# On pod templates when a startup delay is configured: KWOK waits this long (up to the max)
# before a scheduled pod runs.
STARTUP_DELAY = f"{GROUP}/startup-delay"
STARTUP_DELAY_MAX = f"{GROUP}/startup-delay-max"

FAKE_NODE_KEY = "kwok.x-k8s.io/node"
FAKE_NODE_VALUE = "fake"
