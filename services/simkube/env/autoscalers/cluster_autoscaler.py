"""Cluster Autoscaler (CA) in a local environment: its binary, cloud-config and command line.

CA talks to sk-cloudprov through its ``externalgrpc`` cloud provider. The Go module proxy
this project builds from refuses ``k8s.io/autoscaler/cluster-autoscaler``, and users usually
have CA already (the official image's ``/cluster-autoscaler``, their own build), so the
binary comes from, in order: ``--autoscaler-binary PATH``, ``$SIMKUBE_CLUSTER_AUTOSCALER``,
the binary cache (``skctl env build --autoscaler`` where the proxy serves CA). It is checked
before anything starts: a file that is missing, not executable, not CA, or CA without the
externalgrpc provider is refused with the reason; a version other than the tested one is
accepted with a warning. CA 1.36 has no ``--version`` flag; it logs its version as it starts,
so the check starts it against a kubeconfig that does not exist and reads that line.

Timings are shortened from CA's production defaults (10 s scans, 10 min before scale-down)
so that a replay at 10x shows scale-ups and scale-downs within minutes.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from simkube.core.errors import EnvironmentStateError
from simkube.core.version import UPSTREAM
from simkube.env.autoscalers import flagmerge
from simkube.env.controlplane.components import Layout
from simkube.env.ports import LOOPBACK
from simkube.env.services.commands import ServiceSpec
from simkube.env.toolchain.cache import EntryState, entry_dir, verify
from simkube.env.toolchain.catalog import CLUSTER_AUTOSCALER, Binary

NAME = "cluster-autoscaler"
BINARY_ENV = "SIMKUBE_CLUSTER_AUTOSCALER"
GRPC_TIMEOUT = "10s"  # per call; CA's default of 5s leaves little room on a loaded laptop
DOCS = "docs/cloudprov.md"
PROTOCOL_SINCE = (1, 34, 2)  # the first CA whose externalgrpc wire format this project speaks
PROBE_SECONDS = 20.0
_VERSION_LINE = re.compile(r"Cluster Autoscaler v?(\d+)\.(\d+)\.(\d+)\S*")


@dataclass(frozen=True, kw_only=True)
class AutoscalerBinary:
    path: Path
    source: str  # where it came from, for messages
    version: str | None  # as CA logs it; None when it could not be read
    warning: str | None = None


def resolve(explicit: Path | None = None) -> AutoscalerBinary:
    """The CA binary to run, checked; ``EnvironmentStateError`` (exit 3) saying why not."""
    if explicit is not None:
        return check(explicit, source="--autoscaler-binary")
    named = os.environ.get(BINARY_ENV, "").strip()
    if named:
        return check(Path(named), source=BINARY_ENV)
    cached = verify(CLUSTER_AUTOSCALER)
    if cached.state is EntryState.READY:
        return check(entry_dir(CLUSTER_AUTOSCALER) / Binary.CLUSTER_AUTOSCALER.value,
                     source="the binary cache")
    found = ("is not in the binary cache" if cached.state is EntryState.MISSING
             else f"has a corrupt cache entry ({cached.reason})")
    raise EnvironmentStateError(
        f"cannot start the environment with --autoscaler: no Cluster Autoscaler binary was "
        f"given (--autoscaler-binary or {BINARY_ENV}), and cluster-autoscaler "
        f"{CLUSTER_AUTOSCALER.version} {found} ({entry_dir(CLUSTER_AUTOSCALER)}). "
        "Nothing was started.",
        hint=f"pass --autoscaler-binary PATH or set {BINARY_ENV}=PATH to a CA "
             f"{UPSTREAM.cluster_autoscaler} built with tags externalgrpc,kwok (how: {DOCS}); "
             "'skctl env up --services' runs everything else")


def check(path: Path, *, source: str) -> AutoscalerBinary:
    """Refuse what cannot be CA with externalgrpc; warn about an untested version."""
    def refuse(problem: str, hint: str) -> EnvironmentStateError:
        return EnvironmentStateError(
            f"cannot start the environment with --autoscaler: {path} (from {source}) "
            f"{problem}. Nothing was started.", hint=hint)
    if not path.is_file():
        raise refuse("does not exist" if not path.exists() else "is not a file",
                     f"point {source} at the cluster-autoscaler executable")
    if not os.access(path, os.X_OK):
        raise refuse("is not executable", f"chmod +x {path}")
    help_text = _run(path, "--help")
    if "--cloud-provider" not in help_text or "--scale-down-unneeded-time" not in help_text:
        raise refuse("is not a Cluster Autoscaler binary (its --help lists no "
                     "--cloud-provider and --scale-down-unneeded-time flags)",
                     f"point {source} at the cluster-autoscaler executable")
    if "externalgrpc" not in help_text:
        raise refuse("is Cluster Autoscaler built without the externalgrpc cloud provider",
                     "build it with 'go build -tags externalgrpc,kwok' (or use the official "
                     "image's binary, which has every provider)")
    with tempfile.TemporaryDirectory(prefix="skctl-ca-probe-") as empty:
        started = _run(path, "--v=1", f"--kubeconfig={Path(empty) / 'none'}",
                       "--cloud-provider=externalgrpc", f"--cloud-config={Path(empty) / 'none'}")
    match = _VERSION_LINE.search(started)
    if match is None:
        return AutoscalerBinary(path=path, source=source, version=None, warning=(
            f"could not tell the version of {path}; this project is tested with Cluster "
            f"Autoscaler {UPSTREAM.cluster_autoscaler}"))
    version = tuple(int(part) for part in match.groups())
    text = ".".join(map(str, version))
    warning = None
    if version[:2] != tuple(int(p) for p in UPSTREAM.cluster_autoscaler.split(".")[:2]):
        warning = (f"{path} is Cluster Autoscaler {text}; this project is tested with "
                   f"{UPSTREAM.cluster_autoscaler}")
        if version < PROTOCOL_SINCE:
            warning += (f", and CA before {'.'.join(map(str, PROTOCOL_SINCE))} speaks an "
                        "older externalgrpc protocol: expect failed calls")
    return AutoscalerBinary(path=path, source=source, version=text, warning=warning)


def _run(path: Path, *args: str) -> str:
    """Run the binary briefly; its stdout and stderr together, whatever its exit code."""
    try:
        done = subprocess.run([str(path), *args], capture_output=True, text=True,
                              errors="replace", timeout=PROBE_SECONDS, check=False)
    except subprocess.TimeoutExpired as exc:
        return _text(exc.stdout) + _text(exc.stderr)
    except OSError as exc:
        raise EnvironmentStateError(
            f"cannot start the environment with --autoscaler: {path} cannot be run ({exc}). "
            "Nothing was started.", hint="is it a binary for this machine's OS and CPU?",
        ) from None
    return done.stdout + done.stderr


def _text(output: str | bytes | None) -> str:
    if isinstance(output, bytes):
        return output.decode(errors="replace")
    return output or ""


def cloud_config_path(layout: Layout) -> Path:
    return layout.root / "autoscaler-cloud-config.yaml"


def cloud_config(*, cloudprov_address: str) -> str:
    """The externalgrpc cloud-config: sk-cloudprov's address, plaintext on loopback."""
    return (f"# written by skctl env up --autoscaler\naddress: {cloudprov_address}\n"
            f"grpc_timeout: {GRPC_TIMEOUT}\n")


