from __future__ import annotations

from pathlib import Path

import pytest

from simkube.core.config import load_yaml_mapping, path_from_env
from simkube.core.errors import ConfigError

pytestmark = pytest.mark.unit


def test_reads_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("a: 1\nb: [x]\n")
    assert load_yaml_mapping(path, what="config") == {"a": 1, "b": ["x"]}


@pytest.mark.parametrize(("content", "message"), [
    (b"", "must be a YAML mapping, but it is empty"),
    (b"- 1\n", "must be a YAML mapping, but it is a list"),
    (b"a: [1\n", "is not valid YAML at line 2"),
    (b"\xff\xfe\x00", "is not UTF-8 text"),
])
def test_bad_files_are_named(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")) as info:
        load_yaml_mapping(path, what="node config")
    assert str(info.value).startswith(f"node config {path}")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_yaml_mapping(tmp_path / "nope.yaml", what="config")


def test_path_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SK_TEST_DIR", "~/x")
    assert path_from_env("SK_TEST_DIR", Path("/d")) == Path.home() / "x"
    monkeypatch.setenv("SK_TEST_DIR", "  ")
    assert path_from_env("SK_TEST_DIR", Path("/d")) == Path("/d")
