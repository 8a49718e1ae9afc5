"""Loading and validating scenario files (TOML) with errors that name the file, the key and what is allowed.

A table is checked against a spec: ``{key: Field(types, default, check, help)}``. Unknown keys, wrong
types and failed checks raise :class:`ScenarioError` before anything runs.
"""

from __future__ import annotations

import difflib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ldpsim.runtime.errors import InputError
from ldpsim.scenarios.studies.scenario.old_keys import OLD_KEYS, upgrade

REQUIRED = object()
#: the largest seed: seeds are stored as int64 (Parquet columns, the summary), so 0 … 2⁶³ − 1
MAX_SEED = 2**63 - 1


def seed_check(value: int) -> str | None:
    """Field check: a seed in 0 … :data:`MAX_SEED`."""
    return None if 0 <= value <= MAX_SEED else "must be an integer in [0, 2**63 - 1] (stored as int64)"


class ScenarioError(InputError):
    """A broken scenario file: says which file, which key, and what is allowed."""

    def __init__(self, file, key: str, message: str):
        self.file, self.key = str(file), key
        super().__init__(f"{file}: [{key}] {message}")


@dataclass(frozen=True)
class Field:
    types: type | tuple[type, ...]
    default: Any = REQUIRED
    check: Callable[[Any], str | None] | None = None  # returns an error message, or None when fine
    help: str = ""


def load_toml(path, notices: list | None = None) -> dict:
    """Read a TOML file; a missing file or a syntax error becomes a ScenarioError.

    Keys renamed since an older ldpsim (:data:`~.old_keys.OLD_KEYS`) are read under today's name; a note
    for each is appended to ``notices`` when a list is given.
    """
    path = Path(path)
    try:
        with path.open("rb") as fh:
            raw = tomllib.load(fh)
    except FileNotFoundError:
        raise ScenarioError(path, "file", "no such scenario file") from None
    except IsADirectoryError:
        raise ScenarioError(path, "file", "is a folder, not a scenario file") from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(path, "file", f"is not UTF-8 text (byte {exc.start}); TOML files are UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(path, "file", f"is not valid TOML: {exc}") from None
    except RecursionError:
        raise ScenarioError(path, "file", "nests arrays or tables too deeply to read (a scenario needs a few "
                            "levels)") from None
    except OSError as exc:
        raise ScenarioError(path, "file", f"cannot be read: {exc.strerror or exc}") from None
    renamed, clashes = upgrade(raw)
    if clashes:
        old = clashes[0].rsplit(".", 1)[-1]
        raise ScenarioError(path, clashes[0], f"is the old name of '{OLD_KEYS[old]}', which the same table also "
                            f"gives: keep one")
    if notices is not None:
        notices.extend(renamed)
    return raw


#: the top-level tables that mark each kind of scenario file
KIND_MARKERS = {"deployment": ("deployment", "use_case"), "sweep": ("scenario", "mechanism", "grid"),
                "reproduction": ("reproduction",), "poisoning": ("poisoning", "poisoning_fleet"),
                "discovery": ("discovery_days",), "trust": ("trust",)}
#: the command that runs each kind
KIND_COMMANDS = {"deployment": "ldpsim run", "sweep": "ldpsim sweep", "reproduction": "ldpsim reproduce", "poisoning": "ldpsim poison",
                 "discovery": "ldpsim discover", "trust": "ldpsim trust"}


def scenario_kind(raw: dict) -> str | None:
    """``"deployment"``, ``"sweep"``, ``"reproduction"``, ``"poisoning"`` or ``"discovery"`` (see
    :data:`KIND_COMMANDS`), or ``None``.

    Parameters
    ----------
    raw : dict
        A scenario file as read by :func:`load_toml`.
    """
    kinds = [kind for kind, keys in KIND_MARKERS.items() if any(k in raw for k in keys)]
    return kinds[0] if len(kinds) == 1 else None


def require_kind(raw: dict, kind: str, path) -> None:
    """Raise a :class:`ScenarioError` that names the right command when ``raw`` is not a ``kind`` scenario."""
    found = scenario_kind(raw)
    if found == kind or found is None:
        return
    command = KIND_COMMANDS[found]
    raise ScenarioError(path, "file", f"is a {found} scenario (it has a [{KIND_MARKERS[found][0]}] table); "
                        f"run it with `{command}`, not as a {kind} scenario")


def _type_name(types) -> str:
    types = types if isinstance(types, tuple) else (types,)
    return " or ".join(t.__name__ for t in types)


def parse_table(table: Any, spec: dict[str, Field], where: str, file) -> dict:
    """Validate ``table`` (a dict from TOML) against ``spec``; return it with defaults filled in."""
    if not isinstance(table, dict):
        raise ScenarioError(file, where, f"must be a table; got {type(table).__name__}")
    out = {}
    for key in table:
        if key not in spec:
            near = difflib.get_close_matches(key, spec, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ScenarioError(file, f"{where}.{key}" if where else key,
                                f"unknown key{hint}; allowed keys: {', '.join(sorted(spec))}")
    for key, field in spec.items():
        name = f"{where}.{key}" if where else key
        if key not in table:
            if field.default is REQUIRED:
                raise ScenarioError(file, name, f"is required ({field.help or _type_name(field.types)})")
            out[key] = field.default
            continue
        value = table[key]
        types = field.types if isinstance(field.types, tuple) else (field.types,)
        ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
        if not ok and float in types and isinstance(value, int) and not isinstance(value, bool):
            value, ok = float(value), True
        if not ok:
            raise ScenarioError(file, name, f"must be {_type_name(field.types)}; got {value!r}")
        if field.check is not None:
            problem = field.check(value)
            if problem:
                raise ScenarioError(file, name, f"{problem}; got {value!r}")
        out[key] = value
    return out
