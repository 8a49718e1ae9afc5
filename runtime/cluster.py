"""A local Dask cluster that binds only to this machine and needs no fixed free port.

The scheduler, its HTTP server (dashboard) and the workers listen on 127.0.0.1 at ports the operating
system picks (``:0``): nothing is reachable from other machines, and a busy port 8787 (a Jupyter Dask
dashboard, say) changes nothing.

A cluster given by address is checked before any work is sent (:func:`require_shared_folder`): every
worker must read a probe file in the run folder at the same absolute path, and answer in time.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from pathlib import Path

from ldpsim.runtime import durable
from ldpsim.runtime.errors import LdpsimError


def local_cluster(n_workers: int):
    """Start a ``LocalCluster`` of ``n_workers`` single-threaded worker processes on 127.0.0.1.

    Parameters
    ----------
    n_workers : int
        Worker processes (>= 1).

    Returns
    -------
    distributed.LocalCluster
        The running cluster; close it when done.
    """
    from dask.distributed import LocalCluster
    return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                        scheduler_port=0, dashboard_address="localhost:0", silence_logs=logging.ERROR)


#: seconds to reach a scheduler given by address before giving up
CONNECT_TIMEOUT_S = 10.0
#: seconds a cluster may have no worker at all while tasks are pending before the run fails
WORKERLESS_GRACE_S = 30.0
#: seconds each worker may take to answer the shared-folder probe (:func:`require_shared_folder`)
PROBE_TIMEOUT_S = 60.0


class ClusterError(LdpsimError, RuntimeError):
    """The Dask cluster cannot be reached or lost its workers; finished work is kept."""


def connect(scheduler=None, cluster=None, timeout: float = CONNECT_TIMEOUT_S):
    """A ``Client`` of ``cluster`` (a local cluster), or of the scheduler at ``scheduler``.

    Parameters
    ----------
    scheduler : str, optional
        Address of an existing scheduler, e.g. ``tcp://host:8786``.
    cluster : distributed.LocalCluster, optional
        A running local cluster (takes precedence).
    timeout : float
        Seconds to try reaching ``scheduler`` (default :data:`CONNECT_TIMEOUT_S`).

    Raises
    ------
    ClusterError
        ``scheduler`` could not be reached within ``timeout``; the message says what was tried.
    """
    import ssl
    import sys

    from dask.distributed import Client
    if cluster is not None:
        return Client(cluster)
    if str(scheduler).startswith("tls://"):
        import dask
        tls = dask.config.get("distributed.comm.tls", default={}) or {}
        if not tls.get("ca-file") or not (tls.get("client") or {}).get("cert"):
            raise ClusterError(
                f"--scheduler {scheduler}: a tls:// scheduler needs this machine's certificate and the CA, and Dask's "
                "configuration names none: set distributed.comm.tls.ca-file, distributed.comm.tls.client.cert and "
                ".key (e.g. DASK_DISTRIBUTED__COMM__TLS__CA_FILE=...) to the files matching the scheduler's")
    else:
        print(f"warning: the Dask scheduler {scheduler} is reached without TLS: anyone who can reach it can run "
              "code on its workers; use tls:// with certificates on untrusted networks", file=sys.stderr)
    try:
        return Client(scheduler, timeout=timeout)
    except ssl.SSLError as exc:
        raise ClusterError(
            f"could not reach the Dask scheduler at {scheduler!r} over TLS ({exc.reason or exc}): tls:// needs "
            "this machine's certificate, key and the CA in Dask's configuration (distributed.comm.tls.ca-file, "
            "distributed.comm.tls.client.cert and .key) matching the scheduler's") from None
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise ClusterError(
            f"could not reach the Dask scheduler at {scheduler!r}: tried to connect for {timeout:g} s "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no answer'}); check the address "
            "(tcp://HOST:PORT), that the scheduler is running and that its port is reachable from here, or "
            "leave out --scheduler to use a local cluster") from None


def as_finished(client, futures, grace_s: float = WORKERLESS_GRACE_S, poll_s: float = 1.0):
    """Yield ``futures`` as they finish, failing clearly instead of waiting forever.

    Raises
    ------
    ClusterError
        When the cluster has had no worker for ``grace_s`` seconds while tasks are pending (every
        worker died), or when a task's workers were killed repeatedly (``KilledWorker``: out of memory,
        ``kill -9``). Results already handed out are kept by the caller, so a rerun resumes.
    """
    from dask.distributed import wait
    from distributed.scheduler import KilledWorker

    pending, since = set(futures), None
    while pending:
        try:
            done, pending = wait(pending, timeout=poll_s, return_when="FIRST_COMPLETED")
        except TimeoutError:
            done = set()
        for future in done:
            if future.status == "error":
                try:
                    future.result()
                except KilledWorker as exc:
                    raise ClusterError(f"Dask workers died running {future.key} several times ({exc}); out of "
                                       "memory or killed? Finished work is kept: rerun to resume") from None
            yield future
        if done:
            since = None
            continue
        if len(client.scheduler_info(n_workers=-1).get("workers", {})) == 0:
            since = since if since is not None else time.monotonic()
            if time.monotonic() - since > grace_s:
                raise ClusterError(f"the Dask cluster has had no worker for {grace_s:g} s with {len(pending)} "
                                   "task(s) pending: every worker died (or none was started). Finished work is "
                                   "kept: start workers (or use a local cluster) and rerun to resume")
        else:
            since = None


def _read_probe(path: str) -> str:
    """Run on a worker: the probe file's text, or why it cannot be read there."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        return f"<{type(exc).__name__}: {exc.strerror or exc}>"


