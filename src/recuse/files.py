"""Reading files, for every package: bytes, text, JSON and JSON lines (optionally gzip)
with clear errors, and a file's SHA-256 (:func:`file_sha256`). The one way to read,
as :mod:`recuse.outputs` is the one way to write.

Every failure is an :class:`~recuse.errors.InputError` that names the file and,
where there is one, the data record as ``row`` (see :class:`~recuse.errors.InputError`):

- missing file or a folder in its place -> ``"file not found"``;
- bytes that are not UTF-8 -> the line of the first bad byte (JSONL: as ``row``, a line
  being a record; JSON: in the message only, a line not being an element);
- a broken gzip stream -> ``"not a readable gzip file"``;
- a JSON object naming one key twice -> the key and both values (``json.loads`` would
  keep the last silently; a CSV header naming a column twice is refused alike);
- JSON that does not parse, is nested too deeply, holds an integer too long for Python
  or a lone UTF-16 surrogate escape -> line and column (JSON) or the line number as
  ``row`` (JSONL; blank lines are skipped but still counted, so ``row`` is the physical
  line). JSONL lines end at a line feed (LF or CR LF) only: U+2028, U+2029 and
  U+0085 are ordinary characters inside JSON strings.

What one file and one record may cost is bounded: a file (after gzip decompression)
may hold at most :func:`max_input_bytes` bytes (``$RECUSE_MAX_INPUT_BYTES``), one record
(a CSV row, a JSONL line) at most :func:`max_row_bytes` bytes (``$RECUSE_MAX_ROW_BYTES``);
each error says which variable raises the limit.

A file is read as gzip when its name ends in ``.gz``; a compressed file (gzip, zip,
xz, bzip2, zstd) under another name is refused as such (renamed or decompressed, it
reads), not as text that is not UTF-8.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import json
import math
import os
import re
import stat
import sys
import tomllib
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from recuse.errors import ConfigError, InputError

if TYPE_CHECKING:  # NumPy and pandas load where a table is read: recuse gate reads JSON
    import pandas as pd

__all__ = [
    "ABSENT_ERRNOS",
    "MAX_INPUT_ENV",
    "MAX_ROW_ENV",
    "TOO_DEEP",
    "check_text",
    "content_sha256",
    "content_size",
    "file_sha256",
    "is_file",
    "line_end",
    "loads_once",
    "max_input_bytes",
    "max_row_bytes",
    "read_bytes",
    "read_json",
    "read_jsonl",
    "read_text",
    "read_toml",
    "require_keys",
    "row_too_long",
    "too_big",
    "word_count",
    "words_in",
]

MAX_INPUT_ENV = "RECUSE_MAX_INPUT_BYTES"
MAX_ROW_ENV = "RECUSE_MAX_ROW_BYTES"
DEFAULT_MAX_INPUT_BYTES = 512 * 1024 * 1024
DEFAULT_MAX_ROW_BYTES = 4 * 1024 * 1024
_CHUNK = 1 << 20
BOM = b"\xef\xbb\xbf"


def _limit(env: str, default: int) -> int:
    """The positive whole number environment variable ``env`` holds (``default`` where
    it is unset or blank): ASCII digits 0-9 only, ``_`` allowed between them
    (``1_000_000``). Python's ``int`` also takes other scripts' digits (full-width
    ``１２３``, Arabic-Indic ``١٢٣``) and a sign, which a limit read from a shell must
    not pass unseen: each is refused with the variable, its value and an example. A
    number past :data:`sys.maxsize` (no file is near it) is read as that: ``int`` refuses
    one of over 4,300 digits, which came out as a traceback."""
    raw = os.environ.get(env, "")
    text = raw.strip()
    if not text:
        return default
    value = 0
    if re.fullmatch(r"[0-9]+(_[0-9]+)*", text):
        digits = text.replace("_", "").lstrip("0") or "0"
        value = sys.maxsize if len(digits) > 19 else min(int(digits), sys.maxsize)
    if value <= 0:
        raise ConfigError(
            f"{env} must be a positive whole number in ASCII digits 0-9 (e.g. "
            f"{env}=1000000 or 1_000_000), got {raw!r}: set it so, or unset it for the "
            f"default {default:,}"
        )
    return value


def max_input_bytes() -> int:
    """Most bytes one input file may hold once decompressed (``$RECUSE_MAX_INPUT_BYTES``)."""
    return _limit(MAX_INPUT_ENV, DEFAULT_MAX_INPUT_BYTES)


def max_row_bytes() -> int:
    """Most bytes one record (CSV row, JSONL line) may hold (``$RECUSE_MAX_ROW_BYTES``)."""
    return _limit(MAX_ROW_ENV, DEFAULT_MAX_ROW_BYTES)


def too_big(path: Path, what: str, limit: int) -> InputError:
    """The error for a file over :func:`max_input_bytes`."""
    return InputError(
        f"{what} more than {limit:,} bytes, the most recuse reads from one file",
        file=path,
        fix=f"set {MAX_INPUT_ENV} to a larger number of bytes if the file is genuine, or split it",
    )


def row_too_long(path: Path, row: int | None, limit: int, *, line: int | None = None) -> InputError:
    """The error for a record over :func:`max_row_bytes`: data row ``row`` (None: the
    header, where no ``line`` is given), starting on ``line`` where known."""
    where = "the header is" if row is None and line is None else "the row is"
    return InputError(
        f"{where} longer than {limit:,} bytes, the most recuse reads as one record",
        file=path,
        row=row,
        line=line,
        fix=f"check the file (a missing line break or quote?); set {MAX_ROW_ENV} to a "
        "larger number if the row is genuine",
    )


# the first bytes of each compressed format a text file may be found in by mistake
_PACKED = (
    (b"\x1f\x8b", "gzip"),
    (b"PK\x03\x04", "zip"),
    (b"PK\x05\x06", "zip"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
_BZIP2 = re.compile(rb"BZh[1-9]1AY&SY")
#: the command that undoes each compression of :data:`_PACKED`
_UNPACK = {"gzip": "gunzip", "zip": "unzip", "xz": "unxz", "zstd": "unzstd", "bzip2": "bunzip2"}


def _packed(raw: bytes) -> str | None:
    """The compression format ``raw`` starts with (its magic number), else None."""
    if _BZIP2.match(raw):
        return "bzip2"
    return next((kind for magic, kind in _PACKED if raw.startswith(magic)), None)


# byte-order marks of the Unicode encodings that are not UTF-8 (UTF-32 before UTF-16:
# UTF-32 LE's mark begins with UTF-16 LE's)
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def _unmarked_utf16(raw: bytes) -> str | None:
    """``UTF-16LE`` or ``UTF-16BE`` where the first four bytes are two characters of
    UTF-16 text without a byte-order mark (one byte of each NUL, the other not: ``i\\0t\\0``,
    a header's first letters), else None. Read as UTF-8, such a file's NULs split
    nothing: its header and rows read as names and values with NULs between the
    letters, and the error came from the last line ('fewer fields than the header')."""
    if len(raw) < 4:
        return None
    pairs = (raw[0:2], raw[2:4])
    if all(b[1] == 0 and _latin1_text(b[0]) for b in pairs):
        return "UTF-16LE"
    if all(b[0] == 0 and _latin1_text(b[1]) for b in pairs):
        return "UTF-16BE"
    return None


def _latin1_text(byte: int) -> bool:
    """Whether U+00XX (``byte``) is a character text holds: a tab, a line end, a
    printable ASCII or Latin-1 character, not another control character. Binary
    bytes (little-endian integers ``01 00 02 00``) were named UTF-16LE text."""
    return byte in (0x09, 0x0A, 0x0D) or 0x20 <= byte < 0x7F or byte >= 0xA0


def _refuse_packed(path: Path, raw: bytes) -> None:
    """A file whose name does not end in ``.gz`` but whose bytes are compressed: its
    format and how to read it (renamed to ``.gz``, or decompressed), instead of the
    first compressed byte reported as text that is not UTF-8. Text in UTF-16 or UTF-32
    (a spreadsheet's 'Unicode text') is named as such (:func:`_refuse_wide`)."""
    _refuse_wide(path, raw)
    kind = _packed(raw)
    if kind is None:
        return
    fix = (
        f"rename it to {path.name}.gz (recuse reads .gz files), or decompress it (gunzip)"
        if kind == "gzip"
        else f"decompress it ({kind}) and give the file inside; recuse reads plain or "
        ".gz-compressed text"
    )
    raise InputError(
        f"the file is {kind}-compressed, but its name does not say so", file=path, fix=fix
    )


def _refuse_wide(path: Path, raw: bytes) -> None:
    """Text in UTF-16 or UTF-32 (a spreadsheet's 'Unicode text'), named by its
    byte-order mark or, UTF-16 without one, by its NULs: a file's bytes, or a ``.gz``
    file's decompressed bytes (read as UTF-8 before, with the last line's error)."""
    wide = next((name for bom, name in _WIDE_BOMS if raw.startswith(bom)), None)
    if wide is not None:
        raise InputError(
            f"the file is {wide} text (it starts with a {wide} byte-order mark), not UTF-8",
            file=path,
            fix="save it as UTF-8 (in a spreadsheet: CSV UTF-8), or convert it, e.g. "
            f"iconv -f {wide} -t UTF-8",
        )
    unmarked = _unmarked_utf16(raw)
    if unmarked is not None:
        raise InputError(
            f"the file is {unmarked} text (every other byte of its first characters is "
            "NUL; it has no byte-order mark), not UTF-8",
            file=path,
            fix="save it as UTF-8 (in a spreadsheet: CSV UTF-8), or convert it, e.g. "
            f"iconv -f {unmarked} -t UTF-8",
        )


#: what stat says of a path that is not there (or not as a folder): no file, no error
ABSENT_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP)


def unreadable_path(path: str | Path, exc: OSError) -> InputError:
    """The :class:`InputError` for a path the system cannot look at: longer than its
    limit, or under a folder that may not be searched."""
    why = (
        "the path is longer than the system allows"
        if exc.errno == errno.ENAMETOOLONG
        else (exc.strerror or str(exc))
    )
    return InputError(
        f"cannot look at this path ({why})",
        file=path,
        fix="give a shorter path (move the file, or run from a folder nearer it)"
        if exc.errno == errno.ENAMETOOLONG
        else "check that you may read it and the folders above it",
    )


def is_file(path: str | Path, *, folder: bool = False) -> bool:
    """Whether ``path`` is a regular file (with ``folder``, a folder), as
    :meth:`Path.is_file` says, but a path it cannot look at (too long, a folder above
    that may not be searched) is :func:`unreadable_path`'s error, never an ``OSError``."""
    try:
        mode = Path(path).stat().st_mode
    except OSError as exc:
        if exc.errno in ABSENT_ERRNOS:
            return False
        raise unreadable_path(path, exc) from None
    return stat.S_ISDIR(mode) if folder else stat.S_ISREG(mode)


def no_file(path: str | Path, *, fix: str) -> InputError:
    """The :class:`InputError` for a ``path`` that is no regular file (:func:`is_file`
    said so): a folder, a pipe, socket or device (``mkfifo``, ``/dev/null``), or nothing
    there (``fix`` then says where to find one). "file not found" of a folder or a
    pipe the user can see sent them looking for a file that is there."""
    if is_file(path, folder=True):
        return InputError("a folder, not a file", file=path, fix="give a file in it")
    try:
        Path(path).stat()
    except OSError as exc:  # nothing there, or a link to nothing (is_file said the rest)
        if exc.errno == errno.ELOOP:  # "file not found" of a link the user can list
            return InputError(
                "a link in a loop of links (it leads to no file)", file=path,
                fix="point the link at the file, or give the file's own path",
            )  # fmt: skip
        return InputError("file not found", file=path, fix=fix)
    return InputError(
        "not a regular file (a pipe, socket or device)",
        file=path,
        fix="write the data to a file and give its path",
    )


def _refuse_twice_packed(path: Path, raw: bytes) -> None:
    """A ``.gz`` file whose decompressed bytes are compressed again (``gzip`` run twice,
    or a ``.zip`` inside): said as such, where the first byte of the inner file was
    "not UTF-8 text (byte 0x8b in the header) — save the file as UTF-8"; text in
    UTF-16 or UTF-32 inside is named (:func:`_refuse_wide`)."""
    _refuse_wide(path, raw)
    kind = _packed(raw)
    if kind is not None:
        raise InputError(
            f"the file decompresses to {kind}-compressed bytes (compressed twice)",
            file=path,
            fix=f"decompress it until the text shows (gunzip, then {_UNPACK[kind]}) and give "
            "that file, or that file gzip-compressed once",
        )


def read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed when its name ends in ``.gz``, at most
    :func:`max_input_bytes` of them (read in chunks: a gzip bomb stops at the limit).
    Compressed bytes under another name are refused with their format."""
    if not is_file(path):
        raise no_file(path, fix="check the path, or fetch the dataset again")
    limit = max_input_bytes()
    try:
        if path.stat().st_size > limit:
            raise too_big(path, "the file holds", limit)
        if not path.name.endswith(".gz"):
            raw = path.read_bytes()
            _refuse_packed(path, raw)
            return raw
        raw = _gunzip(path, limit)
        _refuse_twice_packed(path, raw)
        return raw
    except OSError as exc:
        raise InputError(
            f"cannot read the file ({exc.strerror or exc})",
            file=path,
            fix="check that you may read it (its permissions, owner, or a disk that is "
            "still mounted), or copy it somewhere you can",
        ) from None


def _gunzip(path: Path, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    try:
        with gzip.open(path, "rb") as stream:
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                if size > limit:
                    raise too_big(path, "the file decompresses to", limit)
                parts.append(chunk)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise InputError(
            f"not a readable gzip file ({exc})",
            file=path,
            fix="download the file again; only plain or .gz-compressed files are read",
        ) from None
    return b"".join(parts)


def content_size(path: str | Path) -> int:
    """The size of what reading ``path`` gives, modulo 2**32: its bytes, or a ``.gz``
    file's decompressed size as its gzip trailer records it (modulo 2**32, as gzip
    writes it; a file of several gzip members records only its last). Cheap: a ``stat``,
    and the trailer's 4 bytes. ``OSError`` propagates."""
    p = Path(path)
    if not p.name.endswith(".gz"):
        return p.stat().st_size % 2**32
    with p.open("rb") as f:
        if f.seek(0, os.SEEK_END) < 18:  # no room for a gzip header and trailer
            return -1
        f.seek(-4, os.SEEK_END)
        return int.from_bytes(f.read(4), "little")


