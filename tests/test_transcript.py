"""Finding the answer's JSON in a transcript: P101-P105, layouts, encodings, hardening."""

from __future__ import annotations

import codecs
import io
import json
import os
import sys

import pytest
from conftest import HEADER, SEED_000, SEED_001, as_transcript, codes, seed_answer
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from auditor.findings import Severity
from auditor.parse.jsonscan import line_column, scan_objects
from auditor.parse.source import read_source
from auditor.parse.transcript import Located, locate

LIMITS = {"max_bytes": 16 * 1024 * 1024, "max_depth": 64}
SEED_TEXT = SEED_000.read_text(encoding="utf-8")
BODY = SEED_TEXT[SEED_TEXT.index("{") :]


def run(data: bytes | str, **limits: int) -> Located:
    return locate(data, **{**LIMITS, **limits})


def rules(located: Located) -> list[str]:
    return [f.rule for f in located.findings]


def only(located: Located, code: str):
    assert rules(located) == [code], [f.message for f in located.findings]
    return located.findings[0]


# --------------------------------------------------------------------------- clean layouts


@pytest.mark.parametrize("path", [SEED_000, SEED_001], ids=["000", "001"])
def test_seeds_are_found_without_findings(path):
    located = run(path.read_bytes())
    assert located.findings == ()
    text = path.read_text(encoding="utf-8")
    assert located.document == json.loads(text[text.index("{") :])
    assert located.nonfinite_pointers == frozenset()


CLEAN_VARIANTS = {
    "fenced": "Answer:\n```json\n" + BODY + "\n```\n",
    "crlf": SEED_TEXT.replace("\n", "\r\n"),
    "trailing_prose": SEED_TEXT + "\n\nI hope this helps! Let me know {if} you need more.\n",
    "one_line": HEADER + json.dumps(seed_answer()),
    "indented": HEADER + json.dumps(seed_answer(), indent=4, ensure_ascii=False),
    "no_header": BODY,
    "english_header": "Agent answer (run 17):\n" + BODY,
    "braces_before": "Template {name} [draft] {{x}}:\n" + BODY,
    "unclosed_prose_brace": "Note {see below:\n" + BODY,
    "prose_quote_before": 'The 5" screen showed:\n' + BODY,
    "in_array": "[" + BODY + "]",
}


@pytest.mark.parametrize("text", CLEAN_VARIANTS.values(), ids=CLEAN_VARIANTS.keys())
def test_clean_layouts_are_found_silently(text):
    located = run(text)
    assert located.findings == ()
    assert located.document == seed_answer()


ENCODED = {
    "utf8_bom": codecs.BOM_UTF8 + SEED_TEXT.encode("utf-8"),
    "utf16_le_bom": codecs.BOM_UTF16_LE + SEED_TEXT.encode("utf-16-le"),
    "utf16_be_bom": codecs.BOM_UTF16_BE + SEED_TEXT.encode("utf-16-be"),
    "utf16_native": SEED_TEXT.encode("utf-16"),
    "utf32_bom": SEED_TEXT.encode("utf-32"),
    "bom_crlf": codecs.BOM_UTF8 + SEED_TEXT.replace("\n", "\r\n").encode("utf-8"),
    "str_with_bom": "\ufeff" + SEED_TEXT,
}


@pytest.mark.parametrize("data", ENCODED.values(), ids=ENCODED.keys())
def test_encodings_are_decoded(data):
    located = run(data)
    assert located.findings == ()
    assert located.document == seed_answer()


def test_bare_bench_report_is_a_candidate():
    report = seed_answer()["bench_report"]
    located = run("bench_report.json:\n" + json.dumps(report, indent=2))
    assert located.findings == ()
    assert located.document == report


def test_answer_beats_bare_report_and_answer_like_objects():
    report = seed_answer()["bench_report"]
    text = json.dumps(report) + "\n" + json.dumps({"verdict": "x"}) + "\n" + BODY + "\n" + json.dumps(report)
    located = run(text)
    assert located.findings == ()  # different kinds are not "several candidates"
    assert "bench_report" in located.document


