"""The replication (``--replicate``) on the HTML report: its fresh seeds beside the claimed ones.

Results are built in process (the audited fixture answer, a ``rerun`` record holding a
replication as :func:`auditor.rerun.replication.judge_replication` writes it); the rerun
itself is tested through the CLI in tests/test_replication.py.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from conftest import FIXTURES

from auditor.audit import audit_path
from auditor.formats import Run
from auditor.formats.charts import transcript_charts
from auditor.formats.html import render
from auditor.formats.html_data import ChartInputs, chart_inputs, replication_arms
from auditor.options.models import AuditOptions
from auditor.result import AuditResult

ANSWER = FIXTURES / "answers" / "000_28acc42565c7de9b.txt"
# A hollow diamond in the replication's colour: matplotlib writes each as a path of its own, or (many
# markers) as a <use> of one path; a line's style goes on past the colour.
DIAMOND = re.compile(
    r'<(?:path d="M (?P<x>[\d.]+) [^"]*z "|use [^>]*x="(?P<use_x>[\d.]+)")[^>]*style="fill: none; stroke: #009e73"'
)


def diamonds(svg: str) -> list[float]:
    """The x of every replication marker drawn (the legend's among them)."""
    return [float(m["x"] or m["use_x"]) for m in DIAMOND.finditer(svg)]


@pytest.fixture(scope="module")
def audited() -> tuple[AuditResult, ChartInputs]:
    result = audit_path(str(ANSWER), AuditOptions(figure_data=True))
    data = chart_inputs(result)
    assert data is not None
    return result, data


def _replication(data: ChartInputs, **changes: Any) -> dict[str, Any]:
    fresh = {
        "seed_offset": 7,
        "baseline": [float(v) for v in data.baseline + 0.01],
        "idea": [float(v) for v in data.idea - 0.02],
        "delta_mean": float((data.idea - data.baseline).mean()) - 0.03,
        "p_value": 0.0078125,
        "verdict": "idea better (significant)",
        "replicated": True,
    }
    return {"reproduced": True, "device": "cpu", "replication": {**fresh, **changes}}


def _texts(svg: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", t) for t in re.findall(r"<text\b[^>]*>(.*?)</text>", svg, re.S)]


def test_the_replications_points_are_drawn_beside_the_claimed_ones(audited: tuple[AuditResult, ChartInputs]) -> None:
    result, data = audited
    n = data.baseline.size
    paired, differences, *_ = transcript_charts(0, data, replace(result, rerun=_replication(data)))
    # Paired chart: both replicated arms, n diamonds each, in two columns of their own, plus the legend's one.
    drawn = diamonds(paired.svg)
    assert len(drawn) == 2 * n + 1, len(drawn)
    columns = sorted({round(x) for x in drawn[: 2 * n]})
    assert len(columns) == 2 and "replication, seeds +7" in _texts(paired.svg)
    assert {"replication", "baseline", "idea"} <= set(_texts(paired.svg))
    assert "replication, seeds +7 (replicated): green diamonds" in paired.title
    # Differences chart: one diamond per replicated seed plus the legend's, and the replication's mean.
    assert len(diamonds(differences.svg)) == n + 1
    fresh_mean = float(((data.idea - 0.02) - (data.baseline + 0.01)).mean())
    assert f"replication mean {fresh_mean:.3g}" in _texts(differences.svg)
    assert "replication, seeds +7" in _texts(differences.svg) and "green diamonds" in differences.title


def test_without_a_usable_replication_nothing_of_it_is_drawn(audited: tuple[AuditResult, ChartInputs]) -> None:
    """No replication, a failed one (no values), or values that cannot be drawn: the charts stay as they were."""
    result, data = audited
    plain = transcript_charts(0, data, replace(result, rerun={"reproduced": True}))
    for rerun in (
        _replication(data, baseline=None, idea=None, replicated=None),
        _replication(data, idea=[float("nan")] * data.idea.size),
        _replication(data, idea=[1.0]),  # arms of unequal length are no pairs
        _replication(data, baseline=["1"] * data.baseline.size),
    ):
        assert replication_arms(rerun) is None
        charts = transcript_charts(0, data, replace(result, rerun=rerun))
        assert [c.svg for c in charts] == [c.svg for c in plain]
        assert not DIAMOND.search(charts[0].svg) and "replication" not in charts[1].title


def test_the_page_tables_the_replication_and_draws_only_numbers(audited: tuple[AuditResult, ChartInputs]) -> None:
    """The agent's run chose these values: only numbers reach the chart; an offset that is no integer is not quoted."""
    result, data = audited
    page = render(Run((replace(result, rerun=_replication(data)),)))
    assert "<th>replication, seeds +7: baseline</th>" in page and "<th>replication, seeds +7: idea</th>" in page
    assert repr(float(data.idea[0] - 0.02)) in page
    forged = _replication(data, seed_offset="<script>alert(1)</script>", replicated="yes")
    arms = replication_arms(forged)
    assert arms is not None and arms.label == "replication, fresh seeds" and arms.replicated is None
    page = render(Run((replace(result, rerun=forged),)))
    assert "<script>alert" not in page and "replication, fresh seeds (inconclusive)" in page


def test_a_replication_on_other_seed_counts_is_drawn_but_not_tabled(audited: tuple[AuditResult, ChartInputs]) -> None:
    result, data = audited
    rng = np.random.default_rng(3)
    rerun = _replication(data, baseline=list(rng.normal(10, 1, 12)), idea=list(rng.normal(10, 1, 12)))
    paired, differences, *_ = transcript_charts(0, data, replace(result, rerun=rerun))
    assert len(diamonds(paired.svg)) == 2 * 12 + 1 and len(diamonds(differences.svg)) == 12 + 1
    assert "seeds +7: baseline" not in render(Run((replace(result, rerun=rerun),)))
