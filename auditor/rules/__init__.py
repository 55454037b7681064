"""Rule families, one module each (or two, when one would grow too long).

Every module here is imported by :func:`auditor.findings.load_rules`, which
collects the :class:`~auditor.findings.Rule` values each binds at its top
level under the name of its code (``A301``, ``P101``).  A new module needs no
registration; a module that fails to import fails the auditor.
"""
