"""The ``simulate`` composite action's steps, run here as a runner would run them.

No GitHub runner is available, so the action is built to be testable: every ``run:`` step is
``simulate.sh PHASE`` and its inputs arrive as ``env:`` entries. This test reads action.yml,
checks each step calls only what exists (the ``uses:`` steps are the known setup and cache
actions, the ``run:`` ones a phase of the script; every expression names a declared input or
an earlier step's output), then runs the ``run:`` steps in order in a fresh clone of this
repository, with the files and variables a runner gives (``$GITHUB_ACTION_PATH``, one
``$GITHUB_OUTPUT`` per step, ``$GITHUB_STEP_SUMMARY``), skipping what a failed step skips
except ``if: always()``. The ``uses:`` steps cannot run here; their outputs are what they
would give on this machine: the Python on PATH, and a cache hit (the binary cache lives
outside the checkout, ``$SIMKUBE_CACHE_DIR`` or ``~/.cache/simkube``, so the clone finds
what ``make binaries`` built: the build step must report every group cached).

The clone is of HEAD with the working tree's uncommitted changes laid over it (tracked
diffs and untracked files), so an edit is tested before it is committed. The replay is
fidelity-3min with Karpenter (no CA binary in ``make test``), against a baseline of zero
cost and node hours: any run with a node is a regression, so the check must exit 1, name
both figures in the job summary and fail them in the JUnit XML, and ``down`` must still run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from simkube.env.toolchain.building import MIN_GO
from simkube.env.toolchain.catalog import CORE_GROUPS

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
ROOT = Path(__file__).parents[2]
ACTION = Path(".github") / "actions" / "simulate"
TRACE = ROOT / "tests" / "data" / "recorded" / "fidelity-3min.trace"
USES = {"actions/setup-python@v5", "actions/cache@v4", "actions/setup-go@v5"}
RUN = re.compile(r'^"\$GITHUB_ACTION_PATH/simulate\.sh" ([a-z-]+)$')
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load_action(root: Path) -> dict[str, Any]:
    action = yaml.safe_load((root / ACTION / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    return action


def phases(root: Path) -> set[str]:
    """The phases simulate.sh accepts, from its own usage error."""
    usage = subprocess.run([root / ACTION / "simulate.sh"], capture_output=True, text=True,
                           check=False)
    assert usage.returncode == 2
    found = re.search(r"usage: simulate\.sh ([a-z|-]+)", usage.stderr)
    assert found, usage.stderr
    return set(found[1].split("|"))


def resolve(text: str, *, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    """``${{ inputs.X }}`` and ``${{ steps.ID.outputs.X }}``; anything else is refused."""
    def value(match: re.Match[str]) -> str:
        parts = match[1].split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            assert parts[1] in inputs, f"{match[0]}: no such input"
            return inputs[parts[1]]
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            assert parts[1] in outputs, f"{match[0]}: no earlier step {parts[1]!r}"
            return outputs[parts[1]].get(parts[3], "")
        raise AssertionError(f"{match[0]}: not an expression the action may use")
    return EXPRESSION.sub(value, text)


def test_every_step_calls_something_that_exists() -> None:
    action = load_action(ROOT)
    known = phases(ROOT)
    ids: list[str] = []
    for step in action["runs"]["steps"]:
        assert "id" in step
        assert step["id"] not in ids
        if "uses" in step:
            assert step["uses"] in USES, step["uses"]
        else:
            assert step["shell"] == "bash"
            matched = RUN.match(step["run"])
            assert matched, step["run"]
            assert matched[1] in known, step["run"]
            assert step.get("if", "always()") == "always()"
        # Expressions name declared inputs and earlier steps only.
        dummy = dict.fromkeys(action["inputs"], "")
        resolve(yaml.safe_dump(step.get("env", {}) | step.get("with", {})), inputs=dummy,
                outputs={i: {} for i in ids})
        ids.append(step["id"])
    # The Go set up on a cache miss is one the build accepts.
    (go,) = [step for step in action["runs"]["steps"]
             if step.get("uses", "").startswith("actions/setup-go@")]
    assert tuple(int(part) for part in go["with"]["go-version"].split(".")) >= MIN_GO
    for output in action["outputs"].values():
        resolve(output["value"], inputs={}, outputs={i: {} for i in ids})
    assert os.access(ROOT / ACTION / "simulate.sh", os.X_OK)


def fresh_clone(target: Path) -> Path:
    """HEAD, plus the working tree's uncommitted changes."""
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(target)], check=True)
    diff = subprocess.run(["git", "-C", str(ROOT), "diff", "HEAD", "--binary"],
                          capture_output=True, check=True).stdout
    if diff:
        subprocess.run(["git", "-C", str(target), "apply", "--whitespace=nowarn"], input=diff,
                       check=True)
    untracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--others",
                                "--exclude-standard", "-z"], capture_output=True,
                               check=True).stdout.decode().split("\0")
    for name in filter(None, untracked):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)
    return target


