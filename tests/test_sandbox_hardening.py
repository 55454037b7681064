"""The rerun sandbox, round two: keyring, syscalls, memory outside RLIMIT_AS, the host uid, exit codes.

Each test runs a hostile script through the real sandbox (it writes the script
into a fresh workspace; none imports torch, so each run takes about a second)
and checks the behaviour first, so that it fails on a sandbox without the
defence, then the run's :class:`~auditor.rerun.sandbox.Confinement`.

Skipped only where bubblewrap is missing and the CI variable is not set; the
cgroup tests also where this host gives the auditor no cgroup (the run then
records "memory cap: RLIMIT_AS only"), the keyring test where the test itself
may not add a key.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import MiB, load_answer, needs_bubblewrap, sandbox_findings

from auditor.options.models import AuditOptions, RerunOptions
from auditor.rerun import cgroup, run_and_compare, sandbox, seccomp

pytestmark = [needs_bubblewrap, pytest.mark.usefixtures("warm_sandbox")]


@pytest.fixture
def outcomes(monkeypatch: pytest.MonkeyPatch) -> list:
    """The :class:`Outcome` of every sandbox run the test makes."""
    seen: list = []
    real = sandbox.run

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        outcome = real(*args, **kwargs)
        seen.append(outcome)
        return outcome

    monkeypatch.setattr(sandbox, "run", spy)
    return seen


def run_script(tmp_path: Path, source: str, *, data: object = None, args: str = "", **overrides):
    """Rerun ``source`` as ``python3 hostile.py [args]``, with ``data`` in data.json beside it."""
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    (workspace / "hostile.py").write_text(textwrap.dedent(source))
    files = ["hostile.py"]
    if data is not None:
        (workspace / "data.json").write_text(json.dumps(data))
        files.append("data.json")
    document = load_answer("no_report")
    document.update(how_to_run=f"python3 hostile.py {args}".strip(), files=files)
    overrides.setdefault("device", "cpu")
    overrides.setdefault("timeout", 30)
    overrides.setdefault("use_cache", False)  # every test runs the sandbox (the cache: test_rerun_cache.py)
    return sandbox_findings(
        run_and_compare(document, str(workspace / "answer.txt"), RerunOptions(**overrides), AuditOptions())
    )


def printed(findings: list) -> dict:
    """The JSON object the script printed last (R807 quotes the output tail)."""
    assert [f.rule for f in findings] == ["R807"], [f.to_dict() for f in findings]
    return json.loads(findings[0].message.rsplit("\n", 1)[1])


def cgroup_or_skip() -> None:
    made = cgroup.create(256 * MiB, 64)
    made.close()
    if made.version is None:
        pytest.skip(f"this host gives the auditor no cgroup: {made.note}")


def leftover_cgroups() -> list[str]:
    """Run cgroups of this process still present in any hierarchy."""
    tag = f"auditor-rerun-{os.getpid()}-"
    found = []
    for folder, dirnames, _ in os.walk(cgroup.CGROUP_ROOT):
        found += [os.path.join(folder, d) for d in dirnames if d.startswith(tag)]
        dirnames[:] = [d for d in dirnames if not d.startswith(tag) and folder.count("/") < 8]
    return found


# -- 1. the host's session keyring ------------------------------------------------------------

KEYCTL, ADD_KEY = (250, 248) if platform.machine() == "x86_64" else (219, 217)
KEY_SPEC_SESSION_KEYRING = -3
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_REVOKE, KEYCTL_READ = 1, 3, 11

KEYRING_PROBE = """
    import ctypes, errno, json, platform
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    KEYCTL, ADD_KEY = (250, 248) if platform.machine() == "x86_64" else (219, 217)
    serial, description = json.load(open("data.json"))

    def call(*args):
        result = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
        return result if result >= 0 else "refused: " + errno.errorcode.get(ctypes.get_errno(), "?")

    def read(command, key):
        buffer = ctypes.create_string_buffer(4096)
        result = call(KEYCTL, command, key, buffer, 4096)
        return result if isinstance(result, str) else "READ " + buffer.raw[:result].decode("latin-1")

    seen = {
        "read key": read(11, serial),
        "read session keyring": read(11, -3),
        "describe key": read(6, serial),
        "update key": call(KEYCTL, 2, serial, b"overwritten", 11),
        "add to session": call(ADD_KEY, b"user", description.encode(), b"overwritten", 11, -3),
        "link into own keyring": call(KEYCTL, 8, serial, -2),
        "join by name": call(KEYCTL, 1, b"_ses"),
        "setperm": call(KEYCTL, 5, serial, 0x3F3F3F3F),
    }
    try:
        seen["proc keys"] = open("/proc/keys").read()
    except OSError as exc:
        seen["proc keys"] = "refused: " + str(exc.strerror)
    print(json.dumps(seen))
