"""The scenario files shipped with ldpsim, found by name from any folder (``ldpsim run keyboard``).

Every shipped scenario has one name: the ``name`` its file declares (``[scenario]``, ``[deployment]``,
``[reproduction]`` or ``[poisoning]`` table), e.g. ``sdldp-fig5`` or ``rr-survey``. ``ldpsim scenarios``
lists that name, and every command accepts it. The file's own stem (``sdldp_fig5``, ``seed001_rr``)
is still accepted as an older spelling, with a note naming the one to use.

A scenario argument is a path when such a file exists, otherwise a shipped name (``keyboard`` or
``keyboard.toml``).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from ldpsim.scenarios.studies.scenario.schema import KIND_MARKERS, ScenarioError, load_toml, scenario_kind

#: the folder holding the shipped ``*.toml`` files (inside the installed package)
SHIPPED = Path(__file__).resolve().parent

#: the end of a description's first sentence: . ! or ? then a space and a capital letter
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


@functools.lru_cache(maxsize=1)
def _catalog() -> tuple[dict[str, Path], dict[str, str]]:
    """(name → path, old file stem → name) of the shipped files; read once per process."""
    names, stems = {}, {}
    for path in sorted(SHIPPED.glob("*.toml")):
        name = declared_name(load_toml(path)) or path.stem
        names[name] = path
        if path.stem != name:
            stems[path.stem] = name
    return dict(sorted(names.items())), stems


def declared_name(raw: dict) -> str | None:
    """The ``name`` a scenario file declares in its kind's main table, or ``None``."""
    kind = scenario_kind(raw)
    for table in KIND_MARKERS.get(kind, ()):
        value = raw.get(table)
        if isinstance(value, dict) and isinstance(value.get("name"), str):
            return value["name"]
    return None


def shipped() -> dict[str, Path]:
    """Name → path of every shipped scenario, sorted by name."""
    return dict(_catalog()[0])


def lookup(arg: str | Path, key: str = "scenario") -> tuple[Path, str | None]:
    """The scenario file ``arg`` names, and a note when ``arg`` is an older spelling of a shipped name.

    Parameters
    ----------
    arg : str or Path
        A path to a TOML file, a shipped name such as ``"smoke"`` or ``"sdldp-fig5"`` (a ``.toml``
        suffix is allowed), or a shipped file's stem such as ``"sdldp_fig5"``.
    key : str
        The option or argument named in errors.

    Raises
    ------
    ScenarioError
        Neither a file nor a shipped name; the message lists the shipped names.
    """
    if not str(arg).strip():
        raise ScenarioError(repr(str(arg)), key, "must name a scenario file or a shipped scenario (`ldpsim scenarios` "
                            "lists them)")
    path = Path(arg)
    if path.is_file():
        return path, None
    if path.is_dir():
        raise ScenarioError(path, key, "is a folder, not a scenario file")
    names, stems = _catalog()
    stem = path.name[:-5] if path.name.endswith(".toml") else path.name
    if path.parent == Path("."):
        if stem in names:
            return names[stem], None
        if stem in stems:
            return names[stems[stem]], f"note: {stem!r} is the file of the shipped scenario {stems[stem]!r}; " \
                                       f"name it {stems[stem]!r}"
    raise ScenarioError(path, key, "no such scenario file, and no shipped scenario of that name; shipped: "
                        f"{', '.join(names)} (`ldpsim scenarios` describes them)")


def resolve(arg: str | Path, key: str = "scenario") -> Path:
    """The scenario file ``arg`` names (see :func:`lookup`, whose note this drops)."""
    return lookup(arg, key)[0]


def describe(path: Path) -> str:
    """The scenario's description: the first sentence, whole, of its leading comment paragraph."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            if lines:
                break
            continue
        text = line.lstrip("#").strip()
        if not text and lines:
            break
        lines.append(text)
    paragraph = " ".join(t for t in lines if t).removeprefix("Scenario: ")
    first = _SENTENCE_END.split(paragraph, maxsplit=1)[0]
    return first[:1].upper() + first[1:]


def listing() -> list[tuple[str, str, str]]:
    """``(name, kind, description)`` of every shipped scenario; kind is the command family that runs it."""
    return [(name, scenario_kind(load_toml(path)) or "?", describe(path)) for name, path in shipped().items()]
