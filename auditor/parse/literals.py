"""Numbers as the agent printed them: a float that keeps its JSON literal when the digits matter.

A float's shortest repr forgets what its literal said about precision: ``0.0000``
reads back as ``0.0`` (one decimal), ``10.930`` as ``10.93``, ``1.50e-3`` as
``0.0015``.  The decoder (:mod:`auditor.parse.decoder`) turns exactly those numbers,
whose literal's digits differ from their repr's, into :class:`PrintedFloat`, a
float that also carries the literal; :func:`auditor.stats.precision.printed` reads the
digits from it.  Everywhere else it is the float: equal, hashed, added, written
to JSON (``float.__repr__``), converted by numpy and pickled as one.  Only the
values the comparisons read keep it (:data:`CLAIM_KEYS`, :data:`CLAIM_LISTS`);
every other number of an answer (a config's ``lr``) is a plain float again.
"""

from __future__ import annotations

import math
from typing import Any

# Object members whose number is a claim or a datum whose printed digits count, and lists whose items are.
CLAIM_KEYS = frozenset({"mean", "std", "delta_mean", "p_value", "mde", "mde_rel_pct"})
CLAIM_LISTS = frozenset({"per_seed", "per_seed_diffs"})


class PrintedFloat(float):
    """A float read from a JSON literal whose digits its shortest repr does not keep."""

    __slots__ = ("literal",)
    literal: str

    def __new__(cls, literal: str) -> PrintedFloat:
        self = super().__new__(cls, literal)
        self.literal = literal
        return self

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return PrintedFloat, (self.literal,)


def digits_and_half_unit(text: str) -> tuple[int, float]:
    """Significant digits and half a unit in the last digit of a decimal literal (or a shortest repr).

    ``"0.0000"`` has 1 digit and half unit 5e-5; ``"1.50e-3"`` 3 digits and 5e-6.
    """
    mantissa, _, exponent = text.lstrip("+-").lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = max(len((whole + fraction).lstrip("0")), 1)
    return digits, 0.5 * 10.0 ** (int(exponent or 0) - len(fraction))


def printed_text(value: float) -> str:
    """The decimal ``value`` was printed as: its literal, or its shortest repr."""
    return value.literal if type(value) is PrintedFloat else repr(float(value))


def from_literal(text: str) -> float:
    """The float of a JSON number literal: a :class:`PrintedFloat` when the repr would lose its digits."""
    value = float(text)
    # Most literals are their float's shortest repr (15% of a warm audit went on comparing digits).
    if not math.isfinite(value) or repr(value) == text:
        return value
    if digits_and_half_unit(text)[1] == digits_and_half_unit(repr(abs(value)))[1]:
        return value
    return PrintedFloat(text)


def keep_claim_literals(value: Any) -> None:
    """Turn every :class:`PrintedFloat` of a decoded document back into a float, in place, except
    under :data:`CLAIM_KEYS` and in :data:`CLAIM_LISTS`: only the compared numbers carry a literal."""
    stack = [(value, False)]
    while stack:
        container, claims = stack.pop()
        if isinstance(container, dict):
            for key, item in container.items():
                if type(item) is PrintedFloat:
                    if key not in CLAIM_KEYS:
                        container[key] = float(item)
                elif isinstance(item, (dict, list)):
                    stack.append((item, key in CLAIM_LISTS))
        elif isinstance(container, list):
            for index, item in enumerate(container):
                if type(item) is PrintedFloat:
                    if not claims:
                        container[index] = float(item)
                elif isinstance(item, (dict, list)):
                    stack.append((item, False))
