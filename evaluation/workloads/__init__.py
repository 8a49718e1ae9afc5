"""Workloads: categorical populations and numeric readings, by name (see :mod:`.make`)."""

from ldpsim.evaluation.workloads.make import (WORKLOADS, NumericWorkload, Workload, largest_remainder,
                                                  make_workload, register_workload, workload_from_csv)

__all__ = ["NumericWorkload", "WORKLOADS", "Workload", "largest_remainder", "make_workload",
           "register_workload", "workload_from_csv"]
