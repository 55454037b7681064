"""``--dask local`` is closed to other local accounts, and ``--dask tls://...`` takes dask's TLS configuration.

A dask worker runs any function a connected client sends it, as the auditor's user (root here). The
attacker below is a real second uid (65534, through setpriv) running this same Python and
dask.distributed: against the auditor's own cluster (:func:`auditor.batch.dask_cluster.start_local_cluster`)
every attempt is refused, while the auditor's client runs tasks; against a cluster made as before
(a plain ``LocalCluster``) the same attacker runs code as root.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from conftest import FIXTURES

from auditor.cli import main

distributed = pytest.importorskip("distributed", reason="the [dask] extra is not installed")
from auditor.batch.dask_cluster import start_local_cluster  # noqa: E402  (needs distributed)

NOBODY = 65534
# The attacker's environment: nothing of root's (no HOME, no dask configuration).
_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1"}

# Run as uid 65534: every way in a local account has, each with a short timeout, concurrently.
# Prints one JSON line per attempt: [name, "RAN" or "REFUSED", what came back].
ATTACKER = r"""
import asyncio, json, os, ssl, sys
from distributed import Client
from distributed.core import rpc
from distributed.security import Security

def trusting_any_server(certificate):
    # The server's refusal is what counts: this side accepts whatever certificate the server shows.
    context = Security.temporary().get_connection_args("client")["ssl_context"] if certificate else \
        ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    return {"ssl_context": context, "require_encryption": True, "extra_conn_args": {}}

class Credentials(Security):
    def __init__(self, args):
        super().__init__()
        self.args = args
    def get_connection_args(self, role):
        return self.args

async def task_on(address, **kwargs):
    async with Client(address, asynchronous=True, timeout=3, **kwargs) as client:
        return await client.submit(os.getuid, pure=False)

async def identity(address, **connection_args):
    server = rpc(address, timeout=3, connection_args=connection_args)
    try:
        return (await server.identity())["type"]
    finally:
        await server.close_rpc()

async def main(scheduler, ports):
    hostport = scheduler.split("://", 1)[1]
    own, bare = trusting_any_server(True), trusting_any_server(False)
    attempts = {"client, address as given": task_on(scheduler),
                "client, tcp://": task_on("tcp://" + hostport),
                "client, own certificate": task_on("tls://" + hostport, security=Credentials(own)),
                "client, no certificate": task_on("tls://" + hostport, security=Credentials(bare))}
    for port in ports:
        attempts[f"rpc tcp://:{port}"] = identity(f"tcp://127.0.0.1:{port}")
        attempts[f"rpc tls://:{port}, own certificate"] = identity(f"tls://127.0.0.1:{port}", **own)
        attempts[f"rpc tls://:{port}, no certificate"] = identity(f"tls://127.0.0.1:{port}", **bare)
    done = await asyncio.gather(*(asyncio.wait_for(a, 10) for a in attempts.values()), return_exceptions=True)
    for name, outcome in zip(attempts, done):
        refused = isinstance(outcome, BaseException)
        print(json.dumps([name, "REFUSED" if refused else "RAN", repr(outcome)[:300]]), flush=True)

