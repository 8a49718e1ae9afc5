"""Sweeps: a scenario's cells run serially or on Dask (:mod:`.runner`), stored per cell (:mod:`.store`),
summarized (:mod:`.cell_metrics`), tuned (:mod:`.tune`) and checked against a baseline (:mod:`.regression`)."""
