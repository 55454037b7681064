"""The JSON contract of ``--format json`` and ``--format jsonl``, as pydantic models.

Other tools read these documents, so their shape is defined once, here:
:class:`Result` (with :class:`Finding`, :class:`Recomputed`, :class:`Claimed` and
:class:`Rerun`), :class:`Summary`, :class:`CrossSummary` and :class:`Config`, put
together as :class:`RunDocument` (the json format) or as jsonl lines
(:class:`ResultLine`, then one :class:`SummaryLine`).  ``schemas/audit-output.schema.json``
is generated from them (``python -m auditor.formats.contract``; a test keeps the file current).

Every JSON output is made here: the pipeline's own values (:class:`~auditor.result.AuditResult`,
built per audit) are validated into these models once per result and dumped from them, so a
value the contract does not allow (a NaN, a missing key) is refused rather than written.  A
key that is optional is written only when the pipeline gave it (``claimed``, ``rerun``, the
summary's ``skipped``...), as before.  Floats keep Python's spelling (``1e-05``): the dump
goes through :mod:`json`, not pydantic's own JSON writer.

Typed access to one result: ``result.typed().recomputed.p_value``
(:meth:`auditor.result.AuditResult.typed`) or ``Result.of(result)``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from auditor.findings import Severity

if TYPE_CHECKING:
    from auditor.formats import Run
    from auditor.result import AuditResult

# Claimed values are as the answer wrote them: 3 stays 3, not 3.0.
Number = int | float


class _Contract(BaseModel):
    # No NaN or infinity anywhere (the pipeline writes them as null or "nan" before this point),
    # no key the contract does not name.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    def dump(self) -> dict[str, Any]:
        """The JSON object, with the optional keys the pipeline gave and no others."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class Finding(_Contract):
    """One problem found in one answer."""

    rule: str = Field(description="The rule's code, such as A307.")
    severity: Severity
    message: str
    pointer: str = Field(description='RFC 6901 JSON Pointer into the answer as written; "" for the whole input.')
    claimed: JsonValue = Field(description="The value the answer states, when the finding is a comparison.")
    recomputed: JsonValue = Field(description="The value the auditor recomputed or advises, when a comparison.")
    line: int | None = Field(ge=1, description="1-based line of the value in the transcript; null when it has none.")
    column: int | None = Field(ge=1, description="1-based column, in characters.")


class Recomputed(_Contract):
    """What the auditor recomputed from the per-seed values (null where a statistic is not finite)."""

    n_pairs: int
    delta_mean: float | None
    idea_wins: int
    p_value: float | None
    p_value_one_sided: float | None
    mde: float | None
    mde_rel_pct: float | None
    verdict: Literal["idea better (significant)", "idea worse (significant)", "no measurable effect"]
    p_value_method: str = Field(description="How p was computed: exact, Monte-Carlo, ...")
    baseline_mean: float | None
    idea_mean: float | None


class Claimed(_Contract):
    """What the answer itself states for the headline numbers, as written."""

    n_pairs: int
    delta_mean: Number
    idea_wins: int
    p_value: Number
    mde: Number | None
    mde_rel_pct: Number | None
    verdict: str


class RelDiff(_Contract):
    baseline: float | None
    idea: float | None


class StagedFile(_Contract):
    """One file of the rerun's private copy, as the experiment ran on it."""

    name: str = Field(description="Its name relative to the workspace.")
    size: int = Field(ge=0, description="Bytes.")
    sha256: str = Field(pattern="^[0-9a-f]{64}$", description="SHA-256 (hex) of its bytes.")


class SeedSet(_Contract):
    """One seed the script set, as the probe saw it: the call, the seed asked for and the one used."""

    call: str
    seed: JsonValue
    used: JsonValue


class Activity(_Contract):
    """What the auditor's probe saw the rerun do (docs/rerun.md); ``status`` decides R808."""

    status: Literal["trained", "no training", "undone", "not observed"]
    why: str | None
    torch_version: str | None
    optimizer_steps: int | None = Field(description="Optimizer steps with gradients; null when not observed.")
    forward_calls: int | None
    backward_calls: int | None
    devices: list[str]
    seeds_set: list[SeedSet] = Field(description="The first 64 seeds set through the probed functions.")
    seeds_total: int
    seed_offset: int
    frameworks: list[str] = Field(description="Other frameworks the script imported (jax, sklearn, ...).")


