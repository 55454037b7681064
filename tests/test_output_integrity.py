"""What the audited agent plants cannot redirect an output or skip an audit (issue 30, breaks 3 and 4).

* Outputs: a link planted as ``-o`` (every format, the baseline too), a dangling link, a file
  of another user, a hard link and a folder link of another user are refused (exit 2) and
  whatever they point to stays as it was; ordinary outputs are written, replaced and appended.
* ``--resume``: a recorded line counts only when it carries this user's HMAC over the line,
  the transcript's SHA-256 and the options' fingerprint; a planted, edited, re-pointed or
  differently-optioned line is audited again, and a resume file of another user or one
  others may write is refused.

The agent is a real second uid (65534, through ``setpriv``); the auditor runs as root, as in CI.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SEED_000, SEED_001

from auditor.batch.resume import KEY_FILE, Resumable, cache_folder
from auditor.cli import main
from auditor.formats import FORMATS
from auditor.options.models import AuditOptions

NOBODY = 65534
SECRET = "root only\n"
AS_ROOT = os.geteuid() == 0 and shutil.which("setpriv") is not None
needs_second_uid = pytest.mark.skipif(
    not AS_ROOT and not os.environ.get("CI"), reason="needs root and setpriv for a second uid (never skipped in CI)"
)


def _as_agent(*argv: str) -> None:
    subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *argv], check=True, timeout=30
    )


@pytest.fixture
def agent_dir() -> Iterator[Path]:
    """A folder the agent owns (its workspace), reachable by it: not under root's private tmp_path."""
    folder = Path(tempfile.mkdtemp(prefix="auditor-agent-", dir="/tmp"))
    os.chmod(folder, 0o755)
    os.chown(folder, NOBODY, NOBODY)
    yield folder
    shutil.rmtree(folder)


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A root-only file the agent would like the auditor to write into."""
    path = tmp_path / "victim"
    path.write_text(SECRET, encoding="utf-8")
    os.chmod(path, 0o600)
    return path


def _audit(capsys, *argv: str) -> tuple[int, str]:
    code = main(["audit", *argv, "--isolated"])
    return code, capsys.readouterr().err


def _untouched(victim: Path) -> None:
    assert victim.read_text(encoding="utf-8") == SECRET
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600


# -- break 3: output paths ---------------------------------------------------------------------------


@needs_second_uid
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_link_the_agent_planted_as_the_output_is_refused_in_every_format(capsys, agent_dir, victim, fmt) -> None:
    link = agent_dir / "report.out"
    _as_agent("ln", "-s", str(victim), str(link))
    code, err = _audit(capsys, str(SEED_001), "--format", fmt, "-o", str(link))
    assert code == 2, err
    assert f"cannot write {link}" in err and "symbolic link" in err
    _untouched(victim)
    assert link.is_symlink() and os.readlink(link) == str(victim)


@needs_second_uid
def test_the_baseline_and_the_statistics_are_not_written_through_a_link(capsys, agent_dir, victim) -> None:
    link = agent_dir / "baseline.json"
    _as_agent("ln", "-s", str(victim), str(link))
    code, err = _audit(capsys, str(SEED_001), "--write-baseline", str(link))
    assert code == 2 and f"cannot write baseline {link}" in err and "symbolic link" in err
    code, err = _audit(capsys, str(SEED_001), "--statistics", "-o", str(link))
    assert code == 2 and "symbolic link" in err
    _untouched(victim)


@needs_second_uid
@pytest.mark.parametrize("fmt", ["jsonl", "json"])
def test_a_dangling_link_is_not_followed_to_create_a_file(capsys, agent_dir, tmp_path, fmt) -> None:
    target = tmp_path / "created-by-root"
    link = agent_dir / "run.out"
    _as_agent("ln", "-s", str(target), str(link))
    code, err = _audit(capsys, str(SEED_000), "--format", fmt, "-o", str(link))
    assert code == 2 and "symbolic link" in err
    assert not target.exists()


@needs_second_uid
@pytest.mark.parametrize("fmt", ["jsonl", "json", "sarif"])
def test_a_file_of_another_user_is_refused(capsys, agent_dir, fmt) -> None:
    planted = agent_dir / "run.out"
    _as_agent("sh", "-c", f"printf 'agent text\\n' > {planted}")
    code, err = _audit(capsys, str(SEED_000), "--format", fmt, "-o", str(planted))
    assert code == 2 and f"belongs to uid {NOBODY}" in err
    assert planted.read_text(encoding="utf-8") == "agent text\n" and planted.stat().st_uid == NOBODY


@needs_second_uid
def test_a_hard_link_to_a_root_file_is_refused(capsys, agent_dir, victim) -> None:
    # Where fs.protected_hardlinks is 0, an agent can link a root file into its folder; made here as root.
    link = agent_dir / "run.jsonl"
    os.link(victim, link)
    code, err = _audit(capsys, str(SEED_000), "--format", "jsonl", "-o", str(link))
    assert code == 2 and "hard links" in err
    _untouched(victim)


@needs_second_uid
def test_a_folder_link_of_another_user_is_not_followed(capsys, agent_dir, tmp_path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    _as_agent("ln", "-s", str(private), str(agent_dir / "reports"))
    for fmt in ("json", "jsonl"):
        code, err = _audit(capsys, str(SEED_000), "--format", fmt, "-o", str(agent_dir / "reports" / "run.out"))
        assert code == 2 and f"symbolic link owned by uid {NOBODY}" in err
    assert list(private.iterdir()) == []
    # A link of the auditor's own user is followed as before.
    (tmp_path / "mine").symlink_to(private)
    code, err = _audit(capsys, str(SEED_000), "--format", "json", "-o", str(tmp_path / "mine" / "run.json"))
    assert code == 0, err
    assert json.loads((private / "run.json").read_text(encoding="utf-8"))["summary"]["files"] == 1


def test_ordinary_outputs_are_replaced_and_appended(capsys, tmp_path) -> None:
    report, lines = tmp_path / "run.json", tmp_path / "run.jsonl"
    old = os.umask(0o002)  # a group-writable umask: a jsonl file is still created resumable
    try:
        for _ in range(2):
            assert _audit(capsys, str(SEED_000), "--format", "json", "-o", str(report))[0] == 0
            assert _audit(capsys, str(SEED_000), "--format", "jsonl", "-o", str(lines))[0] == 0
    finally:
        os.umask(old)
    assert json.loads(report.read_text(encoding="utf-8"))["summary"]["files"] == 1
    assert stat.S_IMODE(report.stat().st_mode) == 0o664
    written = [json.loads(line) for line in lines.read_text(encoding="utf-8").splitlines()]
    assert [("summary" in line) for line in written] == [False, True, False, True]
    assert stat.S_IMODE(lines.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json", "run.jsonl"]  # no temporary left


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_what_is_not_a_regular_file_is_not_an_output(capsys, tmp_path, fmt) -> None:
    # A FIFO of our own stands for a device: the old rename replaced /dev/null itself when run as root.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, err = _audit(capsys, str(SEED_000), "--format", fmt, "-o", str(fifo))
    assert code == 2 and f"cannot write {fifo}" in err
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


# -- break 4: --resume ---------------------------------------------------------------------------------


def _jsonl(*argv: str) -> list[str]:
    return ["--format", "jsonl", *argv]


def _result_lines(path: Path) -> list[dict]:
    return [d for d in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if "source" in d]


def _resume(capsys, out: Path, *argv: str) -> tuple[int, str]:
    return _audit(capsys, *argv, *_jsonl("-o", str(out), "--resume"))


def test_lines_carry_the_transcript_digest_and_a_mac(capsys, tmp_path) -> None:
    import hashlib

    out = tmp_path / "run.jsonl"
    assert _audit(capsys, str(SEED_000), *_jsonl("-o", str(out)))[0] == 0
    (line,) = _result_lines(out)
    assert line["resume"]["sha256"] == hashlib.sha256(SEED_000.read_bytes()).hexdigest()
    assert len(line["resume"]["mac"]) == len(line["resume"]["options"]) == 64
    key = cache_folder() / KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert key.stat().st_uid == os.geteuid() and key.stat().st_size == 32


def test_a_planted_pass_line_is_audited_again(capsys, tmp_path) -> None:
    """The attack of the issue: one "pass" line for a D501 answer made the run exit 0 unaudited."""
    out = tmp_path / "run.jsonl"
    assert _audit(capsys, str(SEED_001), *_jsonl("-o", str(out)))[0] == 1
    (honest,) = _result_lines(out)
    assert "D501" in {f["rule"] for f in honest["findings"]}
    forged = {**honest, "status": "pass", "findings": []}
    unsigned = {k: v for k, v in forged.items() if k != "resume"}
    for planted in (unsigned, forged):  # no mac at all; the honest mac over other content
        out.write_text(json.dumps(planted) + "\n", encoding="utf-8")
        code, err = _resume(capsys, out, str(SEED_001))
        assert code == 1, err
        assert "0 transcripts already audited, 1 recorded line not trusted (re-audited), 1 to go" in err
        (line,) = _result_lines(out)
        assert line["status"] == "fail" and "D501" in {f["rule"] for f in line["findings"]}


def test_a_line_with_members_added_after_its_mac_is_audited_again(capsys, tmp_path) -> None:
    out = tmp_path / "run.jsonl"
    assert _audit(capsys, str(SEED_001), *_jsonl("-o", str(out)))[0] == 1
    line = out.read_text(encoding="utf-8").splitlines()[0]
    out.write_text(line[:-1] + ',"status":"pass","findings":[]}\n', encoding="utf-8")  # later keys win in JSON
    code, err = _resume(capsys, out, str(SEED_001))
    assert code == 1 and "1 recorded line not trusted" in err


def test_a_line_for_other_bytes_is_audited_again(capsys, tmp_path) -> None:
    answer, out = tmp_path / "answer.txt", tmp_path / "run.jsonl"
    shutil.copy(SEED_000, answer)
    assert _audit(capsys, str(answer), *_jsonl("-o", str(out)))[0] == 0
    shutil.copy(SEED_001, answer)  # the transcript edited after the run: a D501 answer now
    code, err = _resume(capsys, out, str(answer))
    assert code == 1 and "1 recorded line not trusted" in err
    (line,) = _result_lines(out)
    assert line["status"] == "fail"


@pytest.mark.parametrize("recorded", [["--fail-on", "never"], ["--alpha", "0.01"], ["--ignore", "D501"]])
def test_a_line_recorded_under_other_options_is_audited_again(capsys, tmp_path, recorded) -> None:
    out = tmp_path / "run.jsonl"
    _audit(capsys, str(SEED_001), *recorded, *_jsonl("-o", str(out)))
    code, err = _resume(capsys, out, str(SEED_001))  # the default options now
    assert code == 1 and "0 transcripts already audited, 1 recorded line not trusted" in err


def test_per_file_options_are_part_of_the_fingerprint(tmp_path) -> None:
    def options_for(path: str) -> AuditOptions:
        return AuditOptions(ignore=("D501",)) if path.endswith("b.txt") else AuditOptions()

    run = Resumable(options_for, None, None)
    assert run.fingerprint_for("a.txt") == run.fingerprint_for("c.txt") != run.fingerprint_for("b.txt")
    assert Resumable(options_for, None, "baseline digest").fingerprint_for("a.txt") != run.fingerprint_for("a.txt")
    assert Resumable(options_for, None, None, {"a.txt"}).fingerprint_for("a.txt") != run.fingerprint_for("a.txt")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_honest_resume_skips_what_was_audited(capsys, tmp_path, jobs) -> None:
    out, empty = tmp_path / "run.jsonl", tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")  # unreadable as an answer: no digest, audited again, not distrusted
    assert _audit(capsys, str(SEED_000), str(empty), *_jsonl("-o", str(out), "--jobs", jobs))[0] == 1
    first = out.read_text(encoding="utf-8").splitlines()[0]
    code, err = _resume(capsys, out, str(SEED_000), str(SEED_001), str(empty), "--jobs", jobs)
    assert code == 1
    assert "1 transcript already audited, 2 to go" in err and "not trusted" not in err
    assert out.read_text(encoding="utf-8").splitlines()[0] == first  # kept as it was, not redone
    assert sorted(Path(line["source"]).name for line in _result_lines(out)) == sorted(
        [SEED_000.name, SEED_001.name, "empty.txt"]
    )


def test_a_resume_under_a_baseline_trusts_its_own_lines(capsys, tmp_path) -> None:
    out, baseline = tmp_path / "run.jsonl", tmp_path / "baseline.json"
    assert _audit(capsys, str(SEED_001), "--write-baseline", str(baseline), "-q")[0] == 0
    assert _audit(capsys, str(SEED_001), "--baseline", str(baseline), *_jsonl("-o", str(out)))[0] == 0
    code, err = _resume(capsys, out, str(SEED_001), "--baseline", str(baseline))
    assert code == 0 and "1 transcript already audited, 0 to go" in err
    code, err = _resume(capsys, out, str(SEED_001))  # the baseline no longer applied: its line is stale
    assert code == 1 and "1 recorded line not trusted" in err


@needs_second_uid
@pytest.mark.parametrize("how", ["another user's", "group-writable", "a link"])
def test_a_resume_file_others_could_write_is_refused(capsys, tmp_path, how) -> None:
    out = tmp_path / "run.jsonl"
    assert _audit(capsys, str(SEED_000), *_jsonl("-o", str(out)))[0] == 0
    target = out
    if how == "another user's":
        os.chown(out, NOBODY, NOBODY)
    elif how == "group-writable":
        os.chmod(out, 0o664)
    else:
        target = tmp_path / "link.jsonl"
        target.symlink_to(out)
    before = out.read_bytes()
    code, err = _resume(capsys, target, str(SEED_000))
    assert code == 2 and f"cannot resume from {target}" in err
    assert out.read_bytes() == before


@needs_second_uid
@pytest.mark.parametrize("how", ["a link", "readable by others", "another user's"])
def test_an_unsafe_key_is_never_used(capsys, tmp_path, how) -> None:
    key = cache_folder() / KEY_FILE
    key.parent.mkdir(parents=True, mode=0o700)
    if how == "a link":
        (tmp_path / "known").write_bytes(b"k" * 32)
        key.symlink_to(tmp_path / "known")
    else:
        key.write_bytes(b"k" * 32)
        os.chmod(key, 0o644 if how == "readable by others" else 0o600)
        if how == "another user's":
            os.chown(key, NOBODY, NOBODY)
    out = tmp_path / "run.jsonl"
    code, err = _audit(capsys, str(SEED_000), *_jsonl("-o", str(out)))
    assert code == 0 and "not signed" in err  # the run goes on; its lines will not be trusted
    assert all("resume" not in line for line in _result_lines(out))
    code, err = _resume(capsys, out, str(SEED_000))
    assert code == 2 and "cannot resume from" in err and KEY_FILE in err
