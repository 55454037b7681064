"""``--format markdown``: a job summary (GitHub's ``$GITHUB_STEP_SUMMARY``, a merge-request note).

Totals first, then each failing transcript (fail, then error) with the claimed values the
recomputation disputes beside the recomputed ones and its findings, then the findings per
rule, each linked to its documentation, and the batch's cross-answer figures.

Every string an agent wrote (file names, messages, pointers, claimed verdicts) is shown as
literal text: each ASCII punctuation character is backslash-escaped, which CommonMark and
GitHub's Markdown read as that character and nothing else, so no ``<tag>``, ``[link](...)``,
``**emphasis**``, ``|`` cell break, ``&entity;``, ``www.``/``https://`` autolink or heading can be
planted; line breaks become spaces.  The rule documentation links are the auditor's own:
``docs/rules.md`` in the repository, or under ``$AUDITOR_DOCS_URL`` when that is an
``https://`` address (the GitHub Action sets it to its own copy of the docs).

A summary stays small (GitHub shows up to 1 MiB of it): at most :data:`MAX_DETAILED`
failing transcripts and :data:`MAX_FINDINGS` findings each are written out, then a count.
"""

from __future__ import annotations

import os
import re
from typing import Any, TextIO

from auditor.files.paths import portable
from auditor.findings import Finding, Severity, get_rule
from auditor.formats import Run, display, disputed, same_claim
from auditor.parse.strings import plural
from auditor.result import AuditResult, Status

MAX_DETAILED = 30
MAX_FINDINGS = 20
MAX_TEXT = 400  # characters of one agent-written string (a verdict may run to pages)
MAX_PASSING_NAMED = 100
MARK = {Severity.ERROR: "✗", Severity.WARNING: "⚠", Severity.INFO: "ℹ"}
STATUS_MARK = {Status.FAIL: "✗", Status.ERROR: "⚠", Status.PASS: "✓"}
DOCS = "docs/rules.md"
# The ASCII punctuation that can start markup, a link, HTML, an entity, math, an emoji or a mention
# mid-line (a string is never placed at a line start, where "-", "+" and digits would matter too).
_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#.!|<>~&:@$^])")
_SAFE_URL = re.compile(r"^https://[A-Za-z0-9._~:/?#@!$&'*+,;=%-]+$")


def text(value: Any, limit: int = MAX_TEXT) -> str:
    """``value`` as literal Markdown text on one line: no markup, link, HTML or cell break can form."""
    raw = " ".join(str(value).split())
    if len(raw) > limit:
        raw = raw[: limit - 1] + "…"
    return _PUNCTUATION.sub(r"\\\1", raw)


def _docs_base() -> str:
    """Where the rule docs are: ``$AUDITOR_DOCS_URL`` when it is a plain https address, else the repository's path."""
    given = os.environ.get("AUDITOR_DOCS_URL", "")
    return given.split("#")[0] if _SAFE_URL.match(given) and "(" not in given and ")" not in given else DOCS


def rule_link(code: str, base: str) -> str:
    """``[A307](…/rules.md#a307-name)``; a code the auditor does not know is plain text."""
    try:
        rule = get_rule(code)
    except KeyError:
        return text(code)
    anchor = f"{rule.code} {rule.name}".lower().replace(" ", "-")  # GitHub's anchor of "### CODE name"
    return f"[{rule.code}]({base}#{anchor})"


def _value(value: Any, other: Any) -> str:
    """A claimed or recomputed value: 6 digits, or as many as tell it from ``other`` when 6 do not."""
    shown = display(value)
    if isinstance(value, float) and isinstance(other, (int, float)) and shown == display(other) and value != other:
        shown = repr(float(f"{value:.12g}"))
    return text(shown)


def _totals(run: Run) -> list[str]:
    s = run.summary
    failing = s["fail"] + s["error"]
    findings = [f for r in run.results for f in r.findings]
    head = (
        f"## auditor: ✗ {failing} of {s['files']} transcripts fail"
        if failing
        else f"## auditor: ✓ all {s['files']} transcripts pass"
    )
    columns = ["transcripts", "pass", "fail", "error"] + (["skipped"] if s.get("skipped") else [])
    counts = [s["files"], s["pass"], s["fail"], s["error"]] + ([s["skipped"]] if s.get("skipped") else [])
    for severity in sorted(Severity, key=lambda s: -s.rank):
        columns.append(f"{severity.value}s")
        counts.append(sum(1 for f in findings if f.severity is severity))
    return [
        head,
        "",
        "| " + " | ".join(columns) + " |",
        "|" + " ---: |" * len(columns),
        "| " + " | ".join(str(c) for c in counts) + " |",
        "",
    ]


