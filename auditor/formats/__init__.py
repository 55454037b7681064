"""Output formats: each module renders the same list of results.

A format is a function ``write(run, stream)`` registered in ``FORMATS``;
``run`` is a :class:`Run` (the results plus the totals every format shows),
whose strings are already cleaned of terminal controls (:mod:`.safe`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from auditor.errors import UsageError
from auditor.files.paths import portable
from auditor.findings import Finding
from auditor.formats.safe import clean, clean_result, clean_value
from auditor.result import AuditResult, Status


@dataclass(frozen=True)
class Run:
    """Results in a deterministic order, the batch's cross-answer summary
    (a :class:`~auditor.rules.cross.CrossSummary`; None for a single transcript)
    and the configuration in effect: the ``config`` object of the JSON formats, the file read,
    the discovered files left unread and the policy (:func:`auditor.options.policy.report`; None: unknown).

    Every string a result carries (written by an agent, or a file name) is
    cleaned of terminal controls when the Run is built (:mod:`.safe`), so no
    format can print one raw.
    """

    results: tuple[AuditResult, ...]
    cross: Any = None
    config: dict[str, Any] | None = None
    # Ordinary files (no answer in them) that were skipped, not audited.
    skipped: int = 0
    # The AuditOptions the run used (alpha, fail-on, selection), for reports that show them.
    options: Any = field(default=None, compare=False)
    # The skipped files by name, and the files and folders include/exclude left out (agents name files).
    skipped_paths: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "results", tuple(clean_result(r) for r in self.results))
        object.__setattr__(self, "skipped_paths", tuple(clean(p) for p in self.skipped_paths))
        object.__setattr__(self, "excluded", tuple(clean(p) for p in self.excluded))
        if self.config is not None:
            object.__setattr__(self, "config", clean_value(self.config))  # paths and globs

    @property
    def summary(self) -> dict[str, Any]:
        statuses = [r.status for r in self.results]
        counts = {status.value: statuses.count(status) for status in Status if status is not Status.SKIPPED}
        # "skipped" and "excluded" only when files were: a run of answers alone keeps its summary as it was.
        # Names are capped (the count is whole), so a folder of 100,000 data files keeps the summary small.
        out: dict[str, Any] = {"files": len(statuses), **counts}
        if self.skipped:
            out |= {"skipped": self.skipped, "skipped_paths": [portable(p) for p in self.skipped_paths[:NAMED_PATHS]]}
        if self.excluded:
            out |= {
                "excluded": len(self.excluded),
                "excluded_paths": [_portable_entry(p) for p in self.excluded[:NAMED_PATHS]],
            }
        return out

    def to_dict(self) -> dict[str, Any]:
        """The ``--format json`` document (:class:`auditor.formats.contract.RunDocument`) as a dict."""
        from auditor.formats.contract import RunDocument

        return RunDocument.of(self).dump()


# At most this many skipped or excluded paths are named in a summary.
NAMED_PATHS = 100


def _portable_entry(path: str) -> str:
    """A path as reports name it; an excluded folder keeps its trailing slash."""
    return portable(path) + "/" if path.endswith(("/", "\\")) else portable(path)


def display(value: Any) -> str:
    """A claimed or recomputed value for a person: floats to 6 significant digits, None as a dash."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def place(source: str, finding: Finding) -> str | None:
    """``path:line:col`` where a finding was located in its transcript (editors and
    terminals link it), or None when it has no place in the text."""
    if finding.line is None:
        return None
    return f"{portable(source)}:{finding.line}:{finding.column or 1}"


# A batch shows the detailed panels of at most this many failing transcripts above its
# table, so the table and totals stay on the last screen (--details; text format).
DETAILED_FAILURES = 5

# Findings that say a claimed number or verdict is not what the data give: the arithmetic
# family and the verdict contradiction.  Others that point at the same field (E701
# "negligible", D505 "too few seeds") comment on it without disputing it.
_DISPUTING = re.compile(r"^(A\d{3}|V401)$")
_COMPARISON_FIELD = re.compile(r"/comparison/([A-Za-z_]+)$")


def disputed(result: AuditResult) -> dict[str, list[Finding]]:
    """Comparison field (``p_value``, ``verdict`` ...) -> the findings disputing its claimed value;
    every format marks a claim from this one answer."""
    out: dict[str, list[Finding]] = {}
    for f in result.findings:
        match = _COMPARISON_FIELD.search(f.pointer or "")
        if match and _DISPUTING.match(f.rule):
            out.setdefault(match.group(1), []).append(f)
    return out


def same_claim(quantity: str, claimed: Any, recomputed: Any) -> bool:
    """The claimed value is the recomputed one (verdicts by meaning, numbers to 12 digits): a check
    mark, where a value accepted only within a tolerance gets the "accepted" mark."""
    import math

    from auditor.stats.verdicts import classify_verdict

    if quantity == "verdict":
        return classify_verdict(claimed) is not None and classify_verdict(claimed) == classify_verdict(recomputed)
    if isinstance(claimed, (int, float)) and isinstance(recomputed, (int, float)):
        return math.isclose(claimed, recomputed, rel_tol=1e-12, abs_tol=0.0)
    return claimed == recomputed


def short_verdict(text: Any) -> str:
    """A verdict in one word for tables: better, worse, none; ``?`` for words no verdict reads as."""
    from auditor.stats.verdicts import Verdict, classify_verdict

    if text is None:
        return "—"
    verdict = classify_verdict(text)
    if verdict is not None:
        return {Verdict.BETTER: "better", Verdict.WORSE: "worse", Verdict.NONE: "none"}[verdict]
    return "?" if isinstance(text, str) else str(text)


Writer = Callable[[Run, TextIO], None]

# name -> module holding ``write``; imported only when that format is used.
FORMATS: dict[str, str] = {
    "text": "auditor.formats.text",
    "concise": "auditor.formats.concise",
    "json": "auditor.formats.json",
    "jsonl": "auditor.formats.jsonl",
    "sarif": "auditor.formats.sarif",
    "junit": "auditor.formats.junit",
    "github": "auditor.formats.github",
    "html": "auditor.formats.html",
    "markdown": "auditor.formats.markdown",
}


def writer(name: str) -> Writer:
    if name not in FORMATS:
        raise KeyError(f"unknown format {name!r}; choose from {', '.join(FORMATS)}")
    return importlib.import_module(FORMATS[name]).write


# name -> (module it imports, the extra that installs it), for formats that need an optional one.
EXTRAS: dict[str, tuple[str, str]] = {"html": ("matplotlib", "html")}


def check_available(name: str) -> None:
    """Raise :class:`~auditor.errors.UsageError` when format ``name`` needs an extra that does not
    import, so that the run stops before auditing rather than after it."""
    if name not in EXTRAS:
        return
    module, extra = EXTRAS[name]
    try:
        importlib.import_module(module)  # the format imports it anyway; a broken install fails here too
    except Exception as exc:  # noqa: BLE001 - any failure means the format cannot be written
        reason = clean(f"{type(exc).__name__}: {exc}")
        raise UsageError(
            f"--format {name} needs {module}, which cannot be imported ({reason}); "
            f"install it with: pip install 'auditor[{extra}]'"
        ) from None
