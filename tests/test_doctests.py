"""Every docstring example of the installed package runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import ldpsim

SUBPACKAGES = ("mechanisms", "simulator", "evaluation", "scenarios")
MODULES = sorted(["ldpsim"] + [m.name for m in pkgutil.walk_packages(ldpsim.__path__, "ldpsim.")
                               if m.name.split(".")[1] in SUBPACKAGES
                               and not m.name.endswith(("peers_script", "__main__"))])


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples failed in {name}"