def content_sha256(path: str | Path) -> str:
    """SHA-256 of the bytes reading ``path`` gives (a ``.gz`` file decompressed), read
    in chunks: a file and its gzip copy have one digest. ``OSError`` propagates, and a
    broken gzip stream is one too (:class:`gzip.BadGzipFile`)."""
    p = Path(path)
    if not p.name.endswith(".gz"):
        return file_sha256(p)
    digest = hashlib.sha256()
    try:
        with gzip.open(p, "rb") as stream:
            while chunk := stream.read(_CHUNK):
                digest.update(chunk)
    except (EOFError, zlib.error) as exc:
        raise gzip.BadGzipFile(str(exc)) from None
    return digest.hexdigest()


def file_sha256(path: str | Path, *, on_read: Callable[[int], None] | None = None) -> str:
    """SHA-256 of the file's bytes as 64 hex digits, read in 1 MiB chunks (any size,
    little memory); ``on_read(n)`` is called with the size of each chunk read (a
    progress bar). The bytes as stored: a ``.gz`` file is not decompressed.
    ``OSError`` propagates (each caller words it for its own context)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
            if on_read is not None:
                on_read(len(chunk))
    return digest.hexdigest()


def read_text(path: str | Path) -> str:
    """The whole file as UTF-8 text (a leading byte-order mark is dropped).

    A byte that is not UTF-8 names its line in the message (a line is not a record
    of a JSON document, so there is no ``row``).
    """
    path = Path(path)
    return text_of(read_bytes(path), path)


def text_of(raw: bytes, path: Path) -> str:
    """The bytes ``raw`` read from ``path`` as :func:`read_text` reads them: UTF-8, a
    leading byte-order mark dropped, a byte that is not UTF-8 said with its line. For a
    caller that also needs the bytes themselves (their sha256), read once."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 text (byte {raw[exc.start]:#04x} on line {line})",
            file=path,
            fix="save the file as UTF-8",
        ) from None


