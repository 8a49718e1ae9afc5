"""One fact in one place: the constants and kernels several modules share are written once (read from source)."""

import ast
import functools
import re
from pathlib import Path

from tests.tree import own_files

ROOT = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=1)
def _facts() -> dict[str, list[str]]:
    """One walk over the package's source: where 1.96 is written, where a δ default or DELTA constant is
    written, where fmix64/fwht are defined, where a plain-name rule is written."""
    facts = {"z": [], "delta": [], "kernels": [], "plain_name": []}
    for top in ("runtime", "mechanisms", "simulator", "evaluation", "scenarios"):
        for p in (ROOT / top).rglob("*.py"):
            path = p.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, float) and abs(node.value - 1.96) < 5e-3:
                    facts["z"].append(f"{path}:{node.lineno}")
                elif isinstance(node, ast.Assign):
                    facts["delta"] += [f"{path}:{node.lineno} assigns {t.id}" for t in node.targets
                                       if isinstance(t, ast.Name) and "DELTA" in t.id]
                    facts["plain_name"] += [f"{t.id} in {path}" for t in node.targets
                                            if isinstance(t, ast.Name) and "PLAIN" in t.id.upper() and "NAME" in t.id.upper()]
                elif isinstance(node, ast.FunctionDef):
                    if node.name in ("fmix64", "_fmix64", "fwht", "_fwht"):
                        facts["kernels"].append(f"{node.name} in {path}")
                    if "plain" in node.name.lower() and "name" in node.name.lower():
                        facts["plain_name"].append(f"{node.name} in {path}")
                    args = node.args.args + node.args.kwonlyargs
                    defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + node.args.defaults + \
                        node.args.kw_defaults
                    facts["delta"] += [f"{path}:{node.lineno} {node.name}(delta={d.value})"
                                       for a, d in zip(args, defaults) if a.arg == "delta"
                                       and isinstance(d, ast.Constant) and isinstance(d.value, float) and d.value]
                elif isinstance(node, ast.Dict):  # a scenario key's default: {"delta": Field(float, 1e-9, ...)}
                    facts["delta"] += [f"{path}:{node.lineno} delta key = {v.args[1].value}"
                                       for k, v in zip(node.keys, node.values)
                                       if isinstance(k, ast.Constant) and k.value == "delta" and isinstance(v, ast.Call)
                                       and getattr(v.func, "id", "") == "Field" and len(v.args) > 1
                                       and isinstance(v.args[1], ast.Constant) and isinstance(v.args[1].value, float)]
    return facts


def test_the_95_percent_z_is_written_once():
    """Every 95 % interval reads evaluation/confidence.py's Z95: no 1.96 (or Φ⁻¹(0.975) spelt out) elsewhere."""
    assert _facts()["z"] == ["evaluation/confidence.py:11"]


def test_default_deltas_live_in_mechanisms_deltas():
    """A δ parameter's non-zero default, a scenario's ``delta`` key and any ``*DELTA*`` constant: written
    only in mechanisms/deltas.py (a reproduction keeps its paper's own δ)."""
    assert [f for f in _facts()["delta"] if not f.startswith(("mechanisms/deltas.py:", "scenarios/reproductions/"))] == []


def test_shared_kernels_are_defined_once():
    """MurmurHash3's finalizer and the fast Walsh–Hadamard transform: one definition each."""
    assert sorted(_facts()["kernels"]) == ["fmix64 in mechanisms/hashing.py", "fwht in mechanisms/hadamard.py"]


def test_the_plain_name_rule_is_written_once():
    """The rule for a name that becomes a file or folder name (a run's, a deployment's, a reproduction's):
    one pattern and one check, in runtime/plain.py, that every scenario spec uses."""
    assert sorted(_facts()["plain_name"]) == ["PLAIN_NAME in runtime/plain.py", "plain_name in runtime/plain.py"]


def _mechanism_tables_and_builds() -> tuple[list[str], list[str]]:
    """Module-level dict literals keyed by three or more registered mechanism names with dict values (a table
    of mechanism parameters), and calls that build a registered class straight from the registry's dicts
    (``MECHANISMS[name](...)``, ``INTERACTIVE.get(name)(...)``), outside mechanisms/registry.py."""
    from ldpsim.mechanisms.registry import INTERACTIVE, MECHANISMS
    names = set(MECHANISMS) | set(INTERACTIVE)
    tables, builds = [], []
    for top in ("runtime", "mechanisms", "simulator", "evaluation", "scenarios"):
        for p in (ROOT / top).rglob("*.py"):
            path = p.relative_to(ROOT).as_posix()
            if path == "mechanisms/registry.py":
                continue
            tree = ast.parse(p.read_text(encoding="utf-8"))
            for node in tree.body:
                value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
                if isinstance(value, ast.Dict):
                    keys = {k.value for k in value.keys if isinstance(k, ast.Constant)}
                    if len(keys & names) >= 3 and all(isinstance(v, ast.Dict) for v in value.values):
                        tables.append(f"{path}:{node.lineno}")
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    f = node.func.func if isinstance(node.func, ast.Call) else node.func
                    f = f.value if isinstance(f, ast.Subscript) else f.func.value if isinstance(f, ast.Call) \
                        and isinstance(f.func, ast.Attribute) else f
                    if (isinstance(node.func, (ast.Subscript, ast.Call)) and isinstance(f, (ast.Name, ast.Attribute))
                            and (getattr(f, "id", None) or getattr(f, "attr", None)) in ("MECHANISMS", "INTERACTIVE")):
                        builds.append(f"{path}:{node.lineno}")
    return tables, builds


def test_mechanism_parameters_have_one_table_and_one_builder():
    """The typical parameters of every mechanism live in mechanisms/registry.py's PARAMETERS, and every
    caller builds through ``make``: no other table of mechanism parameters, no ``MECHANISMS[name](...)``."""
    assert _mechanism_tables_and_builds() == ([], [])


#: spellings retired for one name per quantity (docs/glossary.md); old scenario keys are read through
#: scenarios/studies/scenario/old_keys.py, the one place they may still be written
RETIRED = re.compile(r"\b(epsilon_run|epsilon_total|local_epsilon|epsilon_local)\b")


def test_one_name_per_quantity():
    """ε per device over the run is ``epsilon_device`` and ε of one report ``epsilon_report`` in code,
    scenario files, README and docs; no two classes of the package share a name."""
    places = [p for top in ("runtime", "mechanisms", "simulator", "evaluation", "scenarios", "docs")
              for suffix in (".py", ".toml", ".md") for p in own_files(ROOT / top, suffix)] + [ROOT / "README.md"]
    found = [f"{p.relative_to(ROOT).as_posix()}:{i}" for p in places if p.name != "old_keys.py"
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if RETIRED.search(line)]
    assert found == []
    classes = {}
    for top in ("runtime", "mechanisms", "simulator", "evaluation", "scenarios"):
        for p in (ROOT / top).rglob("*.py"):
            for node in ast.parse(p.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.ClassDef):
                    classes.setdefault(node.name, []).append(p.relative_to(ROOT).as_posix())
    assert {name: where for name, where in classes.items() if len(where) > 1} == {}
