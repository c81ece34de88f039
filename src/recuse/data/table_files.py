"""A table file of any format recuse reads, as a raw frame (:func:`read_frame`): CSV,
TSV, JSON (an array of objects), JSON lines or Parquet, chosen by the file's name
(``.gz`` allowed on the text formats), each bounded in size and shape and checked before
pandas sees it. No schema yet: :mod:`recuse.data.plain_tables` validates.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import pyarrow.parquet as pq

from recuse.data.delimited import MAX_COLUMNS, read_csv
from recuse.errors import InputError
from recuse.files import max_input_bytes, read_json, read_jsonl, require_keys, too_big
from recuse.tables import check_header, index_as_columns

__all__ = ["FORMATS", "Format", "read_frame"]

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

_COLUMN_NUMBER = re.compile(r"Column (\d+):")


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
    if _is_sqlite(path):
        raise InputError(
            "a SQLite database, not a table: a store that `recuse judge` writes holds "
            "judgments, not the pairs table the other commands read",
            file=path,
            fix=f"export its pairs first: `recuse judge export {path} --out pairs.csv`, "
            "then give pairs.csv",
        )
    raise InputError(
        "unknown file type",
        file=path,
        fix="use one of .csv, .tsv, .json (array of objects), .jsonl, .parquet "
        "(text formats may end in .gz)",
    )


def _is_sqlite(path: Path) -> bool:
    """Whether ``path`` is a SQLite database (its 16-byte header), such as a judge store."""
    try:
        with path.open("rb") as f:
            return f.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _check_width(records: list[dict[str, Any]], path: Path) -> None:
    """The table JSON rows make has a column per key any row names: bound that union
    like a CSV header (:data:`MAX_COLUMNS`), naming the row that passes it — rows that
    each bring new keys would otherwise cost rows × keys cells."""
    keys: set[str] = set()
    for row, record in enumerate(records, start=1):
        keys.update(record)
        if len(keys) > MAX_COLUMNS:
            raise InputError(
                f"the rows up to this one name {len(keys):,} different keys, more than the "
                f"{MAX_COLUMNS:,} columns recuse reads",
                file=path,
                row=row,
                fix="give every row the same keys (the table's columns)",
            )


def _read_json_array(path: Path) -> pd.DataFrame:
    records = require_keys(read_json(path), (), file=path)
    if not records:
        raise InputError("the JSON array is empty", file=path, fix="give at least one row")
    _check_width(records, path)
    return pd.DataFrame.from_records(records)


def _read_jsonl(path: Path) -> pd.DataFrame:
    records = read_jsonl(path)
    if not records:
        raise InputError("the file has no JSON lines", file=path, fix="give at least one row")
    _check_width(records, path)
    return pd.DataFrame.from_records(records)


def _read_parquet(path: Path) -> pd.DataFrame:
    """Read a Parquet file whole, checked before pandas sees it: its size and shape
    against the limits, every page decoded and every text valid UTF-8 (a damaged page
    fails here, not later in validation), no column name twice."""
    if not path.is_file():
        raise InputError("file not found", file=path, fix="check the path")
    size = path.stat().st_size
    if size == 0:
        raise InputError("the file is empty", file=path, fix="check that the file was written")
    limit = max_input_bytes()
    if size > limit:
        raise too_big(path, "the file holds", limit)
    table = None
    try:
        parquet = pq.ParquetFile(path)
        _check_parquet_shape(path, parquet, limit)
        table = parquet.read(use_pandas_metadata=True)
        table.validate(full=True)
        return table.to_pandas()  # reads the pandas metadata, which may be damaged too
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises several unrelated classes
        reason = " ".join(str(exc).encode("ascii", "replace").decode().split())[:200]
        number = _COLUMN_NUMBER.match(reason)
        names = table.column_names if table is not None else []
        column = (
            names[int(number.group(1))] if number and int(number.group(1)) < len(names) else None
        )
        raise InputError(
            f"not a readable Parquet file ({type(exc).__name__}: {reason})",
            file=path,
            column=column,
            fix="write it again with pandas/pyarrow, or use CSV / JSONL",
        ) from None


def _check_parquet_shape(path: Path, parquet: pq.ParquetFile, limit: int) -> None:
    """A Parquet file may not hold more than a CSV file within ``limit`` bytes could:
    at most :data:`MAX_COLUMNS` columns, ``limit`` cells and ``limit`` bytes of data;
    and no column name twice."""
    meta = parquet.metadata
    if meta.num_columns > MAX_COLUMNS:
        raise InputError(
            f"the file has {meta.num_columns:,} columns, more than the {MAX_COLUMNS:,} "
            "recuse reads",
            file=path,
            fix="keep the columns of the table only",
        )
    cells = meta.num_rows * meta.num_columns
    data = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if cells > limit or data > limit:
        raise too_big(path, f"the table ({cells:,} cells, {data:,} bytes unpacked) holds", limit)
    names = parquet.schema_arrow.names
    twice = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if twice is not None:
        raise InputError(
            "the file has two columns of this name",
            file=path,
            column=twice,
            fix="rename or remove one of the two columns",
        )


def read_frame(path: Path) -> pd.DataFrame:
    """The table file ``path`` as a frame of its own columns (no schema, no renaming),
    its format from its name (:data:`FORMATS`); errors name the file and the row."""
    if not path.exists():
        raise InputError("file not found", file=path, fix="check the path")
    if path.is_dir():
        raise InputError("is a folder, not a file", file=path, fix="give the path of one file")
    fmt = _format_of(path)
    if fmt == "parquet":
        # pandas writes a named index as a column that its metadata makes the index
        # again, and a two-level header as one that its metadata makes two levels again
        frame = _read_parquet(path)
        check_header(frame, file=path)
        return index_as_columns(frame)
    if path.stat().st_size == 0:
        raise InputError("the file is empty", file=path, fix="check that the file was written")
    if fmt == "csv":
        return read_csv(path, sep=None)
    if fmt == "tsv":
        return read_csv(path, sep="\t")
    if fmt == "json":
        return _read_json_array(path)
    return _read_jsonl(path)
