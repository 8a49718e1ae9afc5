"""Scenario dicts written back as TOML, and edited one key at a time: the bad-input and fault tests build
each broken scenario from a valid one."""

from __future__ import annotations

import copy
import math

INF = float("inf")


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v == INF else "-inf" if v == -INF else repr(v))
    if isinstance(v, (int,)):
        return str(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f'"{k}" = {_toml_value(x)}' for k, x in v.items()) + "}"
    raise TypeError(v)


def to_toml(data: dict) -> str:
    """A small TOML writer for scenario dicts (tables, nested tables, arrays of tables)."""
    lines = []

    def table(prefix, body):
        scalars = {k: v for k, v in body.items() if not isinstance(v, dict) and not _is_table_list(v)}
        lines.append(f"[{prefix}]")
        lines.extend(f'"{k}" = {_toml_value(v)}' for k, v in scalars.items())
        for k, v in body.items():
            if isinstance(v, dict) and k != "grid" and k != "mark":
                table(f"{prefix}.{k}", v)
            elif isinstance(v, dict):
                lines.append(f'"{k}" = {_toml_value(v)}')
    for key, value in data.items():
        if _is_table_list(value):
            for t in value:
                lines.append(f"[[{key}]]")
                lines.extend(f'"{k}" = {_toml_value(v)}' for k, v in t.items())
        elif isinstance(value, dict):
            table(key, value)
    return "\n".join(lines) + "\n"


def _is_table_list(v) -> bool:
    return isinstance(v, list) and v and all(isinstance(x, dict) for x in v)


def set_key(data: dict, path: tuple, value) -> dict:
    """A deep copy of ``data`` with ``value`` at the key ``path`` (tables created on the way)."""
    data = copy.deepcopy(data)
    node = data
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return data
