from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgpack
import pytest
from click.testing import CliRunner, Result

from simkube.skctl.trace_commands import trace_group
from simkube.trace import TraceFormatError, open_trace, read_trace, write_trace
from simkube.trace.native.format import encode_header
from tests.unit.trace.conftest import HEADER, crafted, usage_trace

pytestmark = pytest.mark.unit
SAMPLE_COUNTS = {
    "dsb-scaling.sktrace": {"events": 19, "applied": 46, "deleted": 0,
                            "applied_by_kind": {"apps/v1.Deployment": 46}, "lifecycles": 0},
    "cronjob.sktrace": {"events": 3, "applied": 1, "deleted": 1,
                        "applied_by_kind": {"batch/v1.CronJob": 1},
                        "deleted_by_kind": {"batch/v1.CronJob": 1}, "lifecycles": 3},
    "bare-pods.sktrace": {"events": 4, "applied": 4, "applied_by_kind": {"v1.Pod": 4},
                          "lifecycles": 4, "lifecycle_owners": 4},
    "validation_trace.json": {"events": 1, "applied": 1, "lifecycles": 0},
}


def run(*args: Any) -> Result:
    return CliRunner().invoke(trace_group, [str(arg) for arg in args])


def text(result: Result) -> str:
    """The output with rich's line wrapping undone."""
    return " ".join(result.output.split())


@pytest.mark.parametrize("name", sorted(SAMPLE_COUNTS))
def test_info_json_matches_the_file(samples: Path, name: str) -> None:
    result = run("info", "--json", samples / name)
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert {key: info[key] for key in SAMPLE_COUNTS[name]} == SAMPLE_COUNTS[name]
    assert info["bytes"] == (samples / name).stat().st_size


def test_info_table_is_readable(samples: Path) -> None:
    result = run("info", samples / "cronjob.sktrace")
    assert result.exit_code == 0
    for expected in ("simkube-v2 (version 2)", "205.0 s", "3 runs of 1 owners",
                     "applied batch/v1.CronJob"):
        assert expected in text(result)


def test_validate_then_fix_auto_then_validate_clean(samples: Path, tmp_path: Path) -> None:
    before = run("validate", "--json", samples / "validation_trace.json")
    assert before.exit_code == 2
    report = json.loads(before.output)
    codes = {finding["code"] for finding in report["findings"]}
    assert codes == {"missing-configmap", "missing-secret", "missing-service-account",
                     "status-recorded"}
    assert report["exit_status"] == 2
    fixed = tmp_path / "fixed.json"
    result = run("fix", "--auto", samples / "validation_trace.json", fixed)
    assert result.exit_code == 0, result.output
    assert "missing-service-account: add-object" in text(result)
    after = run("validate", fixed)
    assert after.exit_code == 0
    assert "no problems found" in text(after)


def test_validate_human_output_and_warning_exit(samples: Path) -> None:
    result = run("validate", samples / "cronjob.sktrace")
    assert result.exit_code == 1
    assert "config.trackedObjects[batch/v1.CronJob].podSpecTemplatePaths" in text(result)
    assert "3 findings: 0 errors, 3 warnings" in text(result)


def test_fix_with_chosen_fixes(samples: Path, tmp_path: Path) -> None:
    out = tmp_path / "fixed.sktrace"
    result = run("fix", samples / "validation_trace.json", out,
                 "--fix", "missing-configmap=drop-reference",
                 "--fix", "missing-secret=drop-reference")
    assert result.exit_code == 0, result.output
    assert "not fixed: missing-service-account, status-recorded" in text(result)
    spec = read_trace(out).events[0].applied[0]["spec"]["template"]["spec"]
    assert [env["name"] for env in spec["containers"][0]["env"]] == ["env1"]
    assert [volume["name"] for volume in spec["volumes"]] == ["empty-dir-volume"]


@pytest.mark.parametrize(("args", "problem"), [
    ((), "choose fixes with --fix"),
    (("--fix", "nonsense"), "is not CODE=CHOICE"),
    (("--fix", "missing-secret=burn"), "codes are"),
])
def test_fix_flag_mistakes(samples: Path, tmp_path: Path, args: tuple[str, ...],
                           problem: str) -> None:
    result = run("fix", samples / "validation_trace.json", tmp_path / "o.json", *args)
    assert result.exit_code == 2
    assert problem in text(result)