"""


@pytest.fixture
def host_key() -> Iterator[tuple[int, str, bytes]]:
    """A user key in this process's (fresh) session keyring: (serial, description, payload)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    # Our own anonymous session keyring first: the key must not land in a keyring shared with other
    # processes of this host session.  Threads do not share it; the rerun is started from this one.
    if libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING), None) < 0:
        pytest.skip(f"keyctl is refused to the tests here (errno {ctypes.get_errno()})")
    description = f"auditor-test-{uuid.uuid4().hex}"
    payload = f"host-secret-{uuid.uuid4().hex}".encode()
    serial = libc.syscall(
        ctypes.c_long(ADD_KEY),
        b"user",
        description.encode(),
        payload,
        ctypes.c_long(len(payload)),
        ctypes.c_long(KEY_SPEC_SESSION_KEYRING),
    )
    if serial < 0:
        pytest.skip(f"add_key is refused to the tests here (errno {ctypes.get_errno()})")
    try:
        yield serial, description, payload
    finally:
        libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(KEYCTL_REVOKE), ctypes.c_long(serial))


def read_key(serial: int) -> bytes:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    buffer = ctypes.create_string_buffer(4096)
    size = libc.syscall(
        ctypes.c_long(KEYCTL), ctypes.c_long(KEYCTL_READ), ctypes.c_long(serial), buffer, ctypes.c_long(4096)
    )
    assert size >= 0, ctypes.get_errno()
    return buffer.raw[:size]


def test_host_session_keyring_is_out_of_reach(tmp_path: Path, host_key: tuple, outcomes: list) -> None:
    serial, description, payload = host_key
    findings, record = run_script(tmp_path, KEYRING_PROBE, data=[serial, description])
    said = json.dumps([f.to_dict() for f in findings]) + json.dumps(record)
    assert payload.decode() not in said, "the sandbox read the auditor's key"
    assert read_key(serial) == payload, "the sandbox rewrote the auditor's key"
    seen = printed(findings)
    for what in (
        "read key",
        "read session keyring",
        "describe key",
        "update key",
        "add to session",
        "link into own keyring",
        "join by name",
        "setperm",
    ):
        assert str(seen[what]).startswith("refused"), (what, seen)
    assert description not in seen["proc keys"], seen["proc keys"]  # not even its name
    confinement = outcomes[-1].confinement
    assert confinement.keyring == "fresh" and confinement.syscall_filter is True


# -- 1b. the syscall filter -------------------------------------------------------------------------

