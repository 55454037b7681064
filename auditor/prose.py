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
answer states ("10,000 sign flips", "n_resamples=20000", "5k permutations").

A number written with k decimals is consistent with every value that rounds
to it (statcheck's rule): ``|x - v| <= 0.5 * 10**-k``.  Every regex is linear
in the input (no nested unbounded quantifiers) and the scanned text is capped.
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, field
from itertools import islice

# Long numbers ("-0.008685469627380371") are float reprs: their last digits
# are noise, so they also match within this relative tolerance.
LONG_NUMBER_RTOL = 1e-6

# A number as agents write it: "-0.0087", ".05", "1.5e-3", "2×10^-4" ("−" is U+2212).
_NUM = r"[-−+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-−+]?\d+|\s?[×x]\s?10\^?[-−+]?\d+)?"
# The same, with groups: mantissa, its decimals (two spellings), exponent (two spellings).
_MANTISSA_EXPONENT = re.compile(
    r"([-−+]?(?:\d+(?:\.(\d+))?|\.(\d+)))(?:[eE]([-−+]?\d+)|\s?[×x]\s?10\^?([-−+]?\d+))?"
)

_P_VALUE = re.compile(
    r"(?<![\w.])p(?:[\s_-]?values?)?(?![\w-])\s*"
    r"(?P<rel><=|>=|=<|=>|≤|≥|⩽|⩾|==?|<|>|≈|~|:|of|was|is|equals)\s*"
    rf"(?P<num>{_NUM})",
    re.IGNORECASE,
)
_WINS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # "7/8 wins", "7/8 paired seeds won"
        r"(?<![\w./])(?P<w>\d+)\s*/\s*(?P<n>\d+)\s+(?:paired\s+)?(?:seeds?\s+)?(?:wins?|won)\b",
        # "idea_wins=7/8", "wins: 7"
        r"\b(?:idea[_\s]?)?wins?\s*[=:]\s*(?P<w>\d+)(?:\s*/\s*(?P<n>\d+))?",
        # "wins 7 of 8", "won on 7/8 seeds"
        r"\b(?:wins?|won)\s+(?:on\s+|in\s+)?(?P<w>\d+)\s*(?:/|of|out\s+of)\s*(?P<n>\d+)",
        # "7 of 8 wins", "7 out of 8 seeds won"
        r"(?<![\w./])(?P<w>\d+)\s+(?:of|out\s+of)\s+(?P<n>\d+)\s+(?:paired\s+)?(?:seeds?\s+)?(?:wins?|won)\b",
    )
)
_DELTA = re.compile(
    r"\b(?:delta[_\s]?mean|mean[_\s](?:paired[_\s])?(?:delta|diff(?:erence)?)"
    r"|paired[_\s](?:delta|diff(?:erence)?)(?:[_\s]mean)?)\b\s*"
    r"(?:[=:≈~]|of|was|is|equals)?\s*"
    rf"(?P<num>{_NUM})",
    re.IGNORECASE,
)
_FROM_TO = re.compile(
    rf"\bfrom\s+(?P<a>{_NUM})\s*(?:to|->|→)\s*(?P<b>{_NUM})",
    re.IGNORECASE,
)

