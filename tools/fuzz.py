"""Coverage-guided fuzzing of the transcript parser with atheris (run by hand).

    pip install atheris
    python tools/fuzz.py                          # until stopped, corpus in the temp dir
    python tools/fuzz.py -max_total_time=60       # any libFuzzer flag passes through
    python tools/fuzz.py --corpus fuzz-corpus -jobs=2

Every input is audited as a whole transcript (:func:`auditor.audit.audit_bytes`),
so the parser, the schema layer, the recomputation and every check rule are
exercised; an exception or a broken result contract is a crash that libFuzzer
saves as ``crash-*`` in the working directory.  On the first run the corpus
folder is seeded with the transcripts under ``fixtures/answers``,
``fixtures/defects`` and ``fixtures/silent``.

atheris is not a dependency (it does not build everywhere); without it this
prints how to install it and exits with status 2.  This module is a command-line
entry point, so unlike the library it prints.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SEED_FOLDERS = ("answers", "defects", "silent")
DEFAULT_CORPUS = Path(tempfile.gettempdir()) / "auditor-fuzz-corpus"
# Used when the fixtures are not next to the package (an installed wheel).
_BUILTIN_ANSWER = (
    b'{"worked": true, "verdict": "p=0.0156, 7/8 wins", "bench_report": {"bench_version": 1, '
    b'"metric_direction": "lower is better", "baseline": {"full": {"mean": 1.5, "std": 0.5, '
    b'"per_seed": [1.0, 2.0], "n": 2}}, "idea": {"mean": 1.0, "std": 0.5, "per_seed": [0.5, 1.5], "n": 2}, '
    b'"comparison": {"delta_mean": -0.5, "idea_wins": 2, "n_pairs": 2, "p_value": 0.5, '
    b'"verdict": "no measurable effect"}}}'
)
BUILTIN_SEEDS = (_BUILTIN_ANSWER, b'Header\n```json\n{"comparison": {}, "baseline": {}}\n```\n')


def fixtures_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "fixtures"


def seed_corpus(corpus: Path) -> int:
    """Fill an empty or missing ``corpus`` folder with the fixture transcripts; how many were added."""
    corpus.mkdir(parents=True, exist_ok=True)
    if any(corpus.iterdir()):
        return 0
    added = 0
    for folder in SEED_FOLDERS:
        source = fixtures_dir() / folder
        if not source.is_dir():
            continue
        for path in sorted(source.iterdir()):
            if path.is_file():
                shutil.copyfile(path, corpus / f"{folder}-{path.name}")
                added += 1
    if not added:
        for index, data in enumerate(BUILTIN_SEEDS):
            (corpus / f"builtin-{index}.txt").write_bytes(data)
            added += 1
    return added


def check_result(result: Any) -> None:
    """The contract every audit keeps; a violation is a crash for the fuzzer."""
    from auditor.audit import AuditResult
    from auditor.findings import REGISTRY, Severity
    from auditor.rules.internal import X000

    if not isinstance(result, AuditResult):
        raise TypeError(f"not an AuditResult: {result!r}")
    if result.status not in ("pass", "fail", "error"):
        raise AssertionError(f"unknown status {result.status!r}")
    for f in result.findings:
        if f.rule == X000.code or f.rule not in REGISTRY:
            raise AssertionError(f"unexpected finding {f.rule}: {f.message}")
    if result.status == "error" and not any(f.severity is Severity.ERROR for f in result.findings):
        raise AssertionError("an error result without an error finding")
    from auditor.formats.jsonl import result_line

    result_line(result).encode("utf-8")  # as the JSON formats write it: the contract's types, no NaN


def _parse(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        prog="python tools/fuzz.py",
        description="Fuzz the transcript parser and the whole static audit with atheris (libFuzzer).",
        epilog="Other arguments (-max_total_time=60, -jobs=2, corpus folders, ...) go to libFuzzer.",
    )
    parser.add_argument(
        "--corpus", type=Path, default=DEFAULT_CORPUS, help=f"corpus folder (default: {DEFAULT_CORPUS})"
    )
    parser.add_argument("--max-bytes", type=int, default=1 << 20, help="largest input audited (default: 1 MiB)")
    return parser.parse_known_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args, rest = _parse(sys.argv[1:] if argv is None else argv)
    try:
        import atheris
    except ImportError:
        print(
            "tools/fuzz.py needs atheris, which is not installed (and not a dependency: it does not build\n"
            "everywhere). Install it with `pip install atheris` (Linux or macOS, CPython 3.8-3.12), then run\n"
            "`python tools/fuzz.py -max_total_time=60` again.",
            file=sys.stderr,
        )
        return 2
    added = seed_corpus(args.corpus)
    print(f"tools/fuzz.py: corpus {args.corpus} ({added} fixture transcripts added)", file=sys.stderr)

    with atheris.instrument_imports(include=["auditor"]):
        from auditor import audit, findings, prose  # noqa: F401
        from auditor.answer import schema  # noqa: F401
        from auditor.parse import jsonscan, transcript  # noqa: F401
        from auditor.stats import summary  # noqa: F401

        findings.load_rules()
    from auditor.options.models import AuditOptions

    options = AuditOptions(max_bytes=args.max_bytes)

    def test_one_input(data: bytes) -> None:
        check_result(audit.audit_bytes(data, "fuzz", options))

    os.environ.setdefault("NO_COLOR", "1")
    atheris.Setup([sys.argv[0], *rest, str(args.corpus)], test_one_input)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
