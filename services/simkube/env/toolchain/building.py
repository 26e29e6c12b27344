"""Building upstream binaries from the Go module proxy, with progress and specific errors.

Each group is one ``go build`` of its wrapper module (``-mod=readonly``, so the checked-in
go.sum is the only source of truth). ``-v`` makes Go name each package as it compiles it,
which is what the progress display counts. Output goes to a staging directory that
``cache.install_entry`` moves into place only after the build succeeded.

Cluster Autoscaler's wrapper has no go.sum: the proxy this project is developed against
refuses its module, so nothing could be pinned. Its build copies the wrapper to the staging
directory and lets Go resolve the module there (``-mod=mod``, checked against the checksum
database as ``go env`` configures); a refusal names the other ways to get a CA binary.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from simkube.core.errors import BuildError
from simkube.env.paths import cache_dir
from simkube.env.toolchain.cache import ASSETS, EntryState, entry_dir, install_entry, verify
from simkube.env.toolchain.catalog import BuildGroup

MIN_GO = (1, 26)
_GO_VERSION = re.compile(r"go(\d+)\.(\d+)")
_PROXY_UNREACHABLE = ("dial tcp", "no such host", "connection refused", "i/o timeout",
                      "TLS handshake timeout", "network is unreachable")
_PROXY_REFUSED = ("403 Forbidden", "404 Not Found", "410 Gone", "not available")

ProgressCallback = Callable[[str], None]
BRING_YOUR_OWN = (
    "use a Cluster Autoscaler binary you have instead: 'skctl env up --autoscaler "
    "--autoscaler-binary PATH', or set SIMKUBE_CLUSTER_AUTOSCALER=PATH (the official image's "
    "/cluster-autoscaler, or 'go build -tags externalgrpc,kwok' in a checkout of "
    "cluster-autoscaler-1.36.1); see docs/cloudprov.md")


@dataclass(frozen=True, kw_only=True)
class BuildResult:
    group: BuildGroup
    seconds: float
    cached: bool
    path: Path


def go_binary() -> str:
    """The ``go`` to build with, checked for presence and version."""
    go = os.environ.get("GO") or shutil.which("go")
    if not go:
        raise BuildError("Go is not installed or not on PATH",
                         hint="install Go >= 1.26 or set GO=/path/to/go")
    try:
        output = subprocess.run([go, "version"], capture_output=True, text=True, check=True,
                                timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"'{go} version' failed: {exc}") from None
    match = _GO_VERSION.search(output)
    if not match or (int(match[1]), int(match[2])) < MIN_GO:
        raise BuildError(f"Go {'.'.join(map(str, MIN_GO))} or newer is needed; "
                         f"found: {output.strip()}")
    return go


def classify_failure(group: BuildGroup, log_text: str, log_path: Path) -> BuildError:
    """Turn ``go build`` output into the error a user can act on."""
    module = next(iter(group.packages.values()))
    if group.optional and any(marker in log_text for marker in _PROXY_REFUSED):
        return BuildError(
            f"the Go module proxy refuses {module} (needed for {group.name} {group.version}), "
            f"so it cannot be built here; see {log_path}", hint=BRING_YOUR_OWN)
    if any(marker in log_text for marker in _PROXY_REFUSED):
        return BuildError(
            f"the Go module proxy refused a module needed for {group.name} {group.version} "
            f"({module}); see {log_path}",
            hint="check GOPROXY (go env GOPROXY); this module version may not be served here",
        )
    if any(marker in log_text for marker in _PROXY_UNREACHABLE):
        return BuildError(
            f"the Go module proxy is unreachable while building {group.name}; see {log_path}",
            hint="check network access to GOPROXY (go env GOPROXY) or a proxy setting",
        )
    if "missing go.sum entry" in log_text or "checksum mismatch" in log_text:
        return BuildError(f"the pinned go.sum for {group.name} does not match what the proxy "
                          f"serves; see {log_path}")
    if group.optional:
        return BuildError(
            f"{group.name} {group.version} did not build ({module}); see {log_path}",
            hint=BRING_YOUR_OWN)
    tail = "\n".join(log_text.strip().splitlines()[-5:])
    return BuildError(f"building {group.name} {group.version} failed; see {log_path}:\n{tail}")


def go_output_name(package: str) -> str:
    """The file name ``go build -o DIR/`` gives a main package: its last path element, or
    the one before it when the last is a major-version suffix such as ``v3``."""
    parts = package.split("/")
    return parts[-2] if re.fullmatch(r"v\d+", parts[-1]) and len(parts) > 1 else parts[-1]


def _go_build(go: str, group: BuildGroup, staging: Path, log_path: Path,
              on_package: ProgressCallback) -> None:
    ldflags = " ".join(("-s", "-w", *group.ldflags))
    module_dir, mode = group.module_dir, "-mod=readonly"
    if not (module_dir / "go.sum").is_file():  # unpinned (only optional groups get here)
        module_dir = staging / "module"
        shutil.copytree(group.module_dir, module_dir)
        mode = "-mod=mod"
    command = [go, "build", "-v", "-trimpath", mode, f"-ldflags={ldflags}",
               f"-o={staging}{os.sep}"]
    if group.tags:
        command.append(f"-tags={','.join(group.tags)}")
    command += list(group.packages.values())
    env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "", "GOWORK": "off"}
    with log_path.open("w") as log:
        log.write(" ".join(command) + "\n")
        process = subprocess.Popen(command, cwd=module_dir, env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for line in process.stdout or ():
            log.write(line)
            on_package(line.strip())
        code = process.wait()
    if code != 0:
        raise classify_failure(group, log_path.read_text(errors="replace"), log_path)
    for binary, package in group.packages.items():
        built = staging / go_output_name(package)
        if built.name != binary.value:
            built.rename(staging / binary.value)
    _copy_assets(go, group, module_dir, staging, env)
    shutil.rmtree(staging / "module", ignore_errors=True)


def _copy_assets(go: str, group: BuildGroup, module_dir: Path, staging: Path,
                 env: dict[str, str]) -> None:
    """The group's assets from the module version the wrapper pins (checked against its
    go.sum). ``go mod download`` also fetches a module the build itself did not need (helm's
    wrapper pins cert-manager only for its CRDs) and names its directory."""
    if not group.assets:
        return
    (staging / ASSETS).mkdir()
    for module in dict.fromkeys(module for module, _ in group.assets):
        listed = subprocess.run([go, "mod", "download", "-json", module],
                                cwd=module_dir, env=env, capture_output=True, text=True,
                                timeout=600, check=False)
        try:
            source = Path(json.loads(listed.stdout).get("Dir") or "")
        except ValueError:
            source = Path()
        if listed.returncode != 0 or not source.is_dir():
            raise BuildError(f"cannot find {module}'s files for {group.name}'s assets: "
                             f"{listed.stderr.strip() or listed.stdout.strip()}")
        for path in (path for owner, path in group.assets if owner == module):
            if not (source / path).is_file():
                raise BuildError(f"{module} {group.version} has no {path}; the pinned version "
                                 "does not ship what this project expects")
            shutil.copyfile(source / path, staging / ASSETS / Path(path).name)


def build_group(group: BuildGroup, *, force: bool = False,
                on_package: ProgressCallback = lambda _line: None,
                on_build: Callable[[], None] = lambda: None) -> BuildResult:
    """Build one group unless a verified cache entry exists (or ``force``); ``on_build`` is
    called when it will be built, ``on_package`` with every line Go prints."""
    check = verify(group, deep=True)
    if check.state is EntryState.READY and not force:
        return BuildResult(group=group, seconds=0.0, cached=True, path=entry_dir(group))
    on_build()
    if not (group.module_dir / "go.sum").is_file() and not group.optional:
        raise BuildError(f"{group.name} has no pinned go.sum in {group.module_dir}; it cannot "
                         "be built from the Go module proxy here")
    go = go_binary()
    root = cache_dir() / "bin"
    root.mkdir(parents=True, exist_ok=True)
    log_path = cache_dir() / "logs" / f"{group.cache_key}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".staging-{group.name}-", dir=root))
    started = time.monotonic()
    try:
        _go_build(go, group, staging, log_path, on_package)
        seconds = time.monotonic() - started
        path = install_entry(group, staging=staging, build_seconds=seconds)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return BuildResult(group=group, seconds=seconds, cached=False, path=path)