# A clause ends at these marks; "." only when followed by space (not a decimal point).
_CLAUSE_BREAK = re.compile(r"[,;:()\[\]\n]|\.\s")
_CLAUSE_WINDOW = 100
# Words that make a quoted p a threshold or a condition, not a result.
_THRESHOLD_WORDS = re.compile(
    r"\b(?:criteri(?:on|a)|thresholds?|alpha|cut-?off|significance\s+level"
    r"|requires?|required|if|unless|must|needs?)\b|α",
    re.IGNORECASE,
)
# Words that make a "mean delta" a parameter of the mechanism, not the result.
_PARAMETER_WORDS = re.compile(
    r"\b(?:target|expected|predicted|hypothesi[sz]ed|minimum|required|threshold|detectable)\s*$", re.IGNORECASE
)
# A "from A to B" clause naming one of these describes a hyperparameter change.
_HYPERPARAMETER_WORDS = re.compile(
    r"\b(?:lr|learning[\s_-]?rates?|epochs?|batch(?:es|[\s_-]?sizes?)?|depths?|widths?|steps?|seeds?"
    r"|thresholds?|warm[\s_-]?up|weight[\s_-]?decay|wd|dropout|layers?|hidden|heads?|momentum|temperature)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Reported:
    """A number as written in prose, with the rounding its digits imply."""

    text: str
    value: float
    # Half a unit in the last written digit: 5e-6 for "10.93094".
    half_unit: float

    def consistent_with(self, actual: float) -> bool:
        """True when ``actual`` rounds to the written number (or matches a long one closely)."""
        if not math.isfinite(actual):
            return False
        diff = abs(actual - self.value)
        slack = 1e-9 * self.half_unit + 1e-15 * max(1.0, abs(self.value))  # float noise at exact halves
        if diff <= self.half_unit + slack:
            return True
        return diff <= LONG_NUMBER_RTOL * max(abs(actual), abs(self.value))


@dataclass(frozen=True)
class PValueClaim:
    text: str
    span: tuple[int, int]
    relation: str  # "=", "<", "<=", ">", ">="
    reported: Reported

    def consistent_with(self, actual: float) -> bool:
        """An equality must round to ``actual``; an inequality must hold for it."""
        v = self.reported.value
        if self.relation == "<":
            return actual < v
        if self.relation == "<=":
            return actual <= v or self.reported.consistent_with(actual)
        if self.relation == ">":
            return actual > v
        if self.relation == ">=":
            return actual >= v or self.reported.consistent_with(actual)
        return self.reported.consistent_with(actual)


@dataclass(frozen=True)
class WinsClaim:
    text: str
    span: tuple[int, int]
    wins: int
    total: int | None  # None for "idea_wins=7"


@dataclass(frozen=True)
class DeltaClaim:
    text: str
    span: tuple[int, int]
    reported: Reported


@dataclass(frozen=True)
class FromToClaim:
    """``from A to B``: A is read as the baseline mean, B as the idea mean."""

    text: str
    span: tuple[int, int]
    start: Reported
    end: Reported


@dataclass(frozen=True)
class ProseClaims:
    p_values: list[PValueClaim] = field(default_factory=list)
    wins: list[WinsClaim] = field(default_factory=list)
    deltas: list[DeltaClaim] = field(default_factory=list)
    from_to: list[FromToClaim] = field(default_factory=list)
    relative_changes: list[RelativeChangeClaim] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.p_values or self.wins or self.deltas or self.from_to or self.relative_changes)


def parse_number(text: str) -> Reported | None:
    """``"1.5e-3"`` -> Reported(0.0015, half_unit=5e-5); None when ``text`` is not a number."""
    m = _MANTISSA_EXPONENT.fullmatch(text.strip())
    if m is None:
        return None
    mantissa, decimals_a, decimals_b, exp_e, exp_times = m.groups()
    decimals = len(decimals_a or decimals_b or "")
    exponent = int((exp_e or exp_times or "0").replace("−", "-"))
    try:
        value = float(mantissa.replace("−", "-")) * 10.0**exponent
    except OverflowError:
        return None
    if not math.isfinite(value):
        return None
    return Reported(text.strip(), value, 0.5 * 10.0 ** (exponent - decimals))


def _capped(text: str, max_chars: int | None) -> str:
    return text if max_chars is None else text[:max_chars]


def _clause_before(text: str, start: int) -> str:
    """The words before ``start`` back to the previous clause break."""
    window = text[max(0, start - _CLAUSE_WINDOW) : start]
    pieces = _CLAUSE_BREAK.split(window)
    return pieces[-1]