class Replication(_Contract):
    """The second run with every seed shifted (``--replicate``), and whether the claim replicated (R809, R810)."""

    seed_offset: int
    baseline: list[float] | None
    idea: list[float] | None
    delta_mean: float | None
    p_value: float | None
    verdict: str | None
    interval: list[float] | None = Field(description="The replication's 95% interval for the mean difference.")
    claimed_delta: float | None
    power: float | None = Field(description="Power of the replication's test for the claimed difference.")
    seeds_shifted: int
    replicated: bool | None = Field(description="null: inconclusive (docs/rerun.md states the test).")
    why: str | None
    seconds: float | None = None
    cached: bool = False
    activity_status: Literal["trained", "no training", "undone", "not observed"] | None = None


class Rerun(_Contract):
    """How a ``--rerun`` of the experiment ran, ended and what it gave (docs/rerun.md)."""

    device: Literal["cpu", "cuda"] | None
    torch_version: str | None
    seconds: float | None
    exit_code: int | None
    signal: str | None
    timed_out: bool
    output_capped: bool
    output_bytes: int | None
    max_rel_diff: RelDiff
    rtol: float | None
    claimed_device: str | None
    verdict: str | None
    report_source: Literal["file", "stdout"] | None
    reproduced: bool
    command: list[str]
    python: str | None
    python_version: str | None = Field(None, description="The interpreter's version, as it reported it.")
    sandbox: Literal["bubblewrap", "none"]
    sandbox_uid: int | None
    limits: dict[str, JsonValue] | None
    host_uid: int | None = Field(None, description="The experiment's uid on the host; only once it started.")
    cached: bool
    baseline: list[float] | None
    idea: list[float] | None
    p_value: float | None
    delta_mean: float | None
    files: list[StagedFile] | None = Field(
        None, description="The files the experiment ran on (name, size, sha256); present once they were staged."
    )
    activity: Activity | None = Field(None, description="What the probe saw the run do; null before a run.")
    replication: Replication | None = Field(None, description="With --replicate: the run on shifted seeds.")


class Result(_Contract):
    """The outcome of auditing one transcript."""

    source: str
    status: Literal["pass", "fail", "error"]
    findings: list[Finding]
    recomputed: Recomputed | None = Field(description="null when the answer could not be recomputed (status error).")
    claimed: Claimed | None = Field(None, description="Present when the answer's comparison could be read.")
    rerun: Rerun | None = Field(None, description="Present for a result audited with --rerun.")

    @classmethod
    def of(cls, result: AuditResult) -> Result:
        """``result`` (its strings cleaned of terminal controls) as the contract's typed model."""
        from auditor.formats.safe import clean_result

        return cls.model_validate(clean_result(result).to_dict())


class AnswerFacts(_Contract):
    """What the cross-answer checks compare of one answer, kept in jsonl lines for ``--resume``."""

    track: str | None
    model: str | None
    baseline_cfg: JsonValue
    baseline_per_seed: list[float]
    baseline_pointer: str
    verdict_pointer: str


class ResumeStamp(_Contract):
    """What binds a jsonl line to the transcript's bytes and the options (auditor.batch.resume)."""

    sha256: str | None
    options: str
    mac: str


class ResultLine(Result):
    """One jsonl line: a result, the facts the cross checks need, and (from the command line) its stamp."""

    cross: AnswerFacts | None = None
    resume: ResumeStamp | None = None

    @classmethod
    def of(cls, result: AuditResult) -> ResultLine:
        from auditor.formats.safe import clean_result

        result = clean_result(result)
        data = result.to_dict()
        if result.cross is not None:
            data["cross"] = result.cross
        return cls.model_validate(data)


class Summary(_Contract):
    """Counts of the run's results; skipped and excluded paths only when there were any (at most 100 named)."""

    files: int
    pass_: int = Field(alias="pass")
    fail: int
    error: int
    skipped: int | None = None
    skipped_paths: list[str] | None = None
    excluded: int | None = None
    excluded_paths: list[str] | None = None