SYSCALL_PROBE = """
    import ctypes, errno, json, os, platform, socket, subprocess, threading
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    x86 = platform.machine() == "x86_64"
    NR = {"io_uring_setup": 425, "userfaultfd": 323 if x86 else 282, "bpf": 321 if x86 else 280,
          "perf_event_open": 298 if x86 else 241, "personality": 135 if x86 else 92,
          "unshare": 272 if x86 else 97, "mount": 165 if x86 else 40, "setns": 308 if x86 else 268,
          "ptrace": 101 if x86 else 117, "clone3": 435, "init_module": 175 if x86 else 105}

    def call(name, *args):
        result = libc.syscall(ctypes.c_long(NR[name]), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
        return "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")

    attr = ctypes.create_string_buffer(128)
    params = ctypes.create_string_buffer(120)
    seen = {
        "io_uring_setup": call("io_uring_setup", 4, params),
        "userfaultfd": call("userfaultfd", 1),  # UFFD_USER_MODE_ONLY: allowed to anyone without a filter
        "bpf": call("bpf", 0, attr, 128),
        "perf_event_open": call("perf_event_open", attr, 0, -1, -1, 0),
        "personality ADDR_NO_RANDOMIZE": call("personality", 0x0040000),
        "unshare CLONE_NEWUSER": call("unshare", 0x10000000),
        "mount": call("mount", b"none", b"/tmp", b"tmpfs", 0, None),
        "setns": call("setns", -1, 0),
        "ptrace": call("ptrace", 16, 1, 0, 0),
        "init_module": call("init_module", None, 0, b""),
        "personality query": call("personality", 0xFFFFFFFF),
    }
    families = {"AF_NETLINK/NETFILTER": (16, socket.SOCK_RAW, 12), "AF_NETLINK/AUDIT": (16, socket.SOCK_RAW, 9),
                "AF_NETLINK/KOBJECT_UEVENT": (16, socket.SOCK_DGRAM, 15),
                "AF_NETLINK/GENERIC": (16, socket.SOCK_RAW, 16), "AF_NETLINK/SOCK_DIAG": (16, socket.SOCK_RAW, 4),
                "AF_NETLINK/ROUTE": (16, socket.SOCK_RAW, 0), "AF_PACKET": (17, socket.SOCK_RAW),
                "AF_BLUETOOTH": (31, socket.SOCK_STREAM), "AF_VSOCK": (40, socket.SOCK_STREAM),
                "AF_ALG": (38, socket.SOCK_SEQPACKET), "AF_KEY": (15, socket.SOCK_RAW),
                "AF_UNIX": (1, socket.SOCK_STREAM), "AF_INET": (2, socket.SOCK_STREAM),
                "AF_INET6": (10, socket.SOCK_DGRAM)}
    for name, (family, kind, *protocol) in families.items():
        try:
            socket.socket(family, kind, *protocol).close()
            seen[name] = "ok"
        except OSError as exc:
            seen[name] = errno.errorcode.get(exc.errno, "?")
    # What an experiment needs keeps working: threads (clone3 falls back to clone), processes.
    box = []
    thread = threading.Thread(target=box.append, args=(1,))
    thread.start(); thread.join()
    seen["thread"] = "ok" if box else "failed"
    seen["subprocess"] = subprocess.run(["true"]).returncode
    seen["posix_spawn"] = os.waitpid(os.posix_spawn("/bin/true", ["true"], {}), 0)[1]
    seen["interfaces"] = [name for _, name in socket.if_nameindex()]  # glibc: NETLINK_ROUTE
    print(json.dumps(seen))
"""


def test_dangerous_syscalls_and_socket_families_are_refused(tmp_path: Path, outcomes: list) -> None:
    findings, _ = run_script(tmp_path, SYSCALL_PROBE)
    seen = printed(findings)
    for family in ("AF_PACKET", "AF_BLUETOOTH", "AF_VSOCK", "AF_ALG", "AF_KEY"):
        assert seen[family] == "EAFNOSUPPORT", (family, seen)
    for protocol in ("NETFILTER", "AUDIT", "KOBJECT_UEVENT", "GENERIC", "SOCK_DIAG"):
        assert seen[f"AF_NETLINK/{protocol}"] == "EPROTONOSUPPORT", (protocol, seen)
    assert seen["io_uring_setup"] == "ENOSYS", seen  # so that libraries fall back to plain I/O
    for call in (
        "userfaultfd",
        "bpf",
        "perf_event_open",
        "personality ADDR_NO_RANDOMIZE",
        "unshare CLONE_NEWUSER",
        "mount",
        "setns",
        "ptrace",
        "init_module",
    ):
        assert seen[call] == "EPERM", (call, seen)
    assert seen["personality query"] == "ok"
    # What torch.distributed (gloo) and glibc's getifaddrs need: NETLINK_ROUTE, which lists the loopback alone.
    for family in ("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK/ROUTE"):
        assert seen[family] == "ok", (family, seen)
    assert seen["interfaces"] == ["lo"], seen
    assert seen["thread"] == "ok" and seen["subprocess"] == 0 and seen["posix_spawn"] == 0, seen
    assert outcomes[-1].confinement.syscall_filter is True