def _clause_after(text: str, end: int) -> str:
    window = text[end : end + _CLAUSE_WINDOW // 2]
    return _CLAUSE_BREAK.split(window)[0]


def _followed_by_percent(text: str, end: int) -> bool:
    """Percentages are in other units than the report's numbers; they are not compared."""
    return text[end : end + 2].lstrip().startswith("%")


_RELATIONS = {"<": "<", ">": ">", "<=": "<=", "=<": "<=", "≤": "<=", "⩽": "<="}
_RELATIONS.update({">=": ">=", "=>": ">=", "≥": ">=", "⩾": ">="})


def extract_p_values(text: str, max_chars: int | None = None) -> list[PValueClaim]:
    """p-values quoted as results; thresholds ("criterion p < 0.05", "if p < alpha") are skipped."""
    text = _capped(text, max_chars)
    out = []
    for m in _P_VALUE.finditer(text):
        reported = parse_number(m.group("num"))
        if reported is None or _followed_by_percent(text, m.end()):
            continue
        if _THRESHOLD_WORDS.search(_clause_before(text, m.start())):
            continue
        relation = _RELATIONS.get(m.group("rel").lower(), "=")
        out.append(PValueClaim(m.group(0), m.span(), relation, reported))
    return out


def extract_wins(text: str, max_chars: int | None = None) -> list[WinsClaim]:
    """Win counts, optionally out of a total; overlapping spellings are reported once."""
    text = _capped(text, max_chars)
    found: list[WinsClaim] = []
    for pattern in _WINS:
        for m in pattern.finditer(text):
            total = m.group("n")
            found.append(WinsClaim(m.group(0), m.span(), int(m.group("w")), int(total) if total else None))
    found.sort(key=lambda c: (c.span[0], -c.span[1]))
    out: list[WinsClaim] = []
    for claim in found:
        if out and claim.span[0] < out[-1].span[1]:
            continue  # overlaps an earlier, longer match of the same words
        out.append(claim)
    return out


def extract_deltas(text: str, max_chars: int | None = None) -> list[DeltaClaim]:
    """Mean paired differences in their qualified spellings; "target ..." parameters are skipped."""
    text = _capped(text, max_chars)
    out = []
    for m in _DELTA.finditer(text):
        reported = parse_number(m.group("num"))
        if reported is None or _followed_by_percent(text, m.end()):
            continue
        if _PARAMETER_WORDS.search(text[max(0, m.start() - 30) : m.start()]):
            continue
        out.append(DeltaClaim(m.group(0), m.span(), reported))
    return out


def extract_from_to(text: str, max_chars: int | None = None) -> list[FromToClaim]:
    """``from A to B`` pairs whose clause does not name a hyperparameter."""
    text = _capped(text, max_chars)
    out = []
    for m in _FROM_TO.finditer(text):
        start, end = parse_number(m.group("a")), parse_number(m.group("b"))
        if start is None or end is None:
            continue
        if _followed_by_percent(text, m.end("a")) or _followed_by_percent(text, m.end()):
            continue
        clause = _clause_before(text, m.start()) + " " + _clause_after(text, m.end())
        if _HYPERPARAMETER_WORDS.search(clause):
            continue
        out.append(FromToClaim(m.group(0), m.span(), start, end))
    return out


# --------------------------------------------------------------------------- relative changes

# A percentage: "4.1%", "4.1 %", "0.08 percent" (not "percentage points").  The
# look-behind keeps a match from starting inside a number or a word, so each
# run of digits is tried once.
_PERCENT = re.compile(rf"(?<![\w.^])(?P<num>{_NUM})\s?(?:%|percent\b)", re.IGNORECASE)
# Cheap pre-filter: a change word somewhere near the percentage.
_CHANGE_STEM = re.compile(
    r"reduc|decreas|declin|drop|fell|fall|lower|smaller|shr[au]nk|\bcuts?\b|increas|\bris[ei]|\brose\b|higher"
    r"|gr[eo]wn?\b|grows|larger|greater|improv|better|gain|wors|degrad|hurt|deteriorat",
    re.IGNORECASE,
)
# A word (any script, so that unknown words are never invisible) or a comparison sign.
_WORD = re.compile(r"[^\W\d_][\w'’-]*|[~≈<>≤≥±]")
# The wide context of a relative change ends at a sentence or a conjunction; the
# narrow one also at a comma, colon or bracket.
_SENTENCE_BREAK = re.compile(r"[;\n]|\.\s|\b(?:and|but|while|whilst|whereas|although|though|yet)\b", re.IGNORECASE)
_NARROW_BREAK = re.compile(
    r"[,;:()\[\]\n]|\.\s|\b(?:and|but|while|whilst|whereas|although|though|yet)\b", re.IGNORECASE
)
_RELATIVE_AFTER_WINDOW = 60
# At most this many percentages next to a change word are examined per text.
MAX_RELATIVE_CHANGES = 256

_DECREASE, _INCREASE, _BETTER, _WORSE = "decrease", "increase", "better", "worse"
# Verbs: "<verb> [object] by 4%", "<verb> 4%".
_CHANGE_VERBS = {
    **dict.fromkeys(
        "reduce reduced reduces reducing decrease decreased decreases decreasing decline declined declines"
        " dropped drops drop fell fall falls lowered lowers shrank shrunk cut cuts".split(),
        _DECREASE,
    ),
    **dict.fromkeys(
        "increase increased increases increasing rise rose risen rises grew grown grows".split(), _INCREASE
    ),
    **dict.fromkeys("improve improved improves improving gained".split(), _BETTER),
    **dict.fromkeys("worsened worsens degraded degrades hurt hurts deteriorated".split(), _WORSE),
}
# Nouns: "a 4% <noun> [in object]", "a <noun> of 4%".
_CHANGE_NOUNS = {
    **dict.fromkeys("reduction reductions decrease decline drop fall".split(), _DECREASE),
    **dict.fromkeys("increase rise".split(), _INCREASE),
    **dict.fromkeys("improvement improvements gain gains".split(), _BETTER),
    **dict.fromkeys("degradation deterioration".split(), _WORSE),
}
# Comparatives: "4% <adjective> [object]".
_CHANGE_ADJECTIVES = {
    **dict.fromkeys("lower smaller".split(), _DECREASE),
    **dict.fromkeys("higher larger greater".split(), _INCREASE),
    "better": _BETTER,
    "worse": _WORSE,
}
_CHANGE_WORDS = _CHANGE_VERBS.keys() | _CHANGE_NOUNS.keys() | _CHANGE_ADJECTIVES.keys()
# Words that make the number an approximation ("about 4%"): one more unit of slack.
_APPROXIMATE = frozenset("about approximately approx roughly around circa some ~ ≈".split())
# Words before the number that make it a bound, a level or a range end: not a change claim.
_NOT_A_CHANGE_BEFORE = frozenset(
    "to from at of than by vs versus within over under below above nearly almost least most exceeding"
    " beyond between < > ≤ ≥ ±".split()
)
# Words between the change word and the number that change nothing ("improved only 2%").
_EXACT_QUALIFIERS = frozenset("only just merely".split())
_ARTICLES = frozenset("a an the".split())
# Words that end the object of "lower <object>" / "reduction in <object>".
_OBJECT_STOPS = frozenset(
    "than relative relatively vs versus compared over across on for with at from when after before under"
    " against per between among to by which that as in overall".split()
)
_MAX_OBJECT_WORDS = 5
# Names of the metric.  A change of something else is not compared.
_METRIC_WORDS = frozenset(
    "mse rmse mae mape loss losses error errors err accuracy accuracies acc perplexity ppl nll likelihood"
    " log-likelihood cross-entropy crossentropy bleu rouge f1 auc auroc auprc score scores metric metrics"
    " objective reward rewards return returns test top-1 top1 top-5 top5 r2"
    " miou iou wer cer bpc bpb fid".split()
)
_LOWER_IS_BETTER_NAMES = frozenset(
    "mse rmse mae mape loss losses error errors err perplexity ppl nll wer cer bpc bpb fid".split()
)
_HIGHER_IS_BETTER_NAMES = frozenset(
    "accuracy accuracies acc likelihood log-likelihood bleu rouge f1 auc auroc auprc reward rewards return"
    " returns top-1 top1 top-5 top5 r2 miou iou".split()
)
# Metrics never written in percent: a change of them is not in percentage points.
_NEVER_PERCENT_METRICS = frozenset(
    "mse rmse mae loss losses perplexity ppl nll likelihood log-likelihood cross-entropy crossentropy bpc bpb fid"
    " reward rewards return returns".split()
)
# Words that say the percentage is about another quantity, a condition, a
# hypothesis or one seed -- or that negate the change.  Any of them in the
# clause (or in the metrics key holding the text) and the claim is skipped.
_OTHER_QUANTITY_WORDS = frozenset(
    (
        "clip clipped fraction fractions tail tails mde detectable confidence ci interval intervals threshold"
        " thresholds alpha percentile percentiles quantile quantiles variance var std stdev deviation deviations"
        " spread sd gradient gradients grad grads norm norms kurtosis spike spikes time times wall-clock"
        " wallclock runtime latency speed speedup faster slower throughput memory flops compute cost costs"
        " overhead parameters params param lr learning epoch epochs step steps iteration iterations batch"
        " warmup weight weights decay dropout momentum sparsity probability chance power significance"
        " p-value p-values pvalue p_value margin margins bar bars outlier outliers win wins data dataset"
        " datasets tokens size width depth layer layers target bound bounds budget coordinate coordinates"
        " update updates magnitude noise scale temperature mechanism prediction predicted expected expect"
        " hypothesis hypothesized hypothesised minimum maximum min max median best worst largest smallest"
        " single individual seed mechanism_signature would could should might may if unless need needs"
        " required require requires hope hoped aim aimed goal prior previous previously paper papers"
        " literature typical typically not no never without nor neither cannot sweep sweeps config configs"
        " configuration cfg grid tuning tuned train training validation val eval evaluation dev resample"
        " resamples resampling permutation permutations bootstrap mc monte carlo sign flips standard sem"
    ).split()
)
# Words that carry no information about what changed.
_GENERIC_WORDS = frozenset(
    (
        "a an the this that these its it our we their they idea ideas method methods approach intervention"
        " technique variant treatment proposed new modification change changes overall on average mean"
        " averaged relative relatively gave give gives giving yielded yield yields showed show shows achieved"
        " achieve achieves produced produce produces delivered deliver delivers resulted result results in of"
        " to for with by over vs versus compared comparison against than baseline baselines control across"
        " all paired seeds runs was is were are be been being has have had there about approximately approx"
        " roughly around circa some only just which corresponds corresponding net arm arms final performance"
        " model measured see saw found effect small tiny modest slight slightly marginal marginally"
        " significant significantly statistically consistent consistently clear clearly substantial"
        " substantially both also still thus so total observed reported"
    ).split()
)
# A change's direction is judged only when the prose says it is the idea's change
# of the metric measured against the baseline: the subject names the metric or the
# idea in known words ("the baseline's MSE was 4% higher" and "Adam's MSE ..." are
# not judged), and a comparison names the baseline ("4% lower than the idea's" is not).
_BASELINE_WORDS = frozenset("baseline baselines control".split())
_IDEA_WORDS = frozenset("idea ideas method methods intervention approach technique variant treatment proposed".split())
_COMPARATORS = frozenset("than vs versus compared against relative over".split())


def _known_word(word: str) -> bool:
    return (
        word in _GENERIC_WORDS
        or word in _CHANGE_WORDS
        or word in _APPROXIMATE
        or word in _EXACT_QUALIFIERS
        or _is_metric(word)
    )


def _direction_is_clear(subject: list[str], after: list[str]) -> bool:
    """The subject is the idea or its metric, and what it is compared with (if anything) the baseline."""
    if any(w in _BASELINE_WORDS or not _known_word(w) for w in subject):
        return False
    for i, word in enumerate(after):
        if word in _COMPARATORS:
            complement = after[i + 1 : i + 5]
            if any(w in _BASELINE_WORDS for w in complement):
                return True
            return all(_known_word(w) and w not in _IDEA_WORDS for w in complement)
    return True


@dataclass(frozen=True)
class RelativeChangeClaim:
    """``a 4.1% reduction in test MSE``: a relative change of the metric and its direction.

    ``reported`` is the percentage as written (its sign kept); ``direction`` is
    ``"decrease"``, ``"increase"``, ``"better"``, ``"worse"`` or None when the
    claim's direction is not clear (a signed number, the baseline as subject).
    ``metric_words`` are the metric names the clause uses; ``approximate`` is
    True after "about", "~" and the like.
    """

    text: str
    span: tuple[int, int]
    reported: Reported
    direction: str | None
    metric_words: frozenset[str]
    approximate: bool

    @property
    def may_be_percentage_points(self) -> bool:
        """False when the clause names a metric never written in percent (MSE, loss, perplexity, ...)."""
        return not self.metric_words & _NEVER_PERCENT_METRICS

    @property
    def metric_direction(self) -> str | None:
        """``"lower"``/``"higher"`` when the named metric is known to be better that way, else None."""
        lower = bool(self.metric_words & _LOWER_IS_BETTER_NAMES)
        higher = bool(self.metric_words & _HIGHER_IS_BETTER_NAMES)
        if lower == higher:
            return None
        return "lower" if lower else "higher"


def _normal_word(word: str) -> str:
    word = word.lower().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    return word.strip("'-")


def _words(text: str, start: int, end: int) -> list[tuple[str, int, int]]:
    """(normalised word, start, end) in ``text[start:end]``."""
    return [(_normal_word(m.group()), m.start(), m.end()) for m in _WORD.finditer(text, start, end)]


def _parts(word: str) -> list[str]:
    return [part for part in re.split(r"[-_/]", word) if part]


def _is_metric(word: str) -> bool:
    return word in _METRIC_WORDS or any(part in _METRIC_WORDS for part in _parts(word))


def _is_other_quantity(word: str) -> bool:
    if word in _OTHER_QUANTITY_WORDS or word.endswith("n't"):
        return True
    return word not in _METRIC_WORDS and any(part in _OTHER_QUANTITY_WORDS for part in _parts(word))


def _last_break(pattern: re.Pattern[str], text: str, start: int, end: int) -> int:
    """Where the last match of ``pattern`` in ``text[start:end]`` ends (``start`` when none)."""
    position = start
    for m in pattern.finditer(text, start, end):
        position = m.end()
    return position


def _first_break(pattern: re.Pattern[str], text: str, start: int, end: int) -> int:
    m = pattern.search(text, start, end)
    return m.start() if m else end


def _object_words(words: list[tuple[str, int, int]]) -> list[str]:
    """The words of an object up to the first stop word, articles dropped."""
    out = []
    for word, _, _ in words[:_MAX_OBJECT_WORDS]:
        if word in _OBJECT_STOPS:
            break
        if word not in _ARTICLES:
            out.append(word)
    return out


def _relative_change_at(text: str, m: re.Match[str], context_words: list[str]) -> RelativeChangeClaim | None:
    """The relative-change claim around the percentage ``m``, or None when it is not one."""
    num_start, pct_end = m.start("num"), m.end()
    reported = parse_number(m.group("num"))
    if reported is None:
        return None
    window_start = max(0, num_start - _CLAUSE_WINDOW)
    window_end = min(len(text), pct_end + _RELATIVE_AFTER_WINDOW)
    before_char = text[num_start - 1 : num_start]
    if before_char in "-–—" and num_start >= 2 and text[num_start - 2].isdigit():
        return None  # "3-4% lower": a range
    previous = text[max(0, num_start - 3) : num_start].rstrip()
    if previous and previous[-1] in "=:/^*×<>≤≥±":
        return None  # "mde_rel_pct=0.043%", "p<5%"
    if re.match(r"\s*(?:of\b|[-–—/]\s*\d)", text[pct_end : pct_end + 8], re.IGNORECASE):
        return None  # "87.5% of seeds", "4%-5%"

    narrow_start = _last_break(_NARROW_BREAK, text, window_start, num_start)
    wide_start = _last_break(_SENTENCE_BREAK, text, window_start, num_start)
    narrow_end = _first_break(_NARROW_BREAK, text, pct_end, window_end)
    before = _words(text, narrow_start, num_start)
    after = _words(text, pct_end, narrow_end)

    approximate = False
    while before and (before[-1][0] in _APPROXIMATE or before[-1][0] in _EXACT_QUALIFIERS):
        approximate = approximate or before[-1][0] in _APPROXIMATE
        before.pop()
    last = before[-1][0] if before else None

    direction: str | None = None
    explicit_object: list[str] | None = None  # None: the change names no object
    phrase: list[tuple[str, int, int]] = []  # the words of the claim (quoted in messages)
    if last == "by":
        # "<verb> [object] by 4%"
        for k in range(len(before) - 2, max(-1, len(before) - 3 - _MAX_OBJECT_WORDS), -1):
            word = before[k][0]
            direction = _CHANGE_VERBS.get(word) or _CHANGE_NOUNS.get(word) or _CHANGE_ADJECTIVES.get(word)
            if direction is not None:
                explicit_object = [w for w, _, _ in before[k + 1 : -1] if w not in _ARTICLES] or None
                if explicit_object and any(w in _OBJECT_STOPS for w in explicit_object):
                    return None  # "improved in 7 of 8 seeds by 2%"
                phrase = before[k:]
                break
        else:
            return None
    elif last == "of" and len(before) >= 2 and before[-2][0] in _CHANGE_NOUNS:
        # "a reduction of 4% [in object]"
        direction = _CHANGE_NOUNS[before[-2][0]]
        phrase = before[-3:] if len(before) >= 3 and before[-3][0] in _ARTICLES else before[-2:]
        if after and after[0][0] in ("in", "of"):
            explicit_object = _object_words(after[1:]) or None
    elif last in _CHANGE_VERBS:
        # "MSE dropped 4%"
        direction = _CHANGE_VERBS[last]
        phrase = before[-1:]
    elif last in _NOT_A_CHANGE_BEFORE or last in _CHANGE_WORDS:
        return None
    else:
        # "a 4% reduction [in object]", "4% lower [object]"
        rest = after
        if rest and rest[0][0] in ("relative", "relatively"):
            rest = rest[1:]
        if not rest:
            return None
        head = rest[0][0]
        if head in _CHANGE_NOUNS:
            direction = _CHANGE_NOUNS[head]
            if len(rest) > 1 and rest[1][0] in ("in", "of"):
                explicit_object = _object_words(rest[2:]) or None
        elif head in _CHANGE_ADJECTIVES:
            direction = _CHANGE_ADJECTIVES[head]
            explicit_object = _object_words(rest[1:]) or None
        else:
            return None
        phrase = rest[:1]
        if last in _ARTICLES:
            phrase = [before[-1], *phrase]

    # Everything the clause says, for the checks below.
    wide_words = [w for w, _, _ in _words(text, wide_start, num_start)] + [w for w, _, _ in after]
    if any(_is_other_quantity(w) for w in wide_words + context_words):
        return None
    phrase_positions = {start for _, start, _ in phrase}
    narrow_words = [w for w, start, _ in before + after if start not in phrase_positions]
    if explicit_object:
        if not any(_is_metric(w) for w in explicit_object):
            return None  # "4% lower staleness": a change of something else
    else:
        rest_words = [w for w in narrow_words if w not in _CHANGE_WORDS | _APPROXIMATE | _EXACT_QUALIFIERS]
        if not any(_is_metric(w) for w in rest_words) and not all(w in _GENERIC_WORDS for w in rest_words):
            return None  # "staleness fell 4%": the subject is neither the metric nor the idea
    subject = [w for w, start, _ in before if start < phrase[0][1]]
    if reported.value < 0 or not _direction_is_clear(subject, [w for w, _, _ in after]):
        direction = None  # "a -4% reduction", "the baseline's MSE was 4% higher": direction unclear
    named = narrow_words + (explicit_object or [])
    metric_words = frozenset(x for w in named for x in (w, *_parts(w)) if x in _METRIC_WORDS)
    start = min([num_start, *(s for _, s, _ in phrase)])
    end = max([pct_end, *(e for _, _, e in phrase)])
    if approximate:
        reported = Reported(reported.text, reported.value, 2 * reported.half_unit)
    return RelativeChangeClaim(text[start:end], (start, end), reported, direction, metric_words, approximate)


def extract_relative_changes(text: str, max_chars: int | None = None, context: str = "") -> list[RelativeChangeClaim]:
    """Relative changes of the metric ("a 4.1% reduction in test MSE", "improved by 2%").

    ``context`` is extra text the claims are about (a metrics key such as
    ``clip_fraction``): a word there that names another quantity skips every
    claim, like the same word in the clause would.
    """
    text = _capped(text, max_chars)
    context_words = [w for w, _, _ in _words(context[:_CLAUSE_WINDOW], 0, min(len(context), _CLAUSE_WINDOW))]
    # One pass finds the change words; a percentage with none near it is not looked at.
    stems = [m.start() for m in _CHANGE_STEM.finditer(text)]
    out: list[RelativeChangeClaim] = []
    examined = 0
    for m in _PERCENT.finditer(text):
        i = bisect.bisect_left(stems, m.start() - _CLAUSE_WINDOW)
        if i == len(stems) or stems[i] >= m.end() + _RELATIVE_AFTER_WINDOW:
            continue
        examined += 1
        if examined > MAX_RELATIVE_CHANGES:
            break  # bounded work on hostile text; honest prose quotes a handful
        claim = _relative_change_at(text, m, context_words)
        if claim is not None:
            out.append(claim)
    return out


def extract_claims(text: str, max_chars: int | None = None, *, context: str = "") -> ProseClaims:
    """Every numeric claim of the five kinds in ``text`` (at most ``max_chars`` scanned).

    ``context`` (a metrics key, say) is passed to :func:`extract_relative_changes`.
    """
    if not isinstance(text, str):
        return ProseClaims()
    text = _capped(text, max_chars)
    return ProseClaims(
        p_values=extract_p_values(text),
        wins=extract_wins(text),
        deltas=extract_deltas(text),
        from_to=extract_from_to(text),
        relative_changes=extract_relative_changes(text, context=context),
    )


# --------------------------------------------------------------------------- stated resample counts

# A count as agents write it: "10,000", "20_000", "10000", "5k", "1.5M", "1e4", "10^4", "1×10^4".
# The look-behind keeps a match from starting inside a number ("2^8" or "1,000").
_COUNT = (
    r"(?<![\w.^,/])(?P<count>(?:\d+(?:\.\d+)?\s?[×x]\s?)?10\^\+?\d+|\d{1,3}(?:[,_]\d{3})+(?![\d,])"
    r"|\d+(?:\.\d+)?(?:[kKM]\b|[eE]\+?\d+)?)"
)
_MC = r"monte[\s-]?carlo|mc"
_RESAMPLE_NOUN = (
    r"(?:resamples|resamplings|permutations|shuffles|sign[\s-]?flips"
    rf"|(?:{_MC})\s+(?:draws|samples|replicates|simulations|iterations)"
    r"|sign[\s-]?flip\s+(?:draws|samples|replicates|resamples|permutations))\b"
)
# The singular after a hyphen: "a 10,000-permutation test".
_RESAMPLE_NOUN_SINGULAR = r"(?:resample|permutation|shuffle|sign[\s-]?flip)\b"
_RESAMPLE_ADJECTIVE = rf"(?:random(?:ized|ised)?|{_MC}|paired|independent|additional|label|permutation|sign)"
_RESAMPLE_COUNTS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        # "10,000 random sign flips", "B = 5000 resamples", "5k permutations", "a 10,000-permutation test"
        rf"{_COUNT}(?:\s+(?:{_RESAMPLE_ADJECTIVE}[\s-]+){{0,3}}{_RESAMPLE_NOUN}"
        rf"|\s*-\s*(?:{_RESAMPLE_ADJECTIVE}[\s-]+){{0,2}}(?:{_RESAMPLE_NOUN}|{_RESAMPLE_NOUN_SINGULAR}))",
        # "n_resamples=20000", "number of permutations: 10,000", "num_permutations = 5000"
        r"\b(?:n|num|number)[\s_-]?(?:of[\s_-]?)?(?:resamples|resamplings|permutations|perms|shuffles"
        rf"|sign[\s_-]?flips|(?:monte[\s_-]?carlo|mc)[\s_-]?(?:samples|draws|resamples))\b"
        rf"\s*(?:[=:]|\bwas\b|\bis\b|\bof\b)?\s*{_COUNT}(?![\w.])",
        # "resamples: 2000", "permutations=5000"
        rf"\b(?:resamples|permutations|shuffles|sign[\s_-]?flips)\s*[=:]\s*{_COUNT}(?![\w.])",
        # "resampled 10000 times"
        rf"\b(?:resampled|permuted|shuffled|sign[\s-]?flipped)\s+{_COUNT}\s+times\b",
    )
)
# "B = 10000" counts only next to a resampling word, and never next to a batch.
_B_COUNT = re.compile(rf"(?<![\w.])B\s*=\s*{_COUNT}(?![\w.])")
_RESAMPLING_WORD = re.compile(rf"resampl|permut|sign[\s-]?flip|shuffl|{_MC}\b", re.IGNORECASE)
_BATCH_WORD = re.compile(r"\bbatch", re.IGNORECASE)
# "all 256 sign flips", "2^8 = 256 permutations", "exhaustive enumeration of 256 ...": exact, not resampled.
_EXACT_BEFORE = re.compile(
    r"(?:\b(?:all|every|each|full|complete|exhaustive(?:ly)?|exact|enumerat\w*)(?:\s+(?:one|of|the))*"
    r"|(?:\^|\*\*)\s*\d+\s*=)\s*$",
    re.IGNORECASE,
)
_EXACT_CLAUSE = re.compile(r"enumerat|exhaustiv", re.IGNORECASE)
MIN_RESAMPLES, MAX_RESAMPLES = 10, 100_000_000
# At most this many matches of each spelling are read per text (bounded work on hostile text).
MAX_RESAMPLE_MATCHES = 256