def write_cloud_config(*, layout: Layout, cloudprov_address: str) -> Path:
    path = cloud_config_path(layout)
    path.write_text(cloud_config(cloudprov_address=cloudprov_address))
    return path


WIRING = ("--cloud-provider", "--cloud-config", "--kubeconfig", "--address", "--leader-elect")
DEFAULT_FLAGS = (
    "--scan-interval=2s",
    # Scale down soon after the load goes: minutes of trace time are seconds here.
    "--scale-down-enabled=true", "--scale-down-delay-after-add=30s",
    "--scale-down-delay-after-delete=0s", "--scale-down-delay-after-failure=10s",
    "--scale-down-unneeded-time=30s",
    # A node that once held pods CA could not move is not looked at again for this long.
    "--unremovable-node-recheck-timeout=30s", "--scale-down-unready-time=1m",
    "--max-node-provision-time=2m", "--max-nodes-total=1000",
    # Fake nodes have no local storage or system pods worth protecting.
    "--skip-nodes-with-local-storage=false", "--skip-nodes-with-system-pods=false",
    # least-waste, and price where groups waste the same: CA breaks a tie left after the
    # chain at random, which no seed reaches (two repetitions of one seeded run bought
    # `large +2` and `small +8` for the same pods, 41.41 % waste either way).
    "--expander=least-waste,price", "--balance-similar-node-groups=false",
    "--kube-client-qps=100", "--kube-client-burst=200", "--v=2")


def merge_flags(extra: tuple[str, ...]) -> list[str]:
    """The default tuning with ``extra`` (``--name=value`` each) replacing same-named flags."""
    return flagmerge.merge_flags(defaults=DEFAULT_FLAGS, extra=extra, wiring=WIRING, owner="CA",
                                 example="--expander=price")


def autoscaler_spec(*, binary: Path, layout: Layout, port: int,
                    extra: tuple[str, ...] = ()) -> ServiceSpec:
    """CA's command line; healthy when ``/health-check`` on its ``--address`` answers 200."""
    return ServiceSpec(name=NAME, port=port,
                       health_url=f"http://{LOOPBACK}:{port}/health-check", argv=[
        str(binary), "--cloud-provider=externalgrpc",
        f"--cloud-config={cloud_config_path(layout)}",
        f"--kubeconfig={layout.admin_kubeconfig}", f"--address={LOOPBACK}:{port}",
        "--leader-elect=false", *merge_flags(extra)])
