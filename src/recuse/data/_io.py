"""Small file helpers shared by the readers: read JSON / JSONL (optionally gzip) with clear errors.

Every failure is an :class:`~recuse.errors.InputError` that names the file and,
where there is one, the line:

- missing file or a folder in its place -> ``"file not found"``;
- bytes that are not UTF-8 -> the line of the first bad byte;
- a broken gzip stream -> ``"not a readable gzip file"``;
- JSON that does not parse -> line and column (JSON) or the line number as ``row``
  (JSONL; blank lines are skipped but still counted, so ``row`` is the physical line).

A file is read as gzip when its name ends in ``.gz``.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import pandas as pd

from recuse.errors import InputError

__all__ = ["check_text", "read_json", "read_jsonl", "read_text", "require_keys", "word_count"]


def _read_bytes(path: Path) -> bytes:
    if not path.is_file():
        raise InputError(
            "file not found", file=path, fix="check the path, or fetch the dataset again"
        )
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the file ({exc.strerror or exc})", file=path) from None
    if path.name.endswith(".gz"):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(
                f"not a readable gzip file ({exc})",
                file=path,
                fix="download the file again; only plain or .gz-compressed files are read",
            ) from None
    return raw


def read_text(path: str | Path) -> str:
    """The whole file as UTF-8 text (a leading byte-order mark is dropped)."""
    path = Path(path)
    raw = _read_bytes(path)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 text (byte {raw[exc.start]:#04x} on line {line})",
            file=path,
            row=line,
            fix="save the file as UTF-8",
        ) from None


def read_json(path: str | Path) -> Any:
    """Parse a whole JSON document; a syntax error names its line and column."""
    path = Path(path)
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            file=path,
            fix="the file may be truncated or edited by hand; fetch it again",
        ) from None


def read_jsonl(path: str | Path, *, keys: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Parse a JSON-lines file into a list of objects, one per non-blank line.

    A line that is not valid JSON, not a JSON object, or lacks one of ``keys``
    raises with ``row`` = its 1-based line number.
    """
    path = Path(path)
    wanted = set(keys)
    lines = read_text(path).splitlines()
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"line {number} is not valid JSON (column {exc.colno}: {exc.msg})",
                file=path,
                row=number,
                fix="the file may be truncated; each line must be one complete JSON object",
            ) from None
        if not isinstance(value, dict):
            raise InputError(
                f"line {number} is a JSON {type(value).__name__}, not an object",
                file=path,
                row=number,
                fix="each line must be one JSON object",
            )
        if wanted and not wanted.issubset(value):
            _missing_keys(wanted, value, file=path, row=number, what="line")
        records.append(value)
    return records


def require_keys(records: Any, keys: Iterable[str], *, file: str | Path) -> list[dict[str, Any]]:
    """Check ``records`` (a parsed JSON document) is an array of objects with all ``keys``.

    Returns it typed as a list of dicts; errors give the 1-based element number as ``row``.
    """
    if not isinstance(records, list):
        raise InputError(
            f"expected a JSON array of objects, found a JSON {type(records).__name__}",
            file=file,
        )
    wanted = set(keys)
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise InputError(
                f"element {number} is a JSON {type(record).__name__}, not an object",
                file=file,
                row=number,
            )
        if not wanted.issubset(record):
            _missing_keys(wanted, record, file=file, row=number, what="element")
    return records


def _missing_keys(
    wanted: set[str], record: dict[str, Any], *, file: str | Path, row: int, what: str
) -> NoReturn:
    missing = sorted(wanted.difference(record))
    raise InputError(
        f"{what} {row} lacks key(s) {', '.join(missing)}",
        file=file,
        row=row,
        column=missing[0],
        fix=f"every {what} needs {', '.join(sorted(wanted))}",
    )


def check_text(frame: pd.DataFrame, columns: Iterable[str], *, file: str | Path) -> None:
    """Check every value of ``columns`` is a string (rows are 1-based positions in ``frame``)."""
    for col in columns:
        is_str = frame[col].map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
        if not is_str.all():
            i = int(np.flatnonzero(~is_str)[0])
            raise InputError(
                f"{col} must be text, found {frame[col].iloc[i]!r}",
                file=file,
                row=i + 1,
                column=col,
            )


def word_count(texts: pd.Series) -> pd.Series:
    """Words per text as ``len(text.split())`` (the ``len_a`` / ``len_b`` convention).

    Missing texts stay missing (NaN); the result is float.
    """
    return texts.map(lambda t: len(t.split()), na_action="ignore").astype(float)