asyncio.run(main(sys.argv[1], [int(port) for port in sys.argv[2:]]))
"""


def _hidden(path: str) -> tuple[str, str] | None:
    """The first folder above ``path`` that others cannot enter, and its child on the way there."""
    parts = Path(path).resolve().parts
    for depth in range(1, len(parts)):
        folder = os.path.join(*parts[:depth])
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return folder, parts[depth]
    return None


@pytest.fixture(scope="module")
def as_nobody(tmp_path_factory) -> list[str]:
    """The command prefix that runs this Python as uid 65534.

    The interpreter may live under a folder only root can enter (pyenv under /root, mode 0700). Then
    the attacker gets a private mount namespace in which that folder is an empty tmpfs holding only the
    interpreter's tree, bound from the real one at the same path: the uid is real and unprivileged, the
    network (loopback) the host's, and nothing else of the folder is visible."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to run a second uid")
    needed = {
        sys.prefix,
        sys.base_prefix,
        os.path.dirname(os.path.realpath(sys.executable)),
        str(Path(distributed.__file__).parents[1]),
    }
    routes = sorted({route for route in map(_hidden, needed) if route})
    drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--inh-caps=-all", "--"]
    if routes:
        stage = tmp_path_factory.mktemp("nobody-stage")  # empty here: the mounts live in the namespace
        script = ["set -e"]
        for i, (folder, child) in enumerate(routes):
            script += [f"mkdir -p '{stage}/{i}'", f"mount --rbind '{folder}/{child}' '{stage}/{i}'"]
        for folder in sorted({folder for folder, _ in routes}):
            script.append(f"mount -t tmpfs -o mode=0755,size=64k tmpfs '{folder}'")
        for i, (folder, child) in enumerate(routes):
            script += [f"mkdir -p '{folder}/{child}'", f"mount --move '{stage}/{i}' '{folder}/{child}'"]
        script.append('exec "$@"')
        drop = ["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(script), "sh", *drop]
    prefix = [*drop, sys.executable, "-I"]
    probe = subprocess.run(
        [*prefix, "-c", "import os, distributed; print(os.getuid())"],
        cwd="/",
        env=_ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if probe.stdout.strip() != str(NOBODY):
        message = f"cannot run Python with distributed as uid {NOBODY}: {probe.stderr[-500:]}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return prefix


def _attack(as_nobody: list[str], scheduler: str, ports: list[int]) -> dict[str, list[str]]:
    """Run :data:`ATTACKER` as uid 65534 against ``scheduler`` and ``ports``: {attempt: [outcome, detail]}."""
    done = subprocess.run(
        [*as_nobody, "-c", ATTACKER, scheduler, *map(str, ports)],
        cwd="/",
        env=_ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return {name: [outcome, detail] for name, outcome, detail in lines}


def _listening() -> set[int]:
    """Listening TCP ports of this process and its children."""
    me = psutil.Process()
    pids = {me.pid} | {child.pid for child in me.children(recursive=True)}
    return {c.laddr.port for c in psutil.net_connections("inet") if c.status == psutil.CONN_LISTEN and c.pid in pids}


def _cluster_addresses(client) -> list[str]:
    """The scheduler's, the workers' and the nannies' addresses."""
    info = client.scheduler_info()
    return [info["address"], *info["workers"], *(worker["nanny"] for worker in info["workers"].values())]


def _port(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def closed():
    """The auditor's own cluster, as ``--dask local -j 2`` starts it, and what listened before it."""
    before = _listening()
    cluster, client = start_local_cluster(2)
    try:
        yield cluster, client, before
    finally:
        client.close()
        cluster.close()


def test_another_uid_cannot_run_a_task_on_the_auditors_cluster(as_nobody, closed) -> None:
    cluster, client, _ = closed
    assert client.submit(os.getuid, pure=False).result(timeout=30) == os.getuid()  # the auditor's client runs tasks
    addresses = _cluster_addresses(client)  # the scheduler, 2 workers and their nannies
    attempts = _attack(as_nobody, cluster.scheduler_address, [_port(a) for a in addresses])
    assert len(attempts) == 4 + 3 * 5
    assert {name: outcome for name, (outcome, _) in attempts.items() if outcome != "REFUSED"} == {}
    # Refused by the cluster (a TLS alert, a reset or a timeout, as the race goes), not by the attacker's own
    # side, which accepted any server certificate.
    trusting = [detail for name, (_, detail) in attempts.items() if name.endswith("certificate")]
    assert len(trusting) == 2 + 2 * 5 and not any("VERIFY_FAILED" in d or "does not match" in d for d in trusting)
    assert len(addresses) == 5 and all(a.startswith("tls://127.0.0.1:") for a in addresses)


def test_the_same_attacker_runs_code_as_root_on_an_open_cluster(as_nobody) -> None:
    """The control: a cluster made as ``--dask local`` made it before (plain tcp://, no credentials)."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        addresses = _cluster_addresses(client)
        attempts = _attack(as_nobody, cluster.scheduler_address, [_port(a) for a in addresses])
    assert attempts["client, address as given"] == ["RAN", str(os.getuid())]  # uid 65534's task ran as root
    assert attempts["client, tcp://"][0] == "RAN"
    assert all(attempts[f"rpc tcp://:{_port(a)}"][0] == "RAN" for a in addresses)


def test_only_the_clusters_tls_ports_listen(closed) -> None:
    """No dashboard or other HTTP server (a dask node opens one on 8787 whatever dashboard_address says)."""
    _, client, before = closed
    opened = _listening() - before
    assert opened == {_port(a) for a in _cluster_addresses(client)}
    assert 8787 not in opened


def _credentials(tmp_path: Path, cluster) -> dict[str, str]:
    """The cluster's certificate and key as files, as dask's configuration names them."""
    files = {}
    for key, pem in (
        ("ca-file", cluster.security.tls_ca_file),
        ("client.cert", cluster.security.tls_client_cert),
        ("client.key", cluster.security.tls_client_key),
    ):
        path = tmp_path / key
        path.write_text(pem, encoding="utf-8")
        path.chmod(0o600)
        files[f"distributed.comm.tls.{key}"] = str(path)
    return files


def _audit(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["audit", str(FIXTURES / "answers"), str(FIXTURES / "defects"), *argv, "--format", "json", "--quiet"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_tls_scheduler_takes_the_credentials_of_dask_config(capsys, closed, tmp_path) -> None:
    import dask

    cluster, _, _ = closed
    local = _audit(capsys, "--jobs", "1")
    with dask.config.set(_credentials(tmp_path, cluster)):
        remote = _audit(capsys, "--dask", cluster.scheduler_address)
    assert remote == local and local[0] in (0, 1) and json.loads(local[1])["summary"]["files"] > 40


def test_a_tls_scheduler_without_credentials_is_a_usage_error(capsys, closed) -> None:
    cluster, _, _ = closed
    code, out, err = _audit(capsys, "--dask", cluster.scheduler_address)
    assert (code, out) == (2, "")
    assert "needs TLS credentials" in err and "distributed.comm.tls.ca-file" in err and "Traceback" not in err


def test_unreadable_credentials_are_a_usage_error(capsys, closed, tmp_path) -> None:
    import dask

    cluster, _, _ = closed
    files = _credentials(tmp_path, cluster)
    Path(files["distributed.comm.tls.client.key"]).write_text("not a key\n", encoding="utf-8")
    with dask.config.set(files):
        code, _, err = _audit(capsys, "--dask", cluster.scheduler_address)
    assert code == 2 and "cannot load the dask TLS credentials" in err


def test_a_plain_address_when_config_requires_encryption_is_a_usage_error(capsys, closed) -> None:
    import dask

    cluster, _, _ = closed
    plain = "tcp://" + cluster.scheduler_address.split("://", 1)[1]
    with dask.config.set({"distributed.comm.require-encryption": True}):
        code, _, err = _audit(capsys, "--dask", plain)
    assert code == 2 and "requires encryption" in err


def test_the_auditors_own_cluster_audits_as_a_local_run(capsys) -> None:
    local = _audit(capsys, "--jobs", "1")
    assert _audit(capsys, "--dask", "local", "--jobs", "2") == local
