"""The scenario files shipped with ldpsim, found by name from any folder (``ldpsim run keyboard``).

A scenario argument is a path when such a file exists, otherwise the name of a shipped scenario
(``keyboard`` or ``keyboard.toml``). ``ldpsim scenarios`` lists them with their kind and first comment line.
"""

from __future__ import annotations

from pathlib import Path

from ldpsim.evaluation.scenario.schema import ScenarioError, load_toml, scenario_kind

#: the folder holding the shipped ``*.toml`` files (inside the installed package)
SHIPPED = Path(__file__).resolve().parent


def shipped() -> dict[str, Path]:
    """Name → path of every shipped scenario, sorted by name."""
    return {p.stem: p for p in sorted(SHIPPED.glob("*.toml"))}


def resolve(arg: str | Path, key: str = "scenario") -> Path:
    """The scenario file ``arg`` names: an existing path, else a shipped scenario's name.

    Parameters
    ----------
    arg : str or Path
        A path to a TOML file, or a shipped name such as ``"smoke"`` or ``"smoke.toml"``.
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
        return path
    if path.is_dir():
        raise ScenarioError(path, key, "is a folder, not a scenario file")
    names = shipped()
    stem = path.name[:-5] if path.name.endswith(".toml") else path.name
    if path.parent == Path(".") and stem in names:
        return names[stem]
    raise ScenarioError(path, key, "no such scenario file, and no shipped scenario of that name; shipped: "
                        f"{', '.join(names)} (`ldpsim scenarios` describes them)")


def describe(path: Path) -> str:
    """The scenario's one-line description: its first comment line, without the leading ``#``."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            text = line.lstrip("#").strip()
            return text.removeprefix("Scenario: ")
    return ""


def listing() -> list[tuple[str, str, str]]:
    """``(name, kind, description)`` of every shipped scenario; kind is ``deployment`` or ``sweep``."""
    return [(name, scenario_kind(load_toml(path)) or "?", describe(path)) for name, path in shipped().items()]