# --------------------------------------------------------------------------- P101


@pytest.mark.parametrize(
    "text",
    ["The idea worked, p = 0.015.", "{x} and {y} but no json", '{"unrelated": 1} [1, 2]', "'single': {'quotes': 1}"],
)
def test_p101_when_there_is_no_answer_object(text):
    finding = only(run(text), "P101")
    assert finding.severity is Severity.ERROR
    assert "no" in finding.message and "found" in finding.message


# --------------------------------------------------------------------------- P102


def test_p102_truncated_answer_reports_line_and_column_of_the_end():
    text = SEED_TEXT[: len(SEED_TEXT) - 500]
    finding = only(run(text), "P102")
    line, column = line_column(text, len(text))
    assert f"line {line}, column {column}" in finding.message
    assert "never closed" in finding.message


def test_p102_line_and_column_point_at_the_missing_comma():
    answer = json.dumps(seed_answer(), indent=2)
    broken = answer.replace('"track": "tabular",', '"track": "tabular"')
    text = "header line one\r\nheader line two\r\n\r\n" + broken
    finding = only(run(text), "P102")
    # json reports the error at the next key, which starts the line after "track".
    lines = text.split("\n")
    bad_line = next(i for i, line in enumerate(lines) if '"track": "tabular"' in line) + 2
    bad_column = lines[bad_line - 1].index('"model"') + 1
    assert f"line {bad_line}, column {bad_column}" in finding.message
    assert "Expecting ',' delimiter" in finding.message


def test_line_column_counts_from_one():
    assert line_column("ab\ncd", 0) == (1, 1)
    assert line_column("ab\ncd", 4) == (2, 2)
    assert line_column("ab\r\ncd", 4) == (2, 1)


def test_p102_nesting_beyond_the_limit_is_reported_not_raised():
    deep = '{"bench_report": ' + "[" * 200 + "1" + "]" * 200 + "}"
    finding = only(run(deep), "P102")
    assert "nesting deeper than 64" in finding.message
    assert run(deep, max_depth=300).findings == ()  # within the limit: an (odd) answer


def test_p102_when_the_answer_is_broken_but_an_inner_report_parses():
    broken = BODY.replace('"worked": true,', '"worked": true', 1)
    finding = only(run(HEADER + broken), "P102")
    assert "line 7" in finding.message


def test_p102_prefers_the_span_that_mentions_bench_report():
    text = '{"a" 1}\n' + SEED_TEXT[:-300]
    finding = only(run(text), "P102")
    assert "line 1," not in finding.message


def test_stray_failed_spans_next_to_a_valid_answer_are_ignored():
    text = '{"todo"} and {"x": } then\n' + BODY + '\n{"y", 2}\n'
    located = run(text)
    assert located.findings == ()
    assert located.document == seed_answer()


def test_p102_for_a_lone_json_looking_span():
    only(run('Result: {"worked": true, }'), "P102")
    only(run('see {"x"}'), "P102")


@pytest.mark.parametrize(
    "text",
    [
        "{" * 100_000,
        "{" * 50_000 + "}" * 50_000,
        '{"a":' * 100_000,
        '{"a": "\\"' * 30_000,
        "[" * 100_000 + "{}",
        '{"' * 100_000,
        "{}" * 100_000,
        '"{' * 100_000,
        "x" * 1_000_000 + BODY,
    ],
    ids=["open", "closed", "keys", "escapes", "arrays", "quote_open", "empty_objects", "quoted", "long_prefix"],
)
def test_pathological_inputs_finish_with_a_finding(text):
    located = run(text)
    if text.endswith(BODY):
        assert located.findings == ()
    else:
        assert located.document is None
        assert rules(located) in (["P101"], ["P102"])