#: a TOML file nested deeper than Python's reader recurses
TOO_DEEP = (
    "arrays or tables nested too deeply for Python's TOML reader — nest them less "
    "(recuse's files need two levels at most)"
)


def read_toml(path: str | Path, *, fix: str = "fix that line") -> dict[str, Any]:
    """The TOML file ``path`` (a recuse.toml, a roster) as :func:`read_text` reads text;
    a file that does not parse, or is nested too deeply for Python's reader (a
    ``RecursionError``: it was a traceback), is a :class:`ConfigError` naming the file,
    with ``fix``."""
    text = read_text(path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}) — {fix}") from None
    except RecursionError:
        raise ConfigError(f"{path}: {TOO_DEEP}") from None


def not_json(exc: Exception) -> str | None:
    """Why ``json.loads`` refused a text that is JSON syntax but not usable, or None."""
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply for Python to read"
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return "a JSON integer has more than 4,300 digits, too long for Python to read"
    return None


# an escaped high surrogate without a low one after it, or a low one without a high one
# before it (a cheap test on the text; the parsed values are then searched exactly)
_SURROGATE_ESCAPE = re.compile(
    r"\\u[dD](?:[89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD])[c-fC-F])"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_key(value: Any) -> str | None:
    """The top-level key of ``value`` (a parsed record) under which a lone surrogate
    hides ("" for the record itself), or None if there is none."""

    def bad(v: Any) -> bool:
        if isinstance(v, str):
            return _SURROGATE.search(v) is not None
        if isinstance(v, dict):
            return any(bad(k) or bad(x) for k, x in v.items())
        if isinstance(v, list):
            return any(bad(x) for x in v)
        return False

    if isinstance(value, dict):
        for key, item in value.items():
            if bad(key) or bad(item):
                return key
        return None
    return "" if bad(value) else None


def _surrogate_error(path: Path, row: int | None, key: str) -> InputError:
    return InputError(
        "text holds a lone UTF-16 surrogate escape (\\ud800-\\udfff), which is not a character",
        file=path,
        row=row,
        column=shown_key(key),
        fix="write the character itself, or a complete surrogate pair, or remove the escape",
    )


def path_text(name: str) -> str:
    """``name`` (a path, or a part of one) as text every writer takes: bytes the file
    system gave that are not UTF-8, which Python holds as lone surrogates, become
    ``\\xNN`` escapes. A file ``caf\\xe9.csv`` (Latin-1) named tables and the report,
    and the audit ended in a traceback ("surrogates not allowed").

    >>> path_text("caf\\udce9.csv"), path_text("café.csv")
    ('caf\\\\xe9.csv', 'café.csv')
    """
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def shown_key(key: str) -> str | None:
    """A JSON key fit for an error message (None for no key)."""
    if not key:
        return None
    return key.encode("utf-8", "backslashreplace").decode("utf-8")[:80]


class _Twice(dict[str, Any]):
    """A parsed JSON object that named a key twice: the key and its first and last value."""

    twice: tuple[str, Any, Any]


class _Objects:
    """``object_pairs_hook``: each object as ``json.loads`` makes it, or a
    :class:`_Twice` where a key is named twice (json keeps the last value without a
    word); ``twice`` says whether any was."""

    def __init__(self) -> None:
        self.twice = False

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) == len(pairs):
            return out
        keys = [k for k, _ in pairs]
        key = next(k for n, k in enumerate(keys) if k in keys[:n])
        values = [v for k, v in pairs if k == key]
        twice = _Twice(out)
        twice.twice = (key, values[0], values[-1])
        self.twice = True
        return twice


