#!/usr/bin/env python3
"""What signing a verdict costs beside the static audit it signs (issue 35: under 10% per transcript).

    python bench/attest.py [--transcripts 200] [--rounds 15]

Both are timed warm and in-process, per transcript, on the same corpus of real-looking answers
(bench/corpus.py, 5 to 48 seeds): the audit is ``auditor.audit.audit_bytes``; signing is what
``--attest`` adds for one result, its in-toto statement built from the output contract
(:func:`auditor.attest.statement.statement_for`), serialised, put in a DSSE envelope signed with
Ed25519 and written as a line (:func:`auditor.attest.sign.envelope_lines`).  The two are timed
in alternating rounds and the round with the median ratio is reported (as bench/run.py does):
each ratio compares two times taken moments apart on a machine whose speed drifts.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from corpus import write_corpus  # noqa: E402 (after the path)

GOAL = 0.10


def measure(count: int, rounds: int) -> tuple[float, float, float]:
    """(ratio, audit seconds, signing seconds) per transcript, from the round with the median ratio."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from auditor.attest.keys import SigningKey, keyid_of
    from auditor.attest.sign import envelope_lines
    from auditor.audit import audit_bytes
    from auditor.options.models import AuditOptions
    from auditor.options.policy import report

    private = Ed25519PrivateKey.generate()
    key = SigningKey(private, keyid_of(private.public_key()))
    options = AuditOptions()
    with tempfile.TemporaryDirectory() as folder:
        texts = [p.read_bytes() for p in write_corpus(Path(folder), count)]
    results = [audit_bytes(t, f"answers/t{i:06d}.txt", options) for i, t in enumerate(texts)]
    config = report(_default_settings())
    envelope_lines(results, config, key)  # warm: the models' validators are built once
    found = []
    for _ in range(rounds):
        start = time.perf_counter()
        for i, text in enumerate(texts):
            audit_bytes(text, f"answers/t{i:06d}.txt", options)
        audit = (time.perf_counter() - start) / count
        start = time.perf_counter()
        envelope_lines(results, config, key)
        sign = (time.perf_counter() - start) / count
        found.append((sign / audit, audit, sign))
    return sorted(found)[len(found) // 2]


def _default_settings():
    from auditor.options import config

    return config.resolve(config.Config(), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transcripts", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    ratio, audit, sign = measure(args.transcripts, args.rounds)
    verdict = "met" if ratio < GOAL else "NOT met"
    print(f"static audit: {audit * 1e3:.3f} ms per transcript")
    print(f"signing (statement + DSSE + Ed25519): {sign * 1e6:.0f} us per transcript")
    print(f"ratio: {ratio:.1%} (goal < {GOAL:.0%}: {verdict})")


if __name__ == "__main__":
    main()
