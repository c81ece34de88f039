"""Where a data row of a table file starts, as the file's line: what an editor's "go to
line" takes. Errors about a row of a file (:class:`~recuse.errors.InputError`'s ``row``,
the 1-based data record: the header and blank lines not counted, a quoted CSV field's
line breaks inside its record) say both, ``line 12 (data row 11)``
(:func:`rows_located`).

The line is found only when an error is raised, by reading the file again: reading a
good file costs nothing more.
"""

from __future__ import annotations

import csv
import functools
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import ParamSpec, TypeVar

from recuse.errors import InputError

__all__ = ["record_line", "rows_located"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _format(path: Path) -> str | None:
    from recuse.data.table_files import FORMATS

    name = path.name.lower().removesuffix(".gz")
    return next((fmt for end, fmt in FORMATS.items() if name.endswith(end)), None)


def _raw(path: Path) -> memoryview:
    """The file's bytes (decompressed), its byte order mark left out."""
    from recuse.files import BOM, read_bytes

    raw = read_bytes(path)
    return memoryview(raw)[len(BOM) if raw.startswith(BOM) else 0 :]


_BLANK = re.compile(rb"[ \t\r]*")


def _lines(raw: memoryview, newline: bytes) -> Iterator[memoryview]:
    """The lines of ``raw`` without their ``newline``, as views (no line is copied)."""
    start, size = 0, len(raw)
    data = raw.obj  # the bytes ``raw`` is a view of, from ``head`` on
    assert isinstance(data, bytes)
    head = len(data) - size
    while start < size:
        end = data.find(newline, head + start)
        end = size if end < 0 else end - head
        yield raw[start:end]
        start = end + 1


def _newline(raw: memoryview) -> bytes:
    """What ends a line of ``raw``: LF, or CR in a file without LF (as the reader)."""
    data = raw.obj
    assert isinstance(data, bytes)
    return b"\n" if data.find(b"\n", len(data) - len(raw)) >= 0 else b"\r"


def record_line(path: str | Path, row: int) -> int | None:
    """The 1-based line of ``path`` where data row ``row`` (1-based) starts, for a CSV,
    TSV, JSON lines or JSON array file (``.gz`` too); None where the file is of another
    kind, cannot be read again, or has no such row.

    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> table = os.path.join(folder, "t.csv")
    >>> _ = open(table, "w").write('id,text\\n1,"two\\nlines"\\n\\n2,x\\n')
    >>> record_line(table, 1), record_line(table, 2), record_line(table, 3)
    (2, 5, None)
    """
    path = Path(path)
    fmt = _format(path)
    if fmt is None or row < 1:
        return None
    try:
        raw = _raw(path)
    except InputError:
        return None
    if fmt in ("csv", "tsv"):
        return _delimited_line(raw, row, tsv=fmt == "tsv")
    if fmt == "jsonl":
        return _nth_filled(_lines(raw, b"\n"), row)
    if fmt == "json":
        return _json_line(str(raw, "utf-8", "replace"), row)
    return None


def _nth_filled(lines: Iterator[memoryview], nth: int, *, before: int = 0) -> int | None:
    """The number of the ``nth`` line of ``lines`` that is not blank (white space only),
    counting from line ``before`` + 1."""
    for number, line in enumerate(lines, start=before + 1):
        if not _BLANK.fullmatch(line):
            nth -= 1
            if nth == 0:
                return number
    return None


def _delimited_line(raw: memoryview, row: int, *, tsv: bool) -> int | None:
    """The line data record ``row`` starts on: the records before it read as :mod:`csv`
    reads them (a quoted field may hold line breaks), blank ones skipped as the reader
    skips them, the first other one the header; then the first line after them that is
    not blank (so a record too long to read is located without reading it)."""
    from recuse.data.delimited import csv_separator, wide_csv_fields

    sep = "\t" if tsv else csv_separator(bytes(raw[:65536]))
    lines = _lines(raw, _newline(raw))
    try:
        with wide_csv_fields():  # a field as long as the file
            reader = csv.reader((str(line, "utf-8", "replace") for line in lines), delimiter=sep)
            records = -1  # records read before the one sought (-1: the header not read yet)
            while records < row - 1:
                record = next(reader, None)
                if record is None:
                    return None
                if record and not (len(record) == 1 and not record[0].strip()):
                    records += 1
    except csv.Error:
        return None
    return _nth_filled(lines, 1, before=reader.line_num)


def _json_line(text: str, row: int) -> int | None:
    """The line element ``row`` of the JSON array ``text`` starts on."""
    decoder = json.JSONDecoder()
    pos = _skip(text, 0)
    if not text.startswith("[", pos):
        return None
    pos = _skip(text, pos + 1)
    try:
        for number in range(1, row + 1):
            if text.startswith("]", pos):
                return None
            if number == row:
                return text.count("\n", 0, pos) + 1
            _, pos = decoder.raw_decode(text, pos)
            pos = _skip(text, pos)
            if not text.startswith(",", pos):
                return None
            pos = _skip(text, pos + 1)
    except (ValueError, RecursionError):
        return None
    return None


def _skip(text: str, pos: int) -> int:
    """The first place at or after ``pos`` that is not JSON white space."""
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def rows_located(function: Callable[_P, _R]) -> Callable[_P, _R]:
    """``function``, whose :class:`InputError` about a data row of a table file (its
    ``file`` and ``row`` given, no ``line``) is raised with the line that row starts on
    (:func:`record_line`), so it reads ``line 12 (data row 11)``.

    The error is raised again from here: the frames of the failed read (which may hold
    the file's bytes and text) are let go before the file is read again."""

    @functools.wraps(function)
    def located(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return function(*args, **kwargs)
        except InputError as err:
            if err.file is None or err.row is None or err.line is not None:
                raise
            caught = err
        caught.__traceback__ = None
        caught.locate(record_line(caught.file, caught.row))  # type: ignore[arg-type]
        raise caught

    return located
