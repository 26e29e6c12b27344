"""The one Kubernetes access layer: raw JSON requests and watches on kubernetes_asyncio's
connection, one error type, retries, patches, list+watch loops and where each kind is served.

``client`` talks to the API server, ``errors`` says what a refusal means, ``retrying`` waits
before trying again, ``patching`` writes, ``watching`` keeps a view of a collection current,
``resources`` is the table of the kinds we use by name and the paths that serve them,
``discovery`` asks the API server about any other kind, ``node_types`` which instance type a
node is, ``timestamps`` reads object times. Services import from here, not from the modules.
"""

from simkube.core.kubeapi.client import (
    APPLY_PATCH,
    JSON,
    JSON_PATCH,
    MERGE_PATCH,
    REQUEST_TIMEOUT,
    ContentType,
    KubeClient,
)
from simkube.core.kubeapi.discovery import Discovery, KindNotServedError, NotWatchableError
from simkube.core.kubeapi.errors import ApiError, GoneError
from simkube.core.kubeapi.node_types import INSTANCE_TYPE_LABEL, NodeTypes
from simkube.core.kubeapi.patching import (
    apply,
    delete,
    delete_namespace,
    json_patch,
    merge_patch,
)
from simkube.core.kubeapi.resources import (
    API_SERVICES,
    CLUSTER_RESOURCE_USAGES,
    CONFIG_MAPS,
    CRON_JOBS,
    CUSTOM_RESOURCE_DEFINITIONS,
    DEPLOYMENTS,
    EVENTS,
    HORIZONTAL_POD_AUTOSCALERS,
    JOBS,
    KWOK_NODE_CLASSES,
    LEASES,
    NAMESPACES,
    NODE_CLAIMS,
    NODE_POOLS,
    NODES,
    POD_METRICS,
    PODS,
    REPLICA_SETS,
    ROLE_BINDINGS,
    ROLES,
    SERVICE_ACCOUNTS,
    SERVICES,
    SIMULATION_ROOTS,
    SIMULATIONS,
    GroupVersionKind,
    Resource,
    group_version_path,
)
from simkube.core.kubeapi.retrying import Backoff, poll, retry
from simkube.core.kubeapi.timestamps import unix_s
from simkube.core.kubeapi.watching import Cursor, ListWatch, list_all, pages, watch_from

__all__ = [
    "API_SERVICES",
    "APPLY_PATCH",
    "CLUSTER_RESOURCE_USAGES",
    "CONFIG_MAPS",
    "CRON_JOBS",
    "CUSTOM_RESOURCE_DEFINITIONS",
    "DEPLOYMENTS",
    "EVENTS",
    "HORIZONTAL_POD_AUTOSCALERS",
    "INSTANCE_TYPE_LABEL",
    "JOBS",
    "JSON",
    "JSON_PATCH",
    "KWOK_NODE_CLASSES",
    "LEASES",
    "MERGE_PATCH",
    "NAMESPACES",
    "NODES",
    "NODE_CLAIMS",
    "NODE_POOLS",
    "PODS",
    "POD_METRICS",
    "REPLICA_SETS",
    "REQUEST_TIMEOUT",
    "ROLES",
    "ROLE_BINDINGS",
    "SERVICES",
    "SERVICE_ACCOUNTS",
    "SIMULATIONS",
    "SIMULATION_ROOTS",
    "ApiError",
    "Backoff",
    "ContentType",
    "Cursor",
    "Discovery",
    "GoneError",
    "GroupVersionKind",
    "KindNotServedError",
    "KubeClient",
    "ListWatch",
    "NodeTypes",
    "NotWatchableError",
    "Resource",
    "apply",
    "delete",
    "delete_namespace",
    "group_version_path",
    "json_patch",
    "list_all",
    "merge_patch",
    "pages",
    "poll",
    "retry",
    "unix_s",
    "watch_from",
]
