"""Model and judge names -> canonical id + family.

The roster is data: a built-in TOML file (``roster.toml`` in this package) that a
user file can extend or override (``[[model]]`` tables with ``id``, ``family``,
``aliases`` and, for a dated snapshot, the ``line`` it belongs to). Names are matched
case-insensitively after trimming, as Unicode text rather than code points (``é`` one
character or ``e`` and a combining accent are one name).

Snapshots and lines: a dated name (``gpt-4-0314``, ``claude-3-5-sonnet-20240620``) is
its own model; an undated name (``gpt-4``) is the model line, a model of its own too.
So two snapshots of one line that meet in a file stay two models (and a user roster
that aliases two dated names to one id is overruled in that file, see
:func:`split_dated`). "Self" (a judge judging its own answer) is the same id
(``self_scope="snapshot"``, the default); the other snapshots of the judge's line are
its family. ``self_scope="line"`` widens self to every model of the judge's line
(:meth:`Roster.self_keys`).
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from recuse.choices import ROSTER_ENV as ROSTER_ENV
from recuse.choices import SelfScope as SelfScope
from recuse.errors import ConfigError, InputError, ReaderNote
from recuse.files import is_file, read_toml
from recuse.tables import caller_option, shown

#: how a roster file is given, as the caller gives it (:func:`recuse.tables.caller_option`)
_GIVE_ROSTER = ("pass --roster FILE (or set RECUSE_ROSTER)", "pass roster=FILE (or a Roster)")


def unknown_fix() -> str:
    """The fix of an unknown model name refused (``unknown_models="error"``)."""
    return (
        "read each as its own model and family (unknown_models='keep', the default), or add "
        "them to a roster file ([[model]] id, family, aliases) and " + caller_option(*_GIVE_ROSTER)
    )


def kept_fix() -> str:
    """The note's fix for unknown model names kept, each its own model and family."""
    return (
        "to give them a family or aliases, add them to a roster file ([[model]] id, family, "
        "aliases) and " + caller_option(*_GIVE_ROSTER)
    )


Unknown = Literal["keep", "error"]


class ModelsNotInRoster(ReaderNote):
    """Model names the roster lacks, each read as its own model and family."""


MAX_NAMED = 20  # unknown names listed in one message
SELF_SCOPES: tuple[SelfScope, ...] = ("snapshot", "line")
# a date in a model name: 20240620 / 2024-06-20 (year 20xx), or a 4-digit MMDD / YYMM
# token of its own (gpt-4-0314, gpt4_0613, mistral-large-2407)
DATE_IN_NAME = re.compile(r"(?<![0-9])(20[0-9]{2}-?[01][0-9]-?[0-3][0-9]|[0-9]{4})(?![0-9])")


@dataclass(frozen=True)
class Entry:
    """One model: canonical ``id``, ``family``, other spellings (``aliases``) and, for a
    dated snapshot, the model ``line`` it belongs to (None: the entry is its own line)."""

    id: str
    family: str
    aliases: tuple[str, ...] = ()
    line: str | None = None


def self_keys(names: pd.Series, selves: Mapping[str, str] | None) -> pd.Series:
    """``names`` as the keys "self" compares (see :meth:`Roster.self_map`): unchanged
    when ``selves`` is None, else each name's key (a name the map lacks is its own).

    >>> self_keys(pd.Series(["gpt-4-0613", "gpt-4", "x"]), {"gpt-4-0613": "gpt-4"}).tolist()
    ['gpt-4', 'gpt-4', 'x']
    """
    if selves is None:
        return names
    out = names.astype(object).copy()
    known = out.notna()
    out[known] = [selves.get(n, n) for n in out[known]]
    return out


def date_token(name: str) -> str | None:
    """The date a model name carries (digits only), or None for an undated name.

    >>> date_token("gpt-4-0613"), date_token("claude-3-5-sonnet-20240620"), date_token("gpt-4")
    ('0613', '20240620', None)
    >>> date_token("gpt4_0314"), date_token("llama-3.1-70b")
    ('0314', None)
    """
    found = DATE_IN_NAME.findall(name)
    return found[-1].replace("-", "") if found else None


def _key(name: str) -> str:
    """The lookup key of a name: NFD(casefold(NFD(name))), trimmed — Unicode's canonical
    caseless match, so that a name typed with ``é`` as one character and the same name
    with ``e`` and a combining accent (as macOS file names and some editors write it)
    are one model, not two that look alike in every note.

    >>> _key(" Mod\u00e8le ") == _key("mode\u0300le")
    True
    """
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", name).casefold()).strip()


