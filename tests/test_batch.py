"""Batches: discovery, parallel auditing, jsonl streaming and resume, X901/X902."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import FIXTURES, SEED_000, SEED_001, audit_tasks, codes
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.batch.executors import AuditPool, Task
from auditor.batch.run import cross_check
from auditor.cli import main
from auditor.errors import UsageError
from auditor.extracts import DEFAULT_VERDICT_POINTER, CrossFacts, compact_cross
from auditor.files.discovery import discover, survey
from auditor.files.paths import key
from auditor.formats.jsonl import resume_from
from auditor.options.config import options_for
from auditor.options.models import AuditOptions
from auditor.result import AuditResult, Status
from auditor.rules.cross import cross_findings
from auditor.stats.summary import benjamini_hochberg

BATCHES = FIXTURES / "batches"


def _audit(paths: list[str], jobs: int = 1):
    results = audit_tasks([Task(p, AuditOptions()) for p in paths], jobs=jobs)
    return cross_check(results, lambda source: AuditOptions(), fdr=0.05, alpha=0.05)


def _by_name(results) -> dict:
    return {Path(r.source).name: r for r in results}


# --------------------------------------------------------------------------- discovery


def _touch(path: Path, text: str = "x") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_walk_is_recursive_sorted_and_filtered(tmp_path) -> None:
    for name in (
        "b/2.txt",
        "b/1.md",
        "a.json",
        "c/d/e.txt",
        "notes.csv",
        ".git/x.txt",
        "ws/answer.txt",
        "ws/bench_report.json",
        "ws/config.json",
    ):
        _touch(tmp_path / name)
    found = [Path(p).relative_to(tmp_path).as_posix() for p in discover([str(tmp_path)])]
    assert found == ["a.json", "b/1.md", "b/2.txt", "c/d/e.txt", "ws/answer.txt"]


def test_include_and_exclude_globs(tmp_path) -> None:
    for name in ("keep/a.txt", "drafts/b.txt", "c.md", "d.log"):
        _touch(tmp_path / name)
    found = discover([str(tmp_path)], include=["*.txt", "*.log"], exclude=["drafts"])
    assert [Path(p).relative_to(tmp_path).as_posix() for p in found] == ["d.log", "keep/a.txt"]


def test_default_excludes_name_a_repositorys_ordinary_files_whatever_their_case(tmp_path) -> None:
    ordinary = (
        "README.md",
        "readme.txt",
        "CHANGELOG.md",
        "LICENSE.txt",
        "NOTES.md",
        "Contributing.md",
        "requirements-dev.txt",
        "package.json",
        "package-lock.json",
        ".pre-commit-config.yaml",
    )
    for name in (*ordinary, "answer.txt", "notes/a.txt", "readme_answer_copy/b.md", "pyproject.toml", "x.py"):
        _touch(tmp_path / name)
    walk = survey([str(tmp_path)])
    # A folder named like an ordinary file (notes/) is still walked; only files are matched by those names.
    assert [Path(p).relative_to(tmp_path).as_posix() for p in walk.paths] == [
        "answer.txt",
        "notes/a.txt",
        "readme_answer_copy/b.md",
    ]
    # Left out and named: what a run would otherwise audit (.txt/.md/.json), not .py, .yaml or .toml files.
    left_out = {Path(p).relative_to(tmp_path).as_posix() for p in walk.excluded}
    assert left_out == set(ordinary) - {".pre-commit-config.yaml"}
    # A hidden folder once, its contents unread.
    _touch(tmp_path / ".hidden" / "answer.txt")
    assert str(tmp_path / ".hidden") + os.sep in survey([str(tmp_path)]).excluded


def test_include_and_exclude_report_what_they_leave_out(tmp_path) -> None:
    for name in ("keep/a.txt", "drafts/b.txt", "drafts/deep/c.txt", "fabricated/answer.txt", "c.md", "d.log"):
        _touch(tmp_path / name)
    walk = survey([str(tmp_path)], include=["*.txt", "*.log"], exclude=["drafts", "fabricated"])
    assert [Path(p).relative_to(tmp_path).as_posix() for p in walk.paths] == ["d.log", "keep/a.txt"]
    # An excluded folder is one entry; c.md is left out by the include (a run would audit it by default).
    assert [Path(p).relative_to(tmp_path).as_posix() + ("/" if p.endswith(os.sep) else "") for p in walk.excluded] == [
        "c.md",
        "drafts/",
        "fabricated/",
    ]
    assert survey([str(tmp_path)]).excluded == []  # the defaults leave nothing of these out


def test_named_files_are_kept_unless_force_exclude(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("README.md", "answer.txt", "drafts/b.txt", "x.log"):
        _touch(tmp_path / name)
    named = ["README.md", "answer.txt", "drafts/b.txt", "x.log"]
    walk = survey(named, exclude=["drafts"])
    assert walk.paths == named and walk.excluded == [] and walk.walked == frozenset()
    forced = survey([*named, "-"], exclude=["drafts"], force_exclude=True)
    # The default excludes, the exclude globs (on any folder of the path) and the include all apply.
    assert forced.paths == ["answer.txt", "-"] and forced.excluded == ["README.md", "drafts/b.txt", "x.log"]
    assert survey(["drafts"], exclude=["drafts"], force_exclude=True).excluded == ["drafts" + os.sep]
    # A file both named and found by a walk is audited as named, and not reported as left out.
    both = survey(["README.md", "."])
    assert both.paths[0] == "README.md" and key("README.md") not in both.walked and both.excluded == []
    assert key("./answer.txt") in both.walked


def test_explicit_files_are_kept_in_argument_order_once(tmp_path) -> None:
    a, b = _touch(tmp_path / "b.txt"), _touch(tmp_path / "bench_report.json")
    assert discover([str(b), str(a), str(a)]) == [str(b), str(a)]
    with pytest.raises(UsageError):
        discover([str(tmp_path / "missing.txt")])


def test_walked_paths_keep_the_spelling_of_their_folder(tmp_path, monkeypatch) -> None:
    for name in ("a.txt", "sub/b.txt", "sub/deeper/c.md"):
        _touch(tmp_path / name)
    monkeypatch.chdir(tmp_path)
    expected = ["a.txt", "sub/b.txt", "sub/deeper/c.md"]
    for root in (".", "./", "sub/..", str(tmp_path), str(tmp_path) + "/"):
        assert discover([root]) == [os.path.join(root, name) for name in expected]
    # Two spellings of one folder that normalise alike: each file once, spelled as the first walk found it.
    assert discover(["sub/..", "."]) == [os.path.join("sub/..", name) for name in expected]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_loop_terminates(tmp_path) -> None:
    _touch(tmp_path / "top" / "a.txt")
    _touch(tmp_path / "top" / "sub" / "b.txt")
    os.symlink(tmp_path / "top", tmp_path / "top" / "sub" / "loop")
    os.symlink(tmp_path / "top" / "sub", tmp_path / "top" / "sub" / "self")
    found = discover([str(tmp_path / "top")])
    assert sorted(Path(p).name for p in found) == ["a.txt", "b.txt"]


def test_fixture_walk_skips_workspace_files_and_audits_every_answer() -> None:
    root = FIXTURES / "experiments"
    walk = survey([str(root)])
    paths = walk.paths
    answers = [f"{p.parent.name}/answer.txt" for p in root.glob("*/answer.txt")]
    # Beside a bench_report.json, a folder's other JSON files are the experiment's (config.json); a folder
    # without one is not known as a workspace, so its data files are walked like transcripts.
    data = ["hostile_read/targets.json", "hostile_sockets/targets.json", "hostile_write/targets.json"]
    # replication_shipped ships the report its script prints (an attack R808 catches on rerun): walked, it
    # is a bench report of its own; replication_hardcoded's config is an object without an answer.
    objects = ["replication_hardcoded/config.json", "replication_shipped/results.json"]
    assert [Path(p).relative_to(root).as_posix() for p in paths] == sorted(answers + data + objects)
    found = {
        Path(r.source).relative_to(root).as_posix(): (r.status, sorted(codes(r)))
        for r in audit_tasks([Task(p, AuditOptions(), key(p) in walk.walked) for p in paths])
    }
    # JSON arrays of paths hold no sign of an answer: skipped and counted.  A JSON object is one (an answer
    # broken beyond decoding shows no more), so the object of hostile_sockets fails P101 rather than pass unread.
    expected = {name: ("pass", ["T601"]) for name in answers} | {name: ("skipped", []) for name in data}
    # The replication workspaces' answers tune on a grid whose optimum lies inside it (no T601).
    expected |= {name: ("pass", []) for name in answers if name.startswith("replication_")}
    expected["replication_null/answer.txt"] = ("pass", ["E703"])  # "no effect" from 8 seeds: inconclusive
    assert found == expected | {
        "clip_noop/answer.txt": ("fail", ["D501", "T601"]),  # the static audit's only failure
        "hostile_sockets/targets.json": ("error", ["P101"]),
        "replication_hardcoded/config.json": ("error", ["P101"]),
        "replication_shipped/results.json": ("pass", []),
    }
    # Each workspace's own report is left out by the default excludes, and named as such.
    reports = sorted(f"{p.parent.name}/bench_report.json" for p in root.glob("*/bench_report.json"))
    assert reports and [Path(p).relative_to(root).as_posix() for p in walk.excluded] == reports


def test_per_file_ignores_match_relative_to_the_config_root(tmp_path) -> None:
    options = AuditOptions(ignore=("E7",))
    table = {"legacy/*": ("D5",), "*.md": ("T601",)}
    legacy = options_for(str(tmp_path / "legacy" / "a.txt"), options, table, tmp_path)
    assert legacy.ignore == ("E7", "D5")
    assert options_for(str(tmp_path / "x" / "b.md"), options, table, tmp_path).ignore == ("E7", "T601")
    assert options_for(str(tmp_path / "other.txt"), options, table, tmp_path) is options


# --------------------------------------------------------------------------- parallel


def test_jobs_2_gives_the_same_results_in_the_same_order_as_jobs_1() -> None:
    paths = discover([str(FIXTURES / "answers"), str(BATCHES), str(FIXTURES / "defects")])
    before = set(multiprocessing.active_children())
    with AuditPool([Task(p, AuditOptions()) for p in paths], jobs=2) as pool:
        workers = set(multiprocessing.active_children()) - before
        indices = sorted(index for index, _ in pool.completed())
    assert len(workers) == 2, "jobs=2 really audits in two worker processes"
    assert indices == list(range(len(paths))) and not set(multiprocessing.active_children()) - before
    one, _ = _audit(paths, jobs=1)
    two, _ = _audit(paths, jobs=2)
    assert [r.source for r in one] == paths
    assert one == two


# --------------------------------------------------------------------------- jsonl and resume


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_jsonl_has_one_line_per_transcript_then_a_summary(tmp_path, capsys) -> None:
    out = tmp_path / "run.jsonl"
    assert main(["audit", "-q", str(BATCHES / "x902"), "--format", "jsonl", "--output", str(out)]) == 0
    lines = _lines(out)
    results, summary = lines[:-1], lines[-1]
    assert len(results) == 5 and len({r["source"] for r in results}) == 5
    assert summary["summary"]["files"] == 5 and summary["cross"]["ideas_tested"] == 5
    assert [f["rule"] for f in summary["late_findings"]] == ["X902"]


def test_jsonl_streams_to_stdout(capsys) -> None:
    assert main(["audit", "-q", str(FIXTURES / "answers"), "--format", "jsonl"]) == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted(Path(r["source"]).name for r in lines[:-1]) == sorted(
        p.name for p in (FIXTURES / "answers").iterdir()
    )


def test_interrupted_jsonl_run_resumes_without_duplicates(tmp_path, capsys) -> None:
    folder = tmp_path / "answers"
    shutil.copytree(BATCHES / "x902", folder)
    out = tmp_path / "run.jsonl"
    assert main(["audit", "-q", str(folder), "--format", "jsonl", "--output", str(out)]) == 0
    full = out.read_text(encoding="utf-8").splitlines()
    # An interrupted run: two finished lines, then one cut short mid-write.
    out.write_text(full[0] + "\n" + full[1] + "\n" + full[2][:40], encoding="utf-8")
    assert main(["audit", "-q", str(folder), "--format", "jsonl", "--output", str(out), "--resume"]) == 0
    lines = _lines(out)
    sources = [line["source"] for line in lines if "source" in line]
    assert sorted(sources) == sorted(str(p) for p in folder.iterdir())
    assert len(sources) == len(set(sources)) == 5
    assert lines[:2] == [json.loads(full[0]), json.loads(full[1])], "finished lines are kept, not redone"
    assert "summary" in lines[-1] and lines[-1]["summary"]["files"] == 5
    # Resuming a complete run audits nothing again and still leaves one line per transcript.
    assert main(["audit", "-q", str(folder), "--format", "jsonl", "--output", str(out), "--resume"]) == 0
    assert len([line for line in _lines(out) if "source" in line]) == 5


def test_resume_round_trips_results(tmp_path) -> None:
    results, _ = _audit([str(SEED_000), str(SEED_001)])
    from auditor.formats.jsonl import result_line

    out = tmp_path / "r.jsonl"
    out.write_text("".join(result_line(r) for r in results), encoding="utf-8")
    done = resume_from(out, accept=lambda line, parse: parse(line))  # the test wrote the file
    assert [done[os.path.normpath(r.source)] for r in results] == results


# --------------------------------------------------------------------------- cross-answer checks


def test_x901_fires_on_both_answers_naming_the_other() -> None:
    results, _ = _audit(discover([str(BATCHES / "x901")]))
    by_name = _by_name(results)
    for name, other in (("run_a.txt", "run_b.txt"), ("run_b.txt", "run_a.txt")):
        x901 = [f for f in by_name[name].findings if f.rule == "X901"]
        assert len(x901) == 1 and other in x901[0].message and "seed 3" in x901[0].message
        assert x901[0].pointer == "/bench_report/baseline/full/per_seed/3"
    assert "X901" not in codes(by_name["other_model.txt"])


def test_x901_skips_facts_without_their_baseline_values() -> None:
    """Two resumed records of one setup whose facts lack the baseline values (edited by hand): nothing to
    compare, so no X901, and no crash of the whole batch's cross checks."""
    facts = {"track": "t", "model": "m", "baseline_cfg": {"lr": 0.1}, "baseline_pointer": "/b"}
    results = [AuditResult(name, Status.PASS, (), cross=dict(facts)) for name in ("a.txt", "b.txt")]
    found, _ = cross_findings(results, fdr=0.05, alpha=0.05)
    assert not any(f.rule == "X901" for items in found.values() for f in items)
    with_values = [replace(r, cross={**facts, "baseline_per_seed": [1.0, 2.0 + i]}) for i, r in enumerate(results)]
    assert {f.rule for items in cross_findings(with_values, fdr=0.05, alpha=0.05)[0].values() for f in items} == {
        "X901"
    }


