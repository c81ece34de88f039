"""Model and judge names -> canonical id + family.

The roster is data: a built-in TOML file (``roster.toml`` in this package) that a
user file can extend or override (``[[model]]`` tables with ``id``, ``family`` and
``aliases``). Names are matched case-insensitively after trimming.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pandas as pd

from recuse.errors import ConfigError, InputError
from recuse.tables import shown

ROSTER_ENV = "RECUSE_ROSTER"
UNKNOWN_FIX = (
    "pass --allow-unknown-models (library: unknown_models='keep') to read each as its own "
    "model and family, or add them to a roster file ([[model]] id, family, aliases) and "
    "pass --roster FILE (or set RECUSE_ROSTER)"
)
MAX_NAMED = 20  # unknown names listed in one message


@dataclass(frozen=True)
class Entry:
    id: str
    family: str
    aliases: tuple[str, ...] = ()


def _key(name: str) -> str:
    return name.strip().casefold()


class Roster:
    """Lookup of canonical ids and families.

    >>> r = Roster.builtin()
    >>> r.canonical("ChatGPT"), r.family("gpt-4o-2024-05-13")
    ('gpt-3.5-turbo', 'gpt')
    """

    def __init__(self, entries: Iterable[Entry]) -> None:
        self.entries: dict[str, Entry] = {}
        self._lookup: dict[str, str] = {}
        for e in entries:
            self.add(e)

    def add(self, entry: Entry) -> None:
        """Add an entry; one with the same id replaces the old one and its aliases."""
        old = self.entries.pop(entry.id, None)
        if old is not None:
            for name in (old.id, *old.aliases):
                self._lookup.pop(_key(name), None)
        self.entries[entry.id] = entry
        for name in (entry.id, *entry.aliases):
            self._lookup[_key(name)] = entry.id

    @classmethod
    def builtin(cls) -> Roster:
        text = resources.files("recuse").joinpath("roster.toml").read_text("utf-8")
        return cls(_parse(text, "built-in roster.toml"))

    @classmethod
    def load(cls, path: str | Path | None = None) -> Roster:
        """Built-ins plus the user file ``path`` (or ``$RECUSE_ROSTER``) on top."""
        roster = cls.builtin()
        path = path or os.environ.get(ROSTER_ENV)
        if path:
            p = Path(path)
            try:
                text = p.read_text("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"cannot read roster file {p}: {exc}") from None
            for e in _parse(text, str(p)):
                roster.add(e)
        return roster

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _key(name) in self._lookup

    def canonical(self, name: str, *, file: str | None = None, column: str | None = None) -> str:
        """Canonical id of ``name``; unknown names raise :class:`InputError`."""
        try:
            return self._lookup[_key(name)]
        except KeyError:
            raise self.unknown_error({name: 1}, file=file, column=column) from None

    def family(self, name: str) -> str:
        return self.entries[self.canonical(name)].family

    def canonicalize(
        self, names: pd.Series, *, file: str | None = None, column: str | None = None
    ) -> pd.Series:
        """Map a column of names to canonical ids (missing values stay missing).

        Unknown names raise :class:`InputError` naming the first row that has one.
        """
        out, unknown = self.lookup(names)
        if unknown.any():
            i = int(unknown.to_numpy().nonzero()[0][0])
            counts = names[unknown].value_counts(sort=False).to_dict()
            raise self.unknown_error(counts, file=file, row=i + 1, column=column)
        return out

    def lookup(self, names: pd.Series) -> tuple[pd.Series, pd.Series]:
        """Canonical ids of ``names`` (NaN where unknown) and the mask of unknown names."""
        keys = names.where(names.isna(), names.astype(str).str.strip().str.casefold())
        out = keys.map(self._lookup)
        return out, out.isna() & names.notna()

    def unknown_error(
        self,
        counts: Mapping[object, int],
        *,
        file: str | None = None,
        row: int | None = None,
        column: str | None = None,
    ) -> InputError:
        """One error for every unknown name (``{name: cells}``: its count over the model
        columns): sorted, with counts, at most :data:`MAX_NAMED` named, close roster names
        suggested, the flag to pass."""
        import difflib

        names = sorted(counts, key=lambda n: str(n))
        if len(names) == 1:
            what = f"model {shown(names[0])} is not in the roster"
        else:
            listed = ", ".join(
                f"{shown(n)} ({counts[n]:,} cell{'s' if counts[n] != 1 else ''})"
                for n in names[:MAX_NAMED]
            )
            more = f" and {len(names) - MAX_NAMED:,} more" if len(names) > MAX_NAMED else ""
            what = f"{len(names):,} model names are not in the roster: {listed}{more}"
        known = {_key(a): a for e in self.entries.values() for a in (e.id, *e.aliases)}
        hints = []
        for n in names[:5]:
            close = difflib.get_close_matches(_key(str(n)), list(known), n=1, cutoff=0.8)
            if close:
                hints.append(f"{shown(n)} → {self._lookup[close[0]]}?")
        hint = f"did you mean {', '.join(hints)} " if hints else ""
        return InputError(what, file=file, row=row, column=column, fix=hint + UNKNOWN_FIX)

    def families(self, ids: pd.Series) -> pd.Series:
        """Family of each canonical id in ``ids`` (missing stays missing)."""
        return ids.map({k: e.family for k, e in self.entries.items()})


def _parse(text: str, where: str) -> list[Entry]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML ({exc})") from None
    models = data.get("model", [])
    if not isinstance(models, list):
        raise ConfigError(f"{where}: expected [[model]] tables")
    entries = []
    for i, m in enumerate(models, start=1):
        if (
            not isinstance(m, Mapping)
            or not isinstance(m.get("id"), str)
            or not isinstance(m.get("family"), str)
        ):
            raise ConfigError(f"{where}: model entry {i} needs string 'id' and 'family'")
        aliases = m.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise ConfigError(f"{where}: model entry {i} ({m['id']}): aliases must be strings")
        entries.append(Entry(m["id"], m["family"], tuple(aliases)))
    return entries
