"""The linking study: what an observer learns from fresh against memoized reports (``ldpsim link``)."""
