"""How the caller renames a column, and a renaming written as the caller gives it:
``--map`` on the command line, ``mapping=`` in Python, pandas' ``rename`` for a frame
handed as it is. Light to import (the command line enters :func:`renaming_by` before it
knows its command); :mod:`recuse.tables` re-exports it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Literal, ParamSpec, TypeVar

__all__ = [
    "Renaming",
    "caller_option",
    "map_hint",
    "map_option",
    "map_source",
    "mapping_named",
    "mapping_renames",
    "mapping_set_in",
    "mapping_sources",
    "renaming_by",
    "takes_mapping",
]


def map_source(name: str) -> str:
    """A file column as ``--map`` takes it: without the spaces around it (the reader finds
    ``" id"`` from ``id``), and in double quotes where it holds a comma or starts with a
    quote (a ``"`` inside doubled, as in CSV).

    >>> map_source(" id"), map_source("score, raw"), map_source('say "hi"')
    ('id', '"score, raw"', 'say "hi"')
    """
    name = name.strip()
    if "," in name or name.startswith('"'):
        return '"' + name.replace('"', '""') + '"'
    return name


#: how the caller renames a column, which a suggested renaming is written for
#: (:func:`map_option`): "flag", the command line's ``--map`` (``recuse.cli.main``);
#: "keyword", the ``mapping=`` of the functions that read a file or DataFrame
#: (``recuse.audit``, ``recuse.data.load``: :func:`recuse.data.inputs.load_input`);
#: "rename", a table handed as it is to a function that takes no mapping
#: (``recuse.validate_pairs(frame)``): pandas' ``rename``
Renaming = Literal["flag", "keyword", "rename"]
_RENAMING: ContextVar[Renaming | None] = ContextVar("recuse_renaming", default=None)


#: where the column mapping in use was set, one ``(words, config file)`` per place
#: (:func:`mapping_set_in`); None: not said (a mapping handed to the reader directly)
MappingSources = tuple[tuple[str, str | None], ...]
_MAPPING_SET: ContextVar[MappingSources | None] = ContextVar("recuse_mapping_set", default=None)
#: the (file column, schema column) entries each place of :data:`_MAPPING_SET` holds, in
#: its order (:func:`mapping_set_in`'s ``entries``); None: not said
_MAPPING_HELD: ContextVar[tuple[frozenset[tuple[str, str]], ...] | None] = ContextVar(
    "recuse_mapping_held", default=None
)


@contextmanager
def renaming_by(way: Renaming) -> Iterator[None]:
    """Within the block, :func:`map_option` writes a renaming ``way``, unless an outer
    block said already (the command line reads files through ``load_input``, whose
    ``mapping=`` its user never sees); where the mapping was set
    (:func:`mapping_set_in`) is said until the block ends."""
    token = _RENAMING.set(_RENAMING.get() or way)
    said = _MAPPING_SET.set(_MAPPING_SET.get())
    held = _MAPPING_HELD.set(_MAPPING_HELD.get())
    try:
        yield
    finally:
        _MAPPING_HELD.reset(held)
        _MAPPING_SET.reset(said)
        _RENAMING.reset(token)


def mapping_set_in(
    places: MappingSources | None,
    entries: Iterable[Mapping[str, str | tuple[str, ...]] | None] = (),
) -> None:
    """Say, until the enclosing :func:`renaming_by` block ends, where the column mapping
    was set: each place in words (``--map``, ``mapping=``, ``[map] in recuse.toml``)
    with the config file's path where it is one
    (:func:`recuse.options.option_named`), and ``entries``, the mapping each place holds
    (in the same order), so an error about one entry names the places that hold it
    (:func:`mapping_named`). The command line and ``recuse.audit`` say it once they know
    their settings' sources."""
    _MAPPING_SET.set(places)
    held = tuple(
        frozenset(
            (str(k).strip(), str(t).strip())
            for k, v in (m or {}).items()
            for t in ((v,) if isinstance(v, str) else v)
        )
        for m in entries
    )
    _MAPPING_HELD.set(held if places and len(held) == len(places) else None)


def mapping_sources() -> MappingSources | None:
    """Where the column mapping in use was set (:func:`mapping_set_in`); None: not said."""
    return _MAPPING_SET.get()


def mapping_renames() -> str:
    """``--map renames``, the mapping's places short (``[map]``, ``mapping=``) with their
    verb, where the user set it (:func:`mapping_set_in`), else as the caller gives it:
    a fix's "use the file's own column names (before [map] renames them)" read "before
    --map" of a [map] in recuse.toml.

    >>> with renaming_by("flag"):
    ...     mapping_set_in((("--map", None), ("[map] in r.toml line 2", "r.toml")))
    ...     print(mapping_renames())
    --map and [map] rename
    """
    places = _MAPPING_SET.get()
    if not places:
        return caller_option("--map", "mapping=") + " renames"
    short = [words.split(" in ", 1)[0] if path else words for words, path in places]
    return " and ".join(short) + (" renames" if len(short) == 1 else " rename")


def mapping_named(entries: Iterable[tuple[str, str]] = ()) -> str:
    """The column mapping as its errors name it: where the user set it, only there
    (``--map``; ``[map] in recuse.toml``; both where both were given, as the mapping is
    their merge); where that is not said, as the caller gives it (:func:`caller_option`:
    the command line's flag or recuse.toml, the Python keyword). It named both
    ``--map`` and ``[map] in recuse.toml`` whichever was used. ``entries``: the
    (file column, schema column) entries an error is about: of a merged mapping, only
    the places that hold one are named (both where both do), where
    :func:`mapping_set_in` was told what each holds.

    >>> with renaming_by("flag"):
    ...     mapping_set_in((("[map] in conf/recuse.toml", "conf/recuse.toml"),))
    ...     print(mapping_named())
    the column mapping ([map] in conf/recuse.toml)
    >>> with renaming_by("keyword"):
    ...     print(mapping_named())
    the column mapping (mapping=)
    """
    places, held = _MAPPING_SET.get(), _MAPPING_HELD.get()
    wanted = {(k.strip(), t.strip()) for k, t in entries}
    if places and held and wanted:
        holding = tuple(p for p, h in zip(places, held, strict=True) if h & wanted)
        places = holding or places
    if places:
        return f"the column mapping ({' and '.join(words for words, _ in places)})"
    return caller_option("the column mapping (--map, or [map] in recuse.toml)",
                         "the column mapping (mapping=)")  # fmt: skip


_P = ParamSpec("_P")
_R = TypeVar("_R")


def takes_mapping(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``function``, which takes ``mapping=``, run in :func:`renaming_by` ("keyword"):
    its fixes name its keyword, not the command line's ``--map``."""

    @wraps(function)
    def renaming_by_keyword(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with renaming_by("keyword"):
            return function(*args, **kwargs)

    return renaming_by_keyword


def map_option(pairs: Iterable[tuple[str, str]]) -> str:
    """The renaming of ``pairs`` (FILE_COLUMN, SCHEMA_COLUMN) as the caller gives it
    (:data:`Renaming`, :func:`renaming_by`): ``--map`` on the command line, quoted for a
    shell where a name needs it (:func:`map_source`; :func:`shlex.quote`), else a
    Python mapping: ``mapping=`` with each name without the spaces around it (which the
    reader finds), pandas' ``rename`` with each name as the frame has it (``rename``
    matches names exactly: ``{'id': ...}`` renamed nothing of a column ``' id'``).

    >>> with renaming_by("flag"):
    ...     print(map_option([(" id", "item_id"), ("Human", "human")]))
    ...     print(map_option([("score, raw", "human")]))
    --map id=item_id,Human=human
    --map '"score, raw"=human'
    >>> with renaming_by("keyword"):
    ...     print(map_option([(" id", "item_id")]))
    mapping={'id': 'item_id'}
    >>> print(map_option([("grader", "judge"), (" id", "item_id")]))
    frame.rename(columns={'grader': 'judge', ' id': 'item_id'})
    """
    import shlex

    pairs = list(pairs)
    way = _RENAMING.get() or "rename"
    if way == "flag":
        return "--map " + shlex.quote(",".join(f"{map_source(k)}={v}" for k, v in pairs))
    if way == "keyword":
        return f"mapping={ {k.strip(): v for k, v in pairs}!r}"
    return f"frame.rename(columns={dict(pairs)!r})"


def caller_option(flag: str, keyword: str) -> str:
    """An option as the caller gives it (:func:`renaming_by`): ``flag`` on the command
    line, else the Python ``keyword`` (``recuse.audit(frame)`` has no ``--map``).

    >>> with renaming_by("flag"):
    ...     print(caller_option("--map", "mapping="))
    --map
    >>> print(caller_option("--map", "mapping="))
    mapping=
    """
    return flag if _RENAMING.get() == "flag" else keyword


def map_hint(guess: Mapping[str, str]) -> str:
    """The renaming that reads the ``guess`` (:func:`suggest_columns`) as the caller
    gives it (:func:`map_option`), as a sentence opening a fix; "" without a guess.

    >>> with renaming_by("flag"):
    ...     map_hint({" id": "item_id", "Human": "human"})
    'did you mean --map id=item_id,Human=human? '
    """
    if not guess:
        return ""
    return f"did you mean {map_option(guess.items())}? "
