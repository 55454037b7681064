"""socketpair() in the rerun sandbox: the same address families as socket(), through real bubblewrap.

socketpair creates its sockets through each family's create path before the
family can refuse the pair, so a hostile experiment could reach packet, vsock or
netlink code through it that socket() keeps out.  The probe makes the raw system
call (Python's socket.socketpair would check nothing the kernel does not) and
prints the errno of each.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from conftest import needs_bubblewrap
from test_sandbox_hardening import printed, run_script

pytestmark = [needs_bubblewrap, pytest.mark.usefixtures("warm_sandbox")]

SOCKETPAIR_PROBE = """
    import ctypes, errno, json, multiprocessing, os, platform, socket
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    SOCKETPAIR = 53 if platform.machine() == "x86_64" else 199

    def pair(family, kind, protocol=0):
        fds = (ctypes.c_int * 2)(-1, -1)
        result = libc.syscall(ctypes.c_long(SOCKETPAIR), ctypes.c_long(family), ctypes.c_long(kind),
                              ctypes.c_long(protocol), fds)
        if result < 0:
            return errno.errorcode.get(ctypes.get_errno(), "?")
        os.write(fds[0], b"ping")
        answer = os.read(fds[1], 4)
        os.close(fds[0]); os.close(fds[1])
        return "ok" if answer == b"ping" else "broken"

    seen = {
        "AF_PACKET": pair(17, socket.SOCK_RAW), "AF_VSOCK": pair(40, socket.SOCK_STREAM),
        "AF_BLUETOOTH": pair(31, socket.SOCK_STREAM), "AF_ALG": pair(38, socket.SOCK_SEQPACKET),
        "AF_KEY": pair(15, socket.SOCK_RAW), "AF_NETLINK/GENERIC": pair(16, socket.SOCK_RAW, 16),
        "AF_NETLINK/NETFILTER": pair(16, socket.SOCK_RAW, 12), "AF_NETLINK/AUDIT": pair(16, socket.SOCK_RAW, 9),
        "AF_NETLINK/ROUTE": pair(16, socket.SOCK_RAW, 0), "AF_INET": pair(2, socket.SOCK_STREAM),
        "AF_UNIX stream": pair(1, socket.SOCK_STREAM), "AF_UNIX dgram": pair(1, socket.SOCK_DGRAM),
        # A family number in the high word is the same family to the kernel (it reads an int).
        "AF_PACKET high word": pair(17 | (1 << 32), socket.SOCK_RAW),
    }
    left, right = socket.socketpair()
    left.sendall(b"pong")
    seen["socket.socketpair"] = "ok" if right.recv(4) == b"pong" else "broken"
    reader, writer = multiprocessing.Pipe()  # duplex: a socketpair underneath
    writer.send("hi")
    seen["multiprocessing.Pipe"] = "ok" if reader.recv() == "hi" else "broken"
    print(json.dumps(seen))
"""


def test_socketpair_families_are_filtered_like_socket(tmp_path: Path) -> None:
    seen = printed(run_script(tmp_path, SOCKETPAIR_PROBE)[0])
    # Refused by the filter before any family's create path runs: the errno socket() gets.
    for family in ("AF_PACKET", "AF_VSOCK", "AF_BLUETOOTH", "AF_ALG", "AF_KEY", "AF_PACKET high word"):
        assert seen[family] == "EAFNOSUPPORT", (family, seen)
    for protocol in ("GENERIC", "NETFILTER", "AUDIT"):
        assert seen[f"AF_NETLINK/{protocol}"] == "EPROTONOSUPPORT", (protocol, seen)
    # Families socket() allows reach the kernel, which refuses a pair of them itself.
    not_supported = errno.errorcode[errno.EOPNOTSUPP]  # Python names it ENOTSUP (the same number)
    assert seen["AF_NETLINK/ROUTE"] == not_supported and seen["AF_INET"] == not_supported, seen
    # What Python and multiprocessing (torch's DataLoader workers) need keeps working.
    for what in ("AF_UNIX stream", "AF_UNIX dgram", "socket.socketpair", "multiprocessing.Pipe"):
        assert seen[what] == "ok", (what, seen)
