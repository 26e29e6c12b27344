"""``sk-cloudprov`` refusing bad flags and configs before it touches a cluster.

One test runs the installed console script; the others call its ``main`` in-process (the
same code path, without a second of interpreter start-up each).
"""

from __future__ import annotations

import io
import logging
import subprocess
import sys
from pathlib import Path

import pytest
import structlog

from simkube.cloudprov.main import main

pytestmark = pytest.mark.unit

COMMAND = str(Path(sys.executable).parent / "sk-cloudprov")
GOOD = "nodeGroups: [{id: a, maxSize: 2, shape: {cpu: 1, memory: 1Gi, instanceType: t, zone: z}}]"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """``main`` as the console script calls it; exit code and output captured.

    ``main`` configures logging for the process; what it changes is put back afterwards so
    later tests log as before.
    """
    saved_structlog = structlog.get_config()
    root = logging.getLogger()
    saved_root = (list(root.handlers), root.level)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", ["sk-cloudprov", *args])
        out, err = io.StringIO(), io.StringIO()
        patch.setattr(sys, "stdout", out)
        patch.setattr(sys, "stderr", err)
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            structlog.configure(**saved_structlog)
            root.handlers[:], root.level = saved_root
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def test_the_installed_command_reports_a_bad_config(tmp_path: Path) -> None:
    path = config(tmp_path, "nodeGroups: [{id: a, maxSize: 1, shape: {cpu: 1}}]")
    result = subprocess.run([COMMAND, "--config", path], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 2
    assert result.stderr == f"error: {path}: node group 'a': shape.memory: is required\n"


def config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(("text", "message"), [
    ("nodeGroups: [{id: a, minSize: 3, maxSize: 2, shape: {cpu: 1}}]",
     "config.yaml: node group 'a': maxSize: 2 is below minSize 3"),
    ("nodeGroups: [{id: a, maxSize: 2, shape: {cpu: 1, memory: 1Gi, instanceType: t}}]",
     "config.yaml: node group 'a': shape.zone: is required"),
    ("nodeGroups: [{id: a, maxSize: 2, nodeFile: nowhere.yaml}]",
     "node group 'a': nodeFile", ),
])
def test_a_bad_config_stops_it_before_the_cluster_is_touched(tmp_path: Path, text: str,
                                                             message: str) -> None:
    # The kubeconfig does not exist: the config must be refused first.
    result = run("--config", config(tmp_path, text), "--kubeconfig", str(tmp_path / "none"))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: ")
    assert message in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--tls-key", "k.pem"], "--tls-cert and --tls-key go together"),
    (["--tls-client-ca", "ca.pem"], "--tls-client-ca needs --tls-cert and --tls-key"),
    (["--config", "configmap:only-a-namespace"], "write configmap:NAMESPACE/NAME"),
    (["--listen", "8086"], "--listen '8086' is not HOST:PORT"),
])
def test_bad_flags(tmp_path: Path, args: list[str], message: str) -> None:
    result = run("--config", config(tmp_path, GOOD), "--kubeconfig", str(tmp_path / "kc"), *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr


def test_a_missing_kubeconfig_is_named(tmp_path: Path) -> None:
    result = run("--config", config(tmp_path, GOOD), "--kubeconfig", str(tmp_path / "kc"))
    assert result.returncode == 2
    assert f"kubeconfig {tmp_path / 'kc'} does not exist" in result.stderr


def test_missing_config_file(tmp_path: Path) -> None:
    result = run("--config", str(tmp_path / "nope.yaml"))
    assert result.returncode == 2
    assert f"config file {tmp_path / 'nope.yaml'} does not exist" in result.stderr


def test_help_lists_every_flag() -> None:
    result = run("--help")
    assert result.returncode == 0
    for flag in ("--config", "--kubeconfig", "--listen", "--metrics-listen", "--tls-cert",
                 "--tls-key", "--tls-client-ca"):
        assert flag in result.stdout
