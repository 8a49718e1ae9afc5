"""The audit as a gate (``ldpsim audit``) and the audit of peer libraries in their own environment."""
