"""The HTML report's finish: readable axis labels, legends clear of data, every severity in the
rule chart, numbers without float noise, and charts drawn in parallel exactly as in one process."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import FIXTURES

from auditor.audit import audit_path
from auditor.files.discovery import discover
from auditor.findings import Finding, Severity
from auditor.formats import Run
from auditor.formats.figures import legend_below, new_axes, style
from auditor.formats.html import _draw, drawn_charts
from auditor.formats.html_batch import fdr_chart, rules_chart
from auditor.formats.html_data import ChartInputs
from auditor.formats.html_transcript import seed_table
from auditor.options.models import AuditOptions
from auditor.result import AuditResult, Status


def _texts(svg: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", t) for t in re.findall(r"<text\b[^>]*>(.*?)</text>", svg, re.S)]


def _result(p: float, verdict: str, findings: tuple[Finding, ...] = ()) -> AuditResult:
    return AuditResult(
        source=f"a{p}.txt",
        status=Status.FAIL if findings else Status.PASS,
        findings=findings,
        recomputed={"p_value": p},
        claimed={"verdict": verdict},
    )


def test_the_p_value_axis_is_labelled_in_plain_numbers() -> None:
    results = [_result(p, "idea better (significant)") for p in (1e-4, 0.003, 0.02, 0.04, 0.3, 0.9)]
    svg = fdr_chart(results, 0.05, 0.05).svg
    labels = _texts(svg)
    assert not any("$" in t or "mathdefault" in t or "^{" in t for t in labels)
    assert {"0.001", "0.01", "0.1", "1"} <= set(labels)


def test_the_rule_chart_keeps_the_most_frequent_rules_of_any_severity() -> None:
    """T601, a warning and the commonest finding, was cut when more error rules fired than bars fit."""
    errors = [Finding(f"Z{i:03d}", Severity.ERROR, "m", "/x") for i in range(30)]
    warnings = tuple(Finding("T601", Severity.WARNING, "m", f"/{i}") for i in range(50))
    svg = rules_chart([_result(0.01, "better", tuple(errors)), _result(0.02, "better", warnings)]).svg
    labels = _texts(svg)
    assert "T601 warning" in labels
    assert sum(1 for t in labels if t.endswith(" error")) == 24  # 25 bars, errors first
    assert any("25 most frequent of 31 rules" in t for t in labels)


def test_a_legend_sits_below_the_axes_and_the_figure_grows_for_it() -> None:
    with style("t"):
        fig, ax = new_axes()
        height = fig.get_size_inches()[1]
        ax.plot([0, 1], [0, 1], label="one")
        ax.plot([0, 1], [1, 0], label="two")
        ax.scatter([0.5], [0.5], label="three")
        ax.set_xlabel("x")
        axes_box = ax.get_position().transformed(fig.transFigure)
        axes_inches = axes_box.height / fig.dpi
        legend_below(fig, ax, ncols=2)
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        renderer = FigureCanvasAgg(fig).get_renderer()
        fig.draw(renderer)
        legend_box = fig.legends[0].get_window_extent(renderer)
        label_box = ax.xaxis.label.get_window_extent(renderer)
        assert ax.get_legend() is None
        assert legend_box.y1 <= label_box.y0 + 1  # under the axis label, outside the data
        assert legend_box.y0 >= 0  # and inside the figure, not clipped
        assert fig.get_size_inches()[1] > height
        new_inches = ax.get_position().transformed(fig.transFigure).height / fig.dpi
        assert new_inches == pytest.approx(axes_inches)  # the plot itself keeps its size


def test_per_seed_differences_print_without_float_noise() -> None:
    """A difference is rounded to the decimals its two values are written with, and no further."""
    baseline = np.array([10.9309, 10.5, 0.1])
    idea = np.array([10.9222, 10.5, 0.3])  # 10.9222 - 10.9309 is -0.008699999999999264 in floats
    assert float(idea[0] - baseline[0]) != -0.0087 and float(idea[2] - baseline[2]) != 0.2
    table = seed_table(ChartInputs(baseline, idea, lower_is_better=True), None)
    assert "-0.0087<" in table and "0.2<" in table
    assert "0000000001" not in table and "9999999" not in table
    # Values that need all their digits keep them.
    fine = seed_table(ChartInputs(np.array([1.0]), np.array([1.123456789012]), lower_is_better=False), None)
    assert "1.123456789012<" in fine and "0.123456789012<" in fine


def test_charts_drawn_in_worker_processes_are_the_ones_drawn_here() -> None:
    paths = [p for p in discover([str(FIXTURES / "silent")]) if p.endswith(".txt")][:16]
    results = tuple(audit_path(p, AuditOptions(figure_data=True)) for p in paths)
    run = Run(results)
    parallel = drawn_charts(run)
    assert len(parallel) >= 16
    serial = dict(_draw(item) for item in enumerate(run.results))
    assert {i: [c.svg for c in cs] for i, cs in parallel.items()} == {
        i: [c.svg for c in cs] for i, cs in serial.items() if cs
    }