def test_scan_objects_reports_extent_and_depth():
    text = 'x {"a": [1, {"b": "}"}]} y {z'
    spans = scan_objects(text)
    assert [(s.start, s.end, s.depth) for s in spans] == [(2, 23, 3), (12, 21, 1), (27, None, 1)]


# --------------------------------------------------------------------------- P103


def test_p103_two_different_answers_audits_the_most_complete():
    draft = seed_answer()
    del draft["limitations"]
    draft["worked"] = False
    text = as_transcript(draft) + "\n\nFinal answer:\n" + BODY
    located = run(text)
    finding = only(located, "P103")
    assert finding.severity is Severity.WARNING
    assert "2 different" in finding.message and "lines 7, 10" in finding.message
    assert finding.message.endswith("starts at line 10")
    assert located.document == seed_answer()


def test_p103_ties_choose_the_last():
    first, second = seed_answer(), seed_answer()
    second["confidence"] = 2
    located = run(json.dumps(first) + "\n" + json.dumps(second))
    assert "line 2" in only(located, "P103").message.split("which starts")[1]
    assert located.document["confidence"] == 2


def test_identical_copies_are_not_p103():
    text = SEED_TEXT + "\nOnce more:\n" + json.dumps(seed_answer(), indent=2)
    located = run(text)
    assert located.findings == ()
    assert located.document == seed_answer()


# --------------------------------------------------------------------------- P104


@pytest.mark.parametrize(
    "literal, described",
    [
        ("NaN", "NaN"),
        ("Infinity", "Infinity"),
        ("-Infinity", "-Infinity"),
        ("1e999", "1e999"),
        ("-2.5E+400", "-2.5E+400"),
    ],
)
def test_p104_non_finite_p_value(literal, described):
    located = run(SEED_TEXT.replace('"p_value": 0.01475', f'"p_value": {literal}'))
    finding = only(located, "P104")
    assert finding.pointer == "/bench_report/comparison/p_value"
    assert described in finding.message and finding.claimed == literal
    assert located.document["bench_report"]["comparison"]["p_value"] is None
    assert located.nonfinite_pointers == {"/bench_report/comparison/p_value"}


def test_p104_pointers_in_arrays_nested_objects_and_escaped_keys():
    text = '{"worked": true, "a/b": {"c~d": [1, NaN, {"e": Infinity}]}, "bench_report": {"x": [-Infinity]}}'
    located = run(text)
    assert [f.pointer for f in located.findings] == ["/a~1b/c~0d/1", "/a~1b/c~0d/2/e", "/bench_report/x/0"]
    assert located.document == {"worked": True, "a/b": {"c~d": [1, None, {"e": None}]}, "bench_report": {"x": [None]}}


@pytest.mark.parametrize("digits", [400, 5000, 100_000])
def test_p104_huge_integers_never_raise(digits):
    located = run(SEED_TEXT.replace('"n_pairs": 8', '"n_pairs": ' + "9" * digits))
    finding = only(located, "P104")
    assert finding.pointer == "/bench_report/comparison/n_pairs"
    assert f"{digits} digits" in finding.message


def test_large_but_finite_numbers_are_kept():
    located = run('{"verdict": "x", "a": 1.7e308, "b": 1e-400, "c": ' + "9" * 300 + "}")
    assert located.findings == ()
    assert located.document["a"] == 1.7e308 and located.document["b"] == 0.0
    assert located.document["c"] == int("9" * 300)


def test_p104_after_earlier_decodes_and_in_other_threads():
    """The decoder is kept per thread: each answer's non-finite numbers are its own, whatever came before."""
    from concurrent.futures import ThreadPoolExecutor

    texts = [
        '{"verdict": "x", "a": [NaN, 1]}',
        '{"verdict": "x", "a": [0, 1]}',
        HEADER + '{"verdict": "x", "b": 1e999}',
    ]
    expected = [run(text) for text in texts]
    assert [f.pointer for f in expected[0].findings] == ["/a/0"] and expected[1].findings == ()
    assert expected[1].document == {"verdict": "x", "a": [0, 1]}
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(run, texts * 50)) == expected * 50


