"""The generated t table (:mod:`auditor.stats.t_table`) is scipy's ``stdtrit``, bit for bit.

Run as a script, this file prints the module: ``python tests/test_t_table.py > auditor/stats/t_table.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scipy.special import stdtrit

Q = 0.975  # what the table holds; the generator reads neither the module it writes nor scipy's tables
LAST_DF = 1000  # the table's extent: far beyond the seeds an answer reports
PER_LINE = 6

HEADER = '''"""Two-sided 95% Student t quantiles, t(0.975, df) for df = 1..{last}: a generated table.

:func:`auditor.stats.summary.t_quantile` reads the MDE's quantile from here, so that an audit needs no
``scipy.special`` (a few hundred ms, most of a cold ``auditor audit``).  Every entry is
``float(scipy.special.stdtrit(df, 0.975))``, bit for bit (``tests/test_t_table.py`` compares
each one); other quantiles, and degrees of freedom beyond the table, fall back to ``stdtrit``.

Generated; do not edit.  To regenerate: ``python tests/test_t_table.py > auditor/stats/t_table.py``.
"""

from __future__ import annotations

# The quantile the table holds: (1 + 0.95) / 2, the same float the MDE asks for.
Q = 0.975

# T_975[df - 1] = t(0.975, df).  Parsed from one string: the interpreter compiles a string in a
# fraction of the time a thousand float literals take (this module is imported by every audit).
T_975: tuple[float, ...] = tuple(map(float, """
'''


def reference() -> list[float]:
    return [float(stdtrit(df, Q)) for df in range(1, LAST_DF + 1)]


def render(values: list[float]) -> str:
    """The module's text; ``float(repr(x))`` is ``x``, bit for bit."""
    rows = [values[i : i + PER_LINE] for i in range(0, len(values), PER_LINE)]
    body = "".join(" ".join(repr(v) for v in row) + "\n" for row in rows)
    return (
        HEADER.format(last=len(values)) + body + '""".split()))  # noqa: SIM905 (a list literal is what this avoids)\n'
    )


# The auditor's modules are imported by the tests only: the generator must run while the table is broken.
@pytest.fixture(scope="module")
def t_table():
    from auditor.stats import t_table

    return t_table


@pytest.fixture(scope="module")
def stats():
    from auditor.stats import summary as stats

    return stats


def test_every_entry_is_stdtrit_bit_for_bit(t_table):
    expected = reference()
    assert len(t_table.T_975) == LAST_DF
    mismatches = [df for df, (got, want) in enumerate(zip(t_table.T_975, expected), 1) if got != want]
    assert mismatches == []


def test_the_module_is_what_the_generator_writes(t_table):
    module = Path(t_table.__file__).read_text(encoding="utf-8")
    assert module == render(reference())


def test_the_table_holds_the_quantile_the_mde_asks_for(t_table):
    assert t_table.Q == Q == (1 + 0.95) / 2


@pytest.mark.parametrize("df", [1, 2, 7, 39, 999, LAST_DF])
def test_t_quantile_reads_the_table(t_table, stats, df):
    assert stats.t_quantile(0.975, df) == t_table.T_975[df - 1] == float(stdtrit(df, 0.975))


@pytest.mark.parametrize(("q", "df"), [(0.975, LAST_DF + 1), (0.975, 25_000), (0.95, 7), (0.995, 3)])
def test_t_quantile_falls_back_to_stdtrit_beyond_the_table(stats, q, df):
    assert stats.t_quantile(q, df) == float(stdtrit(df, q))


def test_the_mde_is_unchanged_by_the_table(stats):
    import math

    import numpy as np

    d = np.array([0.3, -0.1, 0.25, 0.4, 0.05, 0.2, 0.15, 0.1])
    # The table's quantile times the auditor's own std (numpy's may differ in its last bit).
    expected = float(stdtrit(7, 0.975)) * stats.summarize(d).std_sample / math.sqrt(8)
    assert stats.mde_halfwidth(d) == expected


if __name__ == "__main__":
    print(render(reference()), end="")
