"""``recuse.toml``: a team's audit set-up kept in its repository.

``recuse audit`` reads ``--config FILE``, or ``recuse.toml`` in the current folder when
there is one; options given on the command line override the file's. Every other command
that reads a user's file (validate, metrics pairs, certify, plan --like, judge, probe,
favoritism) reads it by the same file: its ``[map]``, ``[values]``, ``[[model]]`` and the
``[audit]`` keys of how a file is read (``recuse.cli.app.READING``; see
docs/configuration.md). The file holds (every part optional)::

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

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recuse.errors import ConfigError
from recuse.files import is_file, read_text, read_toml
from recuse.options import Written, read_options, settings_fields
from recuse.roster import Entry, entries_from

__all__ = ["DEFAULT_NAME", "Config", "audit_keys", "find_config", "load_config"]

DEFAULT_NAME = "recuse.toml"
SECTIONS = ("audit", "map", "values", "material", "model")


def audit_keys() -> dict[str, str]:
    """The ``[audit]`` keys (command-line spelling) -> option names, from
    :class:`recuse.options.Settings`."""
    return {s.key: name for name, s in settings_fields().items() if s.key}


@dataclass(frozen=True)
class Config:
    """A parsed ``recuse.toml``: the options it sets (option names of
    :class:`recuse.options.Settings`, values read and checked; ``[map]``, ``[values]``
    and ``[material]`` are the options ``mapping``, ``values`` and ``material``) and the
    roster additions."""

    path: Path | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    models: tuple[Entry, ...] = ()
    #: each option the file sets as the file writes it, by option name: its table and
    #: key as spelled there (``[audit] self_scope``, ``[map]``) and the line it is on
    #: (None where it was not found), for the words naming where an option was set
    #: (:func:`recuse.options.option_as_set`)
    written: Mapping[str, Written] = field(default_factory=dict, compare=False)


def find_config(explicit: str | Path | None = None) -> Path | None:
    """``explicit`` (which must exist), else ``./recuse.toml`` when there is one: a
    ``./recuse.toml`` that is no file (a folder, a link to nothing, a link loop) is an
    error, as it is given to ``--config``, not a file quietly passed over."""
    if explicit is not None:
        path = Path(explicit).expanduser()
        if is_file(path, folder=True):
            raise ConfigError(
                f"--config {path}: a folder, not a file — give the recuse.toml in it "
                f"({path / DEFAULT_NAME})"
            )
        if not is_file(path):
            what = "no such file" if not path.exists() else "a special file (a pipe, a device)"
            raise ConfigError(f"--config {path}: {what} — give a recuse.toml")
        return path
    here = Path(DEFAULT_NAME)  # relative: a very deep current folder has no usable full path
    try:
        here.lstat()
    except OSError:  # none here (or a folder that may not be searched: none to read)
        return None
    if is_file(here):
        return here
    what = (
        "a folder"
        if is_file(here, folder=True)
        else "a link to nothing (or a loop of links)"
        if here.is_symlink()
        else "a special file (a pipe, a device)"
    )
    raise ConfigError(
        f"{DEFAULT_NAME} in the current folder is {what}, not a config file — every command "
        f"reads ./{DEFAULT_NAME} when there is one: make it a TOML file, rename it, or run "
        "from another folder"
    )


def _table(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: [{key}] must be a table of KEY = value lines")
    return value


def load_config(path: str | Path) -> Config:
    """Read and check a config file (errors name the file and the key)."""
    p = Path(path)
    where = str(p)
    # UTF-8 (a byte-order mark dropped), bounded; errors name the line
    data = read_toml(
        p,
        fix="fix that line (docs/configuration.md shows the file)"
        if p.suffix == ".toml"
        else "--config takes a recuse.toml; give a data file as the command's argument",
    )
    unknown = [k for k in data if k not in SECTIONS]
    if unknown:
        key, value = unknown[0], data[unknown[0]]
        tables = isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)
        if not isinstance(value, dict) and not tables:  # a key before any [section]
            put = (
                "put it under [audit] (an option: `[audit]` on a line above it)"
                if key in audit_keys() or key in settings_fields()
                else f"options go under [audit]; the other sections: "
                f"{', '.join(SECTIONS[1:-1])} or [[model]]"
            )
            raise ConfigError(f"{where}: {key} is outside any section — {put}")
        raise ConfigError(
            f"{where}: unknown section [{key}] — use {', '.join(SECTIONS[:-1])} or [[model]]"
        )
    options = _audit_options(_table(data, "audit", where), where)
    sections = {
        name: _table(data, spec.section, where)
        for name, spec in settings_fields().items()
        if spec.section and spec.section in data
    }
    options |= read_options(sections, "file", where)
    models = tuple(entries_from({"model": data.get("model", [])}, where))
    return Config(p, options, models, _written(data, read_text(p)))


#: a TOML table's header line (``[audit]``) and a ``key =`` line (bare or quoted key)
_HEADER = re.compile(r"\s*\[\[?([^\[\]]*)\]\]?\s*(?:#.*)?$")
_KEY = re.compile(r"""\s*(?:"([^"]*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*=""")


def _lines(text: str) -> dict[tuple[str, str | None], int]:
    """The first line (1-based) of each table header, ``(table, None)``, and of each
    ``key =`` line under one, ``(table, key)``, in a TOML text. A line scan, not a
    parser: a key it does not find (a dotted key, an inline table) has no line."""
    out: dict[tuple[str, str | None], int] = {}
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:  # [audit], [values.winner] (a table of [values]), [[model]]
            table = header.group(1).strip()
            out.setdefault((table.split(".")[0].strip(), None), number)
            continue
        key = _KEY.match(line)
        if key and table:
            name = next(g for g in key.groups() if g is not None)
            out.setdefault((table, name), number)
    return out


def _written(data: Mapping[str, Any], text: str) -> dict[str, Written]:
    """Each option the file sets as it writes it (:attr:`Config.written`): its table
    and key as spelled there, and its line."""
    lines = _lines(text)
    keys = audit_keys()
    out: dict[str, Written] = {}
    audit = data.get("audit")
    for key in audit if isinstance(audit, Mapping) else ():
        name = keys.get(str(key).replace("_", "-"))
        if name is not None:
            out[name] = Written(f"[audit] {key}", lines.get(("audit", str(key))))
    for name, spec in settings_fields().items():
        if spec.section and spec.section in data:
            out[name] = Written(f"[{spec.section}]", lines.get((spec.section, None)))
    return out


def _audit_options(table: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The ``[audit]`` table as option values: a key written twice (``n_boot`` and
    ``n-boot``) or unknown is an error naming it."""
    keys = audit_keys()
    by_name: dict[str, str] = {}
    for key in table:
        name = keys.get(str(key).replace("_", "-"))
        if name is None:
            raise ConfigError(f"{where}: [audit] {key}: unknown option — use {', '.join(keys)}")
        if name in by_name:
            raise ConfigError(
                f"{where}: [audit] {by_name[name]} and {key} are the same option — keep one"
            )
        by_name[name] = str(key)
    given = {name: table[key] for name, key in by_name.items()}
    return read_options(given, "file", where, keys=by_name)
