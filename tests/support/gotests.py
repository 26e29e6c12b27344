"""The Go tests of the project's own toolchain modules (the CA front, the metrics-server and
Karpenter wrappers, the scheduler's command, their shared clocks), run from the integration
test of the component they build, so that ``make test`` checks the Go code with the Python
that drives it."""

from __future__ import annotations

import os
import subprocess

from simkube.env.toolchain.building import go_binary
from simkube.env.toolchain.catalog import TOOLCHAIN_DIR, BuildGroup


def assert_go_tests_pass(group: BuildGroup) -> None:
    """``go test ./...`` in ``group``'s module and the shared modules it builds with, with
    their pinned dependencies only."""
    for module_dir in (group.module_dir, *(TOOLCHAIN_DIR / name for name in group.shared)):
        done = subprocess.run([go_binary(), "test", "-count=1", "./..."], cwd=module_dir,
                              capture_output=True, text=True, timeout=600, check=False,
                              env={**os.environ, "GOFLAGS": "-mod=readonly"})
        assert done.returncode == 0, f"{module_dir.name}: {done.stdout}{done.stderr}"