def require_shared_folder(client, root, timeout: float = PROBE_TIMEOUT_S) -> Path:
    """Check, before any work is sent, that every worker of ``client`` sees the folder ``root`` as this
    process does; return ``root`` as an absolute path (the form to send to workers).

    A probe file with a random token is written into ``root`` (durably; named ``.probe.<token>.tmp``, so a
    run folder counts it as its own), each worker reads it at the same absolute path, and it is deleted.

    Parameters
    ----------
    client : distributed.Client
    root : path-like
        The folder the workers will write into (created when missing); a relative path is taken from this
        process's working directory, never the workers'.
    timeout : float
        Seconds each worker may take to answer (default :data:`PROBE_TIMEOUT_S`).

    Raises
    ------
    ClusterError
        A worker reads another file or none there (it runs on another machine or in another container
        without this folder at the same path), or does not answer within ``timeout`` (its advertised
        address cannot be reached from here); the message names the worker.
    """
    root = Path(os.path.abspath(root))
    durable.make_dirs(root)
    token = secrets.token_hex(8)
    probe = root / f".probe.{token}.tmp"
    durable.write_text(probe, token)
    try:
        workers = sorted(client.scheduler_info(n_workers=-1).get("workers", {}))
        futures = {w: client.submit(_read_probe, str(probe), workers=[w], allow_other_workers=False, pure=False)
                   for w in workers}
        for worker, future in futures.items():
            try:
                seen = future.result(timeout=timeout)
            except TimeoutError:
                raise ClusterError(
                    f"the Dask worker {worker} did not answer within {timeout:g} s: its address cannot be reached "
                    "from here (a worker behind NAT or in a container must advertise a reachable address, "
                    "e.g. `dask worker --contact-address`), or it is stuck; no work was sent") from None
            if seen != token:
                raise ClusterError(
                    f"the Dask worker {worker} cannot see the run folder {root} (reading {probe.name} there gave "
                    f"{seen[:80]!r}): every worker must share this file system at the same absolute path; "
                    "no work was sent (leave out --scheduler to use a local cluster)")
    finally:
        probe.unlink(missing_ok=True)
    return root
