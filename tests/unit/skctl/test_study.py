from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from simkube.report.loading import load
from simkube.skctl.study import autoscalers_command, replay_duration, summary_table
from tests.unit.report.known_run import write_run

pytestmark = pytest.mark.unit
DSB = Path(__file__).parents[2] / "data" / "simkube" / "dsb-scaling.sktrace"


def test_a_study_replays_the_trace_and_a_tail_after_it() -> None:
    # dsb-scaling spans 1,134 s; the tail lets scale-down show.
    assert replay_duration(DSB, tail="15m") == "2034000ms"
    assert replay_duration(DSB, tail="0s") == "1134000ms"


def test_the_summary_states_each_run_figures(tmp_path: Path) -> None:
    run = load(write_run(tmp_path), label="karpenter")
    console = Console(width=120, record=True)
    console.print(summary_table([run]))
    text = console.export_text()
    row = next(line for line in text.splitlines() if "karpenter" in line)
    assert f"${run.summary['cost_usd']:.3f}" in row
    assert f"{max(run.timeline['nodes_total']):g}" in row


@pytest.mark.parametrize(("args", "message"), [
    (("--duration", "10m", "--tail", "5m"), "--duration and --tail exclude each other"),
    (("--speed", "0"), "Invalid value for '--speed'"),
])
def test_contradictory_or_bad_flags_are_refused_before_anything_runs(
        args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(autoscalers_command, ["--trace", str(DSB), *args,
                                                      "--output", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "out").exists()