def test_p104_in_a_discarded_candidate_is_not_reported():
    located = run('{"verdict": NaN}\n' + BODY)
    assert located.findings == ()


# --------------------------------------------------------------------------- P105


@pytest.mark.parametrize(
    "data, words",
    [
        (b"", "empty"),
        ("", "empty"),
        (b" \r\n\t\n", "whitespace"),
        (b"PK\x03\x04\x00\x00binary", "a ZIP archive, not a text transcript"),
        (b"PK\x03\x04\x14\x00[Content_Types].xml word/document.xml", "a Word document (.docx)"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "a PNG image"),
        (b"%PDF-1.7\n", "a PDF document"),
        (b'{"verdict": "caf\xe9"}', "name it with --encoding"),
        ("text\x00more", "binary"),
        (HEADER.encode("cp1251") + BODY.encode(), "byte offset 0"),
        (b'{"verdict": "caf\xe9"}', "byte 0xe9 at byte offset 16"),
        (codecs.BOM_UTF8 + b"ab\xff", "byte offset 5"),
        (codecs.BOM_UTF16_LE + b"\x00\xdc", "UTF-16"),
    ],
)
def test_p105_unreadable_input(data, words):
    finding = only(run(data), "P105")
    assert words in finding.message
    assert finding.severity is Severity.ERROR


@pytest.mark.parametrize(
    "data, message",
    [
        (b"ab\x00c", "the input is binary, not text: NUL byte at byte offset 2"),
        (codecs.BOM_UTF8 + b"ab\x00c", "the input is binary, not text: NUL byte at byte offset 5"),
        ("ab\x00c", "the input is binary, not text: NUL character at offset 2"),
        (
            codecs.BOM_UTF16_LE + "ab\x00c".encode("utf-16-le"),
            "the input is binary, not text: NUL character at offset 2",
        ),
    ],
)
def test_nul_is_found_in_the_bytes_of_utf8_and_in_the_text_of_other_encodings(data, message):
    from auditor.parse.source import decode_text

    text, problem = decode_text(data, max_bytes=1 << 20)
    assert text is None and problem.message == message


def test_the_answer_shortcut_counts_brackets_as_the_text_holds_them():
    from auditor.parse.decoder import SHAPE_CLOSE, SHAPE_OPEN, StrictDecoder

    text = 'x {"a": [1, {"b": "[{"}], "c": "\u00e9\\u00e9{"} y\u00e9'
    value, end, shape = StrictDecoder().raw_decode_shaped(text, 2)
    assert (value, end) == StrictDecoder().raw_decode(text, 2) == (json.loads(text[2:-3]), len(text) - 3)
    assert shape.count(SHAPE_OPEN) == text.count("{", 2, end) + text.count("[", 2, end) == 6
    assert shape.count(SHAPE_CLOSE) == text.count("}", 2, end) + text.count("]", 2, end) == 3
    # One byte per character, so that offsets in the shape are those of the text.
    assert len(shape) == end - 2 and shape.find(b"\\") == text.find("\\", 2) - 2


@pytest.mark.parametrize("header", ["Answer:\n", "R\u00e9ponse :\n", HEADER, "\U0001f600 done\n"])
@pytest.mark.parametrize("wide", ["", "\u2248 \U0001f600"])
def test_the_answer_shortcut_decodes_the_answer_of_any_header_as_written(header, wide):
    from auditor.parse.decoder import shape_of
    from auditor.parse.transcript import _sole_answer

    body = json.dumps({"verdict": f"p=0.01 {wide}", "bench_report": {"a": [1, {"b": "x"}]}}, ensure_ascii=False)
    parsed = _sole_answer(header + body + "\nThanks \u00e9\n", 64)
    assert parsed is not None and parsed.start == len(header)
    assert parsed.value == json.loads(body) and parsed.shape == shape_of(body)


