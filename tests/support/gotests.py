"""The Go tests of the project's own toolchain modules (the CA front, the metrics-server
wrapper), run from the integration test of the component they build, so that ``make test``
checks the Go code with the Python that drives it."""

from __future__ import annotations

import os
import subprocess

from simkube.env.toolchain.building import go_binary
from simkube.env.toolchain.catalog import BuildGroup


def assert_go_tests_pass(group: BuildGroup) -> None:
    """``go test ./...`` in ``group``'s module, with its pinned dependencies only."""
    done = subprocess.run([go_binary(), "test", "-count=1", "./..."], cwd=group.module_dir,
                          capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "GOFLAGS": "-mod=readonly"})
    assert done.returncode == 0, done.stdout + done.stderr
