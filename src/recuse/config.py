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

import tomllib
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
    names: dict[tuple[str, str | None], list[str]] = {}  # each as the file spells it
    lines = _lines(read_text(p), names)  # where each table and key is, for the errors' words
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
            raise ConfigError(f"{_at(where, lines, key)}: {key} is outside any section — {put}")
        raise ConfigError(
            f"{_at(where, lines, key)}: unknown section [{key}] — use "
            f"{', '.join(SECTIONS[:-1])} or [[model]]"
        )
    options = _audit_options(_table(data, "audit", where), where, lines, names)
    sections = {
        name: _table(data, spec.section, where)
        for name, spec in settings_fields().items()
        if spec.section and spec.section in data
    }
    # a table's line, that of its header: of [values] only where it has one table (the
    # error names [values.w], whose header another [values.x] may precede)
    at = {
        name: lines.get((str(settings_fields()[name].section), None))
        for name, table in sections.items()
        if len(table) <= 1 or not any(isinstance(v, Mapping) for v in table.values())
    }
    options |= read_options(sections, "file", where, lines=at)
    models = tuple(entries_from({"model": data.get("model", [])}, where))
    return Config(p, options, models, _written(data, lines, names))


def _at(where: str, lines: Mapping[tuple[str, str | None], int], table: str,
        key: str | None = None) -> str:  # fmt: skip
    """``recuse.toml line 3``: the file and the line of ``table`` (and ``key``), where
    found."""
    line = lines.get((table, key))
    return f"{where} line {line}" if line else where


def _lines(
    text: str, names: dict[tuple[str, str | None], list[str]] | None = None
) -> dict[tuple[str, str | None], int]:
    """The first line (1-based) of each table, ``(table, None)``, and of each key of
    one, ``(table, key)``, in a TOML text (names as TOML reads them: a quoted key
    unquoted). A scan of its structure, not a parser (the text parsed already): strings,
    multi-line ones included, are stepped over, so a title's line ``level = 0.8 …`` is
    no key; a line ends at ``\\n`` only (U+2028 in a comment is no line end); a dotted
    key (``audit.level = 0.9``) and an inline table (``audit = {level = 0.9}``) name
    their table and key on their line. ``names``, where given, takes how the file spells
    each: a key as its header and dotted key (``[audit] n_boot``, ``audit.n_boot`` at
    the top), a table as every header (or top-level key's table) that opens it
    (``[values.w]``, ``[values.x]``; ``map`` of ``map.human = …``). A text it cannot
    follow gives what it found."""
    out: dict[tuple[str, str | None], int] = {}
    try:
        _Scan(text, out, {} if names is None else names).document()
    except (IndexError, ValueError, tomllib.TOMLDecodeError):
        pass  # not followed: the lines found so far
    return out


