"""A jsonl run keeps only what the end of the run needs, and ends exactly as a run that keeps every result."""

from __future__ import annotations

import json
from array import array
from pathlib import Path

from auditor.batch.session import SessionOptions, run_session
from auditor.extracts import CrossFacts, compact_cross
from auditor.options.config import Config, resolve

BATCH = sorted(str(p) for p in (Path(__file__).resolve().parent.parent / "fixtures" / "batches" / "x901").glob("*.txt"))


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_jsonl_summary_and_late_findings_match_a_run_that_keeps_every_result(tmp_path) -> None:
    settings = resolve(Config())
    streamed = run_session(BATCH, settings, SessionOptions(format="jsonl", output=str(tmp_path / "out.jsonl")))
    whole = run_session(BATCH, settings, SessionOptions(format="json", output=str(tmp_path / "out.json")))
    lines = _lines(tmp_path / "out.jsonl")
    summary = lines[-1]
    written = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert summary["summary"] == written["summary"]
    assert summary["cross"] == written["cross"]
    late = [(f["source"], f["rule"], f["message"]) for f in summary["late_findings"]]
    cross_found = [
        (r["source"], f["rule"], f["message"])
        for r in written["results"]
        for f in r["findings"]
        if f["rule"].startswith("X9")
    ]
    assert late and sorted(late) == sorted(cross_found)  # X901 fires in this batch
    # The run's results end with the statuses a whole run gives (the exit status reads them).
    assert [r.status for r in streamed.results] == [r.status for r in whole.results]


def test_jsonl_run_keeps_only_the_facts_the_cross_checks_compare(tmp_path) -> None:
    settings = resolve(Config())
    run = run_session(BATCH, settings, SessionOptions(format="jsonl", output=str(tmp_path / "out.jsonl")))
    written = {line["source"]: line["cross"] for line in _lines(tmp_path / "out.jsonl")[:-1]}
    for result in run.results:
        assert set(result.recomputed or {}) <= {"p_value"}
        assert set(result.claimed or {}) <= {"verdict"}
        # Kept compact; the line holds the dict form, and both say the same.
        assert isinstance(result.cross, CrossFacts) and isinstance(result.cross.per_seed, array)
        assert isinstance(written[result.source]["baseline_cfg"], dict)
        assert result.cross == compact_cross(written[result.source])
    # Answers of one setup share one copy of each string.
    first, second = run.results[0].cross, run.results[1].cross
    assert first.track is second.track and first.cfg_text is second.cfg_text


def test_writing_a_baseline_keeps_every_finding(tmp_path) -> None:
    settings = resolve(Config())
    options = SessionOptions(
        format="jsonl", output=str(tmp_path / "out.jsonl"), write_baseline=str(tmp_path / "baseline.json"), quiet=True
    )
    run = run_session(BATCH, settings, options)
    streamed = [len(line["findings"]) for line in _lines(tmp_path / "out.jsonl")[:-1]]
    assert sum(len(r.findings) for r in run.results) >= sum(streamed) > 0