@pytest.mark.parametrize("batch", ["x901", "x902", "x901_silent"])
def test_compact_cross_facts_give_the_same_findings_as_the_dicts(batch) -> None:
    results = audit_tasks([Task(str(p), AuditOptions()) for p in sorted((BATCHES / batch).glob("*.txt"))])
    compact = [replace(r, cross=compact_cross(r.cross)) for r in results]
    assert all(isinstance(r.cross, CrossFacts) for r in compact)
    assert cross_findings(compact, fdr=0.05, alpha=0.05) == cross_findings(results, fdr=0.05, alpha=0.05)


def test_compact_cross_reads_missing_facts_as_the_dict_does() -> None:
    assert compact_cross(None) is None and compact_cross({}) is None
    facts = compact_cross({"track": "t", "baseline_per_seed": [1.0, 2]})
    assert facts.model is None and facts.cfg_text is None and facts.baseline_pointer is None
    assert facts.verdict_pointer == DEFAULT_VERDICT_POINTER
    assert facts.per_seed == [1.0, 2]  # not all floats: kept as written, so 2 stays an int in a finding
    full = compact_cross(
        {
            "track": "t",
            "model": "m",
            "baseline_cfg": {"wd": 0.0, "lr": 0.1},
            "baseline_per_seed": [1.0, 2.5],
            "verdict_pointer": None,
        }
    )
    assert full.cfg_text == '{"lr": 0.1, "wd": 0.0}' and list(full.per_seed) == [1.0, 2.5]
    assert full.verdict_pointer is None and compact_cross(full) is full


