"""The deployment study (``ldpsim run``) and several designs on one fleet (``ldpsim compare``)."""
