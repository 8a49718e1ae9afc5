"""Studies: the floor above the measurements. A study orchestrates — it builds a fleet or a grid, owns a run
folder, declares its outputs and returns one result object; the command line and ``ldpsim``'s short API call
studies, and studies import measurements (:mod:`ldpsim.evaluation`), never the reverse."""