@pytest.mark.parametrize(
    "batch", [[str(BATCHES / "x901_silent")], [str(SEED_000), str(SEED_001)]], ids=["shared-baseline", "seeds"]
)
def test_x901_and_x902_stay_silent(batch) -> None:
    results, summary = _audit(discover(batch))
    assert not any(code.startswith("X") for r in results for code in codes(r))
    assert summary.ideas_tested == len(results)


def test_x902_flags_the_claim_that_does_not_survive_benjamini_hochberg() -> None:
    results, summary = _audit(discover([str(BATCHES / "x902")]))
    flagged = sorted(name for name, r in _by_name(results).items() if "X902" in codes(r))
    assert flagged == ["weak.txt"]
    assert (summary.ideas_tested, summary.significant_claims, summary.discoveries) == (5, 2, 1)
    assert summary.expected_false_positives == pytest.approx(0.05)
    assert summary.expected_by_chance == pytest.approx(0.25)


def test_a_single_answer_gets_no_cross_checks() -> None:
    _, summary = _audit([str(SEED_000)])
    assert summary is None


def test_cross_findings_respect_ignore(capsys) -> None:
    assert main(["audit", "-q", str(BATCHES / "x902"), "--format", "json", "--ignore", "X9"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert not any(f["rule"].startswith("X") for r in data["results"] for f in r["findings"])


def test_benjamini_hochberg_by_hand() -> None:
    # m = 4, q = 0.05: thresholds 0.0125, 0.025, 0.0375, 0.05.  0.03 misses its
    # own threshold but the step-up keeps it because 0.036 meets the third.
    assert benjamini_hochberg([0.01, 0.036, 0.03, 0.2], 0.05) == 0.036
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.2], 0.05) == 0.01
    assert benjamini_hochberg([0.03, 0.5], 0.05) is None
    assert benjamini_hochberg([0.05, 0.05], 0.05) == 0.05