def _no_roster(p: Path) -> str:
    """What ``p``, no regular file, is: a folder, a pipe or device, a link leading
    nowhere (or a loop of links), or nothing. A pipe was "no such file", though
    ``ls`` shows it there."""
    if is_file(p, folder=True):
        return "a folder"
    if p.is_symlink() and not p.exists():
        return "a link to nothing (or a loop of links)"
    return "no such file" if not p.exists() else "a special file (a pipe, a device)"


class Roster:
    """Lookup of canonical ids and families.

    >>> r = Roster.builtin()
    >>> r.canonical("ChatGPT"), r.family("gpt-4o-2024-05-13")
    ('gpt-3.5-turbo', 'gpt')
    """

    def __init__(self, entries: Iterable[Entry]) -> None:
        self.entries: dict[str, Entry] = {}
        self._lookup: dict[str, str] = {}
        self.kept: list[str] = []  # names read as their own model (not in the roster)
        self._noting: list[tuple[str | None, int]] = []  # open noting() blocks
        for e in entries:
            self.add(e)

    def keep(self, names: Iterable[object], *, where: str | None = None) -> list[str]:
        """Add each name the roster lacks as its own model and family (id = the name,
        trimmed, in Unicode's composed form NFC whichever way the file wrote it); returns
        those added. One :class:`ModelsNotInRoster` note lists them: at
        the end of the enclosing :meth:`noting` block, or now when there is none."""
        added: list[str] = []
        for raw in names:
            if raw is None or (isinstance(raw, float) and raw != raw):
                continue
            name = unicodedata.normalize("NFC", str(raw).strip())
            if name and name not in self:
                self.add(Entry(name, name))
                added.append(name)
        self.kept.extend(added)
        if added and not self._noting:
            _note_kept(added, where)
        return added

    @contextmanager
    def noting(self, where: str | None = None) -> Iterator[None]:
        """Collect the names :meth:`keep` adds inside the block into one note for
        ``where`` (a file or dataset); nested blocks leave the note to the outermost."""
        self._noting.append((where, len(self.kept)))
        try:
            yield
        finally:
            where0, start = self._noting.pop()
            if not self._noting and len(self.kept) > start:
                _note_kept(self.kept[start:], where0)

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
        """Built-ins plus the user file ``path`` on top.

        Called only where a run builds its context (:func:`recuse.api.context_roster`,
        which ``recuse.audit`` and every CLI command use): the one roster is then passed
        down; library functions given no roster use :meth:`builtin`
        (``tests/test_roster_passed.py``)."""
        roster = cls.builtin()
        if path:
            p = Path(path)
            if not is_file(p):
                raise ConfigError(f"roster file {p}: {_no_roster(p)} — give a roster TOML file")
            # UTF-8 (a byte-order mark dropped), bounded; a byte that is not names its line
            entries = entries_from(read_toml(p), str(p))
            no_name_taken(roster, entries, str(p))
            for e in entries:
                roster.add(e)
        return roster

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and _key(name) in self._lookup

    def canonical(
        self,
        name: str,
        *,
        file: str | None = None,
        column: str | None = None,
        unknown: Unknown = "keep",
    ) -> str:
        """Canonical id of ``name``. A name the roster lacks is read as its own model
        and family (:meth:`keep`, one note), or raises :class:`InputError` with
        ``unknown="error"``."""
        try:
            return self._lookup[_key(name)]
        except KeyError:
            if unknown == "error" or not str(name).strip():
                raise self.unknown_error({name: 1}, file=file, column=column) from None
        self.keep([name], where=file)
        return self._lookup[_key(name)]

    def judge_in(self, name: str, present: Iterable[str]) -> str:
        """``name`` as the data names it (``present``: the judges it holds): itself, the
        roster's id for it (an alias, another case: ``GPT-4``, ``gpt4``), or the one judge
        present that it names in another case. Another snapshot (``gpt-4-0613`` for
        ``gpt-4``) stays another model. Raises :class:`ConfigError` listing the judges
        present."""
        judges = sorted(set(present))
        if name in judges:
            return name
        known = self.canonical(name, unknown="error") if name in self else None
        if known in judges:
            return str(known)
        folded = [j for j in judges if j.casefold() == name.strip().casefold()]
        if len(folded) == 1:
            return folded[0]
        raise ConfigError(
            f"judge {name!r} is not in the data — judges present: {', '.join(judges) or 'none'}"
        )

    def family(self, name: str) -> str:
        return self.entries[self.canonical(name, unknown="error")].family

    def line(self, name: str) -> str:
        """The model line of ``name``: its entry's ``line``, or its own id."""
        entry = self.entries[self.canonical(name, unknown="error")]
        return entry.line or entry.id

    def self_map(self, scope: SelfScope = "snapshot") -> dict[str, str] | None:
        """What "self" compares, as ``{canonical id: key}`` for the ``selves=`` option of
        the self-preference functions: None for ``scope="snapshot"`` (the id itself: a
        judge judges itself only on its own snapshot's answers), each id's model line
        for ``"line"`` (every snapshot of the judge's line, and the undated line name,
        count as the judge itself). Ids the map lacks are their own key."""
        if scope == "snapshot":
            return None
        if scope != "line":
            raise ConfigError(f"self scope must be one of {', '.join(SELF_SCOPES)}; got {scope!r}")
        return {k: e.line or e.id for k, e in self.entries.items()}

    def canonicalize(
        self,
        names: pd.Series,
        *,
        file: str | None = None,
        column: str | None = None,
        unknown: Unknown = "keep",
    ) -> pd.Series:
        """Map a column of names to canonical ids (missing values stay missing).

        Names the roster lacks are read as their own models (:meth:`keep`, one note), or
        with ``unknown="error"`` raise :class:`InputError` naming the first row with one.
        """
        out, missing = self.lookup(names)
        if missing.any() and unknown == "keep":
            self.keep(names[missing].unique().tolist(), where=file)
            out, missing = self.lookup(names)
        if missing.any():
            unknown_mask = missing
            i = int(unknown_mask.to_numpy().nonzero()[0][0])
            counts = names[unknown_mask].value_counts(sort=False).to_dict()
            raise self.unknown_error(counts, file=file, row=i + 1, column=column)
        return out

    def lookup(self, names: pd.Series) -> tuple[pd.Series, pd.Series]:
        """Canonical ids of ``names`` (NaN where unknown) and the mask of unknown names."""
        # each distinct name keyed once (a column holds a few names over many rows):
        # the Unicode normalisation of every row cost 10% more than the plain key did
        text = names.astype(str)  # as every name is read (a list too, never unhashable)
        keys = text.map({name: _key(name) for name in text[names.notna()].unique()})
        out = keys.where(names.notna()).map(self._lookup)
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
        return InputError(what, file=file, row=row, column=column, fix=hint + unknown_fix())

    def families(self, ids: pd.Series) -> pd.Series:
        """Family of each canonical id in ``ids`` (missing stays missing)."""
        return ids.map({k: e.family for k, e in self.entries.items()})


