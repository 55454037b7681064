"""The first process inside the sandbox: prepares the copy, drops privileges, runs the experiment.

This file is not imported by the auditor: its source is handed to the
*chosen* interpreter (``python -I -S -c``), inside bubblewrap, so it may use
the standard library only and must run on any Python 3.8+.  Its steps:

1. copy the workspace from the read-only staging folder into the run's
   size-capped tmpfs (the experiment never writes to a host disk);
2. when the sandbox was entered as root, hand the copy to the unprivileged
   sandbox user and switch to it (no capabilities left, so ``RLIMIT_NPROC``
   applies and root-only host files stay unreadable);
3. set the limits (memory, process count, file size, open files, no core
   dumps);
4. leave the session keyring it inherited for a fresh, empty one of its own
   (the auditor's keys stay out of reach; the sandbox's syscall filter lets
   exactly this keyring call through);
5. run the experiment as a child, first in line for the kernel's OOM killer,
   and wait for it; when it ends the sandbox ends, and every process it left
   behind is killed with the pid namespace;
6. say how the child ended and send the report the experiment wrote through a
   pipe to the auditor (the copy disappears with the sandbox), then exit with
   the child's status (128 + N when a signal N killed it).

Everything it says to the auditor goes through that pipe: ``AUDITOR-STARTED
keyring=<state>`` once the sandbox is ready (when that cannot be written, the
auditor is gone, and the experiment is not started), ``AUDITOR-EXIT code N`` or
``AUDITOR-EXIT signal N`` when the experiment ended (so that an exit code of
153 is not taken for SIGXFSZ), then a header line ``AUDITOR-REPORT <status>``
followed by the report's bytes; or only ``AUDITOR-SETUP <error>`` when the
sandbox itself could not be prepared.

With a ``probe`` in the config (the experiment runs under the auditor's probe,
:mod:`auditor.rerun.probe`), the supervisor reads the probe's source from the
pipe the auditor passed (``source_fd``, closed at once), makes a fresh random
key and two pipes for the experiment: one holding the probe's source and then
the key (the command's fixed bootstrap reads the source and runs it; the probe
reads the key and closes the pipe before the script starts), and one for the
probe's signed record.  After the
experiment it checks that record (exactly one line, signed with the key) and
says ``AUDITOR-ACTIVITY <json>`` (between EXIT and REPORT): ``{"status": "ok",
"record": {...}}``, or ``"missing"``/``"invalid"`` with ``why``.
"""

import hashlib
import hmac
import json
import os
import resource
import shutil
import stat
import sys

SETUP_FAILED = 125
ACTIVITY_MAX_BYTES = 64 * 1024  # the probe's record is a few KiB; more is the script's doing


def main() -> None:
    config = json.loads(sys.argv[1])
    command = sys.argv[3:]  # after the "--" separator
    channel = os.fdopen(config["report_fd"], "wb", buffering=0)
    try:
        _not_dumpable()
        if config["stage"] != config["work"]:
            _copy_tree(config["stage"], config["work"])
        if config["uid"] is not None:
            _hand_over(config["work"], config["uid"], config["gid"])
        _set_limits(config)
        if config["uid"] is not None:
            _drop_privileges(config["uid"], config["gid"])
        keyring = _fresh_keyring(config.get("keyctl"))
        os.chdir(config["work"])
        os.set_inheritable(channel.fileno(), False)
        probe = _Probe(config["probe"]) if config.get("probe") is not None else None
    except Exception as exc:  # noqa: BLE001 -- any failure here is the sandbox's, not the experiment's
        _send(channel, f"AUDITOR-SETUP {type(exc).__name__}: {exc}", b"")
        os._exit(SETUP_FAILED)
    if not _send(channel, "AUDITOR-STARTED keyring=" + keyring, b"", close=False):
        # Nobody holds the pipe's read end: the auditor is gone.  It may have been killed before
        # bubblewrap's child set its parent-death signal, which nothing else then delivers;
        # an experiment nobody watches (no timeout, no comparison) is never started.
        os._exit(SETUP_FAILED)
    status = _run(command, probe)
    if os.WIFSIGNALED(status):
        _send(channel, f"AUDITOR-EXIT signal {os.WTERMSIG(status)}", b"", close=False)
    else:
        _send(channel, f"AUDITOR-EXIT code {_exit_code(status)}", b"", close=False)
    if probe is not None:
        _send(channel, "AUDITOR-ACTIVITY " + json.dumps(probe.verdict()), b"", close=False)
    _export_report(channel, os.path.join(config["work"], config["report_name"]), config["max_report_bytes"])
    os._exit(_exit_code(status))


