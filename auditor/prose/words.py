"""The vocabulary of relative-change claims: change words, metric names, and words that rule a claim out."""

from __future__ import annotations

import re

# A word (any script, so that unknown words are never invisible) or a comparison sign.
_WORD = re.compile(r"[^\W\d_][\w'’-]*|[~≈<>≤≥±]")
_DECREASE, _INCREASE, _BETTER, _WORSE = "decrease", "increase", "better", "worse"
# Verbs: "<verb> [object] by 4%", "<verb> 4%".
CHANGE_VERBS = {
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
CHANGE_NOUNS = {
    **dict.fromkeys("reduction reductions decrease decline drop fall".split(), _DECREASE),
    **dict.fromkeys("increase rise".split(), _INCREASE),
    **dict.fromkeys("improvement improvements gain gains".split(), _BETTER),
    **dict.fromkeys("degradation deterioration".split(), _WORSE),
}
# Comparatives: "4% <adjective> [object]".
CHANGE_ADJECTIVES = {
    **dict.fromkeys("lower smaller".split(), _DECREASE),
    **dict.fromkeys("higher larger greater".split(), _INCREASE),
    "better": _BETTER,
    "worse": _WORSE,
}
CHANGE_WORDS = CHANGE_VERBS.keys() | CHANGE_NOUNS.keys() | CHANGE_ADJECTIVES.keys()
# Words that make the number an approximation ("about 4%"): one more unit of slack.
APPROXIMATE = frozenset("about approximately approx roughly around circa some ~ ≈".split())
# Words before the number that make it a bound, a level or a range end: not a change claim.
NOT_A_CHANGE_BEFORE = frozenset(
    "to from at of than by vs versus within over under below above nearly almost least most exceeding"
    " beyond between < > ≤ ≥ ±".split()
)
# Words between the change word and the number that change nothing ("improved only 2%").
EXACT_QUALIFIERS = frozenset("only just merely".split())
ARTICLES = frozenset("a an the".split())
# Words that end the object of "lower <object>" / "reduction in <object>".
OBJECT_STOPS = frozenset(
    "than relative relatively vs versus compared over across on for with at from when after before under"
    " against per between among to by which that as in overall".split()
)
MAX_OBJECT_WORDS = 5
# Names of the metric.  A change of something else is not compared.
METRIC_WORDS = frozenset(
    "mse rmse mae mape loss losses error errors err accuracy accuracies acc perplexity ppl nll likelihood"
    " log-likelihood cross-entropy crossentropy bleu rouge f1 auc auroc auprc score scores metric metrics"
    " objective reward rewards return returns test top-1 top1 top-5 top5 r2"
    " miou iou wer cer bpc bpb fid".split()
)
LOWER_IS_BETTER_NAMES = frozenset(
    "mse rmse mae mape loss losses error errors err perplexity ppl nll wer cer bpc bpb fid".split()
)
HIGHER_IS_BETTER_NAMES = frozenset(
    "accuracy accuracies acc likelihood log-likelihood bleu rouge f1 auc auroc auprc reward rewards return"
    " returns top-1 top1 top-5 top5 r2 miou iou".split()
)
# Metrics never written in percent: a change of them is not in percentage points.
NEVER_PERCENT_METRICS = frozenset(
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
GENERIC_WORDS = frozenset(
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
        word in GENERIC_WORDS
        or word in CHANGE_WORDS
        or word in APPROXIMATE
        or word in EXACT_QUALIFIERS
        or is_metric(word)
    )


def direction_is_clear(subject: list[str], after: list[str]) -> bool:
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


def _normal_word(word: str) -> str:
    word = word.lower().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    return word.strip("'-")


def words(text: str, start: int, end: int) -> list[tuple[str, int, int]]:
    """(normalised word, start, end) in ``text[start:end]``."""
    return [(_normal_word(m.group()), m.start(), m.end()) for m in _WORD.finditer(text, start, end)]


def parts(word: str) -> list[str]:
    return [part for part in re.split(r"[-_/]", word) if part]


def is_metric(word: str) -> bool:
    return word in METRIC_WORDS or any(part in METRIC_WORDS for part in parts(word))


def is_other_quantity(word: str) -> bool:
    if word in _OTHER_QUANTITY_WORDS or word.endswith("n't"):
        return True
    return word not in METRIC_WORDS and any(part in _OTHER_QUANTITY_WORDS for part in parts(word))


def object_words(words: list[tuple[str, int, int]]) -> list[str]:
    """The words of an object up to the first stop word, articles dropped."""
    out = []
    for word, _, _ in words[:MAX_OBJECT_WORDS]:
        if word in OBJECT_STOPS:
            break
        if word not in ARTICLES:
            out.append(word)
    return out
