"""Health probes for the environment's components and the waits built on them.

Every probe is one HTTP GET with a short timeout. The API server is probed with the admin
client certificate; the controller manager and scheduler serve self-signed certificates on
loopback, which we do not verify (their health paths need no authentication).
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from simkube.env import grpcprobe

PROBE_TIMEOUT = 2.0


def api_ssl_context(pki: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    return context


def probe(url: str, *, verify: ssl.SSLContext | bool) -> tuple[bool, str]:
    """``(healthy, detail)`` for one GET of ``url`` (a gRPC health check for ``grpc://``)."""
    if url.startswith(grpcprobe.SCHEME):
        return grpcprobe.probe(url)
    try:
        response = httpx.get(url, verify=verify, timeout=PROBE_TIMEOUT)
    except httpx.HTTPError as exc:
        return False, type(exc).__name__
    body = response.text.strip()[:200]
    return response.status_code == 200, f"HTTP {response.status_code} {body}".strip()


def wait_until(check: Callable[[], tuple[bool, str]], *, timeout: float,
               alive: Callable[[], bool] = lambda: True,
               interval: float = 0.1) -> tuple[bool, str]:
    """Poll ``check`` until it passes, ``alive`` turns false, or ``timeout`` runs out."""
    deadline = time.monotonic() + timeout
    ok, detail = False, "not checked"
    while time.monotonic() < deadline:
        ok, detail = check()
        if ok:
            return True, detail
        if not alive():
            return False, "process exited"
        time.sleep(interval)
    return False, f"timed out after {timeout:.0f}s ({detail})"
