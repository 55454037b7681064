"""``auditor keygen`` and ``auditor verify``: the command line of attestations (auditor.cli calls these).

Exit codes as ``audit``'s: 0 every check passed, 1 a check failed (a bad signature, a
digest mismatch, an unknown key, a policy not met, a malformed line), 2 a usage error
(a missing or unreadable key or file; raised as :class:`~auditor.errors.UsageError`).
"""

from __future__ import annotations

import argparse
import sys

EXIT_OK, EXIT_FAIL = 0, 1


def add_parsers(sub: argparse._SubParsersAction) -> None:
    """The ``keygen`` and ``verify`` sub-commands."""
    keygen = sub.add_parser(
        "keygen",
        help="write an Ed25519 key pair for --attest: PREFIX.key (private, mode 0600) and PREFIX.pub",
    )
    keygen.add_argument("--out", required=True, metavar="PREFIX", help="where the pair goes: PREFIX.key, PREFIX.pub")
    verify = sub.add_parser(
        "verify",
        help="check signed verdicts (--attest-output) against a public key and the transcripts",
        description="Exit 0 when every check passes, 1 when one fails, 2 on a usage error.",
    )
    verify.add_argument("file", metavar="FILE.intoto.jsonl", help="the envelopes, one per line")
    verify.add_argument("--key", required=True, metavar="PUB.pem", help="the signer's public key (PEM)")
    verify.add_argument(
        "--transcript",
        action="append",
        default=[],
        metavar="PATH",
        help="a transcript whose bytes must match its statement's digest (repeatable)",
    )
    verify.add_argument("--require", choices=("pass",), help="every statement's verdict must be this")
    verify.add_argument("--quiet", "-q", action="store_true", help="print failures only")


def cmd_keygen(args: argparse.Namespace) -> int:
    from auditor.attest.keys import write_key_pair
    from auditor.formats.safe import clean

    private, public, keyid = write_key_pair(args.out)
    print(f"auditor: wrote {clean(private)} (private, 0600) and {clean(public)}; keyid {keyid}", file=sys.stderr)
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    from auditor.attest.keys import load_verifying_key
    from auditor.attest.verify import verify_file
    from auditor.formats.safe import clean

    key = load_verifying_key(args.key)
    report = verify_file(args.file, key, args.transcript, args.require)
    for problem in report.problems:  # names and details may quote an agent's file name
        print(f"auditor: verify: {clean(str(problem))}", file=sys.stderr)
    if not args.quiet:
        for v in report.verified:
            print(f"{clean(v.where)}: {v.statement.predicate.status} {clean(v.source)} sha256:{v.sha256}")
    if report.ok:
        if not args.quiet:
            print(f"auditor: verified {len(report.verified)} statement(s) signed by keyid {key.keyid}", file=sys.stderr)
        return EXIT_OK
    return EXIT_FAIL
