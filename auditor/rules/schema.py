"""Schema rules (S2xx): raised by :mod:`auditor.answer.schema` while validating the answer."""

from __future__ import annotations

from auditor.findings import Rule, Severity

S201 = Rule(
    "S201",
    "schema-violation",
    Severity.ERROR,
    doc="""
    A field of the answer is missing, has the wrong type, or is out of range.

    ## What it does
    Validates the answer against `schemas/answer.schema.json` (or a bare bench
    report against `schemas/bench_report.schema.json`, JSON Schema 2020-12) and
    reports every violation with its JSON Pointer: a missing required field, a
    string where a number belongs, a negative count or std, a p-value outside
    [0, 1], an unknown `metric_direction`. Both idea shapes are valid: the flat
    `{cfg, mean, std, per_seed, n}` and the tuned `{best_cfg, sweep, full}`.

    ## Why is this bad?
    The numbers cannot be recomputed from a report with missing or mistyped
    fields, so none of the answer's claims can be checked.

    ## Example
    ```json
    {"comparison": {"p_value": "0.015", "delta_mean": -0.0087, "idea_wins": 7, "n_pairs": 8, "verdict": "..."}}
    ```
    Use instead: `"p_value": 0.015`, a number.

    ## How to fix
    Correct the field at the pointer the message gives, as the schema
    (`schemas/answer.schema.json`) says: add a missing field, write numbers as
    numbers rather than strings, keep counts and stds non-negative and p-values
    in [0, 1], and spell `metric_direction` "lower is better" or "higher is
    better".
    """,
)

S202 = Rule(
    "S202",
    "unsupported-bench-version",
    Severity.ERROR,
    doc="""
    The bench report declares a `bench_version` this auditor does not support.

    ## What it does
    Reports a `bench_version` other than the supported ones (currently 1).
    The report is then not audited further.

    ## Why is this bad?
    Another version of the format may give its fields another meaning (another
    test, another std convention); checking it with version 1's rules would
    report errors that are not there, or miss ones that are.

    ## Example
    ```json
    {"bench_report": {"bench_version": 2, "metric_direction": "lower is better", ...}}
    ```
    Use instead: `"bench_version": 1`, or an auditor that supports version 2.

    ## How to fix
    Write the report in a supported `bench_version` (1), or audit it with an
    auditor version that supports the version it declares.
    """,
)

S203 = Rule(
    "S203",
    "unknown-key",
    Severity.INFO,
    doc="""
    The answer has a key the schema does not know.

    ## What it does
    Lists every key, with its JSON Pointer, that is not declared in the schema
    at that place. Free-form objects (configs, `metrics`, `mechanism_signature`,
    `math_check`) may hold any keys and are not reported.

    ## Why is this bad?
    An unknown key is often a misspelt known one (`p_val` for `p_value`), whose
    value is then silently not audited; otherwise it is harmless.

    ## Example
    ```json
    {"comparison": {"p_val": 0.015, ...}}
    ```
    Use instead: the field's documented name, `p_value`.

    ## How to fix
    Rename a misspelt key to the schema's name (`p_val` to `p_value`), so its
    value is audited. Put deliberate extra information in a free-form object
    (`metrics`, `mechanism_signature`), or, if your reports carry extra keys on
    purpose, add "S203" to `ignore` in `[tool.auditor]`.
    """,
)
