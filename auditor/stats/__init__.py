"""Statistics over numpy arrays: summaries, the paired sign-flip test, p-value readings, precision and rounding.

Nothing here knows of answers, rules or prose (an import-linter contract keeps it so).
"""
