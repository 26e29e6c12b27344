"""Kubernetes timestamps (RFC 3339, ``Z`` or an offset) as Unix time.

The API server writes object times to the second (``creationTimestamp``) and some status
times to the microsecond; each reader only needs the instant, so there is one parser.
"""

from __future__ import annotations

from datetime import datetime


def unix_s(text: object) -> float | None:
    """Unix seconds of a Kubernetes timestamp field; ``None`` when absent or malformed."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None