def workspace(path: Path) -> Path:
    """What a calling workflow's checkout holds: a trace, a baseline and thresholds."""
    path.mkdir()
    shutil.copy(TRACE, path / "trace.trace")
    zero = {"mean": 0.0, "min": 0.0, "max": 0.0, "repetitions": 1}
    (path / "baseline.yaml").write_text(yaml.safe_dump({
        "version": 1, "kind": "simkube-baseline", "label": "zero", "provenance": {},
        "figures": {"cost_usd": zero, "node_hours": zero}}))
    (path / "thresholds.yaml").write_text(yaml.safe_dump({
        "version": 1, "figures": {"pending_p90_s": {"ignore": True}}}))
    return path


def run_steps(clone: Path, work: Path, inputs: dict[str, str], variables: dict[str, str]
              ) -> tuple[dict[str, int], dict[str, dict[str, str]], dict[str, str]]:
    """Each step as the runner would: return codes, outputs and logs by step id."""
    action = load_action(clone)
    given = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    given.update(inputs)
    python = shutil.which("python3.11") or sys.executable
    outputs: dict[str, dict[str, str]] = {"python": {"python-path": python},
                                          "cache": {"cache-hit": "true"}}
    codes: dict[str, int] = {}
    logs: dict[str, str] = {}
    failed = False
    for step in action["runs"]["steps"]:
        if "uses" in step or (failed and step.get("if") != "always()"):
            continue
        out_file = work.parent / f"output-{step['id']}"
        out_file.touch()
        env = {**variables, "GITHUB_OUTPUT": str(out_file),
               "GITHUB_ACTION_PATH": str(clone / ACTION)}
        env.update({key: resolve(str(value), inputs=given, outputs=outputs)
                    for key, value in step.get("env", {}).items()})
        started = time.monotonic()
        done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=work, env=env, text=True,
                              capture_output=True, timeout=600, check=False)
        codes[step["id"]] = done.returncode
        logs[step["id"]] = done.stdout + done.stderr
        print(f"step {step['id']}: exit {done.returncode}, {time.monotonic() - started:.0f} s")
        outputs[step["id"]] = dict(line.split("=", 1) for line in
                                   out_file.read_text().splitlines() if "=" in line)
        failed = failed or done.returncode != 0
    return codes, outputs, logs


def test_the_action_steps_replay_a_trace_and_gate_in_a_fresh_clone(tmp_path: Path) -> None:
    started = time.monotonic()
    clone = fresh_clone(tmp_path / "clone")
    work = workspace(tmp_path / "work")
    summary = tmp_path / "step-summary.md"
    variables = {key: value for key, value in os.environ.items()
                 if key not in {"SIMKUBE_CLUSTER_AUTOSCALER", "VIRTUAL_ENV"}}
    variables |= {"SIMKUBE_HOME": str(tmp_path / "home"), "GITHUB_STEP_SUMMARY": str(summary)}
    inputs = {"trace": "trace.trace", "baseline": "baseline.yaml",
              "thresholds": "thresholds.yaml", "autoscaler": "karpenter", "speed": "10",
              "duration": "3m", "timeout": "300", "environment-name": f"action-{os.getpid()}"}
    codes, outputs, logs = run_steps(clone, work, inputs, variables)
    took = time.monotonic() - started
    print(f"action steps in a fresh clone: {took:.0f} s")

    assert codes == {"install": 0, "cache-key": 0, "build": 0, "up": 0, "check": 1,
                     "down": 0}, logs
    # The clone's key is the one skctl here computes: same pins, same cache outside the tree.
    here = subprocess.run([Path(sys.executable).parent / "skctl", "env", "build",
                           "--print-cache-key"], capture_output=True, text=True, check=True)
    assert [f"{k}={v}" for k, v in outputs["cache-key"].items()] == here.stdout.splitlines()
    assert "built in" not in logs["build"]
    assert logs["build"].count("(cached)") == len(CORE_GROUPS)
    assert outputs["check"] == {"result": "regression", "junit": "simkube-check.xml",
                                "markdown": "simkube-check.md"}
    text = summary.read_text()
    assert text.startswith("### ❌ skctl check: REGRESSION")
    assert "| cost |" in text
    assert "| node hours |" in text
    assert "| pending p90 |" in text
    assert "ignored" in text
    assert (work / "simkube-check.md").read_text().strip() == text.strip()
    suite = ET.parse(work / "simkube-check.xml").getroot()  # noqa: S314  # our own file
    failures = {case.get("name") for case in suite.iter("testcase")
                if case.find("failure") is not None}
    assert failures == {"cost_usd", "node_hours"}
    assert not list((tmp_path / "home" / "envs").glob("action-*/state.json"))


@pytest.mark.parametrize(("phase", "variables", "message"), [
    ("cache-key", {"SIMULATE_AUTOSCALER": "bogus"}, "autoscaler is 'bogus'"),
    ("build", {"SIMULATE_AUTOSCALER": "ca"}, "autoscaler is 'ca'"),
    ("check", {"SIMULATE_BASELINE": "b.yaml"}, "the trace input is empty"),
    ("check", {"SIMULATE_TRACE": "t.trace"}, "the baseline input is empty"),
])
def test_a_bad_input_stops_its_step_with_exit_2(phase: str, variables: dict[str, str],
                                                message: str) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("SIMULATE_")}
    done = subprocess.run([ROOT / ACTION / "simulate.sh", phase], env=env | variables,
                          capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (2, "")
    assert message in done.stderr
