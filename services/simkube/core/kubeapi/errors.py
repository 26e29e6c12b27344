"""One error for everything the API server refuses or never answers.

Callers decide what to do from three facts, so the error carries exactly those: the HTTP
``code`` (0 when there was no answer at all), whether the same request may succeed later
(``transient``: retry it) and whether a resourceVersion has expired (``gone``, ``410``: list
again). A refusal arrives in two shapes — the Status body of a failed request and the Status
object of a watch ``ERROR`` event — and both become the same error here, so no caller parses
a Status or matches a message. It is a ``SimkubeError`` like every other error ours, and
answers an RPC with the status its code implies.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from simkube.core.errors import SimkubeError, Status

GONE = 410
# 429 and the 5xx a busy or restarting API server answers; 0 is "no answer at all".
TRANSIENT_CODES = frozenset({0, 429, 500, 502, 503, 504})
# Forbidden, but only until a controller catches up: a new namespace's default
# ServiceAccount, or content arriving while a deleted namespace of the same name drains.
TRANSIENT_FORBIDDEN = ("serviceaccount", "service account", "is being terminated")


class ApiError(SimkubeError):
    """A request the API server refused or never answered (``code`` 0)."""

    def __init__(self, *, code: int, reason: str, message: str,
                 retry: bool | None = None) -> None:
        super().__init__(f"{reason} ({code}): {message}" if code else f"{reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self._retry = retry

    @property
    def transient(self) -> bool:
        """Whether the same request may succeed later; decided by the code unless set."""
        if self._retry is not None:
            return self._retry
        if self.code in TRANSIENT_CODES:
            return True
        lowered = self.message.lower()
        return self.code == 403 and any(words in lowered for words in TRANSIENT_FORBIDDEN)

    @property
    def status(self) -> Status:
        """Unauthenticated and forbidden as such; otherwise worth retrying or not."""
        if self.code == 401:
            return Status.UNAUTHENTICATED
        if self.code == 403:
            return Status.PERMISSION_DENIED
        return Status.UNAVAILABLE if self.transient else Status.FAILED_PRECONDITION

    @property
    def gone(self) -> bool:
        """``410 Gone``: the resourceVersion is too old (compacted); list again."""
        return self.code == GONE

    @classmethod
    def from_response(cls, code: int, body: bytes) -> ApiError:
        """From a failed request's HTTP status and body (a Status, or anything else)."""
        try:
            status = json.loads(body)
        except ValueError:
            status = None
        if isinstance(status, dict) and status.get("kind") == "Status":
            return api_error(code=code, reason=str(status.get("reason") or "Unknown"),
                             message=str(status.get("message") or "")[:1000])
        return api_error(code=code, reason="HTTP error",
                         message=body[:300].decode("utf-8", "replace"))

    @classmethod
    def from_status(cls, status: Mapping[str, Any]) -> ApiError:
        """From the Status object of a watch ``ERROR`` event (its code is inside)."""
        raw = status.get("code")
        return api_error(code=raw if isinstance(raw, int) else 0,
                         reason=str(status.get("reason") or "WatchError"),
                         message=str(status.get("message") or "")[:1000])

    @classmethod
    def unanswered(cls, what: str, exc: BaseException) -> ApiError:
        """No answer: the connection failed, broke or timed out (code 0, transient)."""
        detail = "timed out" if isinstance(exc, TimeoutError) else str(exc) or "no answer"
        return cls(code=0, reason=type(exc).__name__, message=f"{what}: {detail}")


class GoneError(ApiError):
    """``410 Gone``, as its own type so a ``except GoneError`` can re-list before the rest."""


def api_error(*, code: int, reason: str, message: str) -> ApiError:
    """``GoneError`` for 410, else ``ApiError``."""
    return (GoneError if code == GONE else ApiError)(code=code, reason=reason, message=message)