def test_syscall_numbers_match_the_kernel_headers() -> None:
    headers = {0: Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"), 1: Path("/usr/include/asm-generic/unistd.h")}
    checked = 0
    for column, header in headers.items():
        if not header.exists():
            continue
        defined = dict(re.findall(r"#define __NR3?2?_?([a-z0-9_]+)\s+(\d+)\b", header.read_text()))
        for name, numbers in seccomp.SYSCALLS.items():
            if numbers[column] is not None and name in defined:
                assert int(defined[name]) == numbers[column], (header.name, name)
                checked += 1
    if not checked:
        pytest.skip("no kernel headers here")


def test_foreign_abi_syscalls_kill_the_process() -> None:
    """x32 calls on x86_64 (and any other ABI) bypass the x86_64 numbers: the filter kills them."""
    if seccomp.host_arch() != "x86_64":
        pytest.skip("x32 exists on x86_64 only")
    code = textwrap.dedent(f"""
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        program = bytes.fromhex("{seccomp.build().hex()}")
        class Prog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
        assert libc.prctl(38, 1, 0, 0, 0) == 0
        assert libc.prctl(22, 2, ctypes.byref(Prog(len(program) // 8, program)), 0, 0) == 0
        print("filtered", flush=True)
        libc.syscall(0x40000000 | 39)  # x32 getpid
        print("survived", flush=True)
    """)
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=30, check=False)
    assert done.stdout == "filtered\n" and done.returncode == -signal.SIGSYS, (done.returncode, done.stdout)


# -- 4. memory the address-space limit does not see ---------------------------------------------------

MEMFD_BOMB = """
    import json, os, sys, time
    held, start = [], time.monotonic()
    try:
        for i in range(3):
            fd = os.memfd_create("bomb")
            for _ in range(256):
                os.write(fd, b"m" * (1 << 20))
            held.append(fd)
            print("memfd %d: 256 MiB" % i, flush=True)
    except OSError as exc:
        print("refused: " + str(exc), flush=True)
    print(json.dumps({"survived": True, "memfd_mib": 256 * len(held), "seconds": time.monotonic() - start}))
"""


def test_memfd_beyond_the_memory_cap_is_stopped(tmp_path: Path, outcomes: list) -> None:
    cgroup_or_skip()
    findings, record = run_script(tmp_path, MEMFD_BOMB, memory_bytes=256 * MiB, disk_bytes=16 * MiB)
    message = findings[0].message
    assert '"survived": true' not in message, "3 x 256 MiB of memfd passed a 256 MiB memory cap"
    assert [f.rule for f in findings] == ["R803"] and record["signal"] == "SIGKILL" and not record["timed_out"]
    assert "memfd 1" not in message  # stopped within the second 256 MiB
    confinement = outcomes[-1].confinement
    assert confinement.oom_kills >= 1 and confinement.cgroup in ("v1", "v2")
    assert confinement.memory_total_bytes < 512 * MiB  # 256 MiB, the small tmpfs, headroom
    assert confinement.memory_peak_bytes is None or confinement.memory_peak_bytes <= confinement.memory_total_bytes
    assert leftover_cgroups() == []


