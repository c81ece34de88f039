"""Bring your own data: read a CSV / TSV / JSON / JSONL / Parquet file as an evidence table.

:func:`read_table` reads one file (format from its extension, ``.gz`` allowed for the
text formats), renames user columns to schema columns with ``mapping``
(``{"your column": "schema column"}``), maps model and judge names to canonical ids
through the roster and validates the result as a ``pairs`` or ``ratings`` table
(:mod:`recuse.tables`).

:func:`load_table` is what commands that take "a dataset name or a file" use: a
registered dataset name loads that dataset (its table kind must match), anything
else is read as a file.

Every problem is an :class:`~recuse.errors.InputError` naming the file and, where
there is one, the row (1-based data record: CSV rows without the header, JSON array
elements, JSONL lines) and column, with the fix.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from recuse.data import registry
from recuse.data._io import read_json, read_jsonl, read_text, require_keys
from recuse.errors import ConfigError, InputError
from recuse.roster import Entry, Roster
from recuse.tables import PAIRS, RATINGS, validate_pairs, validate_ratings

__all__ = ["FORMATS", "canonical_ids", "load_table", "read_csv", "read_table"]

TableKind = Literal["pairs", "ratings"]
UnknownModels = Literal["error", "keep"]
Format = Literal["csv", "tsv", "json", "jsonl", "parquet"]

# file name ending -> format; ".gz" is allowed on top of the text formats
FORMATS: dict[str, Format] = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}

# columns holding model names, per table kind
MODEL_COLUMNS: dict[TableKind, tuple[str, ...]] = {
    "pairs": ("model_a", "model_b", "judge"),
    "ratings": ("model", "judge"),
}

_LINE = re.compile(r"\bline (\d+)\b")
_ROW = re.compile(r"\bstarting at row (\d+)\b")


def _first_long_row(text: str, sep: str) -> int | None:
    """1-based data row of the first record with more fields than the header."""
    records = csv.reader(io.StringIO(text), delimiter=sep)
    width = len(next(records, []))
    for number, record in enumerate(records, start=1):
        if len(record) > width:
            return number
    return None


def _format_of(path: Path) -> Format:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
        gz = True
    else:
        gz = False
    for ending, fmt in FORMATS.items():
        if name.endswith(ending):
            if gz and fmt == "parquet":
                break
            return fmt
    raise InputError(
        "unknown file type",
        file=path,
        fix="use one of .csv, .tsv, .json (array of objects), .jsonl, .parquet "
        "(text formats may end in .gz)",
    )


def read_csv(
    path: str | Path, *, sep: str = ",", required: tuple[str, ...] = (), as_str: bool = True
) -> pd.DataFrame:
    """Read a delimited text file (UTF-8, optionally .gz) with clear errors.

    Quoted fields may span lines. With ``as_str`` every cell is read as text (ids such
    as ``007`` keep their leading zeros; validation converts numbers later); empty
    cells are missing. ``required`` columns must be in the header.
    """
    path = Path(path)
    text = read_text(path)
    if not text.strip():
        raise InputError("the file is empty", file=path, fix="check that the file was written")
    kind = "tab" if sep == "\t" else "comma"
    try:
        with warnings.catch_warnings():
            # a first data row longer than the header would silently lose cells
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(
                io.StringIO(text),
                sep=sep,
                dtype=str if as_str else None,
                index_col=False,
                keep_default_na=True,
            )
    except pd.errors.EmptyDataError:
        raise InputError("the file has no header row", file=path) from None
    except pd.errors.ParserWarning:
        raise InputError(
            f"a row has more fields than the header ({kind}-separated values)",
            file=path,
            row=_first_long_row(text, sep),
            fix="quote fields that contain the separator, or add the missing header names",
        ) from None
    except pd.errors.ParserError as exc:
        msg = str(exc).replace("Error tokenizing data. C error: ", "").strip()
        line = _LINE.search(msg)
        started = _ROW.search(msg)
        row = int(line.group(1)) - 1 if line else int(started.group(1)) if started else None
        raise InputError(
            f"cannot parse the file as {kind}-separated values ({msg})",
            file=path,
            row=row,
            fix="check the quoting and the number of fields on that row",
        ) from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}",
            file=path,
            fix=f"the header must name {', '.join(required)}; it has "
            f"{', '.join(map(str, df.columns))}",
        )
    return df


def _read_json_array(path: Path) -> pd.DataFrame:
    records = require_keys(read_json(path), (), file=path)
    if not records:
        raise InputError("the JSON array is empty", file=path, fix="give at least one row")
    return pd.DataFrame.from_records(records)


def _read_jsonl(path: Path) -> pd.DataFrame:
    records = read_jsonl(path)
    if not records:
        raise InputError("the file has no JSON lines", file=path, fix="give at least one row")
    return pd.DataFrame.from_records(records)


def _read_parquet(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise InputError("file not found", file=path, fix="check the path")
    if path.stat().st_size == 0:
        raise InputError("the file is empty", file=path, fix="check that the file was written")
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several unrelated classes
        reason = " ".join(str(exc).split())[:200]
        raise InputError(
            f"not a readable Parquet file ({reason})",
            file=path,
            fix="write it again with pandas/pyarrow, or use CSV / JSONL",
        ) from None


def _read_raw(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise InputError("file not found", file=path, fix="check the path")
    if path.is_dir():
        raise InputError("is a folder, not a file", file=path, fix="give the path of one file")
    fmt = _format_of(path)
    if fmt == "parquet":
        return _read_parquet(path)
    if path.stat().st_size == 0:
        raise InputError("the file is empty", file=path, fix="check that the file was written")
    if fmt == "csv":
        return read_csv(path)
    if fmt == "tsv":
        return read_csv(path, sep="\t")
    if fmt == "json":
        return _read_json_array(path)
    return _read_jsonl(path)


def _apply_mapping(
    df: pd.DataFrame, mapping: Mapping[str, str], table: TableKind, path: Path
) -> pd.DataFrame:
    schema = PAIRS if table == "pairs" else RATINGS
    for source, target in mapping.items():
        if source not in df.columns:
            raise InputError(
                f"the column mapping names {source!r}, which is not in the file",
                file=path,
                column=source,
                fix=f"columns in the file: {', '.join(map(str, df.columns))}",
            )
        if target not in schema.names:
            raise InputError(
                f"the column mapping renames {source!r} to {target!r}, "
                f"which is not a {table} column",
                file=path,
                column=source,
                fix=f"{table} columns: {', '.join(schema.names)}",
            )
    targets = list(mapping.values())
    twice = {t for t in targets if targets.count(t) > 1}
    if twice:
        raise InputError(
            f"the column mapping gives {sorted(twice)[0]!r} twice",
            file=path,
            fix="map one file column to each schema column",
        )
    clash = [t for t in targets if t in df.columns and t not in mapping]
    if clash:
        raise InputError(
            f"the file already has a column {clash[0]!r} and the mapping renames another "
            "column to it",
            file=path,
            column=clash[0],
            fix="drop one of them from the mapping or rename the file column",
        )
    return df.rename(columns=dict(mapping))


VERDICTS = ("p_a_first", "p_a_second", "p_a")


def _fill_pairs_columns(df: pd.DataFrame) -> pd.DataFrame:
    """Add the ``pairs`` columns a file may leave out, as empty columns.

    - a file with some verdict columns gets the other ones (``p_a`` alone is a single
      verdict of unknown order; ``p_a`` is derived from the two orders anyway);
    - a file with no judge and no verdict columns is human-only data: ``judge`` and
      the verdicts are added empty;
    - a file with neither ``model_a`` nor ``model_b`` has unknown generators.

    ``human``, ``item_id`` and ``prompt_id`` are never filled in.
    """
    out = df.copy()
    have = [c for c in VERDICTS if c in out.columns]
    if have:
        for col in VERDICTS:
            if col not in out.columns:
                out[col] = np.nan
    elif "judge" not in out.columns:
        out["judge"] = None
        for col in VERDICTS:
            out[col] = np.nan
    if "model_a" not in out.columns and "model_b" not in out.columns:
        out["model_a"] = None
        out["model_b"] = None
    return out


def canonical_ids(
    names: pd.Series, roster: Roster, *, file: str | Path | None = None, column: str | None = None
) -> pd.Series:
    """``roster.canonicalize(names)``, looking each distinct name up once (fast on long
    columns with few models). An unknown name raises naming its first row, as
    :meth:`Roster.canonicalize` does."""
    fname = str(file) if file is not None else None
    codes, uniques = pd.factorize(names, use_na_sentinel=True)
    try:
        ids = roster.canonicalize(pd.Series(uniques, dtype=object), file=fname, column=column)
    except InputError:
        roster.canonicalize(names, file=fname, column=column)  # raises with the real row
        raise
    # code -1 (missing name) picks the trailing None
    lookup = np.array([*ids.tolist(), None], dtype=object)
    return pd.Series(lookup[codes], index=names.index, dtype=object)


def canonicalize_models(
    df: pd.DataFrame,
    columns: tuple[str, ...],
    roster: Roster,
    *,
    file: str | Path | None = None,
    unknown_models: UnknownModels = "error",
) -> pd.DataFrame:
    """Map the model-name ``columns`` of ``df`` to canonical ids (in a copy).

    With ``unknown_models="keep"`` a name the roster lacks becomes its own id and
    family and is added to ``roster`` (so later family look-ups on the same roster
    work); with ``"error"`` it raises :class:`InputError` naming the row.
    """
    out = df.copy()
    fname = str(file) if file is not None else None
    for col in columns:
        if col not in out.columns:
            continue
        names = out[col]
        if unknown_models == "keep":
            present = names.dropna().astype(str).str.strip()
            for name in sorted(set(present[present != ""])):
                if name not in roster:
                    roster.add(Entry(name, name))
        out[col] = canonical_ids(names, roster, file=fname, column=col)
    return out


def read_table(
    path: str | Path,
    *,
    table: TableKind,
    mapping: Mapping[str, str] | None = None,
    roster: Roster | None = None,
    unknown_models: UnknownModels = "error",
) -> pd.DataFrame:
    """Read one file as a validated ``pairs`` or ``ratings`` table.

    The format comes from the extension: ``.csv``, ``.tsv``/``.tab``, ``.json`` (an
    array of objects), ``.jsonl``/``.ndjson`` (one object per line), ``.parquet``/``.pq``;
    text formats may be gzip-compressed (``.csv.gz``). ``mapping`` renames file columns
    to schema columns first. Model and judge names go through ``roster`` (default:
    :meth:`Roster.load`); see :func:`canonicalize_models` for ``unknown_models``.
    """
    if table not in MODEL_COLUMNS:
        raise ConfigError(f"unknown table kind {table!r} — use 'pairs' or 'ratings'")
    path = Path(path).expanduser()
    df = _read_raw(path)
    if mapping:
        df = _apply_mapping(df, mapping, table, path)
    if table == "pairs":
        df = _fill_pairs_columns(df)
    df = canonicalize_models(
        df,
        MODEL_COLUMNS[table],
        roster or Roster.load(),
        file=path,
        unknown_models=unknown_models,
    )
    if table == "pairs":
        return validate_pairs(df, file=path)
    return validate_ratings(df, file=path)


def _looks_like_path(text: str) -> bool:
    return (
        "/" in text
        or "\\" in text
        or any(text.lower().endswith(e) for e in FORMATS)
        or (text.lower().endswith(".gz"))
    )


def load_table(
    name_or_path: str | Path,
    *,
    table: TableKind,
    data_dir: str | Path | None = None,
    roster: Roster | None = None,
    mapping: Mapping[str, str] | None = None,
    unknown_models: UnknownModels = "error",
) -> pd.DataFrame:
    """A registered dataset by name, or a file by path, as a ``table`` evidence table.

    A name that is both a registered dataset and an existing file is read as the
    dataset; write ``./name`` for the file. ``mapping`` and ``unknown_models`` apply to
    files only. A dataset whose table kind is not ``table`` raises :class:`InputError`.
    """
    roster = roster or Roster.load()
    text = str(name_or_path)
    known = registry.datasets()
    if not isinstance(name_or_path, Path) and text in known:
        ds = known[text]
        if ds.table != table:
            raise InputError(
                f"dataset {text!r} is a {ds.table} table, but a {table} table is needed",
                fix=f"choose a {table} dataset: "
                + ", ".join(sorted(n for n, d in known.items() if d.table == table)),
            )
        if mapping:
            raise ConfigError("a column mapping applies to files, not to named datasets")
        return registry.load(text, data_dir=data_dir, roster=roster)
    if isinstance(name_or_path, Path) or Path(text).expanduser().exists() or _looks_like_path(text):
        return read_table(
            name_or_path,
            table=table,
            mapping=mapping,
            roster=roster,
            unknown_models=unknown_models,
        )
    registry.get(text)  # raises DatasetNotFoundError listing the known names
    raise AssertionError("unreachable")  # pragma: no cover
