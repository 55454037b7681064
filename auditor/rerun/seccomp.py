"""The experiment's system-call filter: a hand-built classic BPF program for seccomp.

bubblewrap loads it (``--seccomp FD``) in the sandbox's first process just
before it runs the supervisor, after bubblewrap itself has set up the
namespaces and mounts it needs; the filter then holds for the supervisor and
everything the experiment starts (a seccomp filter is inherited and can never
be removed).  It is a deny list in the spirit of Flatpak's: everything an ML
experiment needs passes untouched, and these are refused:

* the kernel keyring (``keyctl``, ``add_key``, ``request_key``): a process
  possesses every key in the session keyring it inherited and could read or
  rewrite the auditor's.  The one call let through is
  ``keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)``, which only gives the caller a
  fresh, empty session keyring (the supervisor makes that call);
* large kernel attack surfaces an experiment does not need: ``io_uring_*``
  (ENOSYS, so libraries fall back to ordinary I/O), ``userfaultfd``, ``bpf``,
  ``perf_event_open``, ``ptrace``;
* ``personality`` other than a query or ``PER_LINUX`` (no ``ADDR_NO_RANDOMIZE``,
  no ``READ_IMPLIES_EXEC``);
* ``socket`` for address families other than ``AF_UNIX``, ``AF_INET`` and
  ``AF_INET6`` (packet, bluetooth, vsock, alg, key, ...), with EAFNOSUPPORT;
  and netlink but for ``NETLINK_ROUTE`` (EPROTONOSUPPORT): glibc's
  ``getifaddrs``/``if_nameindex`` need that one, and torch.distributed's gloo
  backend fails without it; in the sandbox's empty network namespace, where
  the experiment has no capability, it can only list the loopback interface.
  Netfilter, audit, uevents, generic netlink (nl80211, ...), xfrm, sock_diag
  and the others stay refused.  ``socketpair`` takes the same check: the kernel
  runs the family's create path for both sockets before the family can refuse
  the pair (only ``AF_UNIX`` makes one), so it would reach the same code;
* namespaces, mounts and the kernel's own administration: ``unshare`` and
  ``clone`` asking for a new namespace, ``setns``, ``mount``, ``umount2``,
  ``pivot_root``, ``chroot``, the new mount API (ENOSYS, like ``clone3``,
  whose flags a filter cannot read; C libraries fall back to ``clone``),
  modules, ``kexec``, ``reboot``, swap, ``acct``, ``syslog``, ``quotactl``,
  ``open_by_handle_at``, and on x86_64 ``iopl``, ``ioperm``, ``modify_ldt``
  and ``uselib``;
* ``ioctl(TIOCSTI)`` and ``ioctl(TIOCLINUX)`` (typing into a terminal).

Only x86_64 and aarch64 are known.  A system call made through another ABI
(32-bit x86 through ``int 0x80``, x32 on x86_64) kills the process: nothing
here would filter it.  On other host architectures :func:`filter_program`
returns None and the run records that no filter applied.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000

SECCOMP_RET_KILL_PROCESS = 0x80000000  # older kernels read it as SECCOMP_RET_KILL (the thread)
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
# (both known architectures are little-endian: an argument's low word comes first).
_NR, _ARCH = 0, 4


def _arg_low(index: int) -> int:
    return 16 + 8 * index


def _arg_high(index: int) -> int:
    return 16 + 8 * index + 4


# Classic BPF opcodes.
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

KEYCTL_JOIN_SESSION_KEYRING = 1
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
NETLINK_ROUTE = 0
PER_LINUX, PER_QUERY = 0, 0xFFFFFFFF
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET; unshare also takes NEWTIME
# (0x80, which in clone's flags is part of the exit signal instead).
CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
CLONE_NEWTIME = 0x00000080

# name: (x86_64 number, aarch64 number or None where the call does not exist)
SYSCALLS: dict[str, tuple[int, int | None]] = {
    "ioctl": (16, 29),
    "socket": (41, 198),
    "socketpair": (53, 199),
    "clone": (56, 220),
    "ptrace": (101, 117),
    "syslog": (103, 116),
    "uselib": (134, None),
    "personality": (135, 92),
    "vhangup": (153, 58),
    "modify_ldt": (154, None),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "acct": (163, 89),
    "mount": (165, 40),
    "umount2": (166, 39),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "reboot": (169, 142),
    "iopl": (172, None),
    "ioperm": (173, None),
    "init_module": (175, 105),
    "delete_module": (176, 106),
    "quotactl": (179, 60),
    "lookup_dcookie": (212, 18),
    "kexec_load": (246, 104),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "keyctl": (250, 219),
    "unshare": (272, 97),
    "perf_event_open": (298, 241),
    "open_by_handle_at": (304, 265),
    "setns": (308, 268),
    "finit_module": (313, 273),
    "kexec_file_load": (320, 294),
    "bpf": (321, 280),
    "userfaultfd": (323, 282),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "clone3": (435, 435),
    "mount_setattr": (442, 442),
}

EPERM_CALLS = (
    "add_key",
    "request_key",
    "userfaultfd",
    "bpf",
    "perf_event_open",
    "ptrace",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "syslog",
    "quotactl",
    "open_by_handle_at",
    "lookup_dcookie",
    "vhangup",
    "uselib",
    "iopl",
    "ioperm",
    "modify_ldt",
)
# ENOSYS: "not implemented here", so that callers fall back (liburing users to plain I/O,
# glibc from clone3 to clone, util-linux from the new mount API to mount(2)).
ENOSYS_CALLS = (
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "clone3",
    "open_tree",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
)
# Calls whose arguments decide: the label of their check below.
CHECKED_CALLS = ("keyctl", "socket", "socketpair", "personality", "clone", "unshare", "ioctl")
# socketpair(domain, type, protocol, sv) reads its family and protocol where socket() does.
SHARED_CHECKS = {"socketpair": "socket"}

ARCHES = {"x86_64": AUDIT_ARCH_X86_64, "aarch64": AUDIT_ARCH_AARCH64}
_MACHINES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


@dataclass(frozen=True)
class _Insn:
    code: int
    k: int = 0
    jt: str | None = None  # label, or None for the next instruction
    jf: str | None = None


class _Program:
    """A tiny assembler: instructions with jump labels, resolved to classic BPF offsets."""

    def __init__(self) -> None:
        self.insns: list[_Insn] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        assert name not in self.labels, name
        self.labels[name] = len(self.insns)

    def load(self, offset: int) -> None:
        self.insns.append(_Insn(_LD_W_ABS, offset))

    def jump(self, code: int, k: int, jt: str | None = None, jf: str | None = None) -> None:
        self.insns.append(_Insn(code, k, jt, jf))

    def ret(self, k: int) -> None:
        self.insns.append(_Insn(_RET_K, k))

    def assemble(self) -> bytes:
        out = []
        for index, insn in enumerate(self.insns):
            jt, jf = (self._offset(index, label) for label in (insn.jt, insn.jf))
            out.append(struct.pack("=HBBI", insn.code, jt, jf, insn.k & 0xFFFFFFFF))
        return b"".join(out)

    def _offset(self, index: int, label: str | None) -> int:
        if label is None:
            return 0
        offset = self.labels[label] - index - 1
        if not 0 <= offset <= 255:
            raise ValueError(f"seccomp filter: jump to {label} out of range ({offset})")
        return offset


def _errno(code: int) -> int:
    return SECCOMP_RET_ERRNO | (code & 0xFFFF)


def build(arches: tuple[str, ...] = ("x86_64", "aarch64")) -> bytes:
    """The filter as an array of ``struct sock_filter`` (8 bytes each, native byte order)."""
    p = _Program()
    p.load(_ARCH)
    for arch in arches:
        p.jump(_JEQ_K, ARCHES[arch], jt=f"arch_{arch}")
    p.ret(SECCOMP_RET_KILL_PROCESS)  # an ABI the filter does not know (i386, x32 below)
    for arch in arches:
        column = 0 if arch == "x86_64" else 1
        p.label(f"arch_{arch}")
        p.load(_NR)
        if arch == "x86_64":
            p.jump(_JGE_K, X32_SYSCALL_BIT, jt="kill")
        for name in (*CHECKED_CALLS, *EPERM_CALLS, *ENOSYS_CALLS):
            number = SYSCALLS[name][column]
            if number is None:
                continue
            target = (
                f"check_{SHARED_CHECKS.get(name, name)}"
                if name in CHECKED_CALLS
                else "eperm"
                if name in EPERM_CALLS
                else "enosys"
            )
            p.jump(_JEQ_K, number, jt=target)
        p.ret(SECCOMP_RET_ALLOW)

    p.label("check_keyctl")  # only keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL): a fresh, empty keyring
    p.load(_arg_low(0))
    p.jump(_JEQ_K, KEYCTL_JOIN_SESSION_KEYRING, jf="eperm")
    p.load(_arg_low(1))
    p.jump(_JEQ_K, 0, jf="eperm")
    p.load(_arg_high(1))
    p.jump(_JEQ_K, 0, jt="allow", jf="eperm")

    p.label("check_socket")  # and socketpair; int domain: the low word only, as the kernel reads it
    p.load(_arg_low(0))
    for family in (AF_UNIX, AF_INET, AF_INET6):
        p.jump(_JEQ_K, family, jt="allow")
    p.jump(_JEQ_K, AF_NETLINK, jf="eafnosupport")
    p.load(_arg_low(2))  # the netlink protocol
    p.jump(_JEQ_K, NETLINK_ROUTE, jt="allow")
    p.ret(_errno(errno.EPROTONOSUPPORT))

    p.label("check_personality")
    p.load(_arg_low(0))
    p.jump(_JEQ_K, PER_LINUX, jt="allow")
    p.jump(_JEQ_K, PER_QUERY, jt="allow", jf="eperm")

    p.label("check_clone")
    p.load(_arg_low(0))
    p.jump(_JSET_K, CLONE_NEW_ANY, jt="eperm", jf="allow")

    p.label("check_unshare")
    p.load(_arg_low(0))
    p.jump(_JSET_K, CLONE_NEW_ANY | CLONE_NEWTIME, jt="eperm", jf="allow")

    p.label("check_ioctl")  # the request is an unsigned int: compare the low word only (CVE-2019-10063)
    p.load(_arg_low(1))
    p.jump(_JEQ_K, TIOCSTI, jt="eperm")
    p.jump(_JEQ_K, TIOCLINUX, jt="eperm", jf="allow")

    p.label("allow")
    p.ret(SECCOMP_RET_ALLOW)
    p.label("eperm")
    p.ret(_errno(errno.EPERM))
    p.label("enosys")
    p.ret(_errno(errno.ENOSYS))
    p.label("eafnosupport")
    p.ret(_errno(errno.EAFNOSUPPORT))
    p.label("kill")
    p.ret(SECCOMP_RET_KILL_PROCESS)
    return p.assemble()


def host_arch() -> str | None:
    """The host's architecture among the known ones, else None."""
    return _MACHINES.get(platform.machine().lower())


def filter_program() -> bytes | None:
    """The filter for this host, or None where its architecture is not known."""
    return build() if host_arch() is not None else None


def filter_fd(program: bytes) -> int:
    """A readable fd holding ``program`` for ``bwrap --seccomp`` (it reads to the end)."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)  # at most a few KiB: fits in the pipe's buffer
    finally:
        os.close(write_end)
    return read_end
