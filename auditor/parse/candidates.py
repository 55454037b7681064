"""What marks a text, a decoded value or a broken span as an agent's answer.

:func:`holds_an_answer` tells a folder walk which files to audit; :func:`candidate_score`
ranks the objects decoded from a transcript (answer > bare bench report > answer-like),
and :func:`failure_potential` what a span that failed to decode might have been.
"""

from __future__ import annotations

import re
from typing import Any

from auditor.parse.jsonscan import KeyIndex

# Candidate scores: what an object found in the text most likely is.
ANSWER, BARE_REPORT, ANSWER_LIKE, NOT_A_CANDIDATE = 3, 2, 1, 0
_ANSWER_KEYS = ("bench_report", "worked", "verdict", "system_verdict", "metrics")


def candidate_score(value: Any) -> int:
    """How likely a decoded JSON value is the answer (0: not a candidate)."""
    if not isinstance(value, dict):
        return NOT_A_CANDIDATE
    if isinstance(value.get("bench_report"), dict):
        return ANSWER
    if "comparison" in value and "baseline" in value:
        return BARE_REPORT
    if any(key in value for key in _ANSWER_KEYS):
        return ANSWER_LIKE  # the schema will say what is missing
    return NOT_A_CANDIDATE


_QUOTED_ANSWER_KEYS = tuple(f'"{key}"' for key in _ANSWER_KEYS)


def failure_potential(keys: KeyIndex, start: int, stop: int) -> int:
    """What a span that failed to parse might have been, judged by the keys in its text."""
    if keys.occurs('"bench_report"', start, stop):
        return ANSWER
    if keys.occurs('"comparison"', start, stop) or keys.occurs('"baseline"', start, stop):
        return BARE_REPORT
    if any(keys.occurs(key, start, stop) for key in _QUOTED_ANSWER_KEYS):
        return ANSWER_LIKE
    return NOT_A_CANDIDATE


# -- ordinary files -------------------------------------------------------------------------
#
# A folder of answers may also hold ordinary files (data, notes).  A file found by a
# folder walk is skipped, and counted, only when it holds no answer signal at all;
# a file named on the command line is always audited (auditor.audit).  A signal is
# anything an agent's answer, complete or broken, shows: a JSON object's "{" or a
# ``` fence (however garbled what follows), a quoted answer key, a transcript header
# (a first line that is a label ending in ":", such as "Answer:"), a statistical
# claim in prose (a p-value with a number, a win count such as "7/8 wins") or a
# Python traceback.  A file with a signal but no decodable answer fails P1xx: an
# agent controls its answer's bytes, so broken must never read as absent.

_ANSWER_MEMBER = re.compile(
    r'"(?:bench_report|worked|verdict|system_verdict|practical_verdict|metrics|comparison|per_seed|how_to_run)"\s*:'
)
_P_VALUE_CLAIM = re.compile(r"\bp(?:[- ]?value)?\s*(?:=|<|≤|<=|of)\s*0?\.\d", re.IGNORECASE)
_WIN_COUNT = re.compile(
    r"\b\d+\s*(?:/|of|out of)\s*\d+\s*(?:paired\s+)?(?:seeds?\s+)?wins?\b|\bwins?\s+\d+\s*(?:/|of)\s*\d+", re.IGNORECASE
)
_TRACEBACK = "Traceback (most recent call last)"
# A header is one short line; longer first lines are not read as one.
_HEADER_CHARS = 1000


def holds_an_answer(text: str) -> bool:
    """Whether ``text`` shows any sign of an agent's answer (:data:`_ANSWER_MEMBER` and the rest),
    complete or not; False only for a file no answer could be in (a folder walk skips it)."""
    if "{" in text or "```" in text or _TRACEBACK in text or _ANSWER_MEMBER.search(text):
        return True
    if _starts_with_a_label(text):
        return True
    return bool(_P_VALUE_CLAIM.search(text) or _WIN_COUNT.search(text))


def _starts_with_a_label(text: str) -> bool:
    """Whether the first line with text on it ends in ":" ("Ответ агента:", "bench_report.json:"),
    the way a stored transcript's header opens; string methods, so a long line costs one pass."""
    first = text.lstrip()[:_HEADER_CHARS].split("\n", 1)[0].rstrip()
    return first.endswith(":")
