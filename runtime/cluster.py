"""A local Dask cluster that binds only to this machine and needs no fixed free port.

The scheduler, its HTTP server (dashboard) and the workers listen on 127.0.0.1 at ports the operating
system picks (``:0``): nothing is reachable from other machines, and a busy port 8787 (a Jupyter Dask
dashboard, say) changes nothing.
"""

from __future__ import annotations

import logging
import time

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
    from dask.distributed import Client
    if cluster is not None:
        return Client(cluster)
    try:
        return Client(scheduler, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:
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
