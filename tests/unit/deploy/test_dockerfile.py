"""deploy/Dockerfile and .dockerignore against the repository they build from.

No container engine runs here, so the image is not built; what can go wrong without one is
checked instead: every file the build copies exists and is not ignored, the builder stage
installs what tools/genproto.py imports, every command the manifests run is a console
script of the package, and the layout Tilt's live_update relies on (/app/services).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[3]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
IMAGE = "simkube-py"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    joined: list[str] = []
    pending = ""
    for line in DOCKERFILE.read_text().splitlines():
        stripped = line.strip()
        if stripped.startswith("#") or not stripped:
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        joined.append(pending + stripped)
        pending = ""
    assert not pending, "the Dockerfile ends inside a continued line"
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in joined]


def _pattern(glob: str) -> re.Pattern[str]:
    """A .dockerignore pattern as a regex: `*` and `?` stay within one path component,
    a leading `**/` matches at any depth."""
    regex = ""
    rest = glob
    if rest.startswith("**/"):
        regex, rest = "(?:.*/)?", rest[3:]
    for char in rest:
        regex += {"*": "[^/]*", "?": "[^/]"}.get(char, re.escape(char))
    return re.compile(regex)


def ignored(path: str) -> bool:
    """Docker's .dockerignore rules as far as this repository uses them: a pattern matching a
    directory excludes everything under it; a later `!` line re-includes."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    result = False
    for raw in (ROOT / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        pattern = _pattern(line.lstrip("!").strip("/"))
        if any(pattern.fullmatch(prefix) for prefix in prefixes):
            result = not line.startswith("!")
    return result


def scripts() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return dict(project["scripts"])


def test_stages_use_python_311_slim_and_the_runtime_is_not_root() -> None:
    steps = instructions()
    bases = [args.split()[0] for op, args in steps if op == "FROM"]
    assert bases
    assert all(b == "python:3.11-slim" for b in bases)
    # The last USER of the last stage decides; a numeric one lets pods use runAsNonRoot.
    last_stage = steps[max(i for i, (op, _) in enumerate(steps) if op == "FROM"):]
    users = [args for op, args in last_stage if op == "USER"]
    assert users
    assert re.fullmatch(r"[1-9]\d*(:[1-9]\d*)?", users[-1])
    uid = users[-1].split(":")[0]
    for path in (ROOT / "deploy" / "overlays").rglob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "Deployment" and _uses_image(doc):
                context = doc["spec"]["template"]["spec"]["securityContext"]
                assert context["runAsNonRoot"] is True
                assert str(context["runAsUser"]) == uid, path


def test_every_copied_source_exists_and_is_in_the_context() -> None:
    copies = [args.split() for op, args in instructions() if op == "COPY"]
    local = [c for c in copies if not any(a.startswith("--from=") for a in c)]
    assert local
    for words in local:
        sources = [w for w in words[:-1] if not w.startswith("--")]
        for source in sources:
            assert (ROOT / source).exists(), f"COPY {source}: no such file in the repository"
            assert not ignored(source), f"COPY {source}: excluded by .dockerignore"
    # What pip needs to build the package: the metadata names README.md as the readme.
    copied = {s for words in local for s in words[:-1]}
    assert {"pyproject.toml", "README.md", "services", "proto", "tools/genproto.py"} <= copied


def test_dockerignore_keeps_the_tree_small() -> None:
    for heavy in (".venv", ".git", "demo-out", ".mypy_cache", "services/simkube/__pycache__"):
        assert ignored(heavy), heavy
    # The image generates its own protobuf code; a stale local copy must not reach it.
    assert ignored("services/simkube/gen")
    assert not ignored("services/simkube/driver/main.py")


def test_builder_installs_what_genproto_imports() -> None:
    source = (ROOT / "tools" / "genproto.py").read_text()
    assert "from grpc_tools import protoc" in source
    assert "--mypy_out" in source
    run = " ".join(args for op, args in instructions() if op == "RUN")
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["dev"]
    for package in ("grpcio-tools", "mypy-protobuf"):
        assert any(d.startswith(package) for d in dev), package
        assert package in run, f"the builder stage does not install {package}"
    assert "python tools/genproto.py" in run


def test_source_lives_in_app_services_for_live_update() -> None:
    steps = instructions()
    env = " ".join(args for op, args in steps if op == "ENV")
    assert "PYTHONPATH=/app/services" in env
    workdirs = [args for op, args in steps if op == "WORKDIR"]
    assert workdirs[-1] == "/app"
    assert ("COPY", "services ./services") in steps
    assert any(op == "RUN" and "pip install" in args and "-e /app" in args
               for op, args in steps)


def _uses_image(deployment: dict[str, Any]) -> bool:
    return any(str(c["image"]).split(":")[0] == IMAGE
               for c in deployment["spec"]["template"]["spec"]["containers"])


def test_manifest_commands_are_console_scripts() -> None:
    known = scripts()
    assert set(known) == {"skctl", "sk-cloudprov", "sk-ctrl", "sk-driver", "sk-tracer"}
    used = set()
    for path in (ROOT / "deploy" / "overlays").rglob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "Deployment" and _uses_image(doc):
                for container in doc["spec"]["template"]["spec"]["containers"]:
                    (command,) = container["command"]
                    assert command in known, f"{path.name}: {command} is no console script"
                    used.add(command)
    assert used == {"sk-tracer", "sk-driver", "sk-cloudprov", "sk-ctrl"}
