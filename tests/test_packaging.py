"""The package is one importable name whose build lists every subpackage of the repository."""

import subprocess
import sys
import tomllib
from pathlib import Path

import ldpsim

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_listed_in_the_build():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {"ldpsim"} | {"ldpsim." + ".".join(p.parent.relative_to(ROOT).parts)
                          for top in ("mechanisms", "simulator", "evaluation", "scenarios", "runtime")
                          for p in (ROOT / top).rglob("__init__.py")} | {"ldpsim.scenarios.baselines"}
    assert found == listed


def test_version_is_the_distributions():
    from importlib import metadata
    assert ldpsim.__version__ == metadata.version("ldpsim")


def test_installed_package_holds_the_subpackages_and_scenarios():
    installed = Path(ldpsim.__file__).parent
    for name in ("mechanisms", "simulator", "evaluation", "scenarios", "runtime"):
        assert (installed / name / "__init__.py").is_file()
    assert (installed / "scenarios" / "keyboard.toml").is_file()


def test_short_api_is_lazy():
    code = "import sys, ldpsim; print('pandas' in sys.modules, 'matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
    assert ldpsim.make("grr", epsilon=1.0, domain_size=4).domain_size == 4


def test_no_two_modules_share_a_name():
    """One concept per module name: two files of the same name in different folders would do different things."""
    names = [p.name for top in ("mechanisms", "simulator", "evaluation", "scenarios", "runtime")
             for p in (ROOT / top).rglob("*.py") if p.name != "__init__.py"]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_imports_point_one_way():
    """scenarios → evaluation → simulator → mechanisms → runtime: no module imports a layer above its own."""
    import ast
    layers = ["runtime", "mechanisms", "simulator", "evaluation", "scenarios"]
    wrong = []
    for rank, top in enumerate(layers):
        above = tuple(f"ldpsim.{name}" for name in layers[rank + 1:])
        for path in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                    [a.name for a in node.names] if isinstance(node, ast.Import) else []
                wrong += [f"{path.relative_to(ROOT)} imports {n}" for n in names if n.startswith(above)]
    assert wrong == []
