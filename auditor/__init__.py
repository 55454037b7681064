"""auditor: audit the claims AI research agents make about their own ML experiments."""

__version__ = "0.1.0"