class CrossSummary(_Contract):
    """The cross-answer figures of a run of two or more transcripts (docs/batch.md)."""

    ideas_tested: int
    significant_claims: int
    significant_recomputed: int
    discoveries: int
    fdr: float
    alpha: float
    expected_false_positives: float
    expected_by_chance: float


class IgnoredConfig(_Contract):
    path: str
    reason: str


class Setting(_Contract):
    value: JsonValue
    source: str = Field(description='"default", "command line", a file\'s path, or "<path> + command line".')


class Config(_Contract):
    """The configuration in effect (docs/output.md)."""

    path: str | None
    discovered: bool
    trusted: bool
    ignored: list[IgnoredConfig]
    policy: dict[str, Setting]


class RunDocument(_Contract):
    """``--format json``: the whole run."""

    auditor_version: str
    results: list[Result]
    summary: Summary
    cross: CrossSummary | None = Field(None, description="Present for a run of two or more transcripts.")
    config: Config | None

    @classmethod
    def of(cls, run: Run) -> RunDocument:
        """``run`` (whose strings the Run has cleaned already) as the contract's typed model."""
        from auditor import __version__

        data: dict[str, Any] = {
            "auditor_version": __version__,
            "results": [r.to_dict() for r in run.results],
            "summary": run.summary,
        }
        if run.cross is not None:
            data["cross"] = run.cross.to_dict()
        data["config"] = run.config
        return cls.model_validate(data)


class _Sourced(_Contract):
    source: str


class LateFinding(Finding, _Sourced):  # bases in this order put "source" first, as the line has it
    """A cross-answer finding known only once every result line was written, with the result it belongs to."""


class SummaryLine(_Contract):
    """The last jsonl line of a run that completed."""

    summary: Summary
    cross: CrossSummary | None = None
    late_findings: list[LateFinding]
    config: Config | None

    @classmethod
    def of(cls, run: Run, late_findings: list[dict[str, Any]]) -> SummaryLine:
        """The summary line of ``run`` (strings cleaned by the Run) and its cleaned ``late_findings``."""
        data: dict[str, Any] = {"summary": run.summary}
        if run.cross is not None:
            data["cross"] = run.cross.to_dict()
        return cls.model_validate({**data, "late_findings": late_findings, "config": run.config})


def summary_line_pieces(run: Run, late_findings: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The text of :meth:`SummaryLine.of` in pieces, each late finding validated as a :class:`LateFinding`
    and written on its own: a batch where every answer has one never holds them all as dicts, models
    and one string at once (kept for the memory budget: 3 KB a transcript at the end of such a run)."""
    separator = "{"
    for name, value in SummaryLine.of(run, []).dump().items():  # the line's keys in its order
        yield f"{separator}{_compact(name)}:"
        separator = ","
        if name != "late_findings":
            yield _compact(value)
            continue
        opening = "["
        for finding in late_findings:
            yield opening + json_text(LateFinding.model_validate(finding))
            opening = ","
        yield "[]" if opening == "[" else "]"
    yield "}"


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def json_text(model: _Contract, *, indent: int | None = None) -> str:
    """``model`` as JSON text: compact (one jsonl line) or indented; non-ASCII characters as they are."""
    separators = (",", ":") if indent is None else (",", ": ")
    return json.dumps(model.dump(), indent=indent, separators=separators, ensure_ascii=False, allow_nan=False)


def schema() -> dict[str, Any]:
    """The JSON Schema of the output: the json document, with the jsonl lines' shapes in ``$defs``."""
    from pydantic.json_schema import models_json_schema

    _, defs = models_json_schema(
        [(model, "serialization") for model in (RunDocument, ResultLine, SummaryLine)],
        ref_template="#/$defs/{model}",
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://auditor.example/schemas/audit-output.schema.json",
        "title": "auditor output",
        "description": (
            "What `auditor audit --format json` writes (this schema's root); a `--format jsonl` run writes "
            "one #/$defs/ResultLine per transcript, then one #/$defs/SummaryLine. Generated from "
            "auditor.formats.contract; do not edit by hand."
        ),
        "$ref": "#/$defs/RunDocument",
        "$defs": defs["$defs"],
    }


def schema_text() -> str:
    """The committed file's text (``schemas/audit-output.schema.json``)."""
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(schema_text())