def _finding(f: Finding, base: str) -> str:
    where = f" · `line {f.line}`" if f.line is not None else ""
    pointer = f" · {text(f.pointer)}" if f.pointer else ""
    return f"- {MARK[f.severity]} {rule_link(f.rule, base)} {f.severity.value}{pointer}{where}: {text(f.message)}"


def _differences(result: AuditResult, base: str) -> list[str]:
    """The claimed values the recomputation disputes, beside the recomputed ones."""
    claimed, recomputed = result.claimed or {}, result.recomputed or {}
    rows = []
    for quantity, findings in disputed(result).items():
        c, r = claimed.get(quantity), recomputed.get(quantity)
        if c is not None and r is not None and same_claim(quantity, c, r) and quantity != "verdict":
            continue  # borderline (printing tolerance): the finding below says so
        rules = " ".join(dict.fromkeys(rule_link(f.rule, base) for f in findings))
        rows.append(f"| {text(quantity)} | {_value(c, r)} | {_value(r, c)} | {rules} |")
    if not rows:
        return []
    return ["| quantity | claimed | recomputed | rule |", "| --- | ---: | ---: | --- |", *rows, ""]


def _failure(result: AuditResult, base: str) -> list[str]:
    lines = [f"### {STATUS_MARK[result.status]} {result.status.upper()} {text(portable(result.source))}", ""]
    lines += _differences(result, base)
    shown = result.findings[:MAX_FINDINGS]
    lines += [_finding(f, base) for f in shown]
    if len(result.findings) > len(shown):
        lines.append(f"- … and {len(result.findings) - len(shown)} more findings")
    return [*lines, ""]


def _per_rule(run: Run, base: str) -> list[str]:
    counts: dict[str, list[Any]] = {}
    for r in run.results:
        for f in r.findings:
            entry = counts.setdefault(f.rule, [f.severity, 0, set()])
            entry[1] += 1
            entry[2].add(r.source)
    if not counts:
        return []
    order = sorted(counts.items(), key=lambda kv: (-kv[1][0].rank, -kv[1][1], kv[0]))
    lines = ["### Findings per rule", "", "| rule | severity | findings | transcripts | what it checks |"]
    lines.append("| --- | --- | ---: | ---: | --- |")
    for code, (severity, n, files) in order:
        try:
            summary = text(get_rule(code).summary)
        except KeyError:
            summary = ""
        lines.append(f"| {rule_link(code, base)} | {severity.value} | {n} | {len(files)} | {summary} |")
    return [*lines, ""]


def _cross(run: Run) -> list[str]:
    c = run.cross
    if c is None:
        return []
    return [
        f"Cross-answer: {c.ideas_tested} ideas tested, {c.significant_claims} claimed significant, "
        f"{c.significant_recomputed} significant at alpha {c.alpha:g} (≈{c.expected_by_chance:.2f} by chance alone), "
        f"{c.discoveries} Benjamini-Hochberg discoveries at FDR {c.fdr:g}.",
        "",
    ]


def _passing(run: Run) -> list[str]:
    names = [r.source for r in run.results if r.status is Status.PASS]
    if not names:
        return []
    listed = [f"- {text(portable(n))}" for n in names[:MAX_PASSING_NAMED]]
    if len(names) > MAX_PASSING_NAMED:
        listed.append(f"- … and {len(names) - MAX_PASSING_NAMED} more")
    # <details> is the auditor's own markup; every name inside is escaped text.
    return [
        f"<details><summary>{plural(len(names), 'passing transcript')}</summary>",
        "",
        *listed,
        "",
        "</details>",
        "",
    ]


def render(run: Run) -> str:
    """The summary as one Markdown document."""
    base = _docs_base()
    failing = [r for r in run.results if r.status is Status.FAIL] + [r for r in run.results if r.status is Status.ERROR]
    lines = _totals(run)
    for result in failing[:MAX_DETAILED]:
        lines += _failure(result, base)
    if len(failing) > MAX_DETAILED:
        lines += [
            f"… and {len(failing) - MAX_DETAILED} more failing transcripts (the SARIF and JSON reports list all).",
            "",
        ]
    lines += _per_rule(run, base) + _cross(run) + _passing(run)
    return "\n".join(lines).rstrip("\n") + "\n"


def write(run: Run, stream: TextIO) -> None:
    stream.write(render(run))
