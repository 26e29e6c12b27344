from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
SK_TRACER = str(Path(sys.executable).parent / "sk-tracer")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SK_TRACER, *args], capture_output=True, text=True, timeout=60,
                          check=False)


@pytest.mark.parametrize(("args", "message"), [
    (["--store", "S", "--retention-age", "a week"], "--retention-age 'a week' is not a duration"),
    (["--store", "S", "--retention-bytes", "lots"], "--retention-bytes 'lots' is not a size"),
    (["--store", "S", "--usage-period", "often"], "--usage-period 'often'"),
    (["--store", "S", "--usage-period", "2h"], "usage.period is 7200 s; use 1s to 1h, or 0"),
    (["--store", "S", "--config", "missing.yaml"], "tracer config missing.yaml does not exist"),
    (["--store", "S", "--kubeconfig", "missing"], "--kubeconfig missing does not exist"),
    (["--store", "S", "--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
    (["--store", "S", "--tls-cert", "c", "--tls-key", "k"], "TLS key k cannot be read"),
    (["--store", "S", "--tls-client-ca", "ca"], "--tls-client-ca needs --tls-cert"),
])
def test_bad_flags_exit_with_a_message(args: list[str], message: str, tmp_path: Path) -> None:
    result = subprocess.run([SK_TRACER, *args], capture_output=True, text=True, timeout=60,
                            check=False, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "S").exists()  # nothing was started or created


def test_a_bad_listen_address_and_a_missing_store_flag(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("""apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
""")
    result = run("--store", str(tmp_path / "s"), "--kubeconfig", str(kubeconfig),
                 "--listen", "nowhere")
    assert result.returncode == 2
    assert "--listen 'nowhere' is not HOST:PORT" in result.stderr
    missing = run()
    assert missing.returncode == 2
    assert "Missing option '--store'" in missing.stderr