def test_an_encoding_named_decodes_what_utf8_cannot():
    from auditor.parse.source import decode_text

    data = HEADER.encode("cp1251") + BODY.encode()
    assert decode_text(data, max_bytes=1 << 20)[0] is None
    text, problem = decode_text(data, max_bytes=1 << 20, encoding="cp1251")
    assert problem is None and text.startswith(HEADER)
    text, problem = decode_text(data, max_bytes=1 << 20, encoding="no-such-codec")
    assert text is None and "unknown text encoding 'no-such-codec'" in problem.message


def test_p105_over_the_size_limit():
    assert "size limit of 1,000" in only(run(SEED_TEXT.encode(), max_bytes=1000), "P105").message
    assert "size limit" in only(run(SEED_TEXT, max_bytes=1000), "P105").message


def test_read_source_reads_files(tmp_path):
    path = tmp_path / "answer.txt"
    path.write_bytes(SEED_000.read_bytes())
    assert read_source(str(path), max_bytes=1 << 20) == (SEED_000.read_bytes(), None)


@pytest.mark.parametrize("kind", ["missing", "directory", "empty", "too_large"])
def test_read_source_problems_are_p105(tmp_path, kind):
    path = tmp_path / "answer.txt"
    if kind == "directory":
        path = tmp_path
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "too_large":
        path.write_bytes(b"x" * 5000)
    data, problem = read_source(str(path), max_bytes=1000)
    assert data is None and problem is not None and problem.rule == "P105"
    assert {"missing": "no such file", "directory": "directory", "empty": "empty", "too_large": "5,000"}[
        kind
    ] in problem.message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize(("written", "limit"), [(200_000, 1 << 20), (200_000, 150_000), (70_000, 70_000)])
def test_read_source_reads_a_pipe_to_its_end_or_its_limit(tmp_path, written, limit):
    """A pipe has no size to read up to: it is read in chunks, to its end or just past the limit."""
    import threading

    path = tmp_path / "pipe"
    os.mkfifo(path)
    payload = bytes(range(256)) * (written // 256) + b"x" * (written % 256)

    def write() -> None:
        try:
            with open(path, "wb") as pipe:
                pipe.write(payload)
        except BrokenPipeError:  # the reader stopped at its limit
            pass

    writer = threading.Thread(target=write)
    writer.start()
    data, problem = read_source(str(path), max_bytes=limit)
    writer.join()
    if written <= limit:
        assert (data, problem) == (payload, None)
    else:
        assert data is None and problem.rule == "P105" and f"more than {limit:,}" in problem.message


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs procfs")
def test_read_source_reads_a_file_whose_size_says_zero():
    """procfs files report size 0 and still have content: stat's size only sizes the first read."""
    data, problem = read_source("/proc/self/status", max_bytes=1 << 20)
    assert problem is None and b"Name:" in data


def test_read_source_reads_a_file_that_grew_after_stat(tmp_path, monkeypatch):
    """The first read asks for stat's size plus one byte; a file longer by then is still read whole."""
    import auditor.parse.source as source

    path = tmp_path / "answer.txt"
    path.write_bytes(b"y" * 100_000)
    real_stat = os.stat
    monkeypatch.setattr(
        source.os, "stat", lambda p, *a, **k: os.stat_result((*real_stat(p)[:6], 10, *real_stat(p)[7:]))
    )
    assert read_source(str(path), max_bytes=1 << 20) == (b"y" * 100_000, None)
    assert read_source(str(path), max_bytes=50_000)[1].rule == "P105"


def test_read_source_stdin(monkeypatch):
    stdin = io.TextIOWrapper(io.BytesIO(SEED_000.read_bytes()), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    assert read_source("-", max_bytes=1 << 20) == (SEED_000.read_bytes(), None)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"x" * 50)))
    assert read_source("-", max_bytes=10)[1].rule == "P105"


