from __future__ import annotations

import pytest

from simkube.core.errors import SimkubeError, Status
from simkube.core.kubeapi import ApiError, GoneError

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("code", "message", "transient"), [
    (403, "forbidden: error looking up service account a/default", True),
    (403, 'unable to create new content in namespace x because it is being terminated', True),
    (403, "User cannot create resource", False), (429, "", True), (409, "", False),
    (0, "connection refused", True), (503, "", True), (404, "", False)])
def test_transient_classification(code: int, message: str, transient: bool) -> None:
    assert ApiError(code=code, reason="r", message=message).transient is transient


def test_retry_overrides_the_classification() -> None:
    assert ApiError(code=404, reason="r", message="", retry=True).transient
    assert not ApiError(code=503, reason="r", message="", retry=False).transient


def test_status_bodies_are_read() -> None:
    error = ApiError.from_response(404, b'{"kind":"Status","reason":"NotFound","message":"gone"}')
    assert (error.reason, error.message) == ("NotFound", "gone")
    assert str(error) == "NotFound (404): gone"
    assert not error.gone
    other = ApiError.from_response(502, b"<html>bad gateway</html>")
    assert (other.code, other.reason, other.message) == (502, "HTTP error",
                                                           "<html>bad gateway</html>")


def test_410_is_gone_from_a_response_and_from_a_watch_event() -> None:
    expired = ApiError.from_response(
        410, b'{"kind":"Status","code":410,"reason":"Expired","message":"too old"}')
    assert isinstance(expired, GoneError)
    assert expired.gone
    event = ApiError.from_status({"kind": "Status", "code": 410, "reason": "Expired",
                                  "message": "too old: 5 (10)"})
    assert isinstance(event, GoneError)
    assert str(event) == "Expired (410): too old: 5 (10)"


def test_other_watch_errors_keep_their_code() -> None:
    error = ApiError.from_status({"code": 500, "message": "internal"})
    assert type(error) is ApiError
    assert (error.code, error.reason, error.transient) == (500, "WatchError", True)
    assert ApiError.from_status({}).code == 0


def test_no_answer_names_what_was_asked() -> None:
    error = ApiError.unanswered("GET /api/v1", TimeoutError())
    assert (error.code, error.reason) == (0, "TimeoutError")
    assert error.message == "GET /api/v1: timed out"
    assert error.transient


def test_api_errors_are_simkube_errors_with_a_status_from_their_code() -> None:
    def status(code: int, *, retry: bool | None = None) -> Status:
        return ApiError(code=code, reason="r", message="m", retry=retry).status
    assert isinstance(ApiError(code=404, reason="r", message="m"), SimkubeError)
    assert status(401) == Status.UNAUTHENTICATED
    assert status(403) == Status.PERMISSION_DENIED
    assert status(0) == Status.UNAVAILABLE
    assert status(404, retry=True) == Status.UNAVAILABLE
    assert status(422) == Status.FAILED_PRECONDITION


def test_a_hint_follows_the_api_error() -> None:
    error = ApiError(code=409, reason="AlreadyExists", message="taken")
    error.hint = "pick another name"
    assert str(error) == "AlreadyExists (409): taken\n  hint: pick another name"
    assert error.message == "taken"