def _not_dumpable() -> None:
    """Keep the experiment (same uid) out of /proc/<this>/fd: the report pipe is ours."""
    _set_dumpable(0)


def _set_dumpable(value: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, value, 0, 0, 0)  # PR_SET_DUMPABLE
    except Exception:  # noqa: BLE001, S110 -- best effort: no ctypes, no prctl
        pass


def _first_for_the_oom_killer() -> None:
    """In the child: the experiment, not its supervisor, is the one the kernel kills at a memory cap.

    Raising one's own oom_score_adj needs no privilege, but /proc/self of a
    non-dumpable process belongs to root: the child (about to exec, which
    makes it dumpable anyway) becomes dumpable first.
    """
    _set_dumpable(1)
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    except OSError:
        pass


def _copy_tree(source: str, target: str) -> None:
    for folder, dirnames, filenames in os.walk(source):
        relative = os.path.relpath(folder, source)
        here = target if relative == "." else os.path.join(target, relative)
        os.makedirs(here, exist_ok=True)
        for name in filenames:
            path = os.path.join(folder, name)
            if stat.S_ISREG(os.lstat(path).st_mode):
                shutil.copyfile(path, os.path.join(here, name), follow_symlinks=False)
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(folder, d))]


def _hand_over(work: str, uid: int, gid: int) -> None:
    # Bottom up: root here has no DAC override, so a folder stays open to it
    # only while root still owns it.
    for folder, dirnames, filenames in os.walk(work, topdown=False):
        for name in dirnames + filenames:
            os.lchown(os.path.join(folder, name), uid, gid)
    os.lchown(work, uid, gid)


