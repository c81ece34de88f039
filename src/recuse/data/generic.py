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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from itertools import islice, repeat
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from recuse.data import registry
from recuse.files import (
    BOM,
    max_input_bytes,
    max_row_bytes,
    read_bytes,
    read_json,
    read_jsonl,
    require_keys,
    row_too_long,
    too_big,
)
from recuse.errors import ConfigError, InputError, ReaderNote
from recuse.roster import Roster, split_dated
from recuse.tables import (
    PAIRS,
    PROBE_COLUMNS,
    RATINGS,
    VERDICTS,
    ConfidenceOf,
    SwappedFrame,
    _number,
    check_scalars,
    missing_columns_error,
    shown,
    side_word,
    suggest_columns,
    validate_pairs,
    validate_ratings,
    with_optional_pairs_columns,
)

__all__ = [
    "FORMATS",
    "IGNORED",
    "ColumnMapping",
    "ColumnsIgnored",
    "ReaderNote",
    "ValueMap",
    "ValueMapUnmatched",
    "ValueReading",
    "canonical_ids",
    "check_value_map",
    "load_table",
    "mapping_pairs",
    "read_csv",
    "read_table",
    "verdict_like_columns",
]

# {file column: {written value: P(a better)}}
ValueMap = Mapping[str, Mapping[str, float]]
# the key of DataFrame.attrs where read_table lists the file columns it left unused
# that look like verdicts or labels ({column: why})
IGNORED = "recuse.ignored_columns"


class ColumnsIgnored(ReaderNote):
    """A file's columns that look like judge verdicts were not read (a half mapping)."""


class ValueMapUnmatched(ReaderNote):
    """A value map (``--values``) matched no cell of its column, so the column was read
    by the built-in rules alone."""


class SnapshotsKeptApart(ReaderNote):
    """Dated model names that the roster maps to one id were kept as models of their own."""


@dataclass(frozen=True)
class ValueReading:
    """How a pairs file writes its verdicts and labels, as one value for the callers
    that pass it along (:func:`recuse.data.inputs.load_input`, :func:`recuse.driver.audit`):
    the ``values``, ``swapped_frame``, ``confidence`` and ``confidence_of`` arguments of
    :func:`read_table`."""

    values: ValueMap | None = None
    swapped_frame: SwappedFrame = "original"
    confidence: str | None = None
    confidence_of: ConfidenceOf = "winner"


#: ``frame.attrs`` key of the note (also in ``attrs["notes"]``) an importer leaves when
#: its ratings have no reference; a reference judge fills it in and drops the note
NO_REFERENCE = "no_reference_note"

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

_COLUMN_NUMBER = re.compile(r"Column (\d+):")

# the most columns a delimited file's header may name
MAX_COLUMNS = 10_000