def _parse_count(text: str) -> int | None:
    """``"10,000"`` -> 10000, ``"5k"`` -> 5000, ``"1e4"`` -> 10000; None when not a whole count in range."""
    t = text.replace(",", "").replace("_", "").replace(" ", "").lower()
    try:
        if "^" in t:
            mantissa, _, exponent = t.partition("10^")
            value = float(mantissa.rstrip("×x") or 1) * 10.0 ** min(int(exponent.lstrip("+")), 20)
        elif t[-1] in "km":
            value = float(t[:-1]) * (1e3 if t[-1] == "k" else 1e6)
        else:
            value = float(t)
    except (ValueError, OverflowError):
        return None
    if not (math.isfinite(value) and value == int(value) and MIN_RESAMPLES <= value <= MAX_RESAMPLES):
        return None
    return int(value)


def _stated_exact(text: str, start: int, end: int) -> bool:
    """The count at ``text[start:end]`` is an exact enumeration ("all 256 sign patterns")."""
    if _EXACT_BEFORE.search(text, max(0, start - 30), start):
        return True
    clause_start = _last_break(_CLAUSE_BREAK, text, max(0, start - _CLAUSE_WINDOW), start)
    clause_end = _first_break(_CLAUSE_BREAK, text, end, min(len(text), end + _CLAUSE_WINDOW // 2))
    return bool(_EXACT_CLAUSE.search(text, clause_start, clause_end))


def extract_resample_counts(text: str, max_chars: int | None = None) -> list[int]:
    """The Monte-Carlo resample counts ``text`` states, distinct, in order of appearance.

    Read: ``1,000 sign flips``, ``10000 random sign flips``, ``n_resamples=20000``,
    ``20,000 permutations``, ``B = 5000 resamples``, ``5k permutations``,
    ``100000 Monte-Carlo resamples``, ``resamples: 2000``, ``10,000 MC draws``,
    ``a 10,000-permutation test``, ``resampled 5000 times``, and ``B=10000`` when
    a resampling word is near.  Not read: epochs, seeds, steps, dataset samples
    ("400-sample Friedman#1"), bootstrap resamples, and exact enumerations ("all
    256 sign patterns", "2^8 = 256 sign flips").  Each count is a whole number in
    [10, 100,000,000].
    """
    if not isinstance(text, str):
        return []
    text = _capped(text, max_chars)
    found: list[tuple[int, int]] = []
    for pattern in _RESAMPLE_COUNTS:
        for m in islice(pattern.finditer(text), MAX_RESAMPLE_MATCHES):
            count = _parse_count(m.group("count"))
            if count is not None and not _stated_exact(text, m.start("count"), m.end()):
                found.append((m.start("count"), count))
    for m in islice(_B_COUNT.finditer(text), MAX_RESAMPLE_MATCHES):
        count = _parse_count(m.group("count"))
        if count is None:
            continue
        start = _last_break(_SENTENCE_BREAK, text, max(0, m.start() - 60), m.start())
        end = _first_break(_SENTENCE_BREAK, text, m.end(), min(len(text), m.end() + 30))
        if _RESAMPLING_WORD.search(text, start, end) and not _BATCH_WORD.search(text, start, end):
            found.append((m.start("count"), count))
    out: list[int] = []
    for _, count in sorted(found):
        if count not in out:
            out.append(count)
    return out