MANY_FILES = """
    import json, os, sys, time
    os.mkdir("many")
    count, start = 0, time.monotonic()
    try:
        while count < 400000:  # some 400 MiB of inodes and dentries at no --disk cost
            os.close(os.open("many/%d" % count, os.O_CREAT | os.O_WRONLY, 0o600))
            count += 1
            if count % 10000 == 0:
                print("files: %d" % count, flush=True)
    except OSError as exc:
        print("refused: " + str(exc), flush=True)
    print(json.dumps({"survived": True, "files": count, "seconds": time.monotonic() - start}))
"""


def test_many_empty_files_are_stopped_by_the_memory_cap(tmp_path: Path, outcomes: list) -> None:
    cgroup_or_skip()
    findings, record = run_script(tmp_path, MANY_FILES, memory_bytes=32 * MiB, disk_bytes=1 * MiB, timeout=60)
    message = findings[0].message
    assert '"survived": true' not in message, "400,000 empty files passed a 1 MiB disk cap"
    counts = [int(n) for n in re.findall(r"files: (\d+)", message)]
    confinement = outcomes[-1].confinement
    assert counts and max(counts) * 500 < confinement.memory_total_bytes, counts[-1:]  # about 1 KiB each
    assert [f.rule for f in findings] == ["R803"] and record["signal"] == "SIGKILL" and not record["timed_out"]
    assert confinement.oom_kills >= 1
    assert leftover_cgroups() == []


def test_processes_and_open_files_are_capped_in_the_cgroup(tmp_path: Path, outcomes: list) -> None:
    cgroup_or_skip()
    probe = """
        import json, resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard * 4, hard * 4))
            raised = "raised"
        except (ValueError, OSError) as exc:
            raised = "refused"
        print(json.dumps({"nofile": [soft, hard], "raise": raised,
                          "oom_score_adj": open("/proc/self/oom_score_adj").read().strip()}))
    """
    seen = printed(run_script(tmp_path, probe, max_processes=64)[0])
    assert seen["nofile"] == [1024, 1024] and seen["raise"] == "refused", seen
    assert seen["oom_score_adj"] == "1000"  # at the memory cap the kernel kills the experiment, not its supervisor
    confinement = outcomes[-1].confinement
    assert confinement.processes_cap == 64 + sandbox.LAUNCHER_TASKS and confinement.open_files == 1024
    assert leftover_cgroups() == []


def test_without_a_cgroup_the_run_says_its_memory_cap_is_rlimit_as_only(
    tmp_path: Path, outcomes: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cgroup, "_mounts", dict)
    findings, record = run_script(tmp_path, "print('{}')\n")
    assert [f.rule for f in findings] == ["R807"] and record["exit_code"] == 0
    confinement = outcomes[-1].confinement
    assert confinement.cgroup is None and confinement.memory_total_bytes is None
    assert confinement.note.startswith("memory cap: RLIMIT_AS only"), confinement.note


