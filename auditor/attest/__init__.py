"""Signed, verifiable verdicts: in-toto Statements in DSSE envelopes, signed with Ed25519.

:mod:`.dsse` is the envelope (the pre-authentication encoding, signing and checking),
:mod:`.keys` the key pairs (generated, written and loaded as PEM), :mod:`.statement` the
in-toto Statement whose predicate is one audited transcript's verdict (docs/attestations.md),
and :mod:`.verify` checks a file of envelopes against a key and the transcripts.

The library signs and checks; it never prints or exits (the command line does,
:mod:`auditor.attest.cli`).  ``cryptography`` is imported only where a key is used.
"""