class _CsvScan:
    """One pass over a delimited file with :mod:`csv`, before pandas parses it.

    It bounds what pandas will be given and names the data record (header not counted,
    blank lines skipped as pandas skips them) of the first problem:

    - a record (row, quoted line breaks included) over :func:`max_row_bytes`;
    - a header with more than :data:`MAX_COLUMNS` columns or a name given twice;
    - a row with more or fewer fields than the header;
    - a quoted field still open at the end of the file.

    ``lines`` are the file's lines without their line feeds (csv reads the end of each
    as the end of a line). With ``to_end``, the last record is the place of a problem
    found later (a byte that is not UTF-8): it is not checked, only located.
    """

    def __init__(self, lines: list[str], sep: str, path: Path, *, to_end: bool = False) -> None:
        self.lines, self.sep, self.path, self.to_end = lines, sep, path, to_end
        self.limit = max_row_bytes()
        self.kind = "tab" if sep == "\t" else "comma"
        self.done = 0  # data records read
        self.in_header = True
        self.budget = self.limit  # what the record being read may still take
        self.consumed = 0  # lines handed to csv
        self.first_line = 0  # index of the first line of the record being read

    @property
    def row(self) -> int | None:
        """The data record being read (None: the header)."""
        return None if self.in_header else self.done + 1

    def _lines(self) -> Iterator[str]:
        for line in self.lines:
            if self.budget == self.limit:
                self.first_line = self.consumed
            self.consumed += 1
            self.budget -= len(line) + 1
            if self.budget < 0:
                raise row_too_long(self.path, self.row, self.limit)
            yield line

    def run(self) -> int | None:
        """Check the file; returns the row of the last record (None: the header)."""
        old = csv.field_size_limit(self.limit)
        try:
            return self._check(csv.reader(self._lines(), delimiter=self.sep))
        except csv.Error as exc:
            raise self._unparsable(str(exc)) from None
        finally:
            csv.field_size_limit(old)

    def _unparsable(self, why: str) -> InputError:
        return InputError(
            f"cannot parse the file as {self.kind}-separated values ({why})",
            file=self.path,
            row=self.row,
            fix="check the quoting and the number of fields on that row",
        )

    def _check(self, records: Iterator[list[str]]) -> int | None:
        header = next(records, None)
        while header is not None and _blank(header):  # blank lines before the header
            header = next(records, None)
        self.budget = self.limit
        if header is None:
            raise InputError("the file has no header row", file=self.path)
        if self.to_end and self.consumed == len(self.lines):
            return None
        self._check_header(header)
        self.in_header = False
        width = len(header)
        for record in records:
            self.budget = self.limit
            last = self.consumed == len(self.lines)
            if _blank(record):
                continue  # a blank line, as pandas skips it
            if last and self.to_end:
                return self.row
            if last:
                self._check_closed()
            if len(record) != width:
                more = len(record) > width
                raise InputError(
                    f"the row has {'more' if more else 'fewer'} fields than the header "
                    f"({len(record):,}, not {width:,}; {self.kind}-separated values)",
                    file=self.path,
                    row=self.row,
                    fix="quote fields that contain the separator, or add the missing header names"
                    if more
                    else "give every field; an empty one is nothing between two separators",
                )
            self.done += 1
        return self.done or None

    def _check_header(self, header: list[str]) -> None:
        if len(header) > MAX_COLUMNS:
            raise InputError(
                f"the header has {len(header):,} columns, more than the {MAX_COLUMNS:,} "
                "recuse reads",
                file=self.path,
                fix=f"check the separator ({self.kind}) and that the first line is the header",
            )
        seen: set[str] = set()
        for name in header:
            if name in seen and name.strip():
                raise InputError(
                    "the header names this column twice",
                    file=self.path,
                    column=name,
                    fix="rename or remove one of the two columns",
                )
            seen.add(name)

    def _check_closed(self) -> None:
        """The last record must not end inside a quoted field (csv, unlike pandas, reads
        an open quote at the end of the file as closed)."""
        last = self.lines[self.first_line :]
        if sum(line.count('"') for line in last) % 2 == 0:
            return
        try:
            for _ in csv.reader(last, delimiter=self.sep, strict=True):
                pass
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                raise self._unparsable(
                    "a quoted field is still open at the end of the file"
                ) from None


def _blank(record: list[str]) -> bool:
    return not record or (len(record) == 1 and not record[0].strip())


def _csv_lines(text: str, *, join_blank: bool = True) -> list[str]:
    """The lines of a delimited file for :class:`_CsvScan`: split at LF (at CR in a file
    without LF); with ``join_blank``, runs of blank lines first joined into one (they
    hold no record, and inside a quoted field they change no field count), so that
    millions of them cost neither a long list nor a long loop."""
    newline = "\n" if "\n" in text else "\r"
    if join_blank:
        text = re.sub(f"{newline}(?:[ \\t\\r]*{newline})+", newline, text)
    return text.split(newline)


