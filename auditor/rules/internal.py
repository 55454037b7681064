"""X000: the auditor itself failed on one transcript (raised by :func:`auditor.audit.audit_path`)."""

from __future__ import annotations

from auditor.findings import Rule, Severity

X000 = Rule(
    "X000",
    "internal-error",
    Severity.ERROR,
    doc="""
    The auditor failed with an unexpected internal error on this transcript.

    ## What it does
    Catches any exception the auditor raises while auditing one transcript
    and turns it into an `error` result with this finding, so that a batch
    goes on with the next transcript and no raw traceback reaches the
    terminal. The message names the exception and the log file that holds
    the full traceback (under the temporary directory, in `auditor-logs/`).

    ## Why is this bad?
    Nothing about the answer could be checked, and the auditor has a bug:
    whatever the input, it should end in findings about the answer, never in
    an exception. The transcript may be hostile, broken or simply new to the
    auditor; it is not necessarily wrong.

    ## Example
    ```text
    X000 internal error: ValueError: ... -- this is a bug in the auditor, not in the answer;
         please report it with the traceback in /tmp/auditor-logs/auditor-x000-1234.log
    ```
    Use instead: report the bug with the log file and the transcript; audit
    the transcript again with a fixed auditor.

    ## How to fix
    Nothing in the answer needs to change for X000 itself. Report the
    auditor's bug with the transcript and the log file the message names; the
    other transcripts of the batch were audited normally.
    """,
)
