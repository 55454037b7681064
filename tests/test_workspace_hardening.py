"""The rerun's host-side steps against hostile workspaces: what is copied, which interpreter runs, what is left.

Before anything runs in the sandbox the auditor works on the host with its own
rights (often root): it copies the files an answer names, asks the chosen
interpreter about itself, and leaves a staging folder behind while the run
lasts.  Each test here plants one trap for those steps and runs the real
rerun through bubblewrap:

* a 0600 file of another user, a hard link to one, a 10 GiB sparse file;
* a symlinked transcript, ``/``, ``/tmp`` and the home folder as workspace;
* an interpreter shipped inside the workspace, and a ``.pth`` file in the
  chosen interpreter's packages that writes on the host and adds a host folder
  to ``sys.path``;
* the staging folder of an auditor killed with SIGKILL.

The users are made up (uids 23456 and 12345, with no passwd entry), so the
tests that hand files to them need root; everything else is skipped only where
bubblewrap is missing and the CI variable is not set.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
import venv
from pathlib import Path

import pytest
from conftest import (
    EXPERIMENTS,
    ROOT,
    everything_said,
    experiment_workspace,
    load_answer,
    needs_bubblewrap,
    processes_with,
    rules_of,
    sandbox_findings,
)

from auditor.options.models import AuditOptions, RerunOptions
from auditor.rerun import run_and_compare
from auditor.rerun import workspace as workspace_module

OWNER = 23456  # the transcript's owner: the user whose answer is audited
OTHER = 12345  # another user of the machine
pytestmark = [needs_bubblewrap, pytest.mark.usefixtures("warm_sandbox")]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="handing files to other users (chown) needs root")


def rerun(document: dict, transcript: Path, **overrides):
    overrides.setdefault("device", "cpu")
    overrides.setdefault("timeout", 60)
    overrides.setdefault("use_cache", False)  # every test runs the sandbox (the cache: test_rerun_cache.py)
    return sandbox_findings(run_and_compare(document, str(transcript), RerunOptions(**overrides), AuditOptions()))


def give(path: Path, uid: int, mode: int) -> None:
    os.chown(path, uid, uid, follow_symlinks=False)
    os.chmod(path, mode)


def read_workspace(folder: Path, targets: list[str], owner: int | None = OWNER) -> tuple[Path, dict]:
    """A copy of ``hostile_read`` (prints every target it can read) owned by ``owner``, and its answer."""
    experiment_workspace("hostile_read", folder)
    (folder / "targets.json").write_text(json.dumps(targets))
    if owner is not None:
        for path in [folder, *folder.iterdir()]:
            give(path, owner, 0o755 if path.is_dir() else 0o644)
    document = load_answer("hostile_read")
    document["how_to_run"] = "python3 read_secrets.py"
    document["files"] = ["read_secrets.py", "targets.json"]
    return folder / "answer.txt", document


def seen_by_the_run(findings: list) -> dict:
    """What read_secrets.py printed (the run wrote no report: R807 with the output tail)."""
    assert rules_of(findings) == ["R807"], [f.to_dict() for f in findings]
    return json.loads(findings[0].message.split("output tail:\n", 1)[1])


# -- 2. the host-side copy reads only what the answer's owner may read ------------------------


@needs_root
def test_private_file_of_another_user_is_refused_and_never_printed(tmp_path: Path) -> None:
    secret = f"auditor-secret-{uuid.uuid4().hex}"
    transcript, document = read_workspace(tmp_path / "ws", ["secret.txt"])
    (tmp_path / "ws" / "secret.txt").write_text(secret + "\n")
    give(tmp_path / "ws" / "secret.txt", OTHER, 0o600)
    document["files"].append("secret.txt")
    findings, record = rerun(document, transcript)
    assert rules_of(findings) == ["R802"], [f.to_dict() for f in findings]
    refusal = findings[0]
    assert refusal.pointer == "/files/2" and refusal.claimed == "secret.txt"
    assert f"may not be read by the transcript's owner (uid {OWNER})" in refusal.message, refusal.message
    assert f"uid {OTHER}" in refusal.message and "0600" in refusal.message
    assert record["seconds"] is None  # nothing ran
    assert secret not in everything_said(findings, record)


@needs_root
def test_files_the_owner_may_read_are_still_copied(tmp_path: Path) -> None:
    """Others' files readable by the owner's group or by anyone are copied; the run prints them."""
    transcript, document = read_workspace(tmp_path / "ws", ["group.txt", "public.txt", "own.txt"])
    for name, uid, mode in (("group.txt", OTHER, 0o640), ("public.txt", OTHER, 0o644), ("own.txt", OWNER, 0o600)):
        (tmp_path / "ws" / name).write_text(f"content of {name}\n")
        give(tmp_path / "ws" / name, uid, mode)
        document["files"].append(name)
    os.chown(tmp_path / "ws" / "group.txt", OTHER, OWNER)  # the transcript's group may read it
    findings, record = rerun(document, transcript)
    seen = seen_by_the_run(findings)
    assert all(seen[name] == f"READ content of {name}\n" for name in ("group.txt", "public.txt", "own.txt")), seen
    assert record["exit_code"] == 0


@needs_root
@pytest.mark.parametrize(
    "uid, gid, mode, acl, folder_mode, refused",
    [
        (OTHER, OTHER, 0o600, None, 0o755, True),  # another user's private file
        (OTHER, OTHER, 0o640, None, 0o755, True),  # group-readable, but not the owner's group
        (OTHER, OWNER, 0o640, None, 0o755, False),  # the transcript's group may read it
        (OTHER, OTHER, 0o644, None, 0o755, False),  # anyone may read it
        (OTHER, OTHER, 0o644, None, 0o700, True),  # ... but its folder is another user's, closed
        (OTHER, OTHER, 0o644, [(1, 6, -1), (2, 0, OWNER), (4, 4, -1), (16, 4, -1), (32, 4, -1)], 0o755, True),
        (OTHER, OTHER, 0o600, [(1, 6, -1), (2, 4, OWNER), (4, 0, -1), (16, 4, -1), (32, 0, -1)], 0o755, False),
        (OWNER, OWNER, 0o400, None, 0o755, False),  # the owner's own file
        (OWNER, OWNER, 0o000, None, 0o755, True),  # not even the owner may read it
    ],
    ids=[
        "private",
        "other-group",
        "owner-group",
        "world",
        "closed-folder",
        "acl-denies",
        "acl-grants",
        "own",
        "own-unreadable",
    ],
)
def test_permission_check_follows_mode_bits_and_acls(tmp_path: Path, uid, gid, mode, acl, folder_mode, refused) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    give(root, OWNER, 0o755)
    (root / "sub" / "data.txt").write_text("data\n")
    os.chown(root / "sub" / "data.txt", uid, gid)
    os.chmod(root / "sub" / "data.txt", mode)
    os.chown(root / "sub", OTHER, OTHER)
    os.chmod(root / "sub", folder_mode)
    if acl is not None:
        # POSIX ACL xattr: version 2, then (tag, perm, id) entries; -1 is "no id".
        blob = (2).to_bytes(4, "little") + b"".join(
            tag.to_bytes(2, "little") + perm.to_bytes(2, "little") + (id_ & 0xFFFFFFFF).to_bytes(4, "little")
            for tag, perm, id_ in acl
        )
        try:
            os.setxattr(root / "sub" / "data.txt", "system.posix_acl_access", blob)
        except OSError as exc:
            pytest.skip(f"no POSIX ACLs on this file system ({exc.strerror})")
    (root / "answer.txt").write_text("{}")
    give(root / "answer.txt", OWNER, 0o644)
    owner = workspace_module.owner_of(str(root / "answer.txt"), root)
    ws = workspace_module.collect_files(root, ["sub/data.txt"], None, owner=owner)
    assert [f.rule for f in ws.findings] == (["R802"] if refused else []), [f.to_dict() for f in ws.findings]


@needs_root
def test_hard_link_to_another_users_file_is_refused(tmp_path: Path) -> None:
    # World-readable, so only the hard link gives it away: it is not the owner's file.
    secret = f"auditor-linked-{uuid.uuid4().hex}"
    original = tmp_path / "elsewhere.txt"
    original.write_text(secret + "\n")
    give(original, OTHER, 0o644)
    transcript, document = read_workspace(tmp_path / "ws", ["data.txt"])
    os.link(original, tmp_path / "ws" / "data.txt")
    document["files"].append("data.txt")
    findings, record = rerun(document, transcript)
    assert rules_of(findings) == ["R802"], [f.to_dict() for f in findings]
    assert findings[0].pointer == "/files/2" and "hard link" in findings[0].message, findings[0].message
    assert record["seconds"] is None and secret not in everything_said(findings, record)
    # A hard link to the owner's own file is theirs to ship.
    give(original, OWNER, 0o600)
    ws = workspace_module.collect_files(
        tmp_path / "ws", ["data.txt"], None, owner=workspace_module.owner_of(str(transcript), tmp_path / "ws")
    )
    assert ws.findings == [] and set(ws.files) == {"data.txt"}


def test_file_swapped_for_a_link_after_the_check_is_not_copied(tmp_path: Path) -> None:
    """The copy re-opens every file without following links and wants the very inode it checked."""
    secret = f"auditor-swapped-{uuid.uuid4().hex}"
    (tmp_path / "secret.txt").write_text(secret + "\n")
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "data.txt").write_text("data\n")
    (root / "bench.py").write_text("print('hi')\n")
    ws = workspace_module.collect_files(root, ["bench.py", "sub/data.txt"], None)
    assert ws.findings == []
    before = set(Path(tempfile.gettempdir()).glob(f"auditor-rerun-{os.getpid()}-*"))
    (root / "sub" / "data.txt").unlink()  # a link now, to a file outside the workspace
    (root / "sub" / "data.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(OSError):
        workspace_module.copy_for_run(ws)
    shutil.rmtree(root / "sub")  # a link on the folder's place, to a folder outside
    (root / "sub").symlink_to(tmp_path)
    (tmp_path / "data.txt").write_text(secret + "\n")
    with pytest.raises(OSError, match="link"):
        workspace_module.copy_for_run(ws)
    assert set(Path(tempfile.gettempdir()).glob(f"auditor-rerun-{os.getpid()}-*")) == before  # no copy left


def test_sparse_file_over_the_cap_is_refused_from_its_size_and_nothing_is_staged(tmp_path: Path) -> None:
    transcript, document = read_workspace(tmp_path / "ws", ["huge.bin"], owner=None)
    huge = tmp_path / "ws" / "huge.bin"
    with open(huge, "wb") as f:
        f.truncate(10 * 1024**3)  # 10 GiB apparent, nothing allocated
    document["files"].append("huge.bin")
    before = set(os.listdir(tempfile.gettempdir()))
    findings, record = rerun(document, transcript)
    assert rules_of(findings) == ["R802"], [f.to_dict() for f in findings]
    refusal = findings[0]
    assert refusal.pointer == "/files/2" and refusal.claimed == "huge.bin"
    assert "10737418240 bytes" in refusal.message and "sparse" in refusal.message, refusal.message
    assert record["seconds"] is None
    new = {n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("auditor-rerun-")}
    assert not new, new  # nothing was staged


def test_total_counts_allocated_blocks_not_apparent_sizes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    names = [f"f{i}.txt" for i in range(40)]
    for name in names:
        (root / name).write_text("x")  # one byte each, a whole block on disk
    allocated = sum(os.stat(root / n).st_blocks * 512 for n in names)
    if allocated < 40 * 1024:
        pytest.skip("this file system stores tiny files inline")
    monkeypatch.setattr(workspace_module, "MAX_WORKSPACE_BYTES", allocated // 2)
    ws = workspace_module.collect_files(root, names, None)
    assert [f.rule for f in ws.findings] == ["R802"] and "add up to" in ws.findings[0].message


# -- 2. where the workspace is --------------------------------------------------------------------


def test_symlinked_transcript_uses_the_links_own_folder(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    for folder, word in ((here, "here"), (there, "there")):
        read_workspace(folder, ["which.txt"], owner=None)
        (folder / "which.txt").write_text(f"from {word}\n")
    (here / "answer.txt").unlink()
    (here / "answer.txt").symlink_to(there / "answer.txt")
    document = load_answer("hostile_read")
    document["files"] = ["read_secrets.py", "targets.json", "which.txt"]
    findings, _ = rerun(document, here / "answer.txt")
    assert seen_by_the_run(findings)["which.txt"] == "READ from here\n"
    # A transcript linked to a file directly in /tmp does not make /tmp the workspace.
    assert workspace_module.workspace_root(str(here / "answer.txt"), None) == here


@pytest.mark.parametrize("where", ["/", "tmp", "home", "/var", "/home", "/proc/self", "link-to-tmp"])
def test_root_shared_and_home_folders_are_refused_as_workspace(tmp_path: Path, where: str) -> None:
    workspace = {
        "tmp": tempfile.gettempdir(),
        "home": os.path.expanduser("~"),
        "link-to-tmp": str(tmp_path / "link"),
    }.get(where, where)
    (tmp_path / "link").symlink_to(tempfile.gettempdir())
    document = load_answer("hostile_read")
    document["files"] = ["read_secrets.py", "targets.json"]
    findings, record = rerun(document, tmp_path / "answer.txt", workspace=workspace)
    assert rules_of(findings) == ["R802"], [f.to_dict() for f in findings]
    assert findings[0].pointer == "/files" and "workspace" in findings[0].message, findings[0].message
    assert record["seconds"] is None


def test_transcript_directly_in_tmp_is_refused(tmp_path: Path) -> None:
    transcript = Path(tempfile.gettempdir()) / f"auditor-answer-{uuid.uuid4().hex}.txt"
    transcript.write_text("{}")
    try:
        document = load_answer("hostile_read")
        findings, record = rerun(document, transcript)
    finally:
        transcript.unlink()
    assert rules_of(findings) == ["R802"] and findings[0].pointer == "/files", [f.to_dict() for f in findings]
    assert record["seconds"] is None


# -- 3. the chosen interpreter ------------------------------------------------------------------


def _pth_writing(site_packages: Path, marker: Path, extra_line: str = "") -> None:
    # Silent where it cannot write (the sandbox), so the run's output stays the script's.
    write = f"try:\n open({str(marker)!r}, 'w').write('ran')\nexcept OSError:\n pass"
    line = f"import os; exec({write!r})\n"
    (site_packages / "zz_hostile.pth").write_text(line + extra_line)


def _site_packages(prefix: Path) -> Path:
    return next(prefix.glob("lib/python3*/site-packages"))


@pytest.mark.parametrize("how", ["venv-in-workspace", "link-outside-to-a-copy-inside"])
def test_interpreter_inside_the_workspace_is_refused_and_its_pth_never_runs(
    tmp_path: Path, host_dir: Path, how: str
) -> None:
    transcript, document = read_workspace(tmp_path / "ws", [], owner=None)
    env = tmp_path / "ws" / "venv"
    venv.EnvBuilder(with_pip=False, symlinks=how == "venv-in-workspace").create(env)
    marker = host_dir / "pth-ran"
    _pth_writing(_site_packages(env), marker)
    python = env / "bin" / "python"
    if how == "link-outside-to-a-copy-inside":
        (host_dir / "python3").symlink_to(python)
        python = host_dir / "python3"
    findings, record = rerun(document, transcript, python=str(python))
    assert rules_of(findings) == ["R802"], [f.to_dict() for f in findings]
    assert findings[0].pointer == "/how_to_run" and "inside the workspace" in findings[0].message
    assert record["seconds"] is None
    assert not marker.exists(), "the workspace's interpreter ran on the host"


def test_interpreter_probe_runs_in_the_sandbox_and_pth_paths_are_not_bound_back(tmp_path: Path, host_dir: Path) -> None:
    secret = f"auditor-pth-secret-{uuid.uuid4().hex}"
    private = tmp_path / "private"  # under /tmp: hidden by the sandbox unless bound back
    private.mkdir(mode=0o755)
    os.chmod(private, 0o755)
    (private / "secret.txt").write_text(secret + "\n")
    env = host_dir / "venv"  # outside the workspace: an interpreter the operator chose
    venv.EnvBuilder(with_pip=False, symlinks=True).create(env)
    marker = host_dir / "pth-ran"
    _pth_writing(_site_packages(env), marker, extra_line=f"{private}\n")
    transcript, document = read_workspace(tmp_path / "ws", [str(private / "secret.txt")], owner=None)
    findings, record = rerun(document, transcript, python=str(env / "bin" / "python"))
    assert not marker.exists(), "the interpreter's .pth ran on the host"
    seen = seen_by_the_run(findings)
    assert record["python"] == str(env / "bin" / "python") and record["exit_code"] == 0
    assert seen[str(private / "secret.txt")].startswith("refused"), seen
    assert secret not in everything_said(findings, record)


# -- 8. staging folders of a killed auditor ----------------------------------------------------

_CHILD = r"""
import json, sys
from auditor.options.models import AuditOptions, RerunOptions
from auditor.rerun import run_and_compare
with open(sys.argv[1]) as f:
    document = json.load(f)