def _twice(value: Any) -> tuple[str, Any, Any] | None:
    """The first key named twice in ``value`` or an object inside it, else None."""
    if isinstance(value, _Twice):
        return value.twice
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return next((t for v in items if (t := _twice(v)) is not None), None)


def _twice_error(path: Path, row: int | None, twice: tuple[str, Any, Any]) -> InputError:
    from recuse.cells import shown

    key, first, last = twice
    return InputError(
        f"a JSON object names this key twice ({shown(first)} and {shown(last)}); a JSON "
        "reader keeps one of them without a word",
        file=path,
        row=row,
        column=shown_key(key) or repr(key),
        fix="keep one of the two (or rename one, if they are different fields)",
    )


def _refuse_twice(path: Path, value: Any, *, row: int | None = None) -> None:
    """Raise on the first object of ``value`` that named a key twice, at its record: the
    data row ``row`` of a JSON-lines record, the element of a JSON array."""
    if row is None and isinstance(value, list):
        for number, element in enumerate(value, start=1):
            if (twice := _twice(element)) is not None:
                raise _twice_error(path, number, twice)
    if (twice := _twice(value)) is not None:
        raise _twice_error(path, row, twice)


def loads_once(text: str, path: Path) -> Any:
    """``json.loads(text)``, refusing (:class:`InputError`, ``path`` named) an object
    that names a key twice, which ``json`` reads as its last value without a word.
    Syntax errors are ``json``'s, for the caller to say."""
    hook = _Objects()
    value = json.loads(text, object_pairs_hook=hook)
    if hook.twice:
        _refuse_twice(path, value)
    return value


