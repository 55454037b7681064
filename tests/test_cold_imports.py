"""A cold ``auditor audit`` imports only what the path it takes needs.

Each case runs the command line in a fresh interpreter and reads back which
heavy modules it left in ``sys.modules``: scipy.special for a t quantile or a
binomial tail the answer never needs, rich for a machine format, matplotlib for
anything but html.  pydantic is the options' contract and is
imported by every command (issue 32 accepts it within the cold-start budget); ``import auditor`` alone
stays without it.  Module presence only, never timing.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import ROOT, SEED_000, SEED_001

HEAVY = ("scipy", "scipy.special", "scipy.stats", "rich", "matplotlib", "numpy")

PROBE = """
import contextlib, io, json, sys
from auditor.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    code = main(sys.argv[2:])
print(json.dumps({"code": code, "output": out.getvalue(),
                  "loaded": [name for name in json.loads(sys.argv[1]) if name in sys.modules]}))
"""


def _cold(*argv: str) -> dict:
    """Run ``auditor *argv`` in a fresh interpreter: its exit code, its stdout and the HEAVY modules it loaded."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(HEAVY), *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("fmt", ["json", "jsonl", "sarif"])
def test_a_machine_format_imports_no_heavy_module(fmt: str) -> None:
    """Not even numpy: an answer of a few seeds is recomputed in plain Python, bit for bit as numpy would."""
    run = _cold("audit", str(SEED_000), "--isolated", "--format", fmt)
    assert SEED_000.name in run["output"]  # audited, and a real report came out
    assert run["loaded"] == []


def test_importing_the_package_imports_no_pydantic() -> None:
    """``import auditor`` stays cheap: the options (and pydantic) load with the first module that needs them."""
    probe = "import sys, auditor; print('pydantic' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_seed_000_needs_no_scipy_for_its_mde_or_its_monte_carlo_p() -> None:
    """Seed 000 claims an MDE (a t quantile) and a Monte-Carlo p (a binomial interval): both without scipy."""
    run = _cold("audit", str(SEED_000), "--isolated", "--format", "json")
    result = json.loads(run["output"])["results"][0]
    assert result["recomputed"]["mde"] == pytest.approx(0.0047, rel=1e-2)
    assert result["claimed"]["p_value"] == 0.01475 and result["recomputed"]["p_value"] == 0.015625
    assert "A307" not in [finding["rule"] for finding in result["findings"]]  # 295/20000: an honest count
    assert not any(name.startswith("scipy") for name in run["loaded"])


def test_the_text_format_imports_rich_and_nothing_else_heavy() -> None:
    run = _cold("audit", str(SEED_001), "--isolated")
    assert run["loaded"] == ["rich"]


def test_a_quantile_beyond_the_table_does_import_scipy_special() -> None:
    """The probe sees scipy when it is used: a t quantile the generated table does not hold."""
    probe = "import sys; from auditor.stats.summary import t_quantile; t_quantile(0.95, 3); print('scipy.special' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


def test_many_seeds_do_import_numpy() -> None:
    """The probe sees numpy when it is used: the exact test splits 20 seeds into halves too large for plain Python."""
    probe = (
        "import sys; from auditor.stats.summary import sign_flip_test; "
        "sign_flip_test([0.1 * k - 0.7 for k in range(20)]); print('numpy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
