"""Parse rules (P1xx): raised by :mod:`auditor.parse.transcript` while finding the answer's JSON."""

from __future__ import annotations

from auditor.findings import Rule, Severity

P101 = Rule(
    "P101",
    "no-json-object",
    Severity.ERROR,
    doc="""
    No JSON object that could be the answer was found in the input.

    ## What it does
    Searches the whole transcript (any header, ```json fences, trailing prose)
    for a JSON object that holds the answer: one with a `bench_report` key, a
    bare bench report (`comparison` and `baseline`), or at least an answer key
    (`worked`, `verdict`, `system_verdict`, `metrics`). Reports when there is none.

    ## Why is this bad?
    Without the answer's JSON nothing the agent claimed can be checked; the
    agent may have answered in prose only, or the pipeline stored the wrong text.

    ## Example
    ```text
    Ответ агента:

    The idea worked: MSE went from 10.93 to 10.92 with p=0.015.
    ```
    Use instead: the answer as a JSON object, `{"worked": true, "bench_report": {...}}`.

    ## How to fix
    Make the agent end its reply with the answer as one JSON object
    (`{"worked": ..., "bench_report": {...}}`), in a ```json fence or bare.
    If the agent did, check that the pipeline stores its final reply and not a
    log or another file.
    """,
)

P102 = Rule(
    "P102",
    "malformed-json",
    Severity.ERROR,
    doc="""
    The answer's JSON object is malformed (reported with line and column).

    ## What it does
    Reports a JSON-looking object that the JSON decoder rejects: a truncated
    object that never closes, a missing comma, a trailing comma, single quotes,
    or nesting deeper than the configured limit (64 levels by default). The
    message gives the line and column in the whole transcript, counted from 1.
    Stray braces in prose (`{x}`) next to a valid answer are ignored.

    ## Why is this bad?
    A malformed object cannot be read reliably; guessing what the agent meant
    would audit numbers it never wrote. Truncation usually means the answer was
    cut off by an output limit, so later fields are missing.

    ## Example
    ```json
    {"worked": true, "bench_report": {"bench_version": 1, "comparison": {"p_value": 0.01
    ```
    Use instead: the complete object, with every `{` closed.

    ## How to fix
    Fix the JSON at the line and column the message gives (a missing or a
    trailing comma, single quotes, an unclosed brace); `python -m json.tool`
    shows the same place. A truncated answer was cut off: raise the agent's
    output limit, or have the script write `bench_report.json` and the agent
    quote it.
    """,
)

P103 = Rule(
    "P103",
    "several-candidates",
    Severity.WARNING,
    doc="""
    Several different candidate answer objects were found; the most complete one was audited.

    ## What it does
    When the transcript holds more than one distinct object of the best kind
    (for example two answers, a draft and a final one), audits the most
    complete one (the last one on ties) and says which line it starts on.
    Identical copies of the same object are not reported.

    ## Why is this bad?
    Two different answers in one transcript contradict each other; the one the
    pipeline used may not be the one audited.

    ## Example
    ```text
    Draft: {"worked": false, "bench_report": {...}}
    Final: {"worked": true, "bench_report": {...}}
    ```
    Use instead: exactly one answer object per transcript.

    ## How to fix
    Leave exactly one answer object in the transcript, the final one. Quote
    drafts or earlier attempts as text, not as JSON objects with answer keys.
    """,
)

P104 = Rule(
    "P104",
    "non-finite-number",
    Severity.ERROR,
    doc="""
    A number in the answer is NaN, Infinity, or too large to be a finite float.

    ## What it does
    Rejects the literals `NaN`, `Infinity` and `-Infinity` (which Python's json
    module accepts but JSON does not) and numbers such as `1e999` or integers
    with hundreds of digits that overflow a 64-bit float. Each is reported with
    its JSON Pointer and treated as null for the rest of the audit.

    ## Why is this bad?
    A non-finite p-value, mean or per-seed metric means the experiment diverged
    or the statistics were computed on broken data; no claim built on it holds.

    ## Example
    ```json
    {"comparison": {"p_value": NaN}}
    ```
    Use instead: a finite number, or report the run as failed.

    ## How to fix
    Find out why the value is not finite (a diverged run, a division by zero,
    the std of a single value) and fix the experiment. A field that truly has
    no value is written `null`, never `NaN` or `Infinity`.
    """,
)

P105 = Rule(
    "P105",
    "unreadable-input",
    Severity.ERROR,
    doc="""
    The input cannot be read as text: missing, empty, binary, not UTF-8, or over the size limit.

    ## What it does
    Reports input that is not a readable transcript: a file that does not exist
    or cannot be opened, an empty or whitespace-only input, binary data (NUL
    bytes), bytes that are not valid UTF-8 (with the byte offset), or input
    larger than the size limit (checked before it is read). UTF-8 with a BOM
    and UTF-16 with a BOM are read normally.

    ## Why is this bad?
    There is no answer to audit; usually the pipeline stored the wrong file or
    the agent's output was lost.

    ## Example
    ```text
    $ auditor audit empty.txt
    P105 the input is empty: there is no answer to audit
    ```
    Use instead: the transcript as UTF-8 text.

    ## How to fix
    Pass the transcript itself: a non-empty text file in UTF-8 (or with a
    UTF-8 or UTF-16 byte-order mark). Name another encoding with `--encoding`
    (`--encoding cp1251`) or re-encode the file, and check that the pipeline
    stored the agent's output rather than an attachment or a binary file.
    """,
)