def read_json(path: str | Path) -> Any:
    """Parse a whole JSON document; a syntax error names its line and column, an object
    naming a key twice its element (in an array) and the key."""
    path = Path(path)
    text = read_text(path)
    try:
        value = loads_once(text, path)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            file=path,
            fix="the file may be truncated or edited by hand; fetch it again",
        ) from None
    except (RecursionError, ValueError) as exc:
        raise InputError(
            not_json(exc) or f"not valid JSON ({exc})",
            file=path,
            fix="give a flat array of objects with ordinary numbers",
        ) from None
    if _SURROGATE_ESCAPE.search(text):
        elements = value if isinstance(value, list) else [value]
        for number, element in enumerate(elements, start=1):
            key = _surrogate_key(element)
            if key is not None:
                raise _surrogate_error(path, number if isinstance(value, list) else None, key)
    return value


_BLANK_LINES = re.compile(rb"(?:[ \t\r]*\n)+")


def _numbered_lines(
    raw: bytes, path: Path, limit: int, *, start: int = 0
) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` for each non-blank line of ``raw``; lines end at LF only
    (CR LF keeps its CR, which JSON reads as white space); runs of blank lines are
    skipped fast; a line over ``limit`` bytes raises (naming its line and data row:
    the non-blank lines up to it)."""
    number, size, records = 0, len(raw), 0
    while start < size:
        blank = _BLANK_LINES.match(raw, start)
        if blank:
            number += raw.count(b"\n", start, blank.end())
            start = blank.end()
            continue
        number += 1
        end = line_end(raw, start, limit, newline=b"\n")
        if end < 0:
            raise row_too_long(path, records + 1, limit, line=number)
        records += 1
        yield number, raw[start:end]
        start = end + 1


def line_end(raw: bytes, start: int, limit: int, *, newline: bytes) -> int:
    """Index of the ``newline`` ending the line that starts at ``start`` (``len(raw)`` for
    the last line without one), or -1 when the line is longer than ``limit`` bytes."""
    end = raw.find(newline, start, start + limit + 1)
    if end >= 0:
        return end
    return len(raw) if len(raw) - start <= limit else -1


def read_jsonl(path: str | Path, *, keys: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Parse a JSON-lines file into a list of objects, one per non-blank line.

    A line that is not valid JSON, not a JSON object, longer than :func:`max_row_bytes`
    or lacks one of ``keys`` raises naming its line and its data row (the non-blank
    lines up to it).
    """
    path = Path(path)
    wanted = set(keys)
    raw = read_bytes(path)
    records: list[dict[str, Any]] = []
    hook = _Objects()

    lines = _numbered_lines(
        raw, path, max_row_bytes(), start=len(BOM) if raw.startswith(BOM) else 0
    )
    for number, data in lines:
        try:
            records.append(_jsonl_record(data, path, wanted, hook, row=len(records) + 1))
        except InputError as err:
            err.locate(number)
            raise
    return records


def _jsonl_record(
    data: bytes, path: Path, wanted: set[str], hook: _Objects, *, row: int
) -> dict[str, Any]:
    """The JSON object of one non-blank line of a JSON-lines file, data row ``row``;
    errors name that row (and :func:`read_jsonl`, the line)."""
    try:
        line = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (byte {data[exc.start]:#04x})",
            file=path,
            row=row,
            fix="save the file as UTF-8",
        ) from None
    try:
        value = json.loads(line, object_pairs_hook=hook)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"the line is not valid JSON (column {exc.colno}: {exc.msg})",
            file=path,
            row=row,
            fix="the file may be truncated; each line must be one complete JSON object",
        ) from None
    except (RecursionError, ValueError) as exc:
        raise InputError(
            not_json(exc) or f"not valid JSON ({exc})",
            file=path,
            row=row,
            fix="give one flat JSON object per line with ordinary numbers",
        ) from None
    if not isinstance(value, dict):
        raise InputError(
            f"the line is a JSON {json_kind(value)}, not an object",
            file=path,
            row=row,
            fix="each line must be one JSON object",
        )
    if hook.twice:
        _refuse_twice(path, value, row=row)
    if wanted and not wanted.issubset(value):
        _missing_keys(wanted, value, file=path, row=row, what="line")
    if _SURROGATE_ESCAPE.search(line):
        key = _surrogate_key(value)
        if key is not None:
            raise _surrogate_error(path, row, key)
    return value


def json_kind(value: Any) -> str:
    """What a parsed JSON value is, in JSON's words (``null``, ``object``, ``array``),
    for messages about a file (not Python's ``NoneType``, ``dict``, ``list``).

    >>> json_kind(None), json_kind({}), json_kind([1]), json_kind(True), json_kind(2.5)
    ('null', 'object', 'array', 'boolean', 'number')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    return "array" if isinstance(value, list) else type(value).__name__


def require_keys(records: Any, keys: Iterable[str], *, file: str | Path) -> list[dict[str, Any]]:
    """Check ``records`` (a parsed JSON document) is an array of objects with all ``keys``.

    Returns it typed as a list of dicts; errors give the 1-based element number as ``row``.
    """
    if not isinstance(records, list):
        raise InputError(
            f"expected a JSON array of objects, found a JSON {json_kind(records)}",
            file=file,
            fix="write the records as one array, [{...}, {...}], or as JSON Lines (.jsonl)",
        )
    wanted = set(keys)
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise InputError(
                f"element {number} is a JSON {json_kind(record)}, not an object",
                file=file,
                row=number,
                fix="each element of the array must be one object of column: value pairs",
            )
        if not wanted.issubset(record):
            _missing_keys(wanted, record, file=file, row=number, what="element")
    return records


def _missing_keys(
    wanted: set[str], record: dict[str, Any], *, file: str | Path, row: int, what: str
) -> NoReturn:
    missing = sorted(wanted.difference(record))
    raise InputError(
        f"the {what} lacks key(s) {', '.join(missing)}",
        file=file,
        row=row,
        column=missing[0],
        fix=f"every {what} needs {', '.join(sorted(wanted))}",
    )


def check_text(frame: pd.DataFrame, columns: Iterable[str], *, file: str | Path) -> None:
    """Check every value of ``columns`` is a string (rows are 1-based positions in ``frame``)."""
    import numpy as np

    from recuse.cells import shown

    for col in columns:
        is_str = frame[col].map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
        if not is_str.all():
            i = int(np.flatnonzero(~is_str)[0])
            value = frame[col].iloc[i]
            empty = value is None or (isinstance(value, float) and math.isnan(value))
            found = "nothing (an empty cell or a JSON null)" if empty else shown(value)
            raise InputError(
                f"{col} must be text, found {found}",
                file=file,
                row=i + 1,
                column=col,
                fix=f"give every row its {col} as text",
            )


#: characters of scripts written without spaces between words, each one word: Han
#: ideographs (CJK, its extensions and compatibility block), hiragana and katakana
_UNSPACED = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
#: their punctuation (CJK symbols and punctuation, full-width punctuation): a separator,
#: as a space is in other scripts
_UNSPACED_MARKS = "\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65"
_HAS_UNSPACED = re.compile(f"[{_UNSPACED}{_UNSPACED_MARKS}]")
_WORD = re.compile(f"[{_UNSPACED}]|[^\\s{_UNSPACED}{_UNSPACED_MARKS}]+")


def words_in(text: str) -> int:
    """Words in ``text``: its runs of non-whitespace (``len(text.split())``), except
    that each Chinese or Japanese character (Han, hiragana, katakana) is a word of its
    own and their punctuation (。、，「」) separates words as a space does — those
    scripts put no spaces between words, so a split on spaces counted a paragraph of
    them as one word (word processors count them so too).

    >>> words_in("two  words"), words_in("- a list item"), words_in("")
    (2, 4, 0)
    >>> words_in("我喜欢猫。"), words_in("GPT-4 は良い"), words_in("猫，狗")
    (4, 4, 2)
    """
    if text.isascii() or not _HAS_UNSPACED.search(text):  # isascii: a C scan, no regex
        return len(text.split())
    return len(_WORD.findall(text))


#: scripts written without spaces between words whose words :func:`words_in` cannot
#: tell apart (a dictionary would be needed): Thai, Lao, Myanmar and Khmer, by block
SPACELESS_SCRIPTS = {
    "Thai": "\u0e00-\u0e7f",
    "Lao": "\u0e80-\u0eff",
    "Myanmar": "\u1000-\u109f",
    "Khmer": "\u1780-\u17ff",
}
_ANY_SPACELESS = re.compile(f"[{''.join(SPACELESS_SCRIPTS.values())}]")
_SPACELESS_RUNS = {name: re.compile(f"[{block}]+") for name, block in SPACELESS_SCRIPTS.items()}
#: the least share of a text's characters that are of one of
#: :data:`SPACELESS_SCRIPTS` for :func:`spaceless_script` to name it: an English answer
#: quoting a price in baht (฿, in the Thai block) or one Thai greeting is counted in
#: words as well as any English text
SPACELESS_SHARE = 0.25
#: the characters of a text that share is read from (its first): a table of long Thai
#: answers (20,000 rows of 3,000 characters each side) is read in 0.5 s, not 0.8 s
SPACELESS_READ = 1_000


def spaceless_script(text: str) -> str | None:
    """The first of :data:`SPACELESS_SCRIPTS` that ``text`` holds where it is written
    in it (at least :data:`SPACELESS_SHARE` of its first :data:`SPACELESS_READ`
    characters), else None:
    :func:`words_in` counts such a text's space-separated runs, which there are phrases
    or sentences, not words.

    >>> spaceless_script("สวัสดีครับ ยินดีต้อนรับ"), spaceless_script("plain words")
    ('Thai', None)
    >>> spaceless_script("A night in Bangkok costs about ฿1,200: say สวัสดี at the door")
    """
    if text.isascii() or not _ANY_SPACELESS.search(text):
        return None
    name = next(name for name, rx in _SPACELESS_RUNS.items() if rx.search(text))
    head = text[:SPACELESS_READ]
    runs = _SPACELESS_RUNS[name].findall(head)  # runs, not characters: 10x faster
    return name if sum(map(len, runs)) >= SPACELESS_SHARE * len(head) else None


def word_count(texts: pd.Series) -> pd.Series:
    """Words per text by :func:`words_in` (the ``len_a`` / ``len_b`` convention).

    Missing texts stay missing (NaN); the result is float.
    """
    return texts.map(words_in, na_action="ignore").astype(float)