def test_convert_round_trip_keeps_everything(samples: Path, tmp_path: Path) -> None:
    for name in ("cronjob.sktrace", "bare-pods.sktrace", "dsb-scaling.sktrace"):
        assert run("convert", samples / name, tmp_path / "n.trace").exit_code == 0
        assert run("convert", tmp_path / "n.trace", tmp_path / "b.sktrace").exit_code == 0
        original, back = read_trace(samples / name), read_trace(tmp_path / "b.sktrace")
        assert back.events == original.events
        assert back.lifecycles == original.lifecycles
    assert run("convert", samples / "dsb-scaling.sktrace", tmp_path / "x",
               "--to", "simkube-v2-json").exit_code == 0
    assert open_trace(tmp_path / "x").format.value == "simkube-v2-json"


def test_edit_worked_examples(samples: Path, tmp_path: Path) -> None:
    ten_x = tmp_path / "10x.trace"
    result = run("edit", samples / "dsb-scaling.sktrace", ten_x, "--replicas-factor", "10",
                 "--target-kind", "Deployment")
    assert result.exit_code == 0, result.output
    replicas = [o["spec"]["replicas"] for e in read_trace(ten_x).events for o in e.applied]
    assert min(replicas) >= 10
    steps = tmp_path / "steps.yaml"
    steps.write_text("steps:\n  - keep: {namespaces: [dsb]}\n  - window: {duration: 10m}\n")
    cut = tmp_path / "dsb-10m.sktrace"
    result = run("edit", samples / "dsb-scaling.sktrace", cut, "--steps", steps)
    assert result.exit_code == 0, result.output
    assert len(read_trace(cut).events) == 9


def test_edit_needs_an_edit_and_reports_bad_steps(samples: Path, tmp_path: Path) -> None:
    assert "no edits given" in text(run("edit", samples / "dsb-scaling.sktrace",
                                        tmp_path / "o.trace"))
    result = run("edit", samples / "dsb-scaling.sktrace", tmp_path / "o.trace",
                 "--duration", "soon")
    assert "is not a duration" in str(result.exception)


def test_unreadable_traces_raise_one_error_type(tmp_path: Path) -> None:
    bad = tmp_path / "bad.trace"
    bad.write_bytes(b"\x89SKT\r\n\x1a\n\x00\x01\x00\x00garbage")
    result = run("info", bad)
    assert isinstance(result.exception, TraceFormatError)
    assert not (tmp_path / "out.trace").exists()


def test_skctl_exit_codes_and_messages(tmp_path: Path, samples: Path,
                                       monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from simkube.skctl import main as skctl  # noqa: PLC0415  # the full CLI, as users run it

    def exit_code(*args: Any) -> int:
        monkeypatch.setattr(sys, "argv", ["skctl", "trace", *map(str, args)])
        with pytest.raises(SystemExit) as caught:
            skctl.main()
        return int(caught.value.code or 0)

    (tmp_path / "bad.sktrace").write_bytes(b"\x85\xa7version")
    assert exit_code("info", tmp_path / "bad.sktrace") == 5
    assert "error: " in capsys.readouterr().err
    assert exit_code("validate", samples / "validation_trace.json") == 2
    assert exit_code("validate", samples / "dsb-scaling.sktrace") == 0


def test_validate_reports_a_list_as_container_port_and_exits_2(tmp_path: Path) -> None:
    container = {"name": "c", "image": "x",
                 "ports": [{"containerPort": [80]}, {"containerPort": [80]}]}
    web = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "web", "namespace": "default"},
           "spec": {"template": {"spec": {"containers": [container]}}}}
    document = {"version": 2, "config": {"trackedObjects": {"apps/v1.Deployment": {
        "podSpecTemplatePaths": ["/spec/template"]}}}, "index": {}, "pod_lifecycles": {},
        "events": [{"ts": 1, "applied_objs": [web], "deleted_objs": []}]}
    trace = tmp_path / "ports.sktrace"
    trace.write_bytes(msgpack.packb(document))
    result = run("validate", "--json", trace)
    assert result.exit_code == 2, result.output
    report = json.loads(result.output)
    assert report["findings"][0] == {
        "code": "invalid-container-port", "severity": "error",
        "object": "apps/v1.Deployment default/web",
        "path": "spec.template.spec.containers[0].ports[0].containerPort",
        "message": "containerPort is a list, not an integer; the API server rejects the object",
        "event": 0, "fixes": ["drop-invalid"]}
    fixed = tmp_path / "fixed.sktrace"
    assert run("fix", "--auto", trace, fixed).exit_code == 0
    assert run("validate", fixed).exit_code == 0


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("command", [["info"], ["validate"], ["convert", "out.trace"],
                                     ["convert", "out.sktrace"], ["convert", "out.json"],
                                     ["edit", "out.trace", "--replicas", "1"]])