run_and_compare(document, sys.argv[2], RerunOptions(device="cpu", timeout=300, use_cache=False), AuditOptions())
"""


def _stages_of(pid: int) -> list[Path]:
    tmp = Path(tempfile.gettempdir())
    return [p for p in tmp.iterdir() if p.name.startswith(f"auditor-rerun-{pid}-")]


def _experiment_running(marker: str) -> bool:
    """Whether ``python3 sleep_forever.py MARKER`` itself runs (not a setup process carrying the marker).

    An auditor killed earlier, before bwrap's child set its parent-death signal, is not covered
    here: the sandbox's supervisor then finds the report pipe without a reader and never starts
    the experiment (tests/test_sandbox_hardening.py::test_an_experiment_nobody_watches_is_never_started).
    """
    for pid in processes_with(marker):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        # The interpreter itself (python3 -I -c PROBE sleep_forever.py MARKER), not bwrap or setpriv.
        words = argv[1:]
        pairs = zip(words, words[1:])
        if os.path.basename(argv[0]).startswith(b"python") and (b"sleep_forever.py", marker.encode()) in pairs:
            return True
    return False


@needs_root
def test_stage_of_a_killed_auditor_is_removed_on_the_next_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A temporary folder of this test's own, shaped like /tmp: a rerun in another test (pytest-xdist runs
    # two at once) removes a killed auditor's stage from the shared /tmp before this test looks at it.
    private_tmp = Path(tempfile.mkdtemp(prefix="auditor-killed-tmp-"))
    private_tmp.chmod(0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    marker = f"auditor-killed-{uuid.uuid4().hex}"
    document = load_answer("hostile_sleep")
    document["how_to_run"] = f"python3 sleep_forever.py {marker}"
    (tmp_path / "doc.json").write_text(json.dumps(document))  # not on the child's command line
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(tmp_path / "doc.json"), str(EXPERIMENTS / "hostile_sleep" / "answer.txt")],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(private_tmp)},
    )
    decoys: list[Path] = []
    live = None
    try:
        deadline = time.monotonic() + 240
        # Killed once the experiment itself runs: the setup before it (setpriv, the cgroup shell,
        # bwrap) carries the marker in its arguments too.  See the note at _experiment_running.
        while not _experiment_running(marker):
            assert child.poll() is None, child.stderr.read().decode(errors="replace")[-2000:]
            assert time.monotonic() < deadline, "the child's run never started"
            time.sleep(0.2)
        stages = _stages_of(child.pid)
        assert len(stages) == 1, stages  # the run's stage, named after the auditor's pid
        stage = stages[0]
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        end = time.monotonic() + 60  # a bound on waiting, not a timing claim: teardown is slow under load
        while processes_with(marker) and time.monotonic() < end:
            time.sleep(0.05)
        assert processes_with(marker) == []  # the sandbox died with the auditor ...
        assert stage.is_dir()  # ... but its stage is still there

        # Decoys carrying the dead auditor's marker, which the cleanup must leave alone.
        tmp = Path(tempfile.gettempdir())
        marker_file = stage / workspace_module.STAGE_MARKER
        prefix = f"auditor-rerun-{child.pid}-decoy{uuid.uuid4().hex[:6]}"
        foreign = tmp / f"{prefix}-foreign"  # another user's folder
        foreign.mkdir()
        shutil.copy(marker_file, foreign / workspace_module.STAGE_MARKER)
        os.chown(foreign, OTHER, OTHER)
        target = tmp_path / "target"  # a symlink named like a stage
        target.mkdir()
        shutil.copy(marker_file, target / workspace_module.STAGE_MARKER)
        (target / "keep.txt").write_text("keep\n")
        link = tmp / f"{prefix}-link"
        link.symlink_to(target)
        unmarked = tmp / f"{prefix}-unmarked"  # no marker: not known to be ours
        unmarked.mkdir()
        linked_marker = tmp / f"{prefix}-linked-marker"  # the marker itself a symlink
        linked_marker.mkdir()
        (linked_marker / workspace_module.STAGE_MARKER).symlink_to(marker_file)
        decoys = [foreign, link, unmarked, linked_marker]
        live = workspace_module.make_stage(60)  # this process's own: alive

        findings, _ = rerun(load_answer("no_report"), EXPERIMENTS / "no_report" / "answer.txt")
        assert rules_of(findings) == ["R807"]
        assert not os.path.lexists(stage), "the killed auditor's stage was not removed"
        assert all(os.path.lexists(d) for d in decoys), [d for d in decoys if not os.path.lexists(d)]
        assert (target / "keep.txt").exists() and live.is_dir()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for decoy in decoys:
            if decoy.is_symlink():
                decoy.unlink()
            else:
                shutil.rmtree(decoy, ignore_errors=True)
        for leftover in _stages_of(child.pid):
            shutil.rmtree(leftover, ignore_errors=True)
        if live is not None:
            workspace_module.remove_copy(live)
        shutil.rmtree(private_tmp, ignore_errors=True)