# --------------------------------------------------------------------------- the pipeline


def test_nan_in_a_required_field_stops_the_audit_with_p104_only(audit):
    result = audit(SEED_TEXT.replace('"p_value": 0.01475', '"p_value": NaN'))
    assert result.status == "error"
    assert codes(result) == {"P104"}


def test_nan_in_an_optional_field_is_reported_and_the_audit_continues(audit):
    result = audit(SEED_TEXT.replace('"mde": 0.004699979815996483', '"mde": NaN'))
    assert result.status == "fail" and "P104" in codes(result)
    assert result.recomputed is not None


def test_parse_failures_make_an_error_result(audit):
    for text, code in [("", "P105"), ("nothing", "P101"), (SEED_TEXT[:-200], "P102")]:
        result = audit(text)
        assert result.status == "error" and codes(result) == {code}


# --------------------------------------------------------------------------- properties


def _check_never_raises(data: bytes | str) -> None:
    located = run(data)
    assert isinstance(located, Located)
    assert located.document is None or isinstance(located.document, dict)
    assert located.findings or located.document is not None
    assert all(f.rule.startswith("P1") for f in located.findings)


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(), st.text(alphabet='{}[]":,\\ \n\tabNI0123456789.eE+-ntrufl'), st.binary()))
def test_locate_never_raises_on_arbitrary_input(data):
    _check_never_raises(data)


@st.composite
def mutated_seed(draw) -> str:
    text = SEED_TEXT
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 40)))
        insert = draw(
            st.sampled_from(
                ["", "{", "}", "[", "]", '"', "\\", ",", "NaN", "1e999", "\x00", "\ufeff", draw(st.text(max_size=8))]
            )
        )
        text = text[:start] + insert + text[end:]
    return text


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_seed())
def test_locate_never_raises_on_mutated_seeds(text):
    _check_never_raises(text)
    _check_never_raises(text.encode("utf-8", "surrogatepass"))


@given(st.text(alphabet='{}[]":,\\ \nab0\u00e9', max_size=200))
@settings(max_examples=400, deadline=None)
def test_the_fast_scan_finds_what_the_counted_scan_finds(text):
    """scan_objects takes the uncounted path whenever the limit cannot be hit; both must agree."""
    from auditor.parse.jsonscan import _scan_counted, _scan_uncounted

    def shape(spans):
        return [(s.start, s.end, s.depth) for s in spans]

    assert shape(_scan_uncounted(text)) == shape(_scan_counted(text, len(text) + 1))


# --------------------------------------------------------------------------- the sole-answer shortcut

EXTRA = "@@extra@@"  # a value swapped for an unusual literal after dumping


@st.composite
def transcripts_with_an_answer(draw):
    """A header, one answer object (sometimes with an odd literal) and a trailer, any of them unusual."""
    header = draw(
        st.sampled_from(
            [
                "",
                HEADER,
                "Answer:\n```json\n",
                "A [draft] answer:\n",
                "Note {x}:\n",
                'The 5" screen:\n',
                "]} stray ''\n",
            ]
        )
    )
    document = draw(
        st.sampled_from(
            [seed_answer(), seed_answer("001"), {"verdict": "x"}, {"unrelated": 1}, seed_answer()["bench_report"]]
        )
    )
    document["extra"] = EXTRA
    body = json.dumps(document, indent=draw(st.sampled_from([None, 1, "\t"])), ensure_ascii=draw(st.booleans()))
    literal = draw(
        st.sampled_from(
            ['"x"', "NaN", "-Infinity", "1e999", "1E+400", "9" * 400, '"\\ud800"', "[" * 70 + "1" + "]" * 70, "[[[1]]]"]
        )
    )
    body = body.replace(json.dumps(EXTRA), literal)
    trailer = draw(
        st.sampled_from(
            [
                "",
                "\n```\n",
                "\nHope this helps.\n",
                "\nSee {this}.\n",
                "\n[1] ref\n",
                '\n{"verdict": "y"}\n',
                "\n" + body,
            ]
        )
    )
    return header + body + trailer


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts_with_an_answer())
def test_the_sole_answer_shortcut_agrees_with_the_general_search(text):
    """Whenever _sole_answer answers, the general search finds that one candidate and nothing else."""
    from auditor.parse.transcript import _decode_spans, _sole_answer

    sole = _sole_answer(text, LIMITS["max_depth"])
    if sole is None:
        return
    candidates, others, failed = _decode_spans(text, scan_objects(text), LIMITS["max_depth"])
    assert (others, failed) == (0, [])
    assert [(c.start, c.score, c.nonfinite) for c in candidates] == [(sole.start, sole.score, sole.nonfinite)]
    assert repr(candidates[0].value) == repr(sole.value)


