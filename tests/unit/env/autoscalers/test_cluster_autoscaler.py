"""Which Cluster Autoscaler binary runs, and what is refused before anything starts.

The binaries here are small shell scripts that answer ``--help`` and print CA's start-up
version line as the real one does; the real binary is exercised by the autoscaler tier.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.errors import EnvironmentStateError
from simkube.core.replay_flags import BYPASSED_SCHEDULER, FREQUENT_LOOPS_FLAG
from simkube.env.autoscalers import cluster_autoscaler as autoscaler
from simkube.env.autoscalers.cluster_autoscaler import BINARY_ENV, check, resolve
from simkube.env.controlplane.components import Layout

pytestmark = pytest.mark.unit
HELP = ("      --cloud-provider string   Cloud provider type. Available values: "
        "[{providers}] (default kwok)\n"
        "      --scale-down-unneeded-time duration   How long a node should be unneeded\n")


def fake_ca(directory: Path, *, version: str = "1.36.1", providers: str = "externalgrpc,kwok",
            name: str = "cluster-autoscaler") -> Path:
    script = directory / name
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--help" ]; then printf "{HELP.format(providers=providers)}" >&2; '
        "exit 0; fi\n"
        f'echo "I1124 22:00:00.000000 1 main.go:250] Cluster Autoscaler {version}" >&2\n'
        'echo "F1124 22:00:00.000001 1 main.go:300] invalid kubeconfig" >&2\nexit 255\n')
    script.chmod(0o755)
    return script


def test_a_tested_version_is_taken_without_warning(tmp_path: Path) -> None:
    found = check(fake_ca(tmp_path), source="--autoscaler-binary")
    assert (found.version, found.warning) == ("1.36.1", None)


def test_another_minor_version_is_accepted_with_a_warning(tmp_path: Path) -> None:
    found = check(fake_ca(tmp_path, version="1.35.0"), source="x")
    assert found.version == "1.35.0"
    assert found.warning is not None
    assert "tested with 1.36.1" in found.warning
    assert "older externalgrpc protocol" not in found.warning


def test_a_version_before_the_protocol_is_warned_about(tmp_path: Path) -> None:
    found = check(fake_ca(tmp_path, version="1.33.4"), source="x")
    assert found.warning is not None
    assert "before 1.34.2 speaks an older externalgrpc protocol" in found.warning


def test_an_unreadable_version_is_a_warning(tmp_path: Path) -> None:
    script = fake_ca(tmp_path)
    script.write_text(script.read_text().replace("Cluster Autoscaler 1.36.1", "hello"))
    found = check(script, source="x")
    assert found.version is None
    assert found.warning is not None
    assert "could not tell the version" in found.warning


@pytest.mark.parametrize(("prepare", "message"), [
    (lambda d: d / "missing", "does not exist"),
    (lambda d: d, "is not a file"),
    (lambda d: fake_ca(d).chmod(0o644) or d / "cluster-autoscaler", "is not executable"),
    (lambda d: fake_ca(d, providers="aws,gce"), "without the externalgrpc cloud provider"),
])
def test_unusable_binaries_are_refused_with_the_reason(tmp_path: Path, prepare: object,
                                                       message: str) -> None:
    path = prepare(tmp_path)  # type: ignore[operator]
    with pytest.raises(EnvironmentStateError, match=message) as caught:
        check(path, source="--autoscaler-binary")
    assert "Nothing was started" in str(caught.value)


def test_a_program_that_is_not_ca_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.write_text("#!/bin/sh\necho usage: other [flags]\n")
    other.chmod(0o755)
    with pytest.raises(EnvironmentStateError, match="is not a Cluster Autoscaler binary"):
        check(other, source="x")


def test_the_flag_wins_over_the_environment(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    flag = fake_ca(tmp_path, name="from-flag")
    monkeypatch.setenv(BINARY_ENV, str(fake_ca(tmp_path, name="from-env")))
    assert resolve(flag).path == flag
    found = resolve(None)
    assert (found.path.name, found.source) == ("from-env", BINARY_ENV)


def test_without_any_binary_the_error_names_both_ways(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BINARY_ENV, raising=False)
    monkeypatch.setenv("SIMKUBE_CACHE_DIR", str(tmp_path))
    with pytest.raises(EnvironmentStateError, match="is not in the binary cache") as caught:
        resolve(None)
    assert "--autoscaler-binary" in str(caught.value.hint)
    assert BINARY_ENV in str(caught.value.hint)
    assert autoscaler.DOCS in str(caught.value.hint)


def test_extra_flags_replace_the_tuning_by_name_and_keep_its_order() -> None:
    flags = autoscaler.merge_flags(("--expander=price", "--new-pod-scale-up-delay=5s"))
    assert "--expander=price" in flags
    assert "--expander=least-waste,price" not in flags
    assert flags.index("--expander=price") == list(autoscaler.DEFAULT_FLAGS).index(
        "--expander=least-waste,price")
    assert flags[-1] == "--new-pod-scale-up-delay=5s"


@pytest.mark.parametrize(("flag", "message"), [
    ("expander=price", "is not of the form --name=value"),
    ("--expander", "is not of the form --name=value"),
    ("--kubeconfig=/tmp/other", "wires CA to this environment"),
    ("--cloud-provider=aws", "wires CA to this environment"),
])
def test_bad_or_wiring_flags_are_refused(flag: str, message: str) -> None:
    with pytest.raises(EnvironmentStateError, match=message):
        autoscaler.merge_flags((flag,))


def test_the_environments_ca_keeps_the_pod_age_wait(tmp_path: Path) -> None:
    """Production's: at speed 1 it makes a burst of pods one plan (core/replay_flags.py)."""
    argv = autoscaler.autoscaler_spec(binary=tmp_path / "ca", layout=Layout(root=tmp_path),
                                      port=8085).argv
    assert f"--bypassed-scheduler-names={BYPASSED_SCHEDULER}" not in argv
    assert not any(arg.startswith(f"--{FREQUENT_LOOPS_FLAG}") for arg in argv)
