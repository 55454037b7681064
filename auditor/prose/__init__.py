"""Numeric claims quoted in free prose, and rounding-aware comparison.

Agents repeat their headline numbers in prose ("p=0.01475 and 7/8 wins",
"MSE improved from 10.93094 to 10.92225").  These pure functions find five
kinds of claim in a string:

* p-values: ``p=0.01475``, ``p_value=...``, ``p-value of 0.03``, ``p < 0.05``,
  ``p<.001``, ``p≤0.05``, ``p = 1.0``, ``p=1.5e-3``;
* win fractions: ``7/8 wins``, ``idea_wins=7/8``, ``wins 7 of 8``;
* the mean paired difference: ``delta_mean=-0.0087``, ``mean delta ...``,
  ``paired delta 0.0`` -- only these qualified spellings, because a bare
  "delta" is often a mechanism parameter ("target delta=0.02" in seed 000);
* ``from A to B`` mean pairs (baseline mean, then idea mean), unless the
  clause names a hyperparameter ("lr from 0.001 to 0.006");
* relative changes of the metric: ``a 4.1% reduction in test MSE``,
  ``improved by 2%``, ``MSE dropped 4.1%``, ``4.1% lower MSE``,
  ``reduced test loss by 0.08%``, ``a reduction of 4.1%`` -- only when the
  change word sits next to the percentage, the changed quantity is the metric
  (or not named), and nothing in the clause says the percentage is about
  something else (clip fraction, tail, MDE, confidence, time, ...).

:func:`extract_resample_counts` reads the number of Monte-Carlo resamples an
answer states ("10,000 sign flips", "n_resamples=20000", "5k permutations");
:func:`stated_resample_counts` those of several texts.

A number written with k decimals is consistent with every value that rounds
to it (statcheck's rule): ``|x - v| <= 0.5 * 10**-k``.  Every regex is linear
in the input (no nested unbounded quantifiers) and the scanned text is capped.

The package: :mod:`.numbers` (numbers as written, clauses), :mod:`.claims`
(p-values, wins, deltas, from-to; :func:`extract_claims`), :mod:`.relative`
and :mod:`.words` (relative changes and their vocabulary), :mod:`.resamples`
(stated resample counts), :mod:`.scanning` (case-insensitive search on folded
text, and matching only where a word puts a claim).
"""

from auditor.prose.claims import (
    ClaimTest,
    DeltaClaim,
    FromToClaim,
    ProseClaims,
    PValueClaim,
    WinsClaim,
    extract_claims,
    extract_deltas,
    extract_from_to,
    extract_p_values,
    extract_wins,
)
from auditor.prose.numbers import LONG_NUMBER_RTOL, Reported, parse_number
from auditor.prose.relative import (
    MAX_RELATIVE_CHANGES,
    RelativeChangeClaim,
    extract_relative_changes,
)
from auditor.prose.resamples import (
    MAX_RESAMPLE_MATCHES,
    MAX_RESAMPLES,
    MIN_RESAMPLES,
    extract_resample_counts,
    says_randomized,
    stated_resample_counts,
)

__all__ = [
    "LONG_NUMBER_RTOL",
    "MAX_RELATIVE_CHANGES",
    "MAX_RESAMPLES",
    "MAX_RESAMPLE_MATCHES",
    "MIN_RESAMPLES",
    "ClaimTest",
    "DeltaClaim",
    "FromToClaim",
    "PValueClaim",
    "ProseClaims",
    "RelativeChangeClaim",
    "Reported",
    "WinsClaim",
    "extract_claims",
    "extract_deltas",
    "extract_from_to",
    "extract_p_values",
    "extract_relative_changes",
    "extract_resample_counts",
    "extract_wins",
    "parse_number",
    "says_randomized",
    "stated_resample_counts",
]
