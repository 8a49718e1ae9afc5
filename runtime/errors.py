"""The errors ldpsim raises on purpose: one base class, so a notebook can catch them and the command line
can print them as they are.

Every message names the parameter, option, file or key at fault, what is allowed and the value given.
The command line prints ``error: <message>`` and exits 2 for any :class:`LdpsimError`; the library raises
the same object with the same message.
"""

from __future__ import annotations


class LdpsimError(Exception):
    """Base of every error that ldpsim raises on purpose (invalid input, a refused cost, a locked folder)."""


class InputError(LdpsimError, ValueError):
    """Invalid input: a parameter, option, file or scenario key outside what is allowed."""
