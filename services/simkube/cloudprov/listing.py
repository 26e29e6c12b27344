"""NodeGroupNodes answers: every instance of a group with its state, fast at 5,000 nodes.

Cluster Autoscaler lists every group's instances in every loop and matches ``Instance.id`` to
the Nodes' ``spec.providerID``, so the id is exactly ``simkube://<name>``. Building 5,000
``Instance`` messages one by one takes tens of milliseconds of Python; so each instance's
encoding is kept (as a one-instance response) until its phase changes, and an answer is
those encodings concatenated — protobuf merges concatenated messages by appending repeated
fields — decoded in one C call. Nothing is rebuilt while no phase changes, which is most of
the time (Node heartbeats change none).
"""

from __future__ import annotations

from simkube.cloudprov.index import GroupState, Phase
from simkube.cloudprov.naming import provider_id
from simkube.cloudprov.provisioning import OUT_OF_RESOURCES, STOCKOUT_CODE
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb

STATES = {Phase.CREATING: pb.InstanceStatus.instanceCreating,
          Phase.RUNNING: pb.InstanceStatus.instanceRunning,
          Phase.DELETING: pb.InstanceStatus.instanceDeleting,
          Phase.FAILED: pb.InstanceStatus.instanceCreating}


def instance(name: str, phase: Phase) -> pb.Instance:
    """One instance as CA reads it; a stockout is "creating" with an OutOfResources error."""
    status = pb.InstanceStatus(instanceState=STATES[phase])
    if phase is Phase.FAILED:
        status.errorInfo.CopyFrom(pb.InstanceErrorInfo(
            errorCode=STOCKOUT_CODE, instanceErrorClass=OUT_OF_RESOURCES,
            errorMessage=f"no capacity left for {name} in its node group's zone"))
    return pb.Instance(id=provider_id(name), status=status)


class InstanceListing:
    """The answers for one group, rebuilt when its phase ``generation`` has moved."""

    def __init__(self) -> None:
        self._pieces: dict[str, tuple[Phase, bytes]] = {}
        self._generation = -1
        self._response = pb.NodeGroupNodesResponse()

    def response(self, state: GroupState) -> pb.NodeGroupNodesResponse:
        if state.generation != self._generation:
            pieces: dict[str, tuple[Phase, bytes]] = {}
            for name, phase in state.phases.items():
                piece = self._pieces.get(name)
                if piece is None or piece[0] is not phase:
                    piece = (phase, pb.NodeGroupNodesResponse(
                        instances=[instance(name, phase)]).SerializeToString())
                pieces[name] = piece
            self._pieces = pieces
            self._response = pb.NodeGroupNodesResponse.FromString(
                b"".join(piece for _, piece in pieces.values()))
            self._generation = state.generation
        return self._response
