"""The one Kubernetes access layer: raw JSON requests and watches on kubernetes_asyncio's
connection, one error type, retries, patches and list+watch loops.

``client`` talks to the API server, ``errors`` says what a refusal means, ``retrying`` waits
before trying again, ``patching`` writes, ``watching`` keeps a view of a collection current.
Services import from here, not from the modules.
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
from simkube.core.kubeapi.errors import ApiError, GoneError
from simkube.core.kubeapi.patching import (
    apply,
    delete,
    delete_namespace,
    json_patch,
    merge_patch,
)
from simkube.core.kubeapi.retrying import Backoff, poll, retry
from simkube.core.kubeapi.watching import Cursor, ListWatch, list_all, pages, watch_from

__all__ = [
    "APPLY_PATCH",
    "JSON",
    "JSON_PATCH",
    "MERGE_PATCH",
    "REQUEST_TIMEOUT",
    "ApiError",
    "Backoff",
    "ContentType",
    "Cursor",
    "GoneError",
    "KubeClient",
    "ListWatch",
    "apply",
    "delete",
    "delete_namespace",
    "json_patch",
    "list_all",
    "merge_patch",
    "pages",
    "poll",
    "retry",
    "watch_from",
]
