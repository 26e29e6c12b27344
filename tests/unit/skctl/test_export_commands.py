from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import skctl

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("args", "message"), [
    (["--start", "yesterday"], "--start 'yesterday' is not a time"),
    (["--start", "-5m", "--end", "-10m"], "--end (-10m) must be after --start (-5m)"),
    (["--kind", "Deployment"], "--kind 'Deployment' is not a kind key"),
    (["--namespace", "a", "--exclude-namespace", "a"], "both included and excluded"),
    (["--selector", "app in (x"], "cannot parse"),
    (["--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
    (["--tls-ca", "missing-ca.pem"], "TLS CA missing-ca.pem cannot be read"),
])
def test_bad_export_flags_fail_before_connecting(args: list[str], message: str,
                                                 tmp_path: Path) -> None:
    result = skctl("export", "--tracer", "127.0.0.1:9", "-o", str(tmp_path / "t.trace"), *args,
                   check=False)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_unreachable_tracer_and_missing_output_directory(tmp_path: Path) -> None:
    result = skctl("export", "--tracer", "127.0.0.1:9", "-o", str(tmp_path / "t.trace"),
                   check=False)
    assert result.returncode == 1
    assert "cannot reach the tracer at 127.0.0.1:9" in result.stderr
    assert list(tmp_path.iterdir()) == []
    result = skctl("export", "--tracer", "127.0.0.1:9", "-o", str(tmp_path / "no" / "t.trace"),
                   check=False)
    assert result.returncode == 2
    assert "does not exist" in result.stderr
    status = skctl("tracer", "status", "--tracer", "127.0.0.1:9", check=False)
    assert status.returncode == 1
    assert "cannot reach the tracer" in status.stderr