def _note_kept(names: list[str], where: str | None) -> None:
    listed = ", ".join(shown(n) for n in sorted(names)[:MAX_NAMED])
    more = f" and {len(names) - MAX_NAMED:,} more" if len(names) > MAX_NAMED else ""
    what = (
        f"model {listed} is not in the roster, read as its own model and family"
        if len(names) == 1
        else f"{len(names):,} model names are not in the roster, each read as its own "
        f"model and family: {listed}{more}"
    )
    warnings.warn(
        f"{where + ': ' if where else ''}{what} — {kept_fix()}", ModelsNotInRoster, stacklevel=3
    )


def split_dated(roster: Roster, names: Iterable[object]) -> dict[str, str]:
    """Keep apart the dated names of one file that the roster would merge.

    Of the distinct ``names`` met in one file, those the roster maps to one id while
    carrying different dates (a user roster listing ``gpt-4-0314`` and ``gpt-4-0613``
    as aliases of one id) are each made a model of their own: an entry with the name
    as id, the merged entry's family, and its line. Returns ``{name: id it would have
    merged into}`` for the names split off (empty when nothing would merge).
    """
    groups: dict[str, dict[str, set[str]]] = {}
    for raw in names:
        if not isinstance(raw, str) or not raw.strip() or raw not in roster:
            continue
        date = date_token(raw)
        if date is not None:
            groups.setdefault(roster.canonical(raw), {}).setdefault(date, set()).add(raw.strip())
    split: dict[str, str] = {}
    for target, by_date in groups.items():
        if len(by_date) < 2:
            continue
        entry = roster.entries[target]
        for date in sorted(by_date):
            if date_token(entry.id) == date:
                continue  # the entry's own date keeps the entry
            first = sorted(by_date[date])[0]
            roster.add(Entry(first, entry.family, tuple(sorted(by_date[date] - {first})),
                             entry.line or entry.id))  # fmt: skip
            split.update({name: target for name in by_date[date]})
    return split


