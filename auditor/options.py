"""Options that change what an audit checks and how strictly.

One frozen dataclass, built by the CLI (and later by ``[tool.auditor]``
configuration) and passed down read-only to every stage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from .findings import Severity

MiB = 1024 * 1024
# Where --rerun runs the experiment: a GPU when torch sees one, or the one named.
RerunDevice = Literal["auto", "cpu", "cuda"]


@dataclass(frozen=True)
class AuditOptions:
    # Significance level for the recomputed verdict.
    alpha: float = 0.05
    # Resamples B assumed for a claimed Monte-Carlo p-value when the answer does
    # not state its own, tried beside the counts agents commonly use (auditor.pvalues).
    mc_resamples: int = 10_000
    # Resamples of the auditor's own randomized sign-flip test (n > exact_max_n).
    resamples: int = 100_000
    # Largest n for which the sign-flip test is enumerated exactly (meet-in-the-middle, at most 40).
    # 30 keeps any answer's audit within 20x of an 8-seed one's (bench/run.py); above it the
    # randomized test's stated interval costs a few milliseconds at any n.
    exact_max_n: int = 30
    # Seed of the randomized sign-flip test used above exact_max_n.
    random_seed: int = 0
    # E701: an effect is negligible below this fraction of |baseline mean| ...
    negligible_rel: float = 0.01
    # ... or below this many baseline standard deviations.
    negligible_std: float = 0.1
    # E703: "no effect" is inconclusive when the MDE exceeds this fraction of |baseline mean|.
    inconclusive_mde_rel: float = 0.05
    # V407: an observed mechanism value further than this factor from its target.
    mechanism_factor: float = 2.0
    # Input limits (hardening): bytes read, JSON nesting depth, per-seed values,
    # characters of prose scanned for numbers.
    max_bytes: int = 16 * MiB
    max_depth: int = 64
    max_seeds: int = 10_000
    max_prose_chars: int = 100_000
    # Text encoding of transcripts given as bytes (--encoding); None: UTF-8 (a BOM always wins).
    encoding: str | None = None
    # Keep what the HTML report's charts draw on each result (auditor.extracts.figure_data); off for every
    # other format, so a batch holds only what its output needs.
    figure_data: bool = False
    # Rule selection by code or prefix; empty select means all rules.
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    # Findings at or above this severity make a result "fail"; None never fails.
    fail_on: Severity | None = Severity.ERROR
    # Per-rule severity overrides, e.g. {"T601": Severity.ERROR}.
    severity_overrides: dict[str, Severity] = field(default_factory=dict)
    # Rules whose errors fail a result whatever fail_on says: the rerun's integrity
    # rules when fail_on came from a discovered configuration (auditor.config).
    always_fail: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RerunOptions:
    """How ``--rerun`` re-executes the experiment an answer references."""

    device: RerunDevice = "auto"
    workspace: str | None = None  # default: the transcript's folder
    timeout: float = 600.0  # wall-clock seconds for the whole process tree
    python: str | None = None  # default: the interpreter running the auditor
    rtol: float | None = None  # default: 1e-5 same device kind, 1e-2 across devices
    memory_bytes: int = 8 * 1024 * MiB
    output_tail_bytes: int = 1 * MiB  # the last bytes of stdout and of stderr kept for findings
    output_limit_bytes: int = 1024 * MiB  # the output cap (--max-output): printed in all before the kill
    disk_bytes: int = 2 * 1024 * MiB  # what the run's copy may grow by (a tmpfs: RAM)
    max_processes: int = 1024  # processes and threads of the experiment
    unsafe_no_sandbox: bool = False
    # Rerun cache (auditor.rerun.cache): where results are kept, and whether to use them.
    cache_dir: str | None = None  # default: the user cache folder (~/.cache/auditor)
    use_cache: bool = True  # False: --no-cache, always run again
    # Called with a short status line as the rerun proceeds (the CLI's spinner);
    # only set when auditing in this process, as a callable does not pickle.
    progress: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