class _Scan:
    """:func:`_lines`' scanner: a position in ``text`` and the lines found (``out``)."""

    def __init__(
        self,
        text: str,
        out: dict[tuple[str, str | None], int],
        names: dict[tuple[str, str | None], list[str]],
    ) -> None:
        self.text, self.out, self.names, self.i = text, out, names, 0
        self._counted, self._lines = 0, 1  # the line at position _counted

    def line(self) -> int:
        """The line at the position: counted on from the last call's (the position only
        moves on), not from the top, which took 9 to 29 s for 20,000 roster entries."""
        self._lines += self.text.count("\n", self._counted, self.i)
        self._counted = self.i
        return self._lines

    def found(self, path: tuple[str, ...], line: int, spelled: str, *, opens: str | None) -> None:
        """``path`` is on ``line``, written ``spelled`` (a header, or a key named with
        its header); ``opens``: the table a header or a top-level key opens, as written
        (``[values.w]``; ``map`` of ``map.human = …`` or ``map = {…}``), its name."""
        if path:
            self.out.setdefault((path[0], None), line)
            said = self.names.setdefault((path[0], None), [])
            if opens is not None and opens not in said:
                said.append(opens)
        if len(path) > 1:
            self.out.setdefault((path[0], path[1]), line)
            self.names.setdefault((path[0], path[1]), [spelled])

    def at(self, chars: str) -> bool:
        return self.text.startswith(chars, self.i)

    def blank(self, *, lines: bool) -> None:
        """Step over spaces and tabs (and line ends and comments, with ``lines``)."""
        while self.i < len(self.text):
            c = self.text[self.i]
            if c in " \t" or (lines and c in "\r\n"):
                self.i += 1
            elif lines and c == "#":
                self.comment()
            else:
                return

    def comment(self) -> None:
        end = self.text.find("\n", self.i)
        self.i = len(self.text) if end < 0 else end

    def document(self) -> None:
        table: tuple[str, ...] = ()
        header = ""  # as the file spells it: [values.w], [[model]]
        while True:
            self.blank(lines=True)
            if self.i >= len(self.text):
                return
            line = self.line()
            if self.at("["):  # [audit], [values.w], [[model]]
                brackets = 2 if self.at("[[") else 1
                self.i += brackets
                table = self.key()
                self.i += brackets
                header = "[" * brackets + ".".join(table) + "]" * brackets
                self.found(table, line, header, opens=header)
            else:
                key = self.key()
                spelled = f"{header} {'.'.join(key)}" if header else ".".join(key)
                opens = None if header else ".".join(key[:-1] or key)  # map.x: map
                self.found(table + key, line, spelled, opens=opens)
                self.i += 1  # =
                self.value(table + key, spelled)
            self.blank(lines=False)
            if self.at("#"):
                self.comment()

    def key(self) -> tuple[str, ...]:
        """A dotted key (``a."b".c``) as TOML reads it; stops before ``=`` or ``]``."""
        parts = []
        while True:
            self.blank(lines=False)
            if self.at('"') or self.at("'"):
                q = self.text[self.i]
                end = self.i + 1
                while self.text[end] != q:
                    end += 2 if q == '"' and self.text[end] == "\\" else 1
                raw = self.text[self.i : end + 1]
                parts.append(str(tomllib.loads(f"k = {raw}")["k"]))
                self.i = end + 1
            else:
                start = self.i
                while self.text[self.i].isascii() and (
                    self.text[self.i].isalnum() or self.text[self.i] in "_-"
                ):
                    self.i += 1
                if self.i == start:
                    raise ValueError("no key")
                parts.append(self.text[start : self.i])
            self.blank(lines=False)
            if not self.at("."):
                return tuple(parts)
            self.i += 1

    def value(self, path: tuple[str, ...] | None, spelled: str = "") -> None:
        """Step over one value (of key ``path``, written ``spelled``: an inline table's
        keys are its keys; None: an array's item, whose inline tables' keys are no
        table's)."""
        self.blank(lines=False)
        for quotes in ('"""', "'''"):
            if self.at(quotes):  # a multi-line string: to its closing quotes
                self.i += 3
                while not self.at(quotes):
                    self.i += 2 if quotes == '"""' and self.at("\\") else 1
                self.i += 3
                while self.at(quotes[0]):  # """a"""" ends with a quote of its text
                    self.i += 1
                return
        c = self.text[self.i]
        if c in "\"'":
            self.key()  # a one-line string reads as a quoted key does
        elif c in "[{":
            self.i += 1
            while True:
                self.blank(lines=True)
                if self.at("]") or self.at("}"):
                    self.i += 1
                    return
                if self.at(","):
                    self.i += 1
                elif c == "{":
                    line = self.line()
                    key = self.key()
                    inner = None if path is None else path + key
                    named = f"{spelled}.{'.'.join(key)}"
                    if inner is not None:
                        self.found(inner, line, named, opens=None)
                    self.i += 1  # =
                    self.value(inner, named)
                else:
                    self.value(None)  # an array's items: no key of a table
        else:  # a number, a boolean, a date: to the next , ] } # or line end
            while self.i < len(self.text) and self.text[self.i] not in ",]}#\r\n":
                self.i += 1


def _written(
    data: Mapping[str, Any],
    lines: Mapping[tuple[str, str | None], int],
    names: Mapping[tuple[str, str | None], list[str]],
) -> dict[str, Written]:
    """Each option the file sets as it writes it (:attr:`Config.written`): its table
    and key as spelled there (``names``), and its line (``lines``: :func:`_lines`)."""
    keys = audit_keys()
    out: dict[str, Written] = {}
    audit = data.get("audit")
    for key in audit if isinstance(audit, Mapping) else ():
        name = keys.get(str(key).replace("_", "-"))
        if name is not None:
            said = names.get(("audit", str(key))) or [f"[audit] {key}"]
            out[name] = Written(said[0], lines.get(("audit", str(key))))
    for name, spec in settings_fields().items():
        if spec.section and spec.section in data:
            said = names.get((spec.section, None)) or [f"[{spec.section}]"]
            out[name] = Written(", ".join(said), lines.get((spec.section, None)))
    return out


def _audit_options(
    table: Mapping[str, Any],
    where: str,
    lines: Mapping[tuple[str, str | None], int],
    names: Mapping[tuple[str, str | None], list[str]],
) -> dict[str, Any]:
    """The ``[audit]`` table as option values: a key written twice (``n_boot`` and
    ``n-boot``) or unknown is an error naming it as the file spells it (``names``:
    ``[audit] n_boot``, ``audit.n_boot``), with its line (``lines``)."""
    keys = audit_keys()
    by_name: dict[str, str] = {}
    spelled = {k: (names.get(("audit", str(k))) or [f"[audit] {k}"])[0] for k in table}
    for key in table:
        name = keys.get(str(key).replace("_", "-"))
        at = _at(where, lines, "audit", str(key))
        if name is None:
            raise ConfigError(f"{at}: {spelled[key]}: unknown option — use {', '.join(keys)}")
        if name in by_name:  # "[audit] n_boot and n-boot": one header said once
            first, header = spelled[by_name[name]], "[audit] "
            again = spelled[key].removeprefix(header) if first.startswith(header) else spelled[key]
            raise ConfigError(f"{at}: {first} and {again} are the same option — keep one")
        by_name[name] = str(key)
    given = {name: table[key] for name, key in by_name.items()}
    at_line = {name: lines.get(("audit", key)) for name, key in by_name.items()}
    said = {name: spelled[key] for name, key in by_name.items()}
    return read_options(given, "file", where, keys=said, lines=at_line)
