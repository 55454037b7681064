"""The one domain error the CLI catches at the top (exit code 2)."""


class AuditorError(Exception):
    """A problem with how the auditor was invoked or set up, not with an answer."""


class UsageError(AuditorError):
    """Bad command line, missing path, unreadable configuration."""
