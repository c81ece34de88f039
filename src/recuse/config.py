"""``recuse.toml``: a team's audit set-up kept in its repository.

``recuse audit`` reads ``--config FILE``, or ``recuse.toml`` in the current folder when
there is one; options given on the command line override the file's. The file holds
(every part optional)::

    [audit]                  # default options, named as on the command line
    level = 0.9
    n-boot = 2000
    only = ["position", "verbosity"]

    [map]                    # --map: FILE_COLUMN = "schema_column"
    winner = "p_a"

    [values.winner]          # --values, per file column (its name before [map])
    A = 1
    B = 0
    tie = 0.5

    [material]               # --material: smallest effect worth acting on, per bias key
    position = 0.03

    [[model]]                # roster additions, as in a --roster file
    id = "our-judge-v2"
    family = "ours"

A key the file does not know is an error naming the file and the key.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recuse.errors import ConfigError
from recuse.roster import Entry, entries_from

__all__ = ["AUDIT_KEYS", "DEFAULT_NAME", "Config", "find_config", "load_config"]

DEFAULT_NAME = "recuse.toml"
# [audit] keys (command-line spelling) -> Python option names and their types
AUDIT_KEYS: dict[str, tuple[str, type | tuple[type, ...]]] = {
    "level": ("level", (int, float)),
    "n-boot": ("n_boot", int),
    "seed": ("seed", int),
    "judge": ("judges", list),
    "only": ("only", list),
    "skip": ("skip", list),
    "orders": ("orders", str),
    "fdr": ("fdr", bool),
    "se": ("se", str),
    "robustness": ("robustness", (str, list)),
    "figures": ("figures", str),
    "title": ("title", str),
    "table": ("table", str),
    "format": ("format", str),
    "data-dir": ("data_dir", str),
    "swapped-frame": ("swapped_frame", str),
    "confidence": ("confidence", str),
    "confidence-of": ("confidence_of", str),
    "self-scope": ("self_scope", str),
}
SECTIONS = ("audit", "map", "values", "material", "model")


@dataclass(frozen=True)
class Config:
    """A parsed ``recuse.toml``: audit defaults (Python option names), the column
    mapping, value maps, materiality and roster additions."""

    path: Path | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    mapping: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    material: Mapping[str, float] = field(default_factory=dict)
    models: tuple[Entry, ...] = ()


def find_config(explicit: str | Path | None = None) -> Path | None:
    """``explicit`` (which must exist), else ``./recuse.toml`` when there is one."""
    if explicit is not None:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"--config {path}: no such file — give a recuse.toml")
        return path
    here = Path(DEFAULT_NAME)  # relative: a very deep current folder has no usable full path
    try:
        return here if here.is_file() else None
    except OSError:
        return None


def _table(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: [{key}] must be a table of KEY = value lines")
    return value


def load_config(path: str | Path) -> Config:
    """Read and check a config file (errors name the file and the key)."""
    p = Path(path)
    where = str(p)
    try:
        data = tomllib.loads(p.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {p}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML ({exc})") from None
    unknown = [k for k in data if k not in SECTIONS]
    if unknown:
        raise ConfigError(
            f"{where}: unknown section [{unknown[0]}] — use {', '.join(SECTIONS[:-1])} or [[model]]"
        )
    options: dict[str, Any] = {}
    for key, value in _table(data, "audit", where).items():
        spec = AUDIT_KEYS.get(key) or AUDIT_KEYS.get(key.replace("_", "-"))
        if spec is None:
            raise ConfigError(
                f"{where}: [audit] {key}: unknown option — use {', '.join(AUDIT_KEYS)}"
            )
        name, kind = spec
        if isinstance(value, bool) and kind is not bool:
            raise ConfigError(f"{where}: [audit] {key} = {value}: not a {_name(kind)}")
        if not isinstance(value, kind):
            raise ConfigError(f"{where}: [audit] {key} = {value!r}: must be a {_name(kind)}")
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: [audit] {key}: list items must be strings")
        options[name] = value
    mapping = {}
    for key, value in _table(data, "map", where).items():
        if not isinstance(value, str):
            raise ConfigError(f'{where}: [map] {key}: give the schema column as "name"')
        mapping[str(key)] = value
    values: dict[str, dict[str, float]] = {}
    for column, table in _table(data, "values", where).items():
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where}: [values.{column}] must be a table of VALUE = number")
        for written, number in table.items():
            if isinstance(number, bool) or not isinstance(number, int | float):
                raise ConfigError(
                    f"{where}: [values.{column}] {written} = {number!r}: give a number in [0, 1]"
                )
        values[str(column)] = {str(k): float(v) for k, v in table.items()}
    material = {}
    for key, value in _table(data, "material", where).items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise ConfigError(f"{where}: [material] {key} = {value!r}: give a positive number")
        material[str(key)] = float(value)
    models = tuple(entries_from({"model": data.get("model", [])}, where))
    return Config(p, options, mapping, values, material, models)


def _name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    words = {int: "number", float: "number", str: "string", bool: "true/false", list: "list"}
    return " or ".join(dict.fromkeys(words[k] for k in kinds))
