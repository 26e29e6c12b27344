"""Errors an RPC answers with, each tied to the gRPC status code Cluster Autoscaler sees.

The scaling and lookup code raises these with a message meant for the person reading CA's
log; the servicer turns them into statuses. Anything else escaping an RPC is a bug and
surfaces as INTERNAL.
"""

from __future__ import annotations

import grpc


class RpcError(Exception):
    code = grpc.StatusCode.UNKNOWN


class NotFoundError(RpcError):
    code = grpc.StatusCode.NOT_FOUND


class InvalidArgumentError(RpcError):
    code = grpc.StatusCode.INVALID_ARGUMENT


class OutOfRangeError(RpcError):
    """The request is well formed but would take a group past its min or max size."""

    code = grpc.StatusCode.OUT_OF_RANGE


class FailedPreconditionError(RpcError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class AbortedError(RpcError):
    """Someone else changed the group's Deployment meanwhile; nothing was changed."""

    code = grpc.StatusCode.ABORTED


class UnavailableError(RpcError):
    code = grpc.StatusCode.UNAVAILABLE
