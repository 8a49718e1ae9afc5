"""The ground floor: durable files, run folders and their locks, the Dask cluster. Uses nothing else of ldpsim."""