@pytest.mark.parametrize("text", [SEED_TEXT, CLEAN_VARIANTS["fenced"], CLEAN_VARIANTS["indented"], BODY])
def test_an_ordinary_transcript_takes_the_shortcut(text):
    from auditor.parse.transcript import _sole_answer

    assert _sole_answer(text, LIMITS["max_depth"]) is not None


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.characters(max_codepoint=0x2070) | st.sampled_from(["\ud800", "\udfff", "\udc00", "\U0001f600", "é", "\x00"])
    ).map("".join)
)
def test_text_input_is_refused_exactly_when_it_holds_a_surrogate(text: str) -> None:
    """A str transcript is P105 for a surrogate code point, at the first one, whichever check finds it."""
    from auditor.parse.decoder import LONE_SURROGATE
    from auditor.parse.source import decode_text

    decoded, problem = decode_text(text, max_bytes=1 << 20)
    first = LONE_SURROGATE.search(text)
    if first is not None:
        assert decoded is None and problem is not None and problem.rule == "P105"
        assert problem.claimed == first.start() and "lone surrogate" in problem.message
    else:
        assert problem is None or "lone surrogate" not in problem.message


_BYTE_PIECES = st.sampled_from(
    [
        b"\xef\xbb\xbf",
        b"\xff\xfe",
        b"\xfe\xff",
        b"\x00",
        b"\xed\xa0\x80",
        b"\xc3\xa9",
        b"\xe2\x88\x92",
        b"\xf0\x9f\x98\x80",
        b"\xc3",
        b" \n",
        b"\r\n",
        b"p = 0.01475, 7/8 wins. ",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(before=[b"\xef\xbb\xbf"] * 2, answer=BODY, after=[], encoding=None)  # a second BOM: stripped as text
@given(
    st.lists(_BYTE_PIECES, max_size=4),
    st.sampled_from([SEED_TEXT, BODY]),
    st.lists(_BYTE_PIECES, max_size=3),
    st.sampled_from([None, "utf-8", "cp1252"]),
)
def test_a_file_audited_as_bytes_checked_once_equals_its_text_checked_again(
    tmp_path, before, answer, after, encoding
) -> None:
    """_audit_path skips the text checks for plain UTF-8 bytes (plain_utf8): same result as the general path,
    the places of findings on the answer's first line included."""
    from auditor.audit import audit_bytes, audit_path
    from auditor.options.models import AuditOptions
    from auditor.parse.candidates import holds_an_answer
    from auditor.parse.source import decode_text

    data = b"".join(before) + answer.encode("utf-8") + b"".join(after)
    path = tmp_path / "t.txt"
    path.write_bytes(data)
    options = AuditOptions(encoding=encoding)
    text, problem = decode_text(data, max_bytes=options.max_bytes, encoding=encoding)
    got = audit_path(str(path), options)
    if problem is None and holds_an_answer(text):
        general = audit_bytes(text, str(path), options, transcript_path=str(path))
        assert got == general and got.findings == general.findings
        assert [(f.line, f.column) for f in got.findings] == [(f.line, f.column) for f in general.findings]
