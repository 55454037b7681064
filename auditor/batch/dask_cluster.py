"""The dask.distributed side of ``--dask``: this run's own local cluster, or a client of an existing one.

Imported only when a batch runs on dask (:class:`auditor.batch.executors.DaskPool`): dask is heavy and optional.

A dask worker runs whatever function a connected client sends it, so whoever can connect runs code
as the auditor's user. The local cluster therefore opens no door another local account (the audited
agent's included) can use: every listener -- scheduler, nannies, workers -- is TLS on 127.0.0.1 and
requires the peer to present this run's certificate (mutual TLS). The certificate and its key are
made for the run and live only in its processes' memory. No HTTP server (dashboard, /info, /json,
prometheus) is left listening.
"""

from __future__ import annotations

import logging
from typing import Any

from distributed import Client, Nanny, Scheduler, SpecCluster, Worker
from distributed.comm.addressing import parse_address
from distributed.security import Security

from auditor.errors import UsageError

# How long to wait for a remote scheduler before calling the address wrong.
CONNECT_TIMEOUT_S = 10
LOOPBACK = "127.0.0.1"
ENCRYPTED = {"tls", "wss"}  # the address schemes dask runs over TLS
TLS_KEYS = (
    "distributed.comm.tls.ca-file, distributed.comm.tls.client.cert and distributed.comm.tls.client.key "
    "(or DASK_DISTRIBUTED__COMM__TLS__CA_FILE, ..._TLS__CLIENT__CERT and ..._TLS__CLIENT__KEY)"
)


class _NoHttp:
    """A dask node opens a plain-HTTP server (dashboard routes, /info, /json, prometheus) whatever its
    ``dashboard`` flag says; it is stopped as soon as it listens, before the event loop can accept a
    connection, and stays an attribute for the code that reads its port."""

    http_server: Any

    def start_http_server(self, *args: Any, **kwargs: Any) -> None:
        super().start_http_server(*args, **kwargs)  # type: ignore[misc]
        self.http_server.stop()


class ClosedScheduler(_NoHttp, Scheduler):
    """The local cluster's scheduler: its TLS port only."""


class ClosedWorker(_NoHttp, Worker):
    """The local cluster's workers (module-level: the nanny's worker process imports it by name)."""


def start_local_cluster(jobs: int) -> tuple[SpecCluster, Client]:
    """A cluster of ``jobs`` single-threaded worker processes on 127.0.0.1 for this run, and its client.

    Every listener is ``tls://`` under a certificate made here (``Security.temporary()``, which
    requires encryption); the client holds the same credentials (``cluster.security``)."""
    try:
        security = Security.temporary()  # with require_encryption: no plain tcp:// comm, either way
    except ImportError:
        raise UsageError(
            "--dask local needs cryptography for its TLS certificate: pip install 'auditor[dask]'"
        ) from None
    common = {"host": LOOPBACK, "protocol": "tls://", "security": security}
    scheduler = {
        "cls": ClosedScheduler,
        "options": {**common, "dashboard": False, "dashboard_address": f"{LOOPBACK}:0"},
    }
    # As LocalCluster: one thread each, the machine's memory shared between the workers.
    worker = {
        "cls": Nanny,
        "options": {
            **common,
            "nthreads": 1,
            "dashboard": False,
            "worker_class": ClosedWorker,
            "memory_limit": 1 / max(1, jobs),
            "silence_logs": logging.WARNING,
        },
    }
    cluster = SpecCluster(
        scheduler=scheduler,
        workers=dict.fromkeys(range(max(1, jobs)), worker),
        worker=worker,
        security=security,
        silence_logs=logging.WARNING,
    )
    try:
        client = Client(cluster, security=security)
    except BaseException:
        cluster.close()
        raise
    return cluster, client


def connect(address: str) -> Client:
    """A client of the scheduler at ``address``, with the TLS credentials of dask's configuration.

    A ``tls://`` address needs them (a CA and a client certificate and key); an address that is not
    TLS is refused when the configuration requires encryption. Either is a :class:`UsageError`, as is
    a scheduler that does not answer within :data:`CONNECT_TIMEOUT_S`."""
    try:
        scheme = parse_address(address)[0]
    except ValueError as exc:
        raise UsageError(f"--dask {address!r} is not a dask scheduler address: {exc}") from None
    try:
        security = Security()  # read from dask's configuration
        tls = security.get_connection_args("client")["ssl_context"]
    except (OSError, ValueError) as exc:  # a file missing or not PEM, a bad TLS version
        raise UsageError(f"cannot load the dask TLS credentials of distributed.comm.tls.*: {exc}") from None
    if scheme in ENCRYPTED and tls is None:
        raise UsageError(f"the dask scheduler at {address} needs TLS credentials: set {TLS_KEYS}")
    if scheme not in ENCRYPTED and security.require_encryption:
        raise UsageError(f"dask's configuration requires encryption, but {address} is not a tls:// address")
    try:
        return Client(address, security=security, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise UsageError(f"cannot reach the dask scheduler at {address}: {exc}") from None
    except ValueError as exc:  # an unknown scheme
        raise UsageError(f"--dask {address!r} is not a dask scheduler address: {exc}") from None