def _set_limits(config: dict) -> None:
    memory = config["memory_bytes"]
    resource.setrlimit(getattr(resource, "RLIMIT_" + config["memory_resource"]), (memory, memory))
    resource.setrlimit(resource.RLIMIT_FSIZE, (config["max_file_bytes"], config["max_file_bytes"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    files = config.get("max_open_files") or hard
    files = files if hard == resource.RLIM_INFINITY else min(files, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
    if config["max_processes"]:
        resource.setrlimit(resource.RLIMIT_NPROC, (config["max_processes"], config["max_processes"]))


def _drop_privileges(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    try:
        os.setuid(0)
    except OSError:
        return
    raise RuntimeError(f"root could be regained after dropping to uid {uid}")


def _fresh_keyring(keyctl) -> str:
    """keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL): an anonymous, empty session keyring, ours alone.

    Returns "fresh", or why not (the keys inherited from the auditor then stay
    attached, but the sandbox's syscall filter refuses every other keyring call).
    """
    if keyctl is None:
        return "unchanged:unknown-architecture"
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        serial = libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(1), ctypes.c_void_p(None))
    except Exception as exc:  # noqa: BLE001 -- no ctypes in this interpreter
        return "unchanged:" + type(exc).__name__
    if serial >= 0:
        return "fresh"
    import errno

    return "unchanged:" + errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


class _Probe:
    """The key and the two pipes the probe gets, and the check of what it wrote."""

    def __init__(self, config: dict) -> None:
        source = _read_all(config["source_fd"])
        self.key = os.urandom(32)
        self.token_read, token_write = os.pipe()
        # As auditor.rerun.probe.key_pipe_bytes: the source's length, the source, the key.
        payload = b"%08d" % len(source) + source + self.key
        os.set_blocking(token_write, False)  # a pipe too small for it fails the setup, never hangs it
        try:
            written = os.write(token_write, payload)
        except BlockingIOError:
            written = 0
        os.close(token_write)  # the bootstrap reads the source, the probe the key, then end of file
        if written != len(payload):
            raise RuntimeError(f"the probe's {len(payload)} bytes do not fit in a pipe")
        self.record_read, self.record_write = os.pipe()
        self.offset = int(config.get("offset") or 0)

    def child_env(self) -> dict:
        """In the child: the pipes stay open across exec, and the probe learns where they are."""
        os.set_inheritable(self.token_read, True)
        os.set_inheritable(self.record_write, True)
        os.close(self.record_read)
        env = dict(os.environ)
        env["AUDITOR_PROBE"] = f"{self.token_read},{self.record_write},{self.offset}"
        return env

    def started(self) -> None:
        """In the parent, once the child exists: only the child holds the key and the record's write end."""
        os.close(self.token_read)
        os.close(self.record_write)

    def verdict(self) -> dict:
        """What the probe said: read without blocking (a forked survivor may hold the pipe), then checked."""
        os.set_blocking(self.record_read, False)
        data = b""
        while len(data) <= ACTIVITY_MAX_BYTES:
            try:
                chunk = os.read(self.record_read, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            data += chunk
        os.close(self.record_read)
        if not data:
            return {"status": "missing", "why": "the experiment ended without the probe's record"}
        lines = data.split(b"\n")
        if len(lines) != 2 or lines[1]:
            return {"status": "invalid", "why": "the probe's channel held more than one record"}
        payload, _, mac = lines[0].rpartition(b"\t")
        expected = hmac.new(self.key, payload, hashlib.sha256).hexdigest().encode("ascii")
        if not hmac.compare_digest(mac, expected):
            return {"status": "invalid", "why": "the record on the probe's channel is not signed by the probe"}
        try:
            record = json.loads(payload.decode("utf-8"))
        except ValueError:
            return {"status": "invalid", "why": "the probe's record is not JSON"}
        return {"status": "ok", "record": record}


def _read_all(fd: int) -> bytes:
    """Everything on a pipe the auditor wrote and closed; the pipe is closed here (no child inherits it)."""
    data = b""
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return data
            data += chunk
    finally:
        os.close(fd)


def _run(command: list, probe) -> int:
    pid = os.fork()
    if pid == 0:
        _first_for_the_oom_killer()
        try:
            if probe is not None:
                os.execve(command[0], command, probe.child_env())
            os.execv(command[0], command)
        except OSError as exc:
            message = f"auditor sandbox: cannot execute {command[0]} as uid {os.getuid()}: {exc}\n"
            os.write(2, message.encode("utf-8", "replace"))
        os._exit(127)
    if probe is not None:
        probe.started()
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def _export_report(channel, path: str, limit: int) -> None:
    data = b""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        status = "not written"
    except OSError as exc:
        status = f"cannot be opened ({exc.strerror})"
    else:
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                status = "is not a regular file"
            elif info.st_size > limit:
                status = f"is {info.st_size} bytes, over the {limit}-byte limit"
            else:
                data = f.read(limit + 1)
                status = "ok" if len(data) <= limit else f"is over the {limit}-byte limit"
                data = data if status == "ok" else b""
    _send(channel, "AUDITOR-REPORT " + status, data)


def _send(channel, header: str, data: bytes, close: bool = True) -> bool:
    """Write a header line and its data to the auditor; False when it cannot be (the auditor is gone:
    the interpreter ignores SIGPIPE, so a pipe without a reader fails the write with EPIPE)."""
    message = header.replace("\n", " ").encode("utf-8", "replace") + b"\n" + data
    try:
        view = memoryview(message)
        while view:
            view = view[channel.write(view) :]
        if close:
            channel.close()
    except OSError:
        return False
    return True


if __name__ == "__main__":
    main()
