"""Cluster Autoscaler's serial calls, made by a Go gRPC client, against ways of serving them.

CA's externalgrpc client clears its NodeGroupForNode cache on every Refresh, so each loop
makes one serial NodeGroupForNode call per node and two NodeGroupGetOptions calls per node;
their round trip, not sk-cloudprov's lookup, is what the loop waits for. The client here is
grpc-go, as in CA (``benchmarks/grpcclient``, built with the local Go toolchain from the
module proxy); it replays one such loop over 1,000 nodes (five groups of 200) against each
server in turn, loop by loop, so every server sees the same machine load. The servers, each
its own process over the same synthetic index (the real ``ClusterIndex`` and
``CloudProviderServicer``; reads never reach the API server, so none is running):

* ``sk-cloudprov``: the production path, ``core.serving.Service`` (grpc.aio, metrics,
  health, reflection) over TCP loopback.
* ``aio-bare``: grpc.aio with the servicer alone: the framework's own cost.
* ``threads``: grpcio's synchronous server (a pool of 4 threads) with the same servicer,
  each call's coroutine run to completion on the pool's thread (the read RPCs never wait).
* ``go-empty``: a grpc-go server that answers every call with an empty message (valid for
  both methods): the round trip a native server would cost, for reference.
* ``sk-cloudprov-front``: the front ``env up --autoscaler`` puts before sk-cloudprov (the
  built binary), forwarding to the ``sk-cloudprov`` server above: after the warm-up loop
  every call of the loop is answered from its cache. ``front-unix``: the same over a unix
  socket (CA's cloud-config accepts ``address: unix:///path``).

Figures: ``cloudprov_calls.per_call`` per server and method (p50/p99 ms, calls/s), and the
p50 time of a whole loop (3,000 calls).
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from google.protobuf.duration_pb2 import Duration

from benchmarks.cloudprov_calls_server import GROUPS, NAMESPACE, PER_GROUP, Variant, build
from simkube.cloudprov.manifests import fake_node
from simkube.env import ports
from simkube.env.toolchain.cache import binary_path
from simkube.env.toolchain.catalog import Binary
from simkube.gen.clusterautoscaler.cloudprovider.v1.externalgrpc import externalgrpc_pb2 as pb

LOOPS = 5
CLIENT = Path(__file__).resolve().parent / "grpcclient"
SERVICE = "/" + pb.DESCRIPTOR.services_by_name["CloudProvider"].full_name + "/"
READY_TIMEOUT = 120.0
GO_EMPTY = "go-empty"
FRONT = "sk-cloudprov-front"
FRONT_UNIX = "front-unix"


def _loop_calls() -> bytes:
    """One loop of CA's calls, encoded for the Go client: per node NodeGroupForNode (with the
    node's labels and annotations, as CA sends them) and NodeGroupGetOptions twice."""
    config, _ = build()
    defaults = pb.NodeGroupAutoscalingOptions(
        scaleDownUtilizationThreshold=0.5, scaleDownGpuUtilizationThreshold=0.5,
        scaleDownUnneededDuration=Duration(seconds=30),
        scaleDownUnreadyDuration=Duration(seconds=60),
        MaxNodeProvisionDuration=Duration(seconds=120))
    out = bytearray()

    def add(method: str, message: Any) -> None:
        name, payload = (SERVICE + method).encode(), message.SerializeToString()
        out.extend(struct.pack(">H", len(name)) + name + struct.pack(">I", len(payload)))
        out.extend(payload)
    for group in config.groups.values():
        options = pb.NodeGroupAutoscalingOptionsRequest(id=group.id, defaults=defaults)
        for number in range(PER_GROUP):
            node = fake_node(group, namespace=NAMESPACE, name=f"{group.id}-x-{number:05d}",
                             pod_cidr=None)
            add("NodeGroupForNode", pb.NodeGroupForNodeRequest(node=pb.ExternalGrpcNode(
                providerID=node["spec"]["providerID"], name=node["metadata"]["name"],
                labels=node["metadata"]["labels"],
                annotations=node["metadata"]["annotations"])))
            add("NodeGroupGetOptions", options)
            add("NodeGroupGetOptions", options)
    return bytes(out)


def _build_client(work: Path) -> Path | str:
    go = shutil.which("go")
    if go is None:
        return "no Go toolchain on PATH"
    binary = work / "grpcclient"
    built = subprocess.run([go, "build", "-o", str(binary), "."], cwd=CLIENT,
                           capture_output=True, text=True, timeout=600, check=False)
    if built.returncode:
        return f"go build failed: {built.stderr.strip()[-500:]}"
    return binary


def _start(server: str, address: str, log: Path, client: Path,
           upstream: str) -> subprocess.Popen[bytes]:
    """``upstream``: the sk-cloudprov server's address, which the fronts forward to."""
    if server == GO_EMPTY:
        argv = [str(client), "-serve", address]
    elif server in {FRONT, FRONT_UNIX}:
        argv = [str(binary_path(Binary.CLOUDPROV_FRONT)), f"--listen={address}",
                f"--upstream={upstream}"]
    else:
        argv = [sys.executable, "-m", "benchmarks.cloudprov_calls_server", server, address]
    with log.open("wb") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)


def _ready(log: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while "serving" not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"bench server did not start: {log.read_text()[-2000:]}")
        time.sleep(0.2)


def run() -> Iterator[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="bench-calls-") as name:
        work = Path(name)
        client = _build_client(work)
        if isinstance(client, str):
            yield {"figure": "cloudprov_calls", "ran": False, "reason": client}
            return
        calls = work / "loop.bin"
        calls.write_bytes(_loop_calls())
        names = [v.value for v in Variant] + [GO_EMPTY, FRONT, FRONT_UNIX]
        addresses = {server: f"127.0.0.1:{port}"
                     for server, port in zip(names, ports.allocate(len(names)), strict=True)}
        addresses[FRONT_UNIX] = f"unix://{work / 'front.sock'}"
        servers = []
        try:
            for server, address in addresses.items():
                log = work / f"{server}.log"
                servers.append((server, log, _start(server, address, log, client,
                                                    addresses[Variant.SK_CLOUDPROV.value])))
            for _, log, process in servers:
                _ready(log, process)
            targets = ",".join(f"{server}={address}" for server, address in addresses.items())
            done = subprocess.run([str(client), "-targets", targets, "-requests", str(calls),
                                   "-loops", str(LOOPS)], capture_output=True, text=True,
                                  timeout=1800, check=True)
        finally:
            for _, _, process in servers:
                process.terminate()
                process.wait(timeout=30)
        for line in done.stdout.splitlines():
            result = json.loads(line)
            yield {"figure": "cloudprov_calls.per_call", "server": result["target"],
                   "method": result["method"], "nodes": GROUPS * PER_GROUP,
                   "calls": result["calls"], "errors": result["errors"],
                   "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"],
                   "calls_per_second": round(result["calls_per_second"]),
                   "loop_p50_ms": result["loop_ms_p50"]}
