"""Poisoning studies: the population sweep and fake devices in a deployment (``ldpsim poison``)."""
