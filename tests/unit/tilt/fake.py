"""Strict stand-ins for Tilt's Tiltfile built-ins, for evaluating a Tiltfile without Tilt.

Each built-in binds its arguments the way Tilt's own Starlark functions do (starlark-go's
``UnpackArgs``): positional arguments fill the parameters in order, an unknown or repeated
keyword is an error, and a missing required parameter is an error. The parameter lists are
Tilt's (``internal/tiltfile`` in tilt-dev/tilt); only the built-ins listed in ``SIGNATURES``
exist, so a Tiltfile that calls anything else fails to resolve. Calls are recorded for the
tests to inspect; ``kustomize`` renders the overlay from its YAML files (no kubectl needed).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import starlark
import yaml

# name -> (required parameters, optional parameters), in Tilt's order.
SIGNATURES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "allow_k8s_contexts": (("contexts",), ()),
    "k8s_context": ((), ()),
    "fail": (("msg",), ()),
    "watch_file": (("paths",), ()),
    "docker_build": (("ref", "context"), (
        "build_args", "dockerfile", "dockerfile_contents", "cache", "live_update",
        "match_in_env_vars", "ignore", "only", "entrypoint", "container_args", "target", "ssh",
        "secret", "network", "extra_tag", "cache_from", "pull", "platform", "extra_hosts")),
    "fall_back_on": (("paths",), ()),
    "sync": (("local_path", "remote_path"), ()),
    "run": (("cmd",), ("trigger", "echo_off")),
    "kustomize": (("paths",), ("kustomize_bin", "flags")),
    "decode_yaml_stream": (("yaml",), ()),
    "encode_yaml_stream": (("objs",), ()),
    "k8s_yaml": (("yaml",), ("allow_duplicates",)),
    "k8s_resource": ((), (
        "workload", "new_name", "port_forwards", "extra_pod_selectors", "trigger_mode",
        "resource_deps", "objects", "auto_init", "pod_readiness", "links", "labels",
        "discovery_strategy")),
    "port_forward": (("local_port",), ("container_port", "name", "link_path", "host")),
    "local_resource": (("name",), (
        "cmd", "deps", "trigger_mode", "resource_deps", "ignore", "auto_init", "serve_cmd",
        "cmd_bat", "serve_cmd_bat", "allow_parallel", "links", "labels", "env", "serve_env",
        "readiness_probe", "dir", "serve_dir")),
    "config.define_bool": (("name",), ("args", "usage")),
    "config.parse": ((), ()),
}
TRIGGER_MODE_AUTO = 1
TRIGGER_MODE_MANUAL = 2


class TiltfileError(Exception):
    """What Tilt would report for a bad call (fail(), a wrong argument, a bad path)."""


def bind(function: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Arguments by parameter name, or the error starlark-go's UnpackArgs would give."""
    required, optional = SIGNATURES[function]
    parameters = required + optional
    if len(args) > len(parameters):
        raise TiltfileError(f"{function}: got {len(args)} arguments, want at most "
                            f"{len(parameters)}")
    bound = dict(zip(parameters, args, strict=False))
    for name, value in kwargs.items():
        if name not in parameters:
            raise TiltfileError(f"{function}: unexpected keyword argument {name!r}")
        if name in bound:
            raise TiltfileError(f"{function}: got multiple values for parameter {name!r}")
        bound[name] = value
    missing = [name for name in required if name not in bound]
    if missing:
        raise TiltfileError(f"{function}: missing argument for {missing[0]}")
    return bound


def as_list(value: Any) -> list[Any]:
    """Tilt's ``str | list[str]`` parameters as a list (None and absent are empty)."""
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


@dataclass(frozen=True)
class Step:
    """A live_update step: fall_back_on, sync or run, with its bound arguments."""

    kind: str
    args: dict[str, Any]


@dataclass(frozen=True)
class PortForward:
    local_port: int
    container_port: int | None
    name: str | None


@dataclass(frozen=True)
class Blob:
    """Tilt's Blob: YAML text (a plain string given to k8s_yaml would be a file path)."""

    text: str
    source: str


def _documents(path: Path) -> Iterator[dict[str, Any]]:
    for document in yaml.safe_load_all(path.read_text()):
        if document:
            yield document


def render_kustomization(directory: Path) -> list[dict[str, Any]]:
    """The objects a kustomization produces, enough to know their kinds, names and namespaces.

    Follows ``resources`` (files and directories with their own kustomization.yaml) and applies
    ``namespace``, ``namePrefix`` and ``nameSuffix``; patches do not change names, so they are
    not needed here. Fails on a missing file, like ``kustomize build`` does.
    """
    kustomization_file = directory / "kustomization.yaml"
    if not kustomization_file.is_file():
        raise TiltfileError(f"kustomize: {directory} has no kustomization.yaml")
    kustomization = yaml.safe_load(kustomization_file.read_text()) or {}
    objects: list[dict[str, Any]] = []
    for entry in kustomization.get("resources", []):
        target = (directory / entry).resolve()
        if target.is_dir():
            objects.extend(render_kustomization(target))
        elif target.is_file():
            objects.extend(_documents(target))
        else:
            raise TiltfileError(f"kustomize: {directory}: resource {entry!r} does not exist")
    prefix = kustomization.get("namePrefix", "")
    suffix = kustomization.get("nameSuffix", "")
    namespace = kustomization.get("namespace")
    for obj in objects:
        metadata = obj.setdefault("metadata", {})
        metadata["name"] = f"{prefix}{metadata.get('name', '')}{suffix}"
        if namespace and obj.get("kind") not in _CLUSTER_SCOPED:
            metadata["namespace"] = namespace
    return objects


_CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding",
                   "CustomResourceDefinition", "PriorityClass", "StorageClass"}


@dataclass
class FakeTilt:
    """Tilt's built-ins over a repository, with the k8s context and the user's config flags."""

    repo: Path
    context: str = "kind-simkube"
    flags: dict[str, bool] = field(default_factory=dict)

    allowed_contexts: list[str] = field(default_factory=list)
    watched: list[str] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)
    kustomized: list[str] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    k8s_resources: list[dict[str, Any]] = field(default_factory=list)
    local_resources: list[dict[str, Any]] = field(default_factory=list)
    defined_flags: list[dict[str, Any]] = field(default_factory=list)
    parsed: bool = False

    def _path(self, function: str, relative: str) -> Path:
        """Tilt resolves relative paths against the Tiltfile's directory (the repo root)."""
        if not isinstance(relative, str):
            raise TiltfileError(f"{function}: a path must be a string, got {relative!r}")
        return (self.repo / relative).resolve()

    # --- contexts and control ----------------------------------------------------------------
    def allow_k8s_contexts(self, *args: Any, **kwargs: Any) -> None:
        bound = bind("allow_k8s_contexts", args, kwargs)
        self.allowed_contexts.extend(as_list(bound["contexts"]))

    def k8s_context(self, *args: Any, **kwargs: Any) -> str:
        bind("k8s_context", args, kwargs)
        return self.context

    def fail(self, *args: Any, **kwargs: Any) -> None:
        raise TiltfileError(f"fail(): {bind('fail', args, kwargs)['msg']}")

    def watch_file(self, *args: Any, **kwargs: Any) -> None:
        path = bind("watch_file", args, kwargs)["paths"]
        self._path("watch_file", path)
        self.watched.append(path)

    # --- config ------------------------------------------------------------------------------
    def config_define_bool(self, *args: Any, **kwargs: Any) -> None:
        bound = bind("config.define_bool", args, kwargs)
        if self.parsed:
            raise TiltfileError("config.define_bool cannot be called after config.parse")
        if any(flag["name"] == bound["name"] for flag in self.defined_flags):
            raise TiltfileError(f"{bound['name']} defined multiple times")
        self.defined_flags.append(bound)

    def config_parse(self, *args: Any, **kwargs: Any) -> dict[str, bool]:
        bind("config.parse", args, kwargs)
        self.parsed = True
        defined = {flag["name"] for flag in self.defined_flags}
        unknown = set(self.flags) - defined
        if unknown:
            raise TiltfileError(f"unknown config flag(s): {sorted(unknown)}")
        # Like Tilt: only flags the user passed appear in the result.
        return dict(self.flags)

    # --- images ------------------------------------------------------------------------------
    def docker_build(self, *args: Any, **kwargs: Any) -> None:
        bound = bind("docker_build", args, kwargs)
        steps = as_list(bound.get("live_update"))
        if not all(isinstance(step, Step) for step in steps):
            raise TiltfileError("docker_build: live_update takes sync/run/fall_back_on steps")
        order = {"fall_back_on": 0, "sync": 1, "run": 2}
        kinds = [order[step.kind] for step in steps]
        if kinds != sorted(kinds):
            raise TiltfileError("docker_build: live_update steps must be fall_back_on, "
                                "then sync, then run")
        if any(image["ref"] == bound["ref"] for image in self.images):
            raise TiltfileError(f"docker_build: image {bound['ref']!r} built twice")
        self.images.append(bound)

    def fall_back_on(self, *args: Any, **kwargs: Any) -> Any:
        return starlark.OpaquePythonObject(Step("fall_back_on", bind("fall_back_on", args,
                                                                     kwargs)))

    def sync(self, *args: Any, **kwargs: Any) -> Any:
        bound = bind("sync", args, kwargs)
        if not str(bound["remote_path"]).startswith("/"):
            raise TiltfileError("sync: remote_path must be absolute")
        return starlark.OpaquePythonObject(Step("sync", bound))

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return starlark.OpaquePythonObject(Step("run", bind("run", args, kwargs)))

    # --- Kubernetes --------------------------------------------------------------------------
    def kustomize(self, *args: Any, **kwargs: Any) -> Any:
        bound = bind("kustomize", args, kwargs)
        directory = self._path("kustomize", bound["paths"])
        objects = render_kustomization(directory)
        self.kustomized.append(bound["paths"])
        return starlark.OpaquePythonObject(
            Blob(yaml.safe_dump_all(objects, sort_keys=False), f"kustomize {bound['paths']}"))

    @staticmethod
    def _yaml_text(function: str, value: Any) -> str:
        if isinstance(value, Blob):
            return value.text
        if isinstance(value, str):
            return value
        raise TiltfileError(f"{function}: expected a string or a Blob, got {value!r}")

    def decode_yaml_stream(self, *args: Any, **kwargs: Any) -> list[Any]:
        text = self._yaml_text("decode_yaml_stream",
                               bind("decode_yaml_stream", args, kwargs)["yaml"])
        return [document for document in yaml.safe_load_all(text) if document is not None]

    def encode_yaml_stream(self, *args: Any, **kwargs: Any) -> Any:
        objs = bind("encode_yaml_stream", args, kwargs)["objs"]
        if not isinstance(objs, list):
            raise TiltfileError(f"encode_yaml_stream: expected a list, got {objs!r}")
        return starlark.OpaquePythonObject(
            Blob(yaml.safe_dump_all(objs, sort_keys=False), "encode_yaml_stream"))

    def k8s_yaml(self, *args: Any, **kwargs: Any) -> None:
        bound = bind("k8s_yaml", args, kwargs)
        for item in as_list(bound["yaml"]):
            if isinstance(item, Blob):
                text = item.text
            elif isinstance(item, str):  # a path, as in Tilt
                path = self._path("k8s_yaml", item)
                if not path.is_file():
                    raise TiltfileError(f"k8s_yaml: {item} does not exist")
                text = path.read_text()
            else:
                raise TiltfileError(f"k8s_yaml: expected a path or a Blob, got {item!r}")
            objects = [obj for obj in yaml.safe_load_all(text) if obj]
            if not objects:
                raise TiltfileError("k8s_yaml: empty YAML")
            self.objects.extend(objects)

    def workloads(self) -> dict[str, dict[str, Any]]:
        """Every workload Tilt would make a resource for, by name."""
        return {obj["metadata"]["name"]: obj for obj in self.objects
                if obj.get("kind") in {"Deployment", "StatefulSet", "DaemonSet", "Job"}}

    def k8s_resource(self, *args: Any, **kwargs: Any) -> None:
        bound = bind("k8s_resource", args, kwargs)
        name = bound.get("workload") or ""
        if not name:
            raise TiltfileError("k8s_resource: name a workload")
        # Tilt: the workload must be among the objects k8s_yaml has registered so far.
        if name not in self.workloads():
            raise TiltfileError(f"k8s_resource: no workload named {name!r} in the YAML")
        forwards = as_list(bound.get("port_forwards"))
        if not all(isinstance(forward, PortForward) for forward in forwards):
            raise TiltfileError(f"k8s_resource {name}: port_forwards take port_forward()")
        if any(resource["workload"] == name for resource in self.k8s_resources):
            raise TiltfileError(f"k8s_resource: {name!r} configured twice")
        self.k8s_resources.append({**bound, "workload": name})

    def port_forward(self, *args: Any, **kwargs: Any) -> Any:
        bound = bind("port_forward", args, kwargs)
        for key in ("local_port", "container_port"):
            port = bound.get(key)
            if port is not None and not (isinstance(port, int) and 0 < port < 65536):
                raise TiltfileError(f"port_forward: {key} {port!r} is not a port")
        return starlark.OpaquePythonObject(PortForward(
            bound["local_port"], bound.get("container_port"), bound.get("name")))

    # --- local resources ---------------------------------------------------------------------
    def local_resource(self, *args: Any, **kwargs: Any) -> None:
        bound = bind("local_resource", args, kwargs)
        if any(resource["name"] == bound["name"] for resource in self.local_resources):
            raise TiltfileError(f"local_resource named {bound['name']!r} already exists")
        mode = bound.get("trigger_mode", TRIGGER_MODE_AUTO)
        if mode not in {TRIGGER_MODE_AUTO, TRIGGER_MODE_MANUAL}:
            raise TiltfileError(f"local_resource: bad trigger_mode {mode!r}")
        self.local_resources.append(bound)

    # --- evaluation --------------------------------------------------------------------------
    def evaluate(self, source: str, filename: str = "Tiltfile") -> None:
        """Evaluate a Tiltfile's text with these built-ins; raise what Tilt would report."""
        module = starlark.Module()
        for name in SIGNATURES:
            if "." not in name:
                module.add_callable(name, getattr(self, name))
        module.add_callable("_config_define_bool", self.config_define_bool)
        module.add_callable("_config_parse", self.config_parse)
        module["TRIGGER_MODE_AUTO"] = TRIGGER_MODE_AUTO
        module["TRIGGER_MODE_MANUAL"] = TRIGGER_MODE_MANUAL
        globals_ = starlark.Globals.extended_by([starlark.LibraryExtension.StructType])
        prelude = "config = struct(define_bool=_config_define_bool, parse=_config_parse)\n"
        starlark.eval(module, starlark.parse("tilt-prelude", prelude), globals_)
        try:
            ast = starlark.parse(filename, source, starlark.Dialect.extended())
            starlark.eval(module, ast, globals_)
        except starlark.StarlarkError as error:
            raise TiltfileError(str(error)) from error
