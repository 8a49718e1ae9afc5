"""The suite tests the installed ``ldpsim`` whatever the checkout's folder is called.

The checkout's root is the package itself (its ``__init__.py``), so a checkout named ``ldpsim`` is an
importable ``ldpsim`` to anything that puts its parent on ``sys.path`` or derives module names from the
package folders above a test file (pytest's importlib mode does, through ``tests/__init__.py`` files):
the suite then tested the source tree, or a second clone beside it, instead of what was installed.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tree import NOT_OURS, own_files

ROOT = Path(__file__).resolve().parents[1]

# the probe writes what it imported to a file: under pytest-xdist a test's printed output is not shown
PROBE = """import os
import sys
import ldpsim

def test_where():
    from_checkout = sorted(n for n, m in list(sys.modules.items()) if n.split(".")[0] == "ldpsim"
                           and getattr(m, "__file__", None) and m.__file__.startswith({root!r}))
    with open(os.environ["LDPSIM_PROBE_OUT"], "w", encoding="utf-8") as fh:
        fh.write("LDPSIM=" + ldpsim.__file__ + "\\n" + "FROM_CHECKOUT=" + ",".join(from_checkout) + "\\n")
"""


def readme_test_command() -> list[str]:
    """The README quick start's test command after ``python -m pytest`` (its options), e.g. ``["-n", "2"]``."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(line for line in readme.splitlines() if "-m pytest" in line and "pip install" in line)
    return shlex.split(line.split("-m pytest", 1)[1])


def _clone(dest: Path) -> Path:
    """The checkout's own files (not its environments, outputs or docs) copied to ``dest``."""
    def ignore(folder, names):
        top = Path(folder) == ROOT
        return [n for n in names if n in NOT_OURS or n.startswith(".") or n.endswith(".egg-info")
                or (top and n == "docs")]
    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


def _imported(checkout: Path) -> dict[str, str]:
    """What the README's test command (with its options: in parallel) imports as ``ldpsim`` when run in
    ``checkout``, on a probe test."""
    probe, found = checkout / "tests" / "test_probe_where.py", checkout.parent / f"{checkout.name}.where"
    probe.write_text(PROBE.format(root=str(checkout)), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", *readme_test_command(), "-q", "-p", "no:cacheprovider",
                           str(probe)], cwd=checkout, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "LDPSIM_PROBE_OUT": str(found)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return dict(line.split("=", 1) for line in found.read_text(encoding="utf-8").splitlines())


@pytest.mark.slow  # two pytest sessions in subprocesses (about 2 s each)
def test_a_clone_named_ldpsim_beside_another_tests_the_installed_package(tmp_path):
    installed = subprocess.run([sys.executable, "-c", "import ldpsim; print(ldpsim.__file__)"], cwd=tmp_path,
                               capture_output=True, text=True, check=True).stdout.strip()
    parent = tmp_path / "src"
    named, other = _clone(parent / "ldpsim"), _clone(parent / "ldpsim-2")
    for checkout in (named, other):
        found = _imported(checkout)
        assert found == {"LDPSIM": installed, "FROM_CHECKOUT": ""}, (checkout.name, found)


def test_ci_runs_the_readmes_test_command_in_parallel():
    """``.ci/run`` ends with the README's test command, and that command runs the suite on two workers."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert shlex.split(ci) == [".venv/bin/python", "-m", "pytest", *readme_test_command()]
    assert re.fullmatch(r"-n \d+", " ".join(readme_test_command()[:2])), readme_test_command()


def test_scans_of_the_checkout_never_enter_environments_or_outputs(tmp_path):
    """A scan that entered .venv read every installed library (minutes, and findings that are not ours)."""
    for folder in (".venv", "venv", "build", "dist", "runs", "docs/_build", "x.egg-info", "mod/__pycache__",
                   "mod/tests", "mod"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "a.py").write_text("", encoding="utf-8")
    assert [p.relative_to(tmp_path).as_posix() for p in own_files(tmp_path, ".py", skip=("tests",))] == ["mod/a.py"]