@given(st.lists(st.floats(0, 1), min_size=1, max_size=30), st.floats(0.001, 0.5))
def test_benjamini_hochberg_matches_its_definition(p_values, q) -> None:
    ordered = sorted(p_values)
    m = len(ordered)
    k = max((i for i in range(1, m + 1) if ordered[i - 1] <= q * i / m), default=0)
    assert benjamini_hochberg(p_values, q) == (ordered[k - 1] if k else None)


def test_a_path_audit_records_its_time_and_nothing_else_changes() -> None:
    from auditor.audit import audit_bytes, audit_path

    timed = audit_path(str(SEED_000), AuditOptions())
    untimed = audit_bytes(SEED_000.read_bytes(), str(SEED_000), AuditOptions(), transcript_path=str(SEED_000))
    assert timed.seconds is not None and timed.seconds > 0 and untimed.seconds is None
    assert timed == untimed  # seconds do not take part in equality
    assert replace(timed, seconds=None).__dict__ == untimed.__dict__
    assert timed.with_seconds(1.5).seconds == 1.5 and timed.seconds != 1.5  # a copy


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 5_000), st.integers(1, 8))
def test_chunks_cover_the_batch_in_order_and_end_small(count, workers) -> None:
    from auditor.batch.executors import MAX_CHUNK, chunks

    indices = list(range(100, 100 + count))
    cut = chunks(indices, workers)
    assert [i for chunk in cut for i in chunk] == indices and all(cut)
    sizes = [len(chunk) for chunk in cut]
    assert max(sizes, default=0) <= MAX_CHUNK
    if count >= 16 * workers * MAX_CHUNK:  # a large batch: full chunks, then the last 2 per worker cut in four
        assert sizes[0] == MAX_CHUNK and sizes[-8 * workers :] == [MAX_CHUNK // 4] * (8 * workers)


def _value_at(text: str, line: int, column: int) -> str:
    return text.splitlines()[line - 1][column - 1 :]


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_cross_answer_findings_are_placed_at_their_lines(tmp_path, capsys, fmt: str) -> None:
    """Issue 31 item 8: X901/X902 carry the line and column of their value, like every other finding."""
    for name in ("run_a.txt", "run_b.txt"):
        shutil.copy(BATCHES / "x901" / name, tmp_path / name)
    main(["audit", str(tmp_path), "--format", fmt, "--isolated"])
    out = capsys.readouterr().out
    if fmt == "json":
        findings = [(r["source"], f) for r in json.loads(out)["results"] for f in r["findings"]]
    else:
        summary = json.loads(out.splitlines()[-1])
        findings = [(item["source"], item) for item in summary["late_findings"]]
    x901 = [(source, f) for source, f in findings if f["rule"] == "X901"]
    assert len(x901) == 2
    for source, f in x901:
        assert f["pointer"].endswith("/per_seed/3") and f["line"] is not None
        assert _value_at(Path(source).read_text(encoding="utf-8"), f["line"], f["column"]).startswith(
            repr(f["claimed"])[:6]
        )


def test_a_transcript_changed_after_its_audit_keeps_its_cross_finding_unplaced(tmp_path) -> None:
    from auditor.audit import audit_path, place_findings
    from auditor.findings import Finding, Severity

    path = tmp_path / "run_a.txt"
    shutil.copy(BATCHES / "x901" / "run_a.txt", path)
    result = audit_path(str(path))
    late = Finding("X901", Severity.WARNING, "differs", "/bench_report/baseline/full/per_seed/3")
    result = result.with_findings((*result.findings, late))
    assert place_findings(str(path), result, AuditOptions()).findings[-1].line is not None
    path.write_text(
        "\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8"
    )  # two lines moved: not the bytes audited
    assert place_findings(str(path), result, AuditOptions()).findings[-1].line is None


def test_resumed_transcripts_get_their_cross_answer_findings_placed(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("run_a.txt", "run_b.txt"):
        shutil.copy(BATCHES / "x901" / name, tmp_path / name)
    out = tmp_path / "run.jsonl"
    main(["audit", str(tmp_path), "--format", "jsonl", "-o", str(out), "--isolated", "--include", "run_*.txt"])
    lines = out.read_text(encoding="utf-8").split("\n")[:-2]  # the summary line cut, as by an interrupt
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    main(
        [
            "audit",
            str(tmp_path),
            "--format",
            "jsonl",
            "-o",
            str(out),
            "--isolated",
            "--include",
            "run_*.txt",
            "--resume",
        ]
    )
    capsys.readouterr()
    late = json.loads(out.read_text(encoding="utf-8").splitlines()[-1])["late_findings"]
    assert [f["rule"] for f in late] == ["X901", "X901"] and all(f["line"] is not None for f in late)
