"""Generate Python code, gRPC stubs and mypy stubs from proto/ into services/simkube/gen/.

protoc names Python modules after the proto file paths (``simkube/tracer/v1/...``), which
would collide with our own ``simkube`` package. So the code is generated into a scratch
directory and moved under ``simkube.gen``, with its absolute imports rewritten to match.
Generated code is never edited by hand and never committed.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = ROOT / "proto"
GEN_DIR = ROOT / "services" / "simkube" / "gen"
GEN_PACKAGE = "simkube.gen"


def main() -> int:
    # protoc finds its plugins (protoc-gen-mypy) on PATH: make the venv's scripts visible.
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    protos = sorted(p.relative_to(PROTO_DIR).as_posix() for p in PROTO_DIR.rglob("*.proto"))
    include = Path(protoc.__file__).parent / "_proto"
    with tempfile.TemporaryDirectory() as scratch:
        if protos:
            args = [
                "protoc", f"-I{PROTO_DIR}", f"-I{include}",
                f"--python_out={scratch}", f"--grpc_python_out={scratch}",
                f"--mypy_out={scratch}", f"--mypy_grpc_out={scratch}", *protos,
            ]
            if protoc.main(args) != 0:
                print("error: protoc failed", file=sys.stderr)
                return 1
        roots = sorted({p.split("/", 1)[0] for p in protos})
        shutil.rmtree(GEN_DIR, ignore_errors=True)
        GEN_DIR.mkdir(parents=True)
        pattern = re.compile(rf"^(from|import) ({'|'.join(map(re.escape, roots)) or '$^'})\b",
                             re.MULTILINE)
        for path in Path(scratch).rglob("*.py*"):
            target = GEN_DIR / path.relative_to(scratch)
            target.parent.mkdir(parents=True, exist_ok=True)
            text = pattern.sub(rf"\1 {GEN_PACKAGE}.\2", path.read_text())
            target.write_text(text)
        for directory in [GEN_DIR, *(d for d in GEN_DIR.rglob("*") if d.is_dir())]:
            (directory / "__init__.py").touch()
    (GEN_DIR / ".generated").write_text("\n".join(protos) + "\n")
    print(f"generated {len(protos)} proto file(s) into {GEN_DIR.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