def test_cgroup_v2_is_made_in_a_delegated_subtree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A v2 host (a fake tree here): the run's cgroup goes beside the auditor's, where the controllers are on."""
    mount = tmp_path / "cgroup2"
    own = mount / "user.slice" / "user@1000.service" / "app.slice" / "terminal.scope"
    own.mkdir(parents=True)
    (own.parent / "cgroup.subtree_control").write_text("cpu memory pids\n")
    (own / "cgroup.subtree_control").write_text("")
    (own / "cgroup.procs").write_text(f"{os.getpid()}\n")
    monkeypatch.setattr(cgroup, "_mounts", lambda: {"cgroup2": (str(mount), "/")})
    monkeypatch.setattr(cgroup, "_own_path", lambda *_: "/user.slice/user@1000.service/app.slice/terminal.scope")
    monkeypatch.setattr(cgroup, "REMOVE_SECONDS", 0.05)
    made = cgroup.create(300 * MiB, 66)
    assert made.version == "v2" and Path(made.memory_dir).parent == own.parent
    assert (Path(made.memory_dir) / "memory.max").read_text() == str(300 * MiB)
    assert (Path(made.pids_dir) / "pids.max").read_text() == "66"
    assert made.memory_cap_bytes == 300 * MiB and made.processes_cap == 66
    wrapped = made.wrap(["/bin/true"])
    assert wrapped[-2:] == ["--", "/bin/true"]
    # The first process dies with the auditor from its first instruction, and refuses to run
    # when the auditor died before that (its parent is then no longer the auditor's pid).
    assert wrapped[:3] == [shutil.which("setpriv", path="/usr/bin:/bin"), "--pdeathsig", "KILL"]
    assert str(os.getpid()) in wrapped and '[ "$PPID" = "$1" ] || exit 125' in " ".join(wrapped)
    made.close()


def test_cgroups_of_dead_auditors_are_swept(tmp_path: Path) -> None:
    """An auditor killed by SIGKILL cannot remove its run's cgroup: the next run beside it does."""
    dead = 4194304 + 17  # above any pid_max: no such process
    names = {
        "stale": f"auditor-rerun-{dead}-0badcafe",
        "fresh": f"auditor-rerun-{dead}-0000beef",
        "alive": f"auditor-rerun-{os.getpid()}-feedf00d",
        "foreign": "someone-else",
    }
    for key, name in names.items():
        (tmp_path / name).mkdir()
        if key != "fresh":
            os.utime(tmp_path / name, (1, 1))
    cgroup._sweep(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(v for k, v in names.items() if k != "stale")


def test_cgroup_paths_under_a_mount_of_a_subtree() -> None:
    """A container's view of a v1 hierarchy mounted from /docker/<id>: the run goes under the mount."""
    assert cgroup._under_mount("/sys/fs/cgroup/memory", "/docker/abc", "/docker/abc/job") == "/sys/fs/cgroup/memory/job"
    assert cgroup._under_mount("/sys/fs/cgroup/memory", "/", "/job") == "/sys/fs/cgroup/memory/job"
    assert cgroup._under_mount("/sys/fs/cgroup/memory", "/docker/abc", "/elsewhere") == "/sys/fs/cgroup/memory"
    assert cgroup._under_mount("/sys/fs/cgroup/memory", "/", "/../x") == "/sys/fs/cgroup/memory"


# -- 5. the sandbox user is nobody's uid on the host ----------------------------------------------------

READER = """
    import json, os
    seen = {"uid": os.getuid(), "gid": os.getgid()}
    for path in json.load(open("data.json")):
        try:
            seen[path] = "READ " + open(path).read()
        except OSError as exc:
            seen[path] = "refused: " + str(exc.strerror)
    with open("own.txt", "w") as f:  # its own copy of the workspace stays writable
        f.write("mine")
    seen["own copy"] = open("own.txt").read()
    print(json.dumps(seen))
"""


def test_files_of_the_host_nobody_user_stay_unreadable(tmp_path: Path, host_dir: Path, outcomes: list) -> None:
    if os.geteuid() != 0:
        pytest.skip("as another user the experiment runs as that user (see the README)")
    secret = f"nobody-secret-{uuid.uuid4().hex}"
    owned = host_dir / "nobody-owned"
    grouped = host_dir / "nogroup-owned"
    for path, mode, owner in ((owned, 0o600, (65534, 0)), (grouped, 0o060, (0, 65534))):
        path.write_text(secret)
        os.chown(path, *owner)
        os.chmod(path, mode)
    findings, record = run_script(tmp_path, READER, data=[str(owned), str(grouped)])
    seen = printed(findings)
    assert secret not in json.dumps([f.to_dict() for f in findings]) + json.dumps(record), "a nobody-owned file leaked"
    assert seen[str(owned)].startswith("refused") and seen[str(grouped)].startswith("refused"), seen
    assert seen["own copy"] == "mine"
    confinement = outcomes[-1].confinement
    assert (seen["uid"], seen["gid"]) == (confinement.sandbox_uid, confinement.sandbox_uid)
    low, high = sandbox.HOST_ID_RANGE
    assert low <= confinement.host_uid <= high and confinement.host_uid != 65534


def test_host_ids_are_unused_here() -> None:
    import grp
    import pwd

    ids = {sandbox.pick_host_id() for _ in range(20)}
    assert len(ids) > 1  # fresh per run
    for number in ids:
        with pytest.raises(KeyError):
            pwd.getpwuid(number)
        with pytest.raises(KeyError):
            grp.getgrgid(number)


# -- 8. exit codes are not signals ------------------------------------------------------------------------


def test_exit_code_153_is_not_reported_as_sigxfsz(tmp_path: Path) -> None:
    findings, record = run_script(tmp_path, "import sys\nprint('leaving with 153')\nsys.exit(153)\n")
    assert record["signal"] is None and record["exit_code"] == 153, record
    assert [f.rule for f in findings] == ["R803"] and "exited with code 153" in findings[0].message
    assert "SIGXFSZ" not in findings[0].message


def test_a_real_signal_is_still_reported(tmp_path: Path) -> None:
    findings, record = run_script(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n")
    assert record["signal"] == "SIGTERM" and record["exit_code"] is None, record
    assert [f.rule for f in findings] == ["R803"] and "killed by SIGTERM" in findings[0].message


def test_cuda_binds_only_the_nodes_cuda_needs(monkeypatch) -> None:
    """--device cuda exposes the control node, unified memory and the GPUs, not profiling or admin nodes."""
    from auditor.rerun import device

    present = [
        "/dev/nvidiactl",
        "/dev/nvidia-uvm",
        "/dev/nvidia-uvm-tools",
        "/dev/nvidia0",
        "/dev/nvidia1",
        "/dev/nvidia-modeset",
        "/dev/nvidia-caps",
        "/dev/nvidia-nvswitch0",
    ]
    monkeypatch.setattr(device.glob, "glob", lambda pattern: list(present))
    assert device.gpu_device_nodes() == ("/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl")


def _supervise(tmp_path: Path, *, auditor_alive: bool) -> tuple[int, bool, bytes]:
    """Run the sandbox's supervisor (as the sandbox runs it, without bubblewrap) on a command that
    leaves a file; with the auditor "dead" nobody holds the report pipe's read end."""
    from auditor.rerun.spec import SUPERVISOR

    marker = tmp_path / "experiment-ran"
    read_end, write_end = os.pipe()
    config = {
        "stage": str(tmp_path),
        "work": str(tmp_path),
        "report_fd": write_end,
        "report_name": "report.json",
        "max_report_bytes": MiB,
        "uid": None,
        "gid": None,
        "memory_resource": "AS",
        "memory_bytes": 4096 * MiB,
        "max_file_bytes": 16 * MiB,
        "max_open_files": 256,
        "max_processes": 0,
        "keyctl": None,
    }
    command = [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]
    if not auditor_alive:
        os.close(read_end)  # as the kernel closes it when the auditor is killed
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", SUPERVISOR, json.dumps(config), "--", *command],
            pass_fds=(write_end,),
            capture_output=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    said = b""
    if auditor_alive:
        with os.fdopen(read_end, "rb") as channel:
            said = channel.read()
    return done.returncode, marker.exists(), said


def test_an_experiment_nobody_watches_is_never_started(tmp_path: Path) -> None:
    """An auditor killed before bubblewrap's child set its parent-death signal leaves nothing to kill
    the sandbox; its supervisor finds the report pipe without a reader and never starts the experiment."""
    code, ran, _ = _supervise(tmp_path, auditor_alive=False)
    assert (code, ran) == (125, False)


def test_a_watched_experiment_runs_and_is_reported(tmp_path: Path) -> None:
    code, ran, said = _supervise(tmp_path, auditor_alive=True)
    assert (code, ran) == (0, True)
    assert said.startswith(b"AUDITOR-STARTED keyring=") and b"AUDITOR-EXIT code 0" in said
