"""Signed verdicts (auditor.attest): keygen, ``audit --attest``, ``verify``; what tampering each check catches.

Everything runs through the command line (``auditor.cli.main``) on real fixtures, real keys and real
files; test_attest_independent.py checks a statement with DSSE and Ed25519 written from their specs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, SEED_000, SEED_001, experiment_workspace, needs_sandbox_and_torch

from auditor.attest.statement import PREDICATE_TYPE, STATEMENT_TYPE, predicate_schema_text, with_schema
from auditor.cli import main

ANSWERS = FIXTURES / "answers"


@pytest.fixture
def keys(tmp_path: Path) -> tuple[str, str]:
    assert main(["keygen", "--out", str(tmp_path / "ci")]) == 0
    return str(tmp_path / "ci.key"), str(tmp_path / "ci.pub")


def attest(out: Path, private: str, *paths: str | Path, extra: tuple[str, ...] = ()) -> int:
    argv = ["audit", *map(str, paths), "--attest", private, "--attest-output", str(out), "--quiet", *extra]
    return main([*argv, "--format", "json"] if "--format" not in extra else argv)


def envelopes(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def statement(envelope: dict) -> dict:
    return json.loads(base64.b64decode(envelope["payload"]))


def verify(capsys, path: Path, public: str, *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(path), "--key", public, *extra])
    return code, capsys.readouterr().err


def copied(tmp_path: Path, *sources: Path) -> list[Path]:
    folder = tmp_path / "answers"
    folder.mkdir(exist_ok=True)
    return [Path(shutil.copy(s, folder / s.name)) for s in sources]


# -- keys ---------------------------------------------------------------------------------------


def test_keygen_writes_a_private_key_only_its_owner_reads_and_names_its_keyid(tmp_path: Path, capsys) -> None:
    assert main(["keygen", "--out", str(tmp_path / "k")]) == 0
    private, public = tmp_path / "k.key", tmp_path / "k.pub"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert private.read_text().startswith("-----BEGIN PRIVATE KEY-----")  # PKCS#8
    assert public.read_text().startswith("-----BEGIN PUBLIC KEY-----")  # SubjectPublicKeyInfo
    # The keyid is the SHA-256 of the DER SubjectPublicKeyInfo (the PEM's base64 body).
    der = base64.b64decode("".join(public.read_text().splitlines()[1:-1]))
    assert hashlib.sha256(der).hexdigest() in capsys.readouterr().err
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_keygen_never_overwrites_nor_follows_a_planted_link(tmp_path: Path, capsys) -> None:
    target = tmp_path / "elsewhere"
    (tmp_path / "k.key").symlink_to(target)  # an agent's link where the private key would go
    assert main(["keygen", "--out", str(tmp_path / "k")]) == 2
    assert "never overwritten" in capsys.readouterr().err
    assert not target.exists() and not (tmp_path / "k.pub").exists()
    (tmp_path / "j.pub").write_text("mine")
    assert main(["keygen", "--out", str(tmp_path / "j")]) == 2
    assert (tmp_path / "j.pub").read_text() == "mine" and not (tmp_path / "j.key").exists()


@pytest.mark.parametrize("problem", ["missing", "folder", "not pem", "public key", "rsa key"])
def test_a_missing_or_unreadable_signing_key_is_a_usage_error_before_any_audit(
    tmp_path: Path, keys, capsys, problem: str
) -> None:
    key = tmp_path / "bad.key"
    if problem == "folder":
        key.mkdir()
    elif problem == "not pem":
        key.write_text("hello")
    elif problem == "public key":
        key = Path(keys[1])
    elif problem == "rsa key":
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
        pem = rsa_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        key.write_bytes(pem)
    out = tmp_path / "v.intoto.jsonl"
    capsys.readouterr()
    assert attest(out, str(key), SEED_000) == 2
    captured = capsys.readouterr()
    assert str(key) in captured.err and captured.out == ""  # nothing audited
    assert not out.exists()


@pytest.mark.parametrize("problem", ["missing", "private key", "not pem"])
def test_a_missing_or_unreadable_verifying_key_is_a_usage_error(tmp_path: Path, keys, capsys, problem: str) -> None:
    out = tmp_path / "v.intoto.jsonl"
    assert attest(out, keys[0], SEED_000) == 0
    key = {"missing": str(tmp_path / "none.pub"), "private key": keys[0], "not pem": str(SEED_000)}[problem]
    code, err = verify(capsys, out, key)
    assert code == 2 and key in err


def test_attest_and_its_output_go_together_and_never_come_from_a_config_file(tmp_path: Path, keys, capsys) -> None:
    assert main(["audit", str(SEED_000), "--attest", keys[0], "--quiet"]) == 2
    assert "--attest-output" in capsys.readouterr().err
    (tmp_path / "pyproject.toml").write_text(f'[tool.auditor]\nattest = "{keys[0]}"\n')
    assert main(["audit", str(SEED_000), "--config", str(tmp_path / "pyproject.toml"), "--quiet"]) == 2
    assert "unknown key 'attest'" in capsys.readouterr().err


def test_a_missing_attestation_file_or_transcript_is_a_usage_error(tmp_path: Path, keys, capsys) -> None:
    assert verify(capsys, tmp_path / "none.intoto.jsonl", keys[1])[0] == 2
    out = tmp_path / "v.intoto.jsonl"
    assert attest(out, keys[0], SEED_000) == 0
    assert verify(capsys, out, keys[1], "--transcript", str(tmp_path / "gone.txt"))[0] == 2


# -- the round trip -------------------------------------------------------------------------------


def test_sign_and_verify_round_trip(tmp_path: Path, keys, capsys) -> None:
    seed_000, seed_001 = copied(tmp_path, SEED_000, SEED_001)
    out = tmp_path / "v.intoto.jsonl"
    assert attest(out, keys[0], seed_000, seed_001) == 1  # 001 fails; the statements say so
    report = json.loads(capsys.readouterr().out)
    lines = envelopes(out)
    assert len(lines) == 2 and all(e["payloadType"] == "application/vnd.in-toto+json" for e in lines)
    statements = [statement(e) for e in lines]
    by_source = {s["predicate"]["source"]: s for s in statements}
    for result in report["results"]:
        s = by_source[result["source"]]
        assert s["_type"] == STATEMENT_TYPE and s["predicateType"] == PREDICATE_TYPE
        digest = hashlib.sha256(Path(result["source"]).read_bytes()).hexdigest()
        assert s["subject"] == [{"name": result["source"], "digest": {"sha256": digest}}]
        verdict = s["predicate"]
        # The predicate says what --format json says of the result, under the same policy.
        assert {k: verdict[k] for k in ("status", "findings", "recomputed", "claimed")} == {
            k: result[k] for k in ("status", "findings", "recomputed", "claimed")
        }
        assert verdict["config"] == report["config"] and verdict["config"]["policy"]["alpha"]["source"] == "default"
        assert verdict["auditor"]["version"] == report["auditor_version"] and verdict["audited_at"].endswith("Z")
    assert {s["predicate"]["status"] for s in statements} == {"pass", "fail"}
    code, err = verify(capsys, out, keys[1], "--transcript", str(seed_000), "--transcript", str(seed_001))
    assert code == 0 and "verified 2 statement(s)" in err
    # The required status: one verdict is a fail.
    code, err = verify(capsys, out, keys[1], "--require", "pass")
    assert code == 1 and f"policy not met: {seed_001} is fail, not pass" in err and str(seed_000) not in err


def test_the_policy_in_effect_and_its_source_are_signed(tmp_path: Path, keys) -> None:
    (seed,) = copied(tmp_path, SEED_000)
    config = tmp_path / "pyproject.toml"
    config.write_text("[tool.auditor]\nalpha = 0.01\n[tool.auditor.thresholds]\nnegligible-rel = 0.5\n")
    out = tmp_path / "v.intoto.jsonl"
    attest(out, keys[0], seed, extra=("--config", str(config), "--fdr", "0.2", "--format", "json"))
    policy = statement(envelopes(out)[0])["predicate"]["config"]["policy"]
    assert policy["alpha"] == {"value": 0.01, "source": str(config)}
    assert policy["negligible-rel"] == {"value": 0.5, "source": str(config)}
    assert policy["fdr"] == {"value": 0.2, "source": "command line"}


# -- one changed byte ---------------------------------------------------------------------------


def test_one_changed_byte_of_the_transcript_is_a_digest_mismatch(tmp_path: Path, keys, capsys) -> None:
    (seed,) = copied(tmp_path, SEED_000)
    out = tmp_path / "v.intoto.jsonl"
    attest(out, keys[0], seed)
    data = bytearray(seed.read_bytes())
    data[-2] ^= 0x01
    seed.write_bytes(bytes(data))
    code, err = verify(capsys, out, keys[1], "--transcript", str(seed))
    assert code == 1 and f"{seed}: digest mismatch" in err


def test_a_transcript_no_statement_names_fails(tmp_path: Path, keys, capsys) -> None:
    seed_000, seed_001 = copied(tmp_path, SEED_000, SEED_001)
    out = tmp_path / "v.intoto.jsonl"
    attest(out, keys[0], seed_000)
    code, err = verify(capsys, out, keys[1], "--transcript", str(seed_001))
    assert code == 1 and "not attested" in err


def _rewrite(out: Path, change) -> None:
    lines = envelopes(out)
    change(lines[0])
    out.write_text("".join(json.dumps(e) + "\n" for e in lines))


def test_one_changed_byte_of_the_payload_is_a_bad_signature(tmp_path: Path, keys, capsys) -> None:
    (seed,) = copied(tmp_path, SEED_001)
    out = tmp_path / "v.intoto.jsonl"
    attest(out, keys[0], seed)

    def pass_instead_of_fail(envelope: dict) -> None:  # the agent's edit: its failing verdict passes
        payload = base64.b64decode(envelope["payload"])
        assert payload.count(b'"status":"fail"') == 1
        envelope["payload"] = base64.b64encode(payload.replace(b'"status":"fail"', b'"status":"pass"')).decode()

    _rewrite(out, pass_instead_of_fail)
    code, err = verify(capsys, out, keys[1], "--require", "pass")
    assert code == 1 and f"{out}:1: bad signature" in err


def test_one_flipped_bit_anywhere_in_the_payload_is_a_bad_signature(tmp_path: Path, keys, capsys) -> None:
    (seed,) = copied(tmp_path, SEED_000)
    out = tmp_path / "v.intoto.jsonl"
    attest(out, keys[0], seed)
    size = len(base64.b64decode(envelopes(out)[0]["payload"]))
    for index in (0, size // 2, size - 1):

        def flip(envelope: dict, index: int = index) -> None:
            payload = bytearray(base64.b64decode(envelope["payload"]))
            payload[index] ^= 0x20
            envelope["payload"] = base64.b64encode(bytes(payload)).decode()

        attest(out, keys[0], seed)
        _rewrite(out, flip)
        code, err = verify(capsys, out, keys[1])
        assert code == 1 and "bad signature" in err


def test_one_changed_byte_of_the_signature_is_a_bad_signature(tmp_path: Path, keys, capsys) -> None:
    (seed,) = copied(tmp_path, SEED_000)
    out = tmp_path / "v.intoto.jsonl"
    attest(out, keys[0], seed)

    def change(envelope: dict) -> None:
        sig = bytearray(base64.b64decode(envelope["signatures"][0]["sig"]))
        sig[7] ^= 0x01
        envelope["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()

    _rewrite(out, change)
    code, err = verify(capsys, out, keys[1])
    assert code == 1 and "bad signature" in err


def test_a_changed_payload_type_is_a_bad_signature(tmp_path: Path, keys, capsys) -> None:
    """The PAE binds the type: the same bytes cannot be passed off as another kind of document."""
    out = tmp_path / "v.intoto.jsonl"
    attest(out, keys[0], SEED_000)
    _rewrite(out, lambda e: e.update(payloadType="application/json"))
    code, err = verify(capsys, out, keys[1])
    assert code == 1 and "bad signature" in err


def test_a_statement_signed_by_another_key_is_an_unknown_key(tmp_path: Path, keys, capsys) -> None:
    """An agent holding its own key cannot add or swap statements: they verify under no key given."""
    other = tmp_path / "agent"
    assert main(["keygen", "--out", str(other)]) == 0
    ours, theirs = tmp_path / "ours.intoto.jsonl", tmp_path / "theirs.intoto.jsonl"
    attest(ours, keys[0], SEED_000)
    attest(theirs, str(other) + ".key", SEED_001)
    ours.write_text(ours.read_text() + theirs.read_text())
    code, err = verify(capsys, ours, keys[1])
    assert code == 1 and f"{ours}:2: unknown key" in err and f"{ours}:1" not in err
    # The agent's keyid left out: tried against the key given, it is still not its signature.
    _rewrite(theirs, lambda e: e["signatures"][0].update(keyid=""))
    code, err = verify(capsys, theirs, keys[1])
    assert code == 1 and "bad signature" in err


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "{}",
        '{"payload": "***", "payloadType": "application/vnd.in-toto+json", "signatures": [{"keyid": "", "sig": ""}]}',
    ],
)
def test_a_malformed_line_fails_with_its_line_number(tmp_path: Path, keys, capsys, line: str) -> None:
    out = tmp_path / "v.intoto.jsonl"
    attest(out, keys[0], SEED_000)
    out.write_text(out.read_text() + line + "\n")
    code, err = verify(capsys, out, keys[1])
    assert code == 1 and f"{out}:2: malformed" in err


def test_an_empty_file_verifies_nothing(tmp_path: Path, keys, capsys) -> None:
    out = tmp_path / "v.intoto.jsonl"
    out.write_text("")
    code, err = verify(capsys, out, keys[1])
    assert code == 1 and "holds no envelope" in err


# -- batches: --jobs 2, jsonl, and the rerun cache ----------------------------------------------


def _predicates(out: Path) -> dict[str, dict]:
    found = {}
    for e in envelopes(out):
        s = statement(e)
        predicate = {k: v for k, v in s["predicate"].items() if k != "audited_at"}
        found[s["predicate"]["source"]] = {"subject": s["subject"], "predicate": predicate}
    return found


def test_attest_with_jobs_2_signs_what_one_job_signs(tmp_path: Path, keys, capsys) -> None:
    folder = tmp_path / "answers"
    shutil.copytree(ANSWERS, folder)
    one, two = tmp_path / "one.intoto.jsonl", tmp_path / "two.intoto.jsonl"
    attest(one, keys[0], folder, extra=("--jobs", "1", "--format", "json"))
    report = json.loads(capsys.readouterr().out)
    attest(two, keys[0], folder, extra=("--jobs", "2", "--format", "json"))
    assert _predicates(two) == _predicates(one)
    assert {source: p["predicate"]["status"] for source, p in _predicates(two).items()} == {
        r["source"]: r["status"] for r in report["results"]
    }
    transcripts = [a for p in sorted(folder.iterdir()) for a in ("--transcript", str(p))]
    code, err = verify(capsys, two, keys[1], *transcripts)
    assert code == 0 and f"verified {len(report['results'])} statement(s)" in err


def test_a_jsonl_run_signs_every_finding_and_the_cross_answer_ones(tmp_path: Path, keys, capsys) -> None:
    """A jsonl run keeps only deciding findings in memory; an attested one keeps them all, and signs the
    final verdicts, after the cross-answer checks (X9xx) have added theirs."""
    folder = tmp_path / "answers"
    shutil.copytree(ANSWERS, folder)
    out = tmp_path / "v.intoto.jsonl"
    attest(out, keys[0], folder, extra=("--format", "jsonl", "--jobs", "2"))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    summary, results = lines[-1], {line["source"]: line for line in lines[:-1]}
    late: dict[str, list] = {}
    for f in summary["late_findings"]:
        late.setdefault(f.pop("source"), []).append(f)
    signed = _predicates(out)
    assert signed.keys() == results.keys()
    for source, line in results.items():
        findings = signed[source]["predicate"]["findings"]
        assert all(f in findings for f in line["findings"] + late.get(source, []))
    assert any(f["severity"] != "error" for p in signed.values() for f in p["predicate"]["findings"])


def test_the_predicate_schema_in_the_docs_is_the_one_the_models_generate() -> None:
    docs = (ROOT / "docs" / "attestations.md").read_text(encoding="utf-8")
    assert predicate_schema_text() in docs
    assert with_schema(docs) == docs, "run: python -m auditor.attest.statement docs/attestations.md"


def test_an_audit_without_attest_never_imports_cryptography() -> None:
    import subprocess
    import sys

    probe = (
        "import contextlib, io, sys\nfrom auditor.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['audit', {str(SEED_000)!r}, '--isolated', '--format', 'json'])\n"
        "print('cryptography' in sys.modules, 'auditor.attest.statement' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["False", "False"], done.stderr


@needs_sandbox_and_torch
def test_a_rerun_signs_the_files_it_ran_on_and_the_cached_run_signs_them_again(tmp_path: Path, keys, capsys) -> None:
    workspace = experiment_workspace("clip_honest", tmp_path / "ws")
    answer = workspace / "answer.txt"
    cache = tmp_path / "cache"
    firsts = []
    for name in ("first", "second"):
        out = tmp_path / f"{name}.intoto.jsonl"
        extra = ("--rerun", "--device", "cpu", "--timeout", "120", "--cache-dir", str(cache), "--format", "json")
        assert attest(out, keys[0], answer, extra=extra) == 0
        result = json.loads(capsys.readouterr().out)["results"][0]
        (s,) = [statement(e) for e in envelopes(out)]
        firsts.append(s)
        rerun = s["predicate"]["rerun"]
        assert rerun == result["rerun"]  # the record as --format json writes it
        assert rerun["sandbox"] == "bubblewrap" and rerun["device"] == "cpu"
        assert rerun["torch_version"] and rerun["python_version"] and rerun["limits"]["memory_bytes"]
        names = [f["name"] for f in rerun["files"]]
        # The transcript first, then every staged file with the digest of its bytes.
        assert s["subject"][0]["name"] == str(answer) and [x["name"] for x in s["subject"][1:]] == names
        for subject in s["subject"][1:]:
            data = (workspace / subject["name"]).read_bytes()
            assert subject["digest"]["sha256"] == hashlib.sha256(data).hexdigest()
        assert "bench.py" in names and "bench_report.json" not in names  # the report is regenerated, not run on
        code, _ = verify(capsys, out, keys[1], "--transcript", str(answer), "--require", "pass")
        assert code == 0
    assert (firsts[0]["predicate"]["rerun"]["cached"], firsts[1]["predicate"]["rerun"]["cached"]) == (False, True)
    assert firsts[0]["subject"] == firsts[1]["subject"]


def test_the_attestation_file_is_never_written_through_a_planted_link(tmp_path: Path, keys, capsys) -> None:
    target = tmp_path / "victim"
    target.write_text("keep")
    link = tmp_path / "v.intoto.jsonl"
    os.symlink(target, link)
    capsys.readouterr()
    assert attest(link, keys[0], SEED_000) == 2
    captured = capsys.readouterr()
    assert target.read_text() == "keep" and "symbolic link" in captured.err
    assert captured.out == ""  # refused before the audit, not after a long batch
