#!/usr/bin/env python3
"""Every output of the auditor over a fixed set of inputs: proof that a change left them byte-identical.

    python bench/identical.py OUT [--corpus DIR] [--mutations 25]
    git checkout OTHER && python bench/identical.py OUT_OTHER [--corpus DIR] && diff -r OUT OUT_OTHER

A speed-up must not change one byte of what the auditor writes.  This writes, into ``OUT``:

* every folder of ``fixtures/`` (and ``--corpus``) audited as one batch in every format but html,
  through :func:`auditor.cli.main` as a user runs it (``--isolated --jobs 1``);
* one JSON line per transcript under ``fixtures/`` audited alone, with ``--alpha 0.01`` too;
* one JSON line per seeded mutation of every fixture (cut short, spliced, a digit changed, CRLF,
  a stray NaN, quote or brace, a second fenced copy...), the inputs a parser must survive.

Only JUnit's ``time=`` differs from run to run; it is blanked.  Generate a corpus once
(``python -c "from corpus import write_corpus; ..."``) and pass the same folder to both runs: the
corpus generator itself recomputes statistics with the code under test.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FORMATS = ("json", "jsonl", "sarif", "junit", "text", "concise", "github")
_JUNIT_TIME = re.compile(r'time="[0-9.]+"')
_INSERTS = ("NaN", "Infinity", '"', "{", "}", ",", "\\u00e9", "\x00", "p = 0.03", " 7/8 wins ", "1e999", "-0.0")


def _folders(corpus: Path | None) -> list[Path]:
    """Relative to the checkout (run from there): outputs name their paths, and two checkouts must agree."""
    folders = sorted({path.parent for path in Path("fixtures").rglob("*.txt")})
    return folders + ([corpus.resolve()] if corpus else [])


def _cli(argv: list[str]) -> str:
    """What ``auditor`` prints to stdout for ``argv`` (stderr dropped), with its exit status."""
    from auditor.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = main(argv)
    return f"{out.getvalue()}\n[exit {status}]\n"


def mutations(text: str, rng: random.Random, count: int) -> list[str]:
    """``count`` damaged copies of ``text``, each with one seeded edit."""
    out = []
    for _ in range(count):
        at = rng.randrange(max(1, len(text)))
        edit = rng.randrange(8)
        if edit == 0:
            new = text[:at] + text[at + 1 :]
        elif edit == 1:
            new = text[:at]
        elif edit == 2:
            source = rng.randrange(max(1, len(text)))
            new = text[:at] + text[source : source + 40] + text[at:]
        elif edit == 3:
            digits = [i for i, c in enumerate(text) if c.isdigit()]
            i = rng.choice(digits) if digits else at
            new = text[:i] + str(rng.randrange(10)) + text[i + 1 :]
        elif edit == 4:
            new = text.replace("\n", "\r\n")
        elif edit == 5:
            new = text[:at] + rng.choice(_INSERTS) + text[at:]
        elif edit == 6:
            new = text + "\n```json\n" + text[text.find("{") :] + "\n```\n"
        else:
            new = text.replace(": ", ":", 5)
        out.append(new)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--corpus", type=Path, help="a generated corpus folder, audited as one more batch")
    parser.add_argument("--mutations", type=int, default=25, help="damaged copies per fixture (default 25)")
    args = parser.parse_args(argv)
    args.out = args.out.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    corpus = args.corpus.resolve() if args.corpus else None
    os.chdir(ROOT)

    from auditor.audit import audit_bytes

    for folder in _folders(corpus):
        # The corpus is audited from its parent folder: SARIF fingerprints are rooted at the working folder.
        os.chdir(folder.parent if folder.is_absolute() else ROOT)
        target = folder.name if folder.is_absolute() else str(folder)
        name = folder.name if folder.is_absolute() else "_".join(folder.parts)
        for fmt in FORMATS:
            text = _cli(["audit", "--isolated", "--jobs", "1", "--format", fmt, target])
            (args.out / f"{name}.{fmt}").write_text(_JUNIT_TIME.sub('time=""', text), encoding="utf-8")
    os.chdir(ROOT)

    transcripts = sorted(Path("fixtures").rglob("*.txt"))
    with open(args.out / "single.txt", "w", encoding="utf-8") as single:
        for path in transcripts:
            for extra in ([], ["--alpha", "0.01"]):
                single.write(_cli(["audit", "--isolated", "--format", "json", *extra, str(path)]))

    rng = random.Random(13)
    with open(args.out / "mutations.jsonl", "w", encoding="utf-8") as damaged:
        for path in transcripts:
            text = path.read_bytes().decode("utf-8", "replace")
            for index, mutant in enumerate(mutations(text, rng, args.mutations)):
                result = audit_bytes(mutant.encode("utf-8", "surrogatepass"), f"{path.name}#{index}")
                damaged.write(json.dumps(result.to_dict(), ensure_ascii=False, default=repr) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
