"""A local Dask cluster that binds only to this machine and needs no fixed free port.

The scheduler, its HTTP server (dashboard) and the workers listen on 127.0.0.1 at ports the operating
system picks (``:0``): nothing is reachable from other machines, and a busy port 8787 (a Jupyter Dask
dashboard, say) changes nothing.
"""

from __future__ import annotations

import logging


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
