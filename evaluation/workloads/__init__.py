"""Workloads: categorical populations and numeric readings, by name (see :mod:`.make`)."""

from ldpsim.evaluation.workloads.make import (WORKLOADS, NumericWorkload, Workload, largest_remainder,
                                                  make_workload, register_workload, workload_from_csv)
from ldpsim.evaluation.workloads.tokenizer import tokenize
from ldpsim.evaluation.workloads.vocabulary import Vocabulary, load_vocabulary

__all__ = ["NumericWorkload", "Vocabulary", "WORKLOADS", "Workload", "largest_remainder", "load_vocabulary",
           "make_workload", "register_workload", "tokenize", "workload_from_csv"]