def _parse(text: str, where: str) -> list[Entry]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML ({exc})") from None
    return entries_from(data, where)


#: the keys of a ``[[model]]`` table
ENTRY_KEYS = ("id", "family", "aliases", "line")


def entries_from(data: Mapping[str, Any], where: str) -> list[Entry]:
    """The ``[[model]]`` tables of parsed TOML ``data`` as roster entries."""
    models = data.get("model", [])
    if not isinstance(models, list):
        raise ConfigError(
            f"{where}: expected [[model]] tables — write [[model]], in two brackets, above "
            "each model's id and family"
        )
    entries = []
    for i, m in enumerate(models, start=1):
        if (
            not isinstance(m, Mapping)
            or not isinstance(m.get("id"), str)
            or not isinstance(m.get("family"), str)
        ):
            raise ConfigError(f"{where}: model entry {i} needs string 'id' and 'family'")
        # a misspelt key (alias = [...]) was passed over: the names it gave were unknown
        unknown = [str(k) for k in m if k not in ENTRY_KEYS]
        if unknown:
            raise ConfigError(
                f"{where}: model entry {i} ({m['id']}): unknown key {unknown[0]!r} — a "
                f"[[model]] takes {', '.join(ENTRY_KEYS)}"
            )
        blank = [k for k in ("id", "family") if not m[k].strip()]
        if blank:
            raise ConfigError(
                f"{where}: model entry {i}: {blank[0]} is empty — give the model's name"
                if blank[0] == "id"
                else f"{where}: model entry {i} ({m['id']}): family is empty — give its "
                "family (its own id, if it has none)"
            )
        aliases = m.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise ConfigError(f"{where}: model entry {i} ({m['id']}): aliases must be strings")
        line = m.get("line")
        if line is not None and not isinstance(line, str):
            raise ConfigError(f"{where}: model entry {i} ({m['id']}): line must be a string")
        entries.append(Entry(m["id"], m["family"], tuple(aliases), line or None))
    _one_model_per_name(entries, where)
    return entries


def no_name_taken(builtin: Roster, entries: Sequence[Entry], where: str) -> None:
    """A :class:`ConfigError` where an entry of a user file (``--roster``, a recuse.toml's
    ``[[model]]``) takes a name of a model of ``builtin`` (the roster it extends) that it
    does not replace (an alias or id that is another model's name): that model's rows
    would be read as the entry's without a word (a judge's own answers, or another
    family's). Replacing the entry (its id) takes its names with it, so is fine.
    """
    replaced = {builtin._lookup.get(_key(e.id)) for e in entries} & {e.id for e in entries}
    for i, e in enumerate(entries, start=1):
        for name in (e.id, *e.aliases):
            other = builtin._lookup.get(_key(name))
            if other is None or other == e.id or other in replaced:
                continue
            raise ConfigError(
                f"{where}: model entry {i} ({e.id}): the name {name!r} already names the "
                f"roster's model {other!r}, whose rows so named would be read as model {e.id!r} "
                f"without a word — use another name, or replace that model: an entry with "
                f"id {other!r} (and the aliases it should keep)"
            )


def _one_model_per_name(entries: Sequence[Entry], where: str) -> None:
    """A :class:`ConfigError` where two entries of one file (other ids) share a name:
    names are read ignoring case and the spaces around them (``Foo`` and ``foo`` are
    one name), so the later would take the name from the earlier without a word."""
    owner: dict[str, tuple[int, str]] = {}
    for i, e in enumerate(entries, start=1):
        for name in (e.id, *e.aliases):
            j, other = owner.setdefault(_key(name), (i, e.id))
            if other != e.id:
                raise ConfigError(
                    f"{where}: model entry {i} ({e.id}): the name {name!r} is model entry "
                    f"{j} ({other}) too — recuse reads model names ignoring case and the "
                    "spaces around them; give the two models names that differ otherwise, "
                    "or make them one entry"
                )
