from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from simkube.core.errors import ConfigError
from simkube.env.controlplane.schedconfig import load_user_config, write_scheduler_config

pytestmark = pytest.mark.unit
HEADER = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def test_default_config_points_at_our_kubeconfig(tmp_path: Path) -> None:
    out = write_scheduler_config(path=tmp_path / "s.yaml", kubeconfig=Path("/k"))
    config = yaml.safe_load(out.read_text())
    assert config["clientConnection"] == {"kubeconfig": "/k", "qps": 1000, "burst": 2000}
    assert config["leaderElection"] == {"leaderElect": False}


def test_user_settings_are_kept_but_kubeconfig_and_leader_election_are_ours(
        tmp_path: Path) -> None:
    source = tmp_path / "user.yaml"
    source.write_text(HEADER + "clientConnection: {kubeconfig: /elsewhere, qps: 5}\n"
                      "leaderElection: {leaderElect: true}\n"
                      "profiles: [{schedulerName: packer}]\n")
    out = write_scheduler_config(path=tmp_path / "s.yaml", kubeconfig=Path("/k"),
                                 user_config=load_user_config(source))
    config = yaml.safe_load(out.read_text())
    assert config["clientConnection"]["kubeconfig"] == "/k"
    assert config["clientConnection"]["qps"] == 5
    assert config["leaderElection"]["leaderElect"] is False
    assert config["profiles"] == [{"schedulerName": "packer"}]


@pytest.mark.parametrize(("text", "message"), [
    ("apiVersion: v1\nkind: ConfigMap\n", "has kind 'ConfigMap'"),
    ("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
     "has apiVersion 'kubescheduler.config.k8s.io/v1beta3'"),
    (HEADER + "clientConnection: 3\n", "clientConnection must be a mapping"),
    ("- a list\n", "must be a YAML mapping"),
    ("key: [unclosed\n", "is not valid YAML at line"),
])
def test_bad_user_configs_are_named(tmp_path: Path, text: str, message: str) -> None:
    source = tmp_path / "user.yaml"
    source.write_text(text)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        load_user_config(source)