def test_deeply_nested_objects_never_crash_a_command(tmp_path: Path, command: list[str]) -> None:
    pod_at = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "deep"}}
    for name, depth in (("deep.json", 900), ("deep.sktrace", 1000)):
        document = {"version": 2, "config": {"trackedObjects": {}}, "index": {},
                    "pod_lifecycles": {}, "events": [{"ts": 1, "deleted_objs": [],
                                                      "applied_objs": [{**pod_at, "spec": {
                                                          "x": _nested(depth)}}]}]}
        path = tmp_path / name
        if name.endswith(".json"):
            path.write_text(json.dumps(document))
        else:
            path.write_bytes(msgpack.packb(document))
        args = [command[0], path, *(tmp_path / arg if arg.startswith("out") else arg
                                    for arg in command[1:])]
        result = run(*args)
        # Success, a validation status, or a clean trace error: never any other exception.
        assert result.exception is None or isinstance(
            result.exception, SystemExit | TraceFormatError), (name, result.exception)


def test_usage_in_info_validate_and_convert(tmp_path: Path) -> None:
    write_trace(usage_trace(), tmp_path / "u.trace")
    info = run("info", tmp_path / "u.trace")
    assert info.exit_code == 0, info.output
    assert "5 samples of 2 workloads, every 15 s," in text(info)
    assert "0.0-45.0 s into the" in text(info)
    refused = run("convert", tmp_path / "u.trace", tmp_path / "u.sktrace")
    assert isinstance(refused.exception, TraceFormatError)
    assert "recorded usage of 2 workloads, which SimKube traces cannot hold" in str(
        refused.exception)
    assert not (tmp_path / "u.sktrace").exists()


def test_validate_reports_malformed_usage_and_exits_2_without_a_traceback(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from simkube.skctl import main as skctl  # noqa: PLC0415  # the full CLI, as users run it

    records = [[1, encode_header(HEADER)],
               [7, "apps/v1.Deployment", "shop/web", 15_000, [[0, 1, -5, 1], [9, 1, "x", 1]]],
               [6, 0, 0, 0, 1]]
    (tmp_path / "bad.trace").write_bytes(crafted(records, version=2))
    result = run("validate", "--json", tmp_path / "bad.trace")
    assert result.exit_code == 2, result.output
    findings = json.loads(result.output)["findings"]
    invalid = [f for f in findings if f["code"] == "invalid-usage"]
    assert invalid[0]["message"].startswith("cpu_millicores is negative (-5) (and 1 more")
    assert {f["code"] for f in findings} >= {"usage-unknown-workload", "usage-outside-trace"}
    monkeypatch.setattr(sys, "argv", ["skctl", "trace", "edit", str(tmp_path / "bad.trace"),
                                      str(tmp_path / "out.trace"), "--time-stretch", "2"])
    with pytest.raises(SystemExit) as caught:
        skctl.main()
    assert caught.value.code == 5
    err = " ".join(capsys.readouterr().err.split())
    assert "usage of apps/v1.Deployment shop/web, samples[0].cpu_millicores: cpu_millicores " \
        "is negative (-5)" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out.trace").exists()
