"""The package is one importable name whose build lists every subpackage of the repository."""

import functools
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


#: the floors, lowest first: a module may import its own floor and the floors below, never one above
FLOORS = (("ldpsim.runtime",), ("ldpsim.mechanisms",), ("ldpsim.simulator",), ("ldpsim.evaluation",),
          ("ldpsim.scenarios.studies",), ("ldpsim.scenarios.catalog",), ("ldpsim.scenarios.reproductions",),
          ("ldpsim.scenarios.api", "ldpsim.scenarios.options"), ("ldpsim.scenarios",))
#: the wings of the measurement floor, lowest first
EVALUATION_WINGS = ("workloads", "metrics", "distribution_metrics", "confidence", "legend", "layout", "console_table", "cost",
                    "adversary", "audit", "privacy", "heatmap_designs", "numeric_designs", "numeric_use", "poisoning",
                    "discovery",
                    "deployment", "trends", "report")


@functools.lru_cache(maxsize=1)
def _import_graph() -> dict[str, set[str]]:
    """module → the ldpsim modules it imports, at module level or inside a function (``from ldpsim.x import y``
    counts as an import of ``ldpsim.x.y`` when that is a module, else of ``ldpsim.x``)."""
    import ast
    paths = {}
    for top in ("runtime", "mechanisms", "simulator", "evaluation", "scenarios"):
        for path in (ROOT / top).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            paths[".".join(("ldpsim",) + (parts[:-1] if parts[-1] == "__init__" else parts))] = path

    def module_of(name):
        while name and name not in paths:
            name = name.rpartition(".")[0]
        return name

    graph = {}
    for module, path in paths.items():
        graph[module] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{path}: relative import"
                base = node.module or ""
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names]
            else:
                continue
            graph[module] |= {m for n in names if n.startswith("ldpsim.") and (m := module_of(n)) not in ("", module)}
    return graph


def _floor(module: str, floors) -> int:
    return next(i for i, prefixes in enumerate(floors) for p in prefixes if module == p or module.startswith(p + "."))


def test_imports_point_one_way():
    """runtime → mechanisms → simulator → evaluation (measurements) → scenarios/studies → the command line:
    no module imports a floor above its own, at module level or inside a function."""
    wrong = [f"{a} imports {b}" for a, bs in _import_graph().items() for b in sorted(bs)
             if _floor(b, FLOORS) > _floor(a, FLOORS)]
    assert wrong == []


def test_evaluation_wings_point_one_way():
    """Inside the measurement floor, a wing imports only the wings listed below it."""
    floors = [(f"ldpsim.evaluation.{w}",) for w in EVALUATION_WINGS]
    graph = {a: {b for b in bs if b.startswith("ldpsim.evaluation.")} for a, bs in _import_graph().items()
             if a.startswith("ldpsim.evaluation.")}
    assert sorted(a.split(".")[2] for a in graph) and {a.split(".")[2] for a in graph} <= set(EVALUATION_WINGS)
    wrong = [f"{a} imports {b}" for a, bs in graph.items() for b in sorted(bs) if _floor(b, floors) > _floor(a, floors)]
    assert wrong == []


def test_no_import_cycles():
    """No two modules import each other, directly or through others (function-local imports included)."""
    graph = _import_graph()
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on.discard(component[-1])
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert cycles == []


#: private attributes the measurement and study floors may read, with the reason: namedtuple's public API
#: (its names start with ``_`` so as not to clash with fields), argparse's (no public way to list a parser's
#: actions or tell help and version actions apart) and the command line's own namespace entry
PRIVATE_READS_ALLOWED = {
    "_replace": "namedtuple API", "_asdict": "namedtuple API", "_fields": "namedtuple API", "_make": "namedtuple API",
    "_actions": "argparse", "_option_string_actions": "argparse", "_HelpAction": "argparse",
    "_VersionAction": "argparse", "_module": "scenarios/cli.py's own set_defaults entry",
}


def test_measurements_and_studies_call_no_private_attribute_of_another_object():
    """evaluation/ and scenarios/ use what the mechanisms (and every other object they are handed) make
    public: ``obj._name`` is read only on ``self`` or ``cls`` and no ``_name`` is imported from another floor,
    so renaming a mechanism's private helper can break nothing above it."""
    import ast
    found = []
    for top in ("evaluation", "scenarios"):
        for p in (ROOT / top).rglob("*.py"):
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                        and node.attr not in PRIVATE_READS_ALLOWED):
                    found.append(f"{p.relative_to(ROOT).as_posix()}:{node.lineno} {ast.unparse(node)}")
                elif (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ldpsim.")
                      and node.module.split(".")[1] != top):   # a private name of another floor
                    found += [f"{p.relative_to(ROOT).as_posix()}:{node.lineno} import {a.name}" for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")]
    assert found == []


def test_no_test_module_imports_another_test_module_or_conftest():
    """What several test modules share lives in helper modules (tests/fleets.py, tests/stats.py, …): a test
    module imported by another is collected twice and couples their fixtures; conftest.py is pytest's, never
    a module to import."""
    import ast
    found = []
    for p in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [f"{node.module or ''}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.ImportFrom) and node.level:
                found.append(f"{p.relative_to(ROOT).as_posix()}:{node.lineno} relative import")
            found += [f"{p.relative_to(ROOT).as_posix()}:{node.lineno} imports {n}" for n in names
                      if any(part.startswith("test_") or part == "conftest" for part in n.split("."))]
    assert found == []
