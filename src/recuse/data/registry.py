"""The named datasets recuse knows, where their files live, and ``load``.

Each reader module calls :func:`register` at import time with a :class:`Dataset`.
Files are looked up under the data directory: the ``data_dir`` argument, else
``$RECUSE_DATA_DIR``, else the fetch cache ``~/.cache/recuse/data`` (what
``recuse data fetch`` fills). Each dataset has its own folder there, laid out as
upstream.
"""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from recuse.errors import DatasetNotFoundError
from recuse.files import is_file
from recuse.reference import ReferenceKind
from recuse.roster import Roster
from recuse.tables import TableKind

DATA_DIR_ENV = "RECUSE_DATA_DIR"
#: the reader of one named dataset: (its folder, roster) -> a validated evidence table
DatasetReader = Callable[[Path, Roster], pd.DataFrame]

# Modules that register datasets; imported on first use.
_READER_MODULES: tuple[str, ...] = (
    "recuse.data.play_favorites",
    "recuse.data.alpaca_eval",
    "recuse.data.hh_rlhf",
    "recuse.data.llmbar",
    "recuse.data.mt_bench",
    "recuse.data.judgebench",
)


@dataclass(frozen=True)
class Dataset:
    name: str
    folder: str  # folder under the data directory
    table: TableKind
    summary: str
    reader: DatasetReader  # reader(folder_path, roster) -> validated evidence table
    label: str = "human preference"  # what the ``human`` / ``reference`` column holds
    #: which kind of label that is: the report's words name it (:mod:`recuse.reference`)
    reference: ReferenceKind = "human"


_DATASETS: dict[str, Dataset] = {}


def register(dataset: Dataset) -> Dataset:
    _DATASETS[dataset.name] = dataset
    return dataset


def datasets() -> dict[str, Dataset]:
    """All registered datasets by name."""
    for module in _READER_MODULES:
        importlib.import_module(module)
    return dict(_DATASETS)


def default_data_dir() -> Path:
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "recuse" / "data"


def get(name: str) -> Dataset:
    known = datasets()
    if name not in known:
        close = near_miss(name, known)
        hint = f"did you mean {close!r}? " if close else ""
        raise DatasetNotFoundError(
            f"unknown dataset {name!r} — {hint}known datasets: {', '.join(sorted(known))} "
            "(or give a path to a CSV / JSONL / Parquet file)"
        )
    return known[name]


def near_miss(name: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` that ``name`` is likely a typo of (:mod:`difflib`, 0.8 alike),
    both compared as datasets are spelt: lower case, '-' for '_' and spaces (a folder's
    ``mt_bench`` is a typed ``mt-bench``; of two names spelt alike, the later); None
    where none is near."""
    spelling = {_spelt(n): n for n in names}
    close = difflib.get_close_matches(_spelt(name), list(spelling), n=1, cutoff=0.8)
    return spelling[close[0]] if close else None


def _spelt(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


def folder(name: str, data_dir: str | Path | None = None) -> Path:
    """The folder holding dataset ``name``'s files; raises if it is not there."""
    ds = get(name)
    root = Path(data_dir).expanduser() if data_dir else default_data_dir()
    path = root / ds.folder
    if not is_file(path, folder=True):
        given = "give --data-dir" if data_dir else f"point {DATA_DIR_ENV} at"
        what = (
            "a file, not a folder"
            if root.is_file()
            else f"a folder without {ds.folder}/"
            if root.is_dir()
            else "no such folder"
        )
        raise DatasetNotFoundError(
            f"dataset {name!r} is not in {root} ({what}) — run `recuse data fetch {name}` "
            f"or {given} a folder that has {ds.folder}/"
        )
    return path


def load(
    name: str, *, data_dir: str | Path | None = None, roster: Roster | None = None
) -> pd.DataFrame:
    """Read dataset ``name`` into its evidence table. Model names the roster lacks (a
    user roster that replaced a built-in entry, a newer release of the data) are read
    as their own models, in one note."""
    ds = get(name)
    roster = roster or Roster.builtin()
    with roster.noting(f"dataset {name}"):
        return ds.reader(folder(name, data_dir), roster)