def _scan_csv(raw: bytes, start: int, sep: str, path: Path) -> None:
    """Run :class:`_CsvScan` over ``raw[start:]``; a byte that is not UTF-8 is reported
    at its data record (the scan reads the text before it to find which)."""
    try:
        text = raw[start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[start : start + exc.start].decode("utf-8") + "X"  # X: the bad byte
        row = _CsvScan(_csv_lines(before), sep, path, to_end=True).run()
        raise InputError(
            f"not UTF-8 text (byte {raw[start + exc.start]:#04x}"
            + (")" if row else " in the header)"),
            file=path,
            row=row,
            fix="save the file as UTF-8",
        ) from None
    if '"' not in text and _plainly_fine(_csv_lines(text, join_blank=False), sep, path):
        return
    _CsvScan(_csv_lines(text), sep, path).run()


def _plainly_fine(lines: list[str], sep: str, path: Path) -> bool:
    """True when the lines of a file without quotes (each line a record) are a header
    within limits and rows with as many separators (a fast check in C loops; anything
    else goes to :class:`_CsvScan`, which finds and names the problem)."""
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    if not end or not lines[0].strip() or max(map(len, lines)) >= max_row_bytes():
        return False
    width = lines[0].count(sep)
    counts = list(map(str.count, islice(lines, end), repeat(sep)))
    if width >= MAX_COLUMNS or counts.count(width) != end:
        return False
    _CsvScan(lines[:1], sep, path).run()  # the header's names
    return True


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


def csv_separator(header: bytes) -> str:
    """The separator a ``.csv`` file's header line shows: ``;`` (as spreadsheets in
    many locales write CSV) or a tab where it has no comma, else ``,``. Numbers with a
    decimal comma are still refused by validation, with the fix.

    >>> csv_separator(b"id;human;p_a"), csv_separator(b"id,note;x"), csv_separator(b"id")
    (';', ',', ',')
    """
    line = header.split(b"\n", 1)[0]
    if b"," in line:
        return ","
    return next((sep for sep in (";", "\t") if sep.encode() in line), ",")


def read_csv(
    path: str | Path,
    *,
    sep: str | None = ",",
    required: tuple[str, ...] = (),
    as_str: bool = True,
) -> pd.DataFrame:
    """Read a delimited text file (UTF-8, optionally .gz) with clear errors.

    Quoted fields may span lines. With ``as_str`` every cell is read as text (ids such
    as ``007`` keep their leading zeros; validation converts numbers later); empty
    cells are missing. ``required`` columns must be in the header. ``sep=None``
    takes the separator the header shows (:func:`csv_separator`).
    """
    path = Path(path)
    raw = read_bytes(path)
    start = len(BOM) if raw.startswith(BOM) else 0
    if not raw[start:].strip():
        raise InputError("the file is empty", file=path, fix="check that the file was written")
    sep = sep or csv_separator(raw[start : start + 65536])
    _scan_csv(raw, start, sep, path)
    kind = {"\t": "tab", ";": "semicolon"}.get(sep, "comma")
    try:
        with warnings.catch_warnings():
            # a data row longer than the header would silently lose cells
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(
                io.BytesIO(raw[start:] if start else raw),
                sep=sep,
                dtype=str if as_str else None,
                index_col=False,
                keep_default_na=True,
                encoding="utf-8",
            )
    except pd.errors.EmptyDataError:
        raise InputError("the file has no header row", file=path) from None
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        msg = " ".join(str(exc).replace("Error tokenizing data. C error: ", "").split())
        line = _LINE.search(msg)
        started = _ROW.search(msg)
        row = int(line.group(1)) - 1 if line else int(started.group(1)) if started else None
        raise InputError(
            f"cannot parse the file as {kind}-separated values ({msg[:200]})",
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
        return read_csv(path, sep=None)
    if fmt == "tsv":
        return read_csv(path, sep="\t")
    if fmt == "json":
        return _read_json_array(path)
    return _read_jsonl(path)


ColumnMapping = Mapping[str, str | tuple[str, ...]]
"""File column -> schema column(s): one file column may feed several schema columns
(e.g. ``{"id": ("item_id", "prompt_id")}``: each pair is its own prompt)."""


def mapping_pairs(mapping: ColumnMapping) -> list[tuple[str, str]]:
    """The (file column, schema column) pairs of a column mapping.

    >>> mapping_pairs({"id": ("item_id", "prompt_id"), "label": "human"})
    [('id', 'item_id'), ('id', 'prompt_id'), ('label', 'human')]
    """
    return [
        (source, t)
        for source, target in mapping.items()
        for t in ((target,) if isinstance(target, str) else target)
    ]


def _apply_mapping(
    df: pd.DataFrame, mapping: ColumnMapping, table: TableKind, path: Path
) -> pd.DataFrame:
    schema = PAIRS if table == "pairs" else RATINGS
    pairs = mapping_pairs(mapping)
    for source, target in pairs:
        if source not in df.columns:
            raise _no_such_column("the column mapping", source, df, path)
        if target not in schema.names:
            import difflib

            close = difflib.get_close_matches(target, schema.names, n=1, cutoff=0.6)
            raise InputError(
                f"the column mapping renames {source!r} to {target!r}, "
                f"which is not a {table} column",
                file=path,
                column=source,
                fix=(f"did you mean {close[0]!r}? " if close else "")
                + f"{table} columns: {', '.join(schema.names)}",
            )
    targets = [t for _, t in pairs]
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
    out = df.drop(columns=list(mapping))
    for source, target in pairs:
        out[target] = df[source]
    return out


def _no_such_column(what: str, name: str, df: pd.DataFrame, path: Path) -> InputError:
    import difflib

    have = [str(c) for c in df.columns]
    close = difflib.get_close_matches(name, have, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return InputError(
        f"{what} names {name!r}, which is not in the file",
        file=path,
        column=name,
        fix=f"{hint}use the file's own column names (before --map renames them): "
        f"{', '.join(have[:40])}{' …' if len(have) > 40 else ''}",
    )


def check_value_map(values: ValueMap) -> dict[str, dict[str, float]]:
    """A value map with every number checked to be a probability in [0, 1]; keys are
    matched case-insensitively after trimming."""
    out: dict[str, dict[str, float]] = {}
    for column, table in values.items():
        if not isinstance(table, Mapping) or not table:
            raise ConfigError(
                f"value map for {column!r}: give {{value: number}} pairs, "
                "e.g. {'A': 1, 'B': 0, 'tie': 0.5}"
            )
        for value, number in table.items():
            ok = isinstance(number, int | float) and not isinstance(number, bool)
            if not ok or not 0 <= float(number) <= 1:
                raise ConfigError(
                    f"value map for {column!r}: {value!r} → {number!r} is not a probability "
                    "in [0, 1] (P(a better): 1 = a, 0 = b, 0.5 = tie)"
                )
        folded: dict[str, float] = {}
        written: dict[str, str] = {}  # folded key -> the value as the user wrote it
        for value, number in table.items():
            key = _folded(value)
            same = key if key in folded else None
            if same is None and (x := _written_number(key)) is not None:
                same = next((k for k in folded if _written_number(k) == x), None)
            if same is not None and folded[same] != float(number):
                raise ConfigError(
                    f"value map for {column!r}: {written[same]!r} and {str(value)!r} are one "
                    f"value, given as {folded[same]:g} and {float(number):g} (values match "
                    "ignoring case and spaces, and numbers by value: 1 = 1.0) — keep one"
                )
            folded[key] = float(number)
            written[key] = str(value)
        out[column] = folded
    return out


def _folded(value: object) -> str:
    return str(value).strip().casefold()


def _written_number(key: str) -> float | None:
    """The finite number a folded value-map key or cell is written as (``1``, ``1.0``,
    ``1e0``), else None: numbers match by value, whatever a writer made of them (pandas
    writes a float column's 1 as ``1.0``, JSON and Parquet keep floats)."""
    number = _number(key)
    return number if number is not None and np.isfinite(number) else None


def _value_lookup(mapped: Mapping[str, float]) -> Any:
    """A function from a cell to its number in the value map ``mapped`` (folded keys),
    or None: text matches trimmed and case-folded; a cell that is a number (or a text
    written as one) matches a key that is the same number (``1`` = ``1.0`` = ``1e0``).
    Missing, boolean and nested cells match nothing (nested cells are reported by
    :func:`recuse.tables.check_scalars`)."""
    numeric = {x: v for k, v in mapped.items() if (x := _written_number(k)) is not None}

    def lookup(cell: object) -> float | None:
        if isinstance(cell, bool | np.bool_) or not isinstance(
            cell, str | int | float | np.integer | np.floating | Decimal
        ):
            return None
        x = _number(cell)
        if x is not None and np.isnan(x) and not isinstance(cell, str):
            return None  # a missing number (NaN, also a Parquet decimal's NaN)
        key = _folded(cell)
        if key in mapped:
            return mapped[key]
        return numeric.get(x) if x is not None and np.isfinite(x) else None

    return lookup


def _refuse_double_turn(values: dict[str, dict[str, float]], mapping: ColumnMapping) -> None:
    """``swapped_frame="presented"`` turns ``p_a_second`` from the judge's slots (A =
    shown first = b) to a/b; a value map of that column that already sends the
    first-shown label A to b (``A=0,B=1``) has turned it, and both would flip every
    swapped verdict back to the judge's slots: refused, with the two ways out."""
    for column, table in values.items():
        targets = [t for s, t in mapping_pairs(mapping) if s == column] or [column]
        if "p_a_second" not in targets:
            continue
        sides = {side_word(k): v for k, v in table.items() if side_word(k) in (0.0, 1.0)}
        if sides.get(1.0, 1.0) < 0.5 or sides.get(0.0, 0.0) > 0.5:
            turned = ", ".join(f"{k}={v:g}" for k, v in table.items())
            raise ConfigError(
                f"the value map for {column!r} ({turned}) already reads the swapped order "
                "in the a/b frame (the first-shown answer A is b), and --swapped-frame "
                "presented turns it once more, which would flip every swapped verdict "
                "back — keep one: the map as the judge wrote it (A=1,B=0) with "
                "--swapped-frame presented, or this map with --swapped-frame original"
            )


def _apply_values(
    df: pd.DataFrame, values: dict[str, dict[str, float]], path: Path
) -> pd.DataFrame:
    """Replace the written values of the file columns named in ``values`` (a map
    checked by :func:`check_value_map`) by numbers; cells the map does not name are
    left for the built-in rules. A map that matches no cell of its column is told
    (:class:`ValueMapUnmatched`): the column is then read by the built-in rules alone,
    which may read its values another way than the map meant."""
    out = df.copy()
    for column, mapped in values.items():
        if column not in out.columns:
            raise _no_such_column("the value map (--values)", column, out, path)
        s = out[column]
        hit = s.map(_value_lookup(mapped)).astype(float)
        if hit.isna().all() and s.notna().any():
            seen = ", ".join(shown(v, 20) for v in s.dropna().astype(str).unique()[:6])
            warnings.warn(
                f"{path}: the value map for column {column!r} ("
                + ", ".join(f"{k}={v:g}" for k, v in mapped.items())
                + f") matched none of its values ({seen}); the column is read by the "
                "built-in rules (A/B/tie words, model names, AlpacaEval's 1/2, "
                "probabilities) — check the map's values against the file's",
                ValueMapUnmatched,
                stacklevel=3,
            )
        out[column] = s.astype(object).where(hit.isna(), hit)
    return out


LABELS = ("human", *VERDICTS)
_VERDICT_NAME = re.compile(
    r"judge|winner|verdict|pred|score|confidence|preference|label|choice|rating|vote", re.I
)


def verdict_like_columns(df: pd.DataFrame, used: set[str]) -> dict[str, str]:
    """The columns of ``df`` outside ``used`` and the schema that look like verdicts or
    labels — by name (judge, winner, verdict, pred, score, confidence, ...) or by
    values (most of the first 1,000 are A / B / tie words) — with why."""
    out: dict[str, str] = {}
    for col in df.columns:
        name = str(col)
        if name in used or name in PAIRS.names or name in PROBE_COLUMNS:
            continue
        if _VERDICT_NAME.search(name):
            out[name] = "its name looks like a judge, verdict or label column"
            continue
        s = df[col].dropna().head(1000)
        if len(s) and not pd.api.types.is_numeric_dtype(s.dtype):
            words = s.map(lambda v: isinstance(v, str) and side_word(v) is not None)
            if words.mean() >= 0.8:
                out[name] = "its values look like verdicts (A / B / tie)"
    return out


def _derive_prompt_id(df: pd.DataFrame, path: Path) -> pd.DataFrame:
    """A file without ``prompt_id``: with ``prompt`` texts, identical texts are one
    prompt (the bootstrap's cluster; the id is a short hash of the text); without them,
    each ``item_id`` is its own prompt, which is said in a :class:`ReaderNote`."""
    import hashlib

    if "prompt_id" in df.columns:
        return df
    if "prompt" not in df.columns:
        if "item_id" not in df.columns:
            return df  # the missing columns are reported by validation
        warnings.warn(
            f"{path}: no prompt_id or prompt column, so each pair (item_id) is its own "
            "prompt: intervals then treat pairs as independent — map a prompt id "
            "(--map COLUMN=prompt_id) or give the prompt texts if pairs share prompts",
            ReaderNote,
            stacklevel=3,
        )
        return df.assign(prompt_id=df["item_id"])
    text = df["prompt"]
    if text.isna().any():
        return df  # the missing prompt_id is reported by validation
    out = df.copy()
    out["prompt_id"] = text.map(
        lambda t: "prompt-" + hashlib.sha256(str(t).encode("utf-8", "replace")).hexdigest()[:12]
    )
    return out


def _canonical_label_names(df: pd.DataFrame, roster: Roster) -> pd.DataFrame:
    """Cells of the verdict and label columns that name a model the roster knows become
    its canonical id, so they compare with the canonical ``model_a`` / ``model_b``."""
    out = df
    for col in LABELS:
        if col not in out.columns or pd.api.types.is_numeric_dtype(out[col].dtype):
            continue
        s = out[col]
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
        names = [
            u if isinstance(u, str) and u.strip() and side_word(u) is None else None
            for u in uniques
        ]
        ids, _ = roster.lookup(pd.Series(names, dtype=object))
        if ids.isna().all():
            continue
        # each distinct value once: its canonical id, or itself; missing stays missing
        new = np.array([*ids.where(ids.notna(), pd.Series(list(uniques))), None], dtype=object)
        out = out.copy() if out is df else out
        out[col] = pd.Series(new[codes], index=s.index, dtype=object).where(s.notna(), s)
    return out


def _blank_name(name: object) -> bool:
    return isinstance(name, str) and not name.strip()


def canonical_ids(
    names: pd.Series,
    roster: Roster,
    *,
    file: str | Path | None = None,
    column: str | None = None,
    unknown_models: UnknownModels = "keep",
) -> pd.Series:
    """``roster.canonicalize(names)``, looking each distinct name up once (fast on long
    columns with few models). An unknown name is read as its own model (one note), or
    with ``unknown_models="error"`` raises naming its first row, as
    :meth:`Roster.canonicalize` does. A blank name ("" or spaces, as JSON can give) is
    missing, as an empty CSV cell is."""
    fname = str(file) if file is not None else None
    codes, uniques = pd.factorize(names, use_na_sentinel=True)
    distinct = [None if _blank_name(u) else u for u in uniques.tolist()]
    how = unknown_models
    try:
        ids = roster.canonicalize(
            pd.Series(distinct, dtype=object), file=fname, column=column, unknown=how
        )
    except InputError:
        real = names.mask(names.map(_blank_name).astype(bool))
        roster.canonicalize(real, file=fname, column=column, unknown=how)  # the real row
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
    unknown_models: UnknownModels = "keep",
) -> pd.DataFrame:
    """Map the model-name ``columns`` of ``df`` to canonical ids (in a copy).

    With ``unknown_models="keep"`` (the default) a name the roster lacks becomes its
    own id and family and is added to ``roster`` (so later family look-ups on the same
    roster work), and one :class:`~recuse.roster.ModelsNotInRoster` note lists them;
    with ``"error"`` it raises :class:`InputError` naming the row.
    """
    out = df.copy()
    fname = str(file) if file is not None else None
    present_cols = [c for c in columns if c in out.columns]
    met = (
        pd.unique(pd.concat([out[c] for c in present_cols], ignore_index=True).dropna())
        if present_cols
        else np.array([], dtype=object)
    )
    split = split_dated(roster, met.tolist())
    if split:
        listed = ", ".join(f"{shown(n)} (not {shown(t)})" for n, t in sorted(split.items()))
        warnings.warn(
            f"{fname or 'the table'}: dated snapshots kept as models of their own though "
            f"the roster names them as one: {listed}",
            SnapshotsKeptApart,
            stacklevel=2,
        )
    if unknown_models == "error":  # every unknown name of every column in one message
        counts: dict[object, int] = {}
        first: tuple[int, str] | None = None
        for col in present_cols:  # each distinct name looked up once
            codes, uniques = pd.factorize(out[col], use_na_sentinel=True)
            distinct = pd.Series([None if _blank_name(u) else u for u in uniques], dtype=object)
            _, unknown = roster.lookup(distinct)
            bad = np.flatnonzero(unknown.to_numpy())
            if bad.size:
                rows = np.bincount(codes[codes >= 0], minlength=len(uniques))
                for k in bad:
                    counts[distinct.iloc[k]] = counts.get(distinct.iloc[k], 0) + int(rows[k])
                i = int(np.flatnonzero(np.isin(codes, bad))[0])
                if first is None or i < first[0]:
                    first = (i, col)
        if first is not None:
            raise roster.unknown_error(counts, file=fname, row=first[0] + 1, column=first[1])
    if unknown_models == "keep":  # one note for every column's unknown names
        present = [u for u in met.tolist() if not _blank_name(u)]
        roster.keep(present, where=fname)
    for col in present_cols:
        out[col] = canonical_ids(out[col], roster, file=fname, column=col)
    return out


def read_table(
    path: str | Path,
    *,
    table: TableKind,
    mapping: ColumnMapping | None = None,
    roster: Roster | None = None,
    unknown_models: UnknownModels = "keep",
    values: ValueMap | None = None,
    swapped_frame: SwappedFrame = "original",
    confidence: str | None = None,
    confidence_of: ConfidenceOf = "winner",
) -> pd.DataFrame:
    """Read one file as a validated ``pairs`` or ``ratings`` table.

    The format comes from the extension: ``.csv``, ``.tsv``/``.tab``, ``.json`` (an
    array of objects), ``.jsonl``/``.ndjson`` (one object per line), ``.parquet``/``.pq``;
    text formats may be gzip-compressed (``.csv.gz``). ``mapping`` renames file columns
    to schema columns first. Model and judge names go through ``roster`` (default:
    :meth:`Roster.builtin`); see :func:`canonicalize_models` for ``unknown_models``.

    Pairs only: ``values`` maps written values to P(a better) per **file** column (its
    name before ``mapping``), e.g. ``{"judge_winner": {"A": 1, "B": 0, "tie": 0.5}}``;
    values it does not name are read by :func:`recuse.tables.verdict_values` (A/B/tie,
    [[A]], model names, AlpacaEval 1/2/1.5, probabilities). ``swapped_frame``,
    ``confidence`` (a file column) and ``confidence_of``: see
    :func:`recuse.tables.validate_pairs`. A pairs file without ``prompt_id`` gets one id
    per distinct ``prompt`` text or, without prompts, one per ``item_id`` (a
    :class:`ReaderNote` says so). A pairs file without ``human`` has no labels (the
    column is added empty). ``mapping`` may send one file column to several schema
    columns (``{"id": ("item_id", "prompt_id")}``).

    The file columns left unused that look like verdicts or labels are listed in
    ``result.attrs[IGNORED]``; when the table has no judge columns at all and such
    columns exist, a :class:`ColumnsIgnored` warning says so.
    """
    if table not in MODEL_COLUMNS:
        raise ConfigError(f"unknown table kind {table!r} — use 'pairs' or 'ratings'")
    if table == "ratings" and (values or confidence or swapped_frame != "original"):
        raise ConfigError(
            "value maps, --swapped-frame and --confidence apply to pairs files, not ratings"
        )
    rost = roster or Roster.builtin()  # a broken roster file is reported first
    path = Path(path).expanduser()
    df = _read_raw(path)
    if confidence is not None and confidence not in df.columns:
        raise _no_such_column("--confidence", confidence, df, path)
    mapping = dict(mapping or {})
    if values:
        checked = check_value_map(values)
        if swapped_frame == "presented":
            _refuse_double_turn(checked, mapping)
        df = _apply_values(df, checked, path)
    if mapping:
        df = _apply_mapping(df, mapping, table, path)
    schema = PAIRS if table == "pairs" else RATINGS
    check_scalars(df, schema.names, file=path)
    needed = [c for c in schema.required if c not in schema.filled and c not in df.columns]
    derivable = "prompt" in df.columns or "item_id" in df.columns
    if table == "pairs" and "prompt_id" in needed and derivable:
        needed.remove("prompt_id")  # one id per prompt text, or per item, below
    if needed:  # named against the file's own columns, before any are filled in
        raise missing_columns_error(schema, needed, df.columns, path)
    if table == "pairs" and "judge" in df.columns and not any(c in df.columns for c in VERDICTS):
        guess = suggest_columns([c for c in map(str, df.columns) if c not in PAIRS.names], VERDICTS)
        raise InputError(
            "the file names a judge but has no verdict column (p_a_first, p_a_second or p_a)",
            file=path,
            column="judge",
            fix=(
                f"did you mean --map {','.join(f'{k}={v}' for k, v in guess.items())}? "
                if guess
                else ""
            )
            + "map the judge's verdict to p_a_first (a shown first), p_a_second (b shown "
            "first) or p_a (order unknown), or drop the judge column for human labels only",
        )
    ignored: dict[str, str] = {}
    if table == "pairs":
        if confidence:
            renamed = [t for s, t in mapping_pairs(mapping) if s == confidence]
            confidence = renamed[0] if renamed else confidence
        ignored = verdict_like_columns(df, {confidence} if confidence else set())
        half = bool(ignored) and not any(c in df.columns for c in ("judge", *VERDICTS))
        unlabelled = bool(ignored) and "human" not in df.columns
        df = _derive_prompt_id(with_optional_pairs_columns(df), path)
    df = canonicalize_models(
        df, MODEL_COLUMNS[table], rost, file=path, unknown_models=unknown_models
    )
    if table == "pairs":
        out = validate_pairs(
            _canonical_label_names(df, rost),
            file=path,
            swapped_frame=swapped_frame,
            confidence=confidence,
            confidence_of=confidence_of,
        )
        if half:
            read_as = "without labels or verdicts" if unlabelled else "as human labels only"
            warnings.warn(
                f"{path}: no judge or verdict columns, so the file is read {read_as}; "
                f"these columns look like verdicts or labels and were not read: "
                f"{', '.join(ignored)} — map them, e.g. "
                "--map JUDGE_NAME_COLUMN=judge,VERDICT_COLUMN=p_a_first",
                ColumnsIgnored,
                stacklevel=2,
            )
        elif unlabelled:
            warnings.warn(
                f"{path}: no human column, so the file is read without labels; these "
                f"columns look like verdicts or labels and were not read: "
                f"{', '.join(ignored)} — map the label, e.g. --map LABEL_COLUMN=human",
                ColumnsIgnored,
                stacklevel=2,
            )
    else:
        out = validate_ratings(df, file=path)
    out.attrs[IGNORED] = ignored
    return out


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
    mapping: ColumnMapping | None = None,
    unknown_models: UnknownModels = "keep",
    values: ValueMap | None = None,
    swapped_frame: SwappedFrame = "original",
    confidence: str | None = None,
    confidence_of: ConfidenceOf = "winner",
) -> pd.DataFrame:
    """A registered dataset by name, or a file by path, as a ``table`` evidence table.

    A name that is both a registered dataset and an existing file is read as the
    dataset; write ``./name`` for the file. ``mapping``, ``unknown_models``, ``values``,
    ``swapped_frame`` and ``confidence`` apply to files only (see :func:`read_table`).
    A dataset whose table kind is not ``table`` raises :class:`InputError`.
    """
    roster = roster or Roster.builtin()
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
        if mapping or values or confidence or swapped_frame != "original":
            raise ConfigError(
                "a column mapping, value map, --swapped-frame or --confidence applies to "
                "files, not to named datasets"
            )
        return registry.load(text, data_dir=data_dir, roster=roster)
    if isinstance(name_or_path, Path) or Path(text).expanduser().exists() or _looks_like_path(text):
        return read_table(
            name_or_path,
            table=table,
            mapping=mapping,
            roster=roster,
            unknown_models=unknown_models,
            values=values,
            swapped_frame=swapped_frame,
            confidence=confidence,
            confidence_of=confidence_of,
        )
    registry.get(text)  # raises DatasetNotFoundError listing the known names
    raise AssertionError("unreachable")  # pragma: no cover


def reference_from_judge(
    ratings: pd.DataFrame, judge: str, *, roster: Roster, file: str | Path | None = None
) -> pd.DataFrame:
    """``ratings`` with ``judge``'s ratings as the reference of the other judges.

    For every row of another judge, ``reference`` = ``judge``'s rating of the same
    (prompt_id, model, dimension) — NaN where it gave none (no row, or an unparsed or
    failed one: the favoritism fit then leaves the row out and counts it). ``judge``'s
    own rows become the reference and leave the table. ``frame.attrs["notes"]`` says so
    and how many rows found no reference. The reference judge may itself be biased: the
    estimates are then relative to it, which a note says too.

    Raises :class:`InputError` when the table already has a reference (it would be
    replaced), when ``judge`` is not one of its judges, or when no other judge is left.
    """
    fname = str(file) if file is not None else None
    known = sorted(ratings["judge"].dropna().astype(str).unique())
    name = roster.canonical(judge) if judge in roster else judge.strip()
    if name not in known:
        raise InputError(
            f"--reference-judge {judge!r} is not a judge of this table",
            file=fname,
            column="judge",
            fix=f"choose one of: {', '.join(known)}",
        )
    if ratings["reference"].notna().any():
        raise InputError(
            "the table already has reference scores; --reference-judge would replace them",
            file=fname,
            row=int(np.flatnonzero(ratings["reference"].notna().to_numpy())[0]) + 1,
            column="reference",
            fix="drop --reference-judge, or give a table without a reference column",
        )
    keys = ["prompt_id", "model", "dimension"]
    mine = ratings["judge"] == name
    if mine.all():
        raise InputError(
            f"{name} is the only judge: no other judge's ratings to compare with it",
            file=fname,
            column="judge",
            fix="give the ratings of the judges to audit and of the reference judge together",
        )
    ref = ratings.loc[mine, [*keys, "rating"]].rename(columns={"rating": "reference"})
    if ref.duplicated(keys).any():  # validate_ratings keeps (keys, judge) unique
        raise InputError(f"{name} rates one (prompt, model, dimension) twice", file=fname)
    others = ratings.loc[~mine].drop(columns=["reference"])
    out = others.merge(ref, on=keys, how="left", validate="many_to_one")
    out = out[[*ratings.columns]].reset_index(drop=True)
    missing = int(out["reference"].isna().sum())
    notes = [
        f"reference: {name}'s rating of the same prompt, model and dimension "
        f"({int(mine.sum()):,} of its rows serve as the reference and are not audited); "
        "a biased reference judge shifts every estimate, so the biases are relative to "
        f"{name}."
    ]
    if missing:
        notes.append(
            f"{missing:,} rows of other judges have no usable rating by {name} to compare "
            "with and are left out of the favoritism fit."
        )
    result = validate_ratings(out, file=file)
    kept = {k: v for k, v in ratings.attrs.items() if k != NO_REFERENCE}
    result.attrs = {**kept, "notes": notes}
    return result
