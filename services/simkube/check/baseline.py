"""Committed baseline figures: a run's (or its repetitions') figures kept in the repository.

A CI job that replays a trace needs something to compare with, and keeping whole results
directories in a repository is heavy and opaque. ``skctl check --write-baseline FILE RUN...``
writes each figure's spread (mean, min, max, repetitions) and the provenance a reviewer needs
to trust the numbers (simulation, runs, trace when known, speed, autoscaler, simkube's
version, when written); ``read_baseline`` reads that file back as a ``Sample``, the same
thing a baseline read from runs is. YAML, or JSON when the file name ends in ``.json``.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from simkube.check.figures import Figure, Sample, Spread
from simkube.core.errors import ConfigError
from simkube.core.version import product_version

VERSION = 1
KIND = "simkube-baseline"
_SPREAD_KEYS = ("mean", "min", "max", "repetitions")


class BaselineError(ConfigError):
    """A baseline figures file that cannot be used, with the field at fault."""


def baseline_document(sample: Sample, *, extra: Mapping[str, Any] | None = None
                      ) -> dict[str, Any]:
    """The file's content: version, kind, provenance and every figure (null when unknown)."""
    provenance = {**sample.provenance, **(extra or {}), "simkube": product_version(),
                  "written_at": datetime.datetime.now(datetime.UTC).strftime(
                      "%Y-%m-%dT%H:%M:%SZ")}
    figures: dict[str, Any] = {}
    for figure in Figure:
        spread = sample.figures.get(figure)
        figures[figure.value] = None if spread is None else {
            "mean": spread.mean, "min": spread.low, "max": spread.high,
            "repetitions": spread.count}
    return {"version": VERSION, "kind": KIND, "label": sample.label,
            "provenance": provenance, "figures": figures}


def write_baseline(path: Path, sample: Sample, *, extra: Mapping[str, Any] | None = None
                   ) -> None:
    document = baseline_document(sample, extra=extra)
    text = (json.dumps(document, indent=2) + "\n" if path.suffix == ".json"
            else yaml.safe_dump(document, sort_keys=False))
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the baseline {path}: {exc.strerror or exc}") from None


def _spread(tree: Any, *, where: str) -> Spread | None:
    if tree is None:
        return None
    if not isinstance(tree, dict) or sorted(tree) != sorted(_SPREAD_KEYS):
        raise BaselineError(f"{where} is not a mapping of {', '.join(_SPREAD_KEYS)}")
    for key in _SPREAD_KEYS:
        value = tree[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BaselineError(f"{where}.{key} is {value!r}, not a number")
    if not tree["min"] <= tree["mean"] <= tree["max"] or tree["repetitions"] < 1:
        raise BaselineError(f"{where}: expected min <= mean <= max and repetitions >= 1")
    return Spread(mean=float(tree["mean"]), low=float(tree["min"]), high=float(tree["max"]),
                  count=int(tree["repetitions"]))


def read_baseline(path: Path) -> Sample:
    """A baseline file written by ``write_baseline`` (hand-edited ones are checked as hard)."""
    try:
        tree = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"cannot read the baseline {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise BaselineError(f"{path} is neither YAML nor JSON: {exc}") from None
    if not isinstance(tree, dict) or tree.get("kind") != KIND:
        raise BaselineError(f"{path}: kind is not {KIND!r}: not a baseline file",
                            hint="write one with skctl check --write-baseline FILE RUN...")
    if tree.get("version") != VERSION:
        raise BaselineError(f"{path}: version is {tree.get('version')!r}, expected {VERSION}")
    figures = tree.get("figures")
    if not isinstance(figures, dict):
        raise BaselineError(f"{path}: figures is not a mapping")
    known = {figure.value for figure in Figure}
    unknown = sorted(str(name) for name in figures if name not in known)
    if unknown:
        raise BaselineError(f"{path}: figures.{unknown[0]} is not a figure",
                            hint=f"figures: {', '.join(sorted(known))}")
    provenance = tree.get("provenance")
    provenance = {} if provenance is None else provenance
    if not isinstance(provenance, dict):
        raise BaselineError(f"{path}: provenance is not a mapping")
    return Sample(label=str(tree.get("label") or path.name),
                  figures={f: _spread(figures.get(f.value), where=f"{path}: figures.{f.value}")
                           for f in Figure},
                  provenance=provenance)
