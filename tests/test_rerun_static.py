"""--rerun without running anything: command parsing, workspace checks, comparisons.

Every case here is refused or decided before a process would start, so these
tests need neither bubblewrap nor torch.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import BENCH_SCRIPT, EXPERIMENTS, experiment_workspace, load_answer, rules_of, sandbox_findings

from auditor.errors import AuditorError
from auditor.findings import all_rules
from auditor.options.models import AuditOptions, RerunOptions
from auditor.rerun import SandboxUnavailable, run_and_compare, sandbox
from auditor.rerun.command import CommandRefused, parse_how_to_run
from auditor.rerun.compare import (
    RTOL_OTHER_DEVICE,
    RTOL_SAME_DEVICE,
    choose_rtol,
    compare_arm,
    device_kind,
    json_differences,
    shipped_report_finding,
)


def rerun(document: dict, workspace: Path, **overrides) -> tuple[list, dict]:
    options = RerunOptions(device="cpu", timeout=30, **{"use_cache": False, **overrides})
    return sandbox_findings(run_and_compare(document, str(workspace / "answer.txt"), options, AuditOptions()))


# -- how_to_run ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, script, args",
    [
        ("/home/maxwelhelp/main/bin/python3 bench_kurtosis.py", "bench_kurtosis.py", ()),
        ("python bench.py", "bench.py", ()),
        (
            "/usr/bin/python3.11 src/bench.py --epochs 3 --out=report.json",
            "src/bench.py",
            ("--epochs", "3", "--out=report.json"),
        ),
        ("python3 'bench.py' seed=7", "bench.py", ("seed=7",)),
        ("python3 ./bench.py", "bench.py", ()),
    ],
)
def test_accepted_commands(text: str, script: str, args: tuple) -> None:
    command = parse_how_to_run(text)
    assert command.script == script and command.args == args
    assert command.argv("/opt/py/bin/python") == ["/opt/py/bin/python", script, *args]


@pytest.mark.parametrize(
    "text",
    [
        "python3 x.py; touch /tmp/pwned",
        "python3 x.py && rm -rf ~",
        "python3 x.py | tee log",
        "python3 x.py > /etc/passwd",
        "python3 x.py < /etc/shadow",
        "python3 x.py $(id)",
        "python3 x.py `id`",
        "python3 x.py &",
        "python3 x.py\ntouch /tmp/pwned",
        "python3 -c 'import os'",
        "python3 -m http.server",
        "python3 -u bench.py",
        "bash bench.py",
        "sh -c 'python3 bench.py'",
        "FOO=1 python3 bench.py",
        "env python3 bench.py",
        "pythonw bench.py",
        "python3 ../bench.py",
        "python3 /tmp/bench.py",
        "python3 ~/bench.py",
        "python3 bench.sh",
        "python3 bench.py --data=/etc/passwd",
        "python3 bench.py ../../secrets",
        "python3 bench.py 'a b'",
        "python3 'unbalanced",
        "python3",
        "",
        "   ",
        None,
        ["python3", "bench.py"],
    ],
)
def test_refused_commands(text: object) -> None:
    with pytest.raises(CommandRefused):
        parse_how_to_run(text)


def test_injected_how_to_run_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    marker = Path("/tmp/pwned")
    before = marker.stat().st_mtime if marker.exists() else None
    workspace = EXPERIMENTS / "injected_command"
    findings, record = rerun(load_answer("injected_command"), workspace)
    assert rules_of(findings) == ["R802"]
    assert "nothing was run" in findings[0].message and findings[0].pointer == "/how_to_run"
    assert record["command"] == [] and record["seconds"] is None
    assert (marker.stat().st_mtime if marker.exists() else None) == before
    assert not Path("/tmp/pwned-by-x.py").exists()


def test_answer_without_how_to_run_gets_r802(tmp_path: Path) -> None:
    document = load_answer("clip_honest")
    del document["how_to_run"]
    findings, record = rerun(document, tmp_path)
    assert rules_of(findings) == ["R802"] and "no how_to_run" in findings[0].message
    assert record["reproduced"] is False


# -- workspace ------------------------------------------------------------------------------


def test_missing_file_is_r801_and_nothing_runs(tmp_path: Path) -> None:
    findings, record = rerun(load_answer("missing_file"), experiment_workspace("missing_file", tmp_path / "ws"))
    missing = {f.claimed for f in findings if f.rule == "R801"}
    assert missing == {"config.json", "bench_report.json"}
    assert rules_of(findings) == ["R801", "R801"]
    assert record["seconds"] is None


def test_stdin_without_workspace_is_r801() -> None:
    options = RerunOptions(device="cpu", use_cache=False)
    findings, _ = run_and_compare(load_answer("clip_honest"), None, options, AuditOptions())
    assert rules_of(findings) == ["R801"] and "--workspace" in findings[0].message


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "bench.py").write_text("print('hi')\n")
    (root / "sub" / "data.csv").write_text("1,2\n")
    (tmp_path / "secret.txt").write_text("token\n")
    return root


@pytest.mark.parametrize(
    "name, rule",
    [
        ("/etc/passwd", "R802"),
        ("../secret.txt", "R802"),
        ("sub/../../secret.txt", "R802"),
        ("link_out", "R802"),  # a symlink leading outside
        ("sub", "R802"),  # a folder
        ("nope.txt", "R801"),
        ("dangling", "R801"),
        (7, "R802"),
    ],
)
def test_refused_or_missing_file_names(workspace: Path, name: object, rule: str) -> None:
    (workspace / "link_out").symlink_to(workspace.parent / "secret.txt")
    (workspace / "dangling").symlink_to(workspace / "does-not-exist")
    document = {"how_to_run": "python3 bench.py", "files": ["bench.py", "sub/data.csv", name]}
    findings, record = rerun(document, workspace)
    assert rules_of(findings) == [rule], [f.to_dict() for f in findings]
    assert findings[0].pointer == "/files/2"
    assert record["seconds"] is None


def test_symlink_inside_the_workspace_is_accepted(workspace: Path) -> None:
    (workspace / "alias.py").symlink_to(workspace / "bench.py")
    from auditor.rerun.workspace import collect_files

    ws = collect_files(workspace, ["alias.py", "sub/data.csv"], "bench.py")
    assert not ws.findings
    assert set(ws.files) == {"alias.py", "sub/data.csv", "bench.py"}


def test_script_outside_files_is_still_looked_up(workspace: Path) -> None:
    findings, _ = rerun({"how_to_run": "python3 missing.py", "files": ["bench.py"]}, workspace)
    assert rules_of(findings) == ["R801"] and findings[0].pointer == "/how_to_run"


# -- comparisons ------------------------------------------------------------------------------


def test_rtol_follows_the_device_kinds() -> None:
    assert choose_rtol(None, "cpu", "cpu") == RTOL_SAME_DEVICE
    assert choose_rtol(None, None, "cpu") == RTOL_SAME_DEVICE  # undeclared: presumed CPU
    assert choose_rtol(None, None, "cuda") == RTOL_OTHER_DEVICE
    assert choose_rtol(None, "cuda", "cpu") == RTOL_OTHER_DEVICE
    assert choose_rtol(None, "cuda", "cuda") == RTOL_SAME_DEVICE
    assert choose_rtol(0.5, "cuda", "cpu") == 0.5
    assert device_kind("cuda:1") == device_kind("GPU") == "cuda"
    assert device_kind("") is None and device_kind(3) is None


def test_per_seed_comparison_names_the_seeds() -> None:
    claimed = {"baseline": {"full": {"per_seed": [1.0, 2.0, 3.0]}}, "idea": {"per_seed": [1.0, 2.0, 3.0]}}
    rerun_report = {"baseline": {"full": {"per_seed": [1.0, 2.0000000001, 3.5]}}, "idea": {"full": {"per_seed": [1.0]}}}
    baseline = compare_arm("baseline", claimed, rerun_report, 1e-5)
    assert [i for i, _, _ in baseline.differing] == [2] and baseline.max_rel_diff == pytest.approx(0.5 / 3.5)
    idea = compare_arm("idea", claimed, rerun_report, 1e-5)
    assert idea.pointer == "/bench_report/idea/per_seed" and "3 idea seeds, the rerun 1" in idea.problem


def test_json_differences_are_semantic() -> None:
    diffs: list = []
    same = {"c": "x", "b": [0.1000000000000000055, 2], "a": 1.0}  # other order, spelling, int/float
    json_differences({"a": 1, "b": [0.1, 2.0], "c": "x"}, same, "", diffs)
    assert diffs == []
    json_differences({"a": [1, 2], "b": True, "c": 1}, {"a": [1, 2.5], "b": 1, "d": 1}, "/r", diffs)
    assert [p for p, _, _ in diffs] == ["/r/a/1", "/r/b", "/r/c", "/r/d"]


def test_shipped_report_is_compared_with_the_embedded_one(tmp_path: Path) -> None:
    document = load_answer("shipped_report_differs")
    shipped = EXPERIMENTS / "shipped_report_differs" / "bench_report.json"
    found = shipped_report_finding(document, shipped, AuditOptions())
    assert found is not None and found.rule == "R806"
    assert found.pointer.startswith("/bench_report/baseline/full/")
    reformatted = tmp_path / "bench_report.json"  # the same numbers, other formatting
    reformatted.write_text(json.dumps(document["bench_report"], sort_keys=True))
    assert shipped_report_finding(document, reformatted, AuditOptions()) is None


# -- fixtures and setup ---------------------------------------------------------------------


def test_the_torch_workspaces_share_one_bench_script(tmp_path: Path) -> None:
    """The repository holds the bench script once; each workspace's copy for a rerun carries that very script."""
    runs_bench = sorted(
        p.parent.name for p in EXPERIMENTS.glob("*/answer.txt") if "bench.py" in load_answer(p.parent.name)["files"]
    )
    assert runs_bench == [
        "adamw_honest",
        "clip_honest",
        "clip_noop",
        "edited_numbers",
        "fabricated",
        "missing_file",
        "no_report",
        "shipped_report_differs",
    ]
    assert sorted(str(p.relative_to(EXPERIMENTS)) for p in EXPERIMENTS.glob("*/bench.py")) == [
        "clip_honest/bench.py",
        "no_report/bench.py",
    ]  # no_report's own script writes no report
    for name in runs_bench:
        own = EXPERIMENTS / name / "bench.py"
        copy = experiment_workspace(name, tmp_path / name)
        assert (copy / "bench.py").read_bytes() == (own if own.exists() else BENCH_SCRIPT).read_bytes(), name


def test_r8_rules_are_errors() -> None:
    rules = {r.code: r for r in all_rules() if r.code.startswith("R8")}
    assert sorted(rules) == [f"R8{i:02d}" for i in range(1, 11)]
    assert {rule.severity.value for rule in rules.values()} == {"error"}


def test_missing_bubblewrap_is_refused_with_the_package_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    sandbox.find_bubblewrap.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="bubblewrap") as caught:
            rerun(load_answer("no_report"), EXPERIMENTS / "no_report")
    finally:
        sandbox.find_bubblewrap.cache_clear()
    assert isinstance(caught.value, AuditorError)
    assert "--unsafe-no-sandbox" in str(caught.value)
