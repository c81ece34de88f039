"""Every file recuse writes goes through here: checked before the work, written atomically.

* :func:`check_output` is called by a command before it does any work: the target's
  folder must exist and be a writable folder, the target must not be a folder (or,
  for :func:`check_output_folder`, a file), and its name must fit the file system.
* :func:`write_text` / :func:`write_bytes` write to a temporary file beside the
  target and rename it over the target, so a reader sees the old file or the whole
  new one, never a part.
* :func:`staged` collects several files (a report folder) and moves them into place
  only when all were written: an error while writing leaves none of them.
* :func:`csv_text` renders a table as CSV exactly: pandas (or any CSV reader) reads
  back the same text, ``+1 when…`` included. :func:`spreadsheet_csv_text` renders the
  copy for spreadsheets, with formulas neutralised: a text cell that starts with ``=``,
  ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'`` (the usual rule;
  see OWASP "CSV Injection"), so a spreadsheet shows the text instead of running it;
  numbers are left as they are. :func:`csv_files` / :func:`write_csv` write both: the
  exact file ``NAME.csv`` (for scripts) and ``for-spreadsheets/NAME.csv`` beside it.
* :func:`strict_json` turns NaN and infinities into None (JSON ``null``) before
  ``json.dumps(..., allow_nan=False)``, for every JSON file recuse writes.
* :func:`file_name` turns a name derived from data (a table named after an input
  file) into a safe file name of bounded length, unique by a short hash.

An :class:`OSError` (disk full, read-only file system, permission, name too long)
becomes an :class:`~recuse.errors.OutputError` naming the path and what to do; where
a file from before stays in its place (:func:`write_bytes`, :func:`check_output`,
:func:`keeping_earlier`) the error says so, so it is not taken for this run's result.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import secrets
import shutil
import socket
import sys
import threading
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from stat import S_ISDIR
from typing import TYPE_CHECKING, Any

from recuse.errors import OutputError, ReaderNote
from recuse.interrupt import complete_over, output_complete

if TYPE_CHECKING:  # pandas loads where a table is written: recuse gate --json writes none
    import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: the spreadsheet rule as a command's line says it: every character of FORMULA_STARTS
FORMULA_WORDS = "=, +, -, @, a tab or a carriage return"
NAME_MAX = 255  # bytes in one file name on the file systems recuse runs on

_WHAT_TO_DO = {
    errno.ENOSPC: "the disk is full — free some space or write elsewhere with {option}",
    errno.EDQUOT: "the disk quota is exceeded — free some space or write elsewhere with {option}",
    errno.EROFS: "the file system is read-only — write elsewhere with {option}",
    errno.EACCES: "permission denied — write elsewhere with {option}",
    errno.EPERM: "permission denied — write elsewhere with {option}",
    errno.ENAMETOOLONG: "the path or a name in it is too long — choose a shorter one with {option}",
    # a folder that exists but takes no new file (/proc, /sys: their file systems say
    # "No such file or directory"), or one removed while the command ran
    errno.ENOENT: "no file can be created in that folder (a system folder such as /proc "
    "or /sys, or one removed meanwhile) — write elsewhere with {option}",
    errno.EFBIG: "a file would pass the largest file size this process may write "
    "(ulimit -f) — raise that limit, or write elsewhere with {option}",
}


class WriteFailed(OutputError):
    """The system refused a write (an ``OSError``): any earlier file there stays."""


class WaitingForFolder(ReaderNote):
    """Another write holds the lock of the folder :func:`staged` writes into: this one
    waits for it, and says so first."""


class UnlockedFolder(ReaderNote):
    """The folder a write goes into cannot be opened to lock it (:func:`_lock_folder`:
    write but no read permission): the write goes on unlocked, and says so first."""


class InterruptedWrite(ReaderNote):
    """A folder holds the staging folder of a write stopped while its files moved in
    (``kill -9``): :func:`staged` says so as it writes there again."""


def output_error(path: str | Path, exc: OSError, *, option: str = "--out") -> OutputError:
    """One-line :class:`OutputError` for an ``OSError`` met writing ``path``, its fix
    naming ``option``, the option that gave the path (``recuse certify --thresholds
    t.json`` in a read-only folder said "write elsewhere with --out", which certify
    does not have); a name that is no flag, a method of the library, is said as its
    call: "write elsewhere with Report.to_json(path)"."""
    where = option if option.startswith("-") else f"{option}(path)"
    what = _WHAT_TO_DO.get(exc.errno or 0)
    text = what.format(option=where) if what else exc.strerror or type(exc).__name__
    return WriteFailed(f"cannot write {path}: {text}")


def stdout_error(exc: OSError) -> OutputError:
    """One-line :class:`OutputError` for an ``OSError`` met writing standard output
    (sent to a file on a full disk, or past ``ulimit -f``): what was printed is cut
    short, and the fix is the redirect's."""
    what = _WHAT_TO_DO.get(exc.errno or 0)
    fix = "a redirect (> FILE) to another file or disk"
    text = what.format(option=fix) if what else f"{exc.strerror or type(exc).__name__} — {fix}"
    return WriteFailed(f"cannot write standard output (what was printed is cut short): {text}")


@contextlib.contextmanager
def keeping_earlier(folder: str | Path, names: Iterable[str]) -> Iterator[None]:
    """A failed write (:class:`WriteFailed`) in the block also says which of ``names``
    (paths relative to ``folder``) were there before it: they stay as they were, and
    are not this run's results. Only those still there after the failure are named
    (a write that could not put one back said it was left as it was)."""
    earlier = files_there(folder, names)
    try:
        yield
    except WriteFailed as exc:  # not a refusal such as "is the input"
        earlier = files_there(folder, earlier)
        if not earlier:
            raise
        shown = ", ".join(earlier[:2]) + (f" and {len(earlier) - 2} more" if earlier[2:] else "")
        raise WriteFailed(
            f"{exc} ({Path(folder)} still holds the {shown} from before, left as they "
            "were: not this run's results)"
        ) from None


def files_there(folder: str | Path, names: Iterable[str]) -> list[str]:
    """Those of ``names`` (paths relative to ``folder``) that are files there now."""
    return [name for name in names if _is_file(Path(folder) / name)]


def _is_file(path: Path) -> bool:
    """``path`` is a file; False where it cannot be looked at (a name too long)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _new_file(folder: Path, prefix: str, suffix: str = "") -> tuple[int, Path]:
    """Create a new file with a random name in ``folder``; returns its descriptor and path.

    Unlike :func:`tempfile.mkstemp` the path stays relative when ``folder`` is, so a
    run from a folder deeper than the system's path limit still works.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        path = folder / f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            return os.open(path, flags, 0o644), path
        except FileExistsError:
            continue


def _new_folder(folder: Path, prefix: str) -> Path:
    """Create a new folder with a random name in ``folder`` (path kept relative)."""
    while True:
        path = folder / f"{prefix}{secrets.token_hex(6)}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue


def _probe(folder: Path, shown: str | Path, option: str) -> None:
    """Create and remove a file in ``folder``: the only sure test of writability."""
    try:
        fd, tmp = _new_file(folder, ".recuse-probe-")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise output_error(shown, exc, option=option) from None


def check_output(
    path: str | Path, *, option: str = "--out", inputs: Iterable[str | Path] = ()
) -> Path:
    """The file ``path`` can be written: its folder exists and is writable, it is not
    a folder, its name fits, and it is none of the files the command reads
    (``inputs``: writing it would replace them). Call before any work; returns the path."""
    p = Path(path)
    _not_stdout(path, option, "file")
    _check_name(p, option)
    earlier = _is_file(p)
    with _stat_errors(p, option):
        try:
            _check_file(p, option)
        except WriteFailed as exc:
            raise _earlier_said(exc, p, earlier) from None
        _not_an_input(p, option, inputs, fix="give another file name")
        if p.suffix.lower() == ".csv":  # its spreadsheet copy goes in a folder beside it
            _not_a_file(p.parent, SPREADSHEET_FOLDER, option)
    return p


def _not_an_input(p: Path, option: str, inputs: Iterable[str | Path], *, fix: str) -> None:
    """``p`` is not one of ``inputs`` (by file identity: another spelling of the same
    path, or a link to it, is the same file), nor a file in an input folder (a dataset's,
    a tool's): writing it would replace data the command reads."""
    if not p.exists():
        return
    for src in inputs:
        try:
            same = Path(src).is_file() and p.samefile(src)
            within = Path(src).is_dir() and p.resolve().is_relative_to(Path(src).resolve())
        except OSError:  # an input the command will name when it reads it
            same = within = False
        if same or within:
            raise OutputError(
                f"{option} {p}: is {'the input' if same else 'a file in the input folder'} "
                f"{src} — writing it would replace the data read; {fix}"
            )


@contextlib.contextmanager
def _stat_errors(p: Path, option: str = "--out") -> Iterator[None]:
    """An ``OSError`` looking at ``p`` (a path longer than the system's limit, a
    parent that cannot be searched) as a one-line :class:`OutputError`."""
    try:
        yield
    except OSError as exc:
        raise output_error(p, exc, option=option) from None


def _check_file(p: Path, option: str) -> None:
    if p.is_dir():
        raise OutputError(f"{option} {p}: is a folder — give a file name")
    if p.exists() and not p.is_file():
        raise OutputError(
            f"{option} {p}: is not a regular file (a device, pipe or socket), which the "
            "output would replace — give a file name"
        )
    if not p.parent.exists():
        raise OutputError(
            f"{option} {p}: folder {p.parent} does not exist — create it or give another path"
        )
    if not p.parent.is_dir():
        raise OutputError(f"{option} {p}: {p.parent} is a file, not a folder")
    _probe(p.parent, p, option)


def _not_stdout(path: str | Path, option: str, kind: str) -> None:
    """``-`` is standard output to most tools; recuse writes no output there, and a file
    or folder named ``-`` in the working folder is not what was asked for."""
    if str(path).strip() == "-":
        raise OutputError(
            f"{option} -: recuse writes a {kind} here, not standard output — give a {kind} name"
        )


def _check_name(p: Path, option: str) -> None:
    """Every part of ``p`` fits the file system's name limit (255 bytes here)."""
    for part in p.parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise OutputError(
                f"{option} {p}: a name in it is longer than {NAME_MAX} bytes — choose a shorter one"
            )


def check_output_folder(
    path: str | Path,
    *,
    option: str = "--out",
    inputs: Iterable[str | Path] = (),
    files: Iterable[str] = (),
    folders: Iterable[str] = (),
    parents: bool = False,
) -> Path:
    """The folder ``path`` exists or can be created (its parent exists; with
    ``parents``, the nearest folder above it that exists, the writer creating those
    between, as :meth:`recuse.api.Report.write` always has), is not a file, and is
    writable, none of ``files`` (the names the command writes in it) is a file the
    command reads (``inputs``, as :func:`check_output` says) or a folder, and neither the
    folders they lie in nor ``folders`` (those it writes in, its files not known yet) is a
    file. Creates nothing; returns the path."""
    p = Path(path)
    _not_stdout(path, option, "folder")
    _check_name(p, option)
    inputs = list(inputs)
    with _stat_errors(p, option):
        _check_folder(p, option, parents=parents)
        for name in files:
            _not_an_input(
                p / name, option, inputs, fix=f"give {option} another folder, or move the input"
            )
            _not_a_folder(p, name, option)
        within = {d.as_posix() for name in files for d in Path(name).parents if d.parts}
        for name in sorted({*within, *folders}):
            _not_a_file(p, name, option)
    return p


def _not_a_file(folder: Path, name: str, option: str) -> None:
    """``folder / name``, a folder the command writes in (``tables``, ``for-spreadsheets``),
    is no file: the write failed after the whole run with "cannot write …: File exists"."""
    path = folder / name
    if path.exists() and not path.is_dir():
        raise OutputError(
            f"{option} {folder}: {name} there is a file, where recuse writes a folder — "
            f"move or remove it, or give another {option}"
        )


def _not_a_folder(folder: Path, name: str, option: str) -> None:
    """``folder / name``, a file the command writes, is no folder: the rename into it
    failed after the work, and said "cannot write FOLDER: Is a directory" of the
    folder given, as though it could not be one."""
    path = folder / name
    if path.is_dir():
        raise OutputError(
            f"{option} {folder}: {name} there is a folder, where recuse writes a file — "
            f"move or remove it, or give another {option}"
        )
    if path.exists() and not path.is_file():  # the rename would replace it, unsaid
        raise OutputError(
            f"{option} {folder}: {name} there is not a regular file (a pipe, socket or "
            f"device), where recuse writes a file — move or remove it, or give another {option}"
        )


def _check_folder(p: Path, option: str, *, parents: bool = False) -> None:
    if p.is_symlink() and not p.exists():  # mkdir would say only "File exists"
        raise OutputError(
            f"{option} {p}: is a link to {os.readlink(p)}, which leads to no folder (it "
            f"does not exist, or the links loop) — create that folder, or give another {option}"
        )
    if p.exists() and not p.is_dir():
        if p.is_symlink():  # "is a file" sent the user looking for a file they never made
            raise OutputError(
                f"{option} {p}: is a link to {os.readlink(p)}, a file, not a folder — give "
                f"another {option}, or remove the link (the file it leads to stays)"
            )
        what = "a file" if p.is_file() else "a pipe, socket or device, not a folder"
        raise OutputError(f"{option} {p}: is {what} — give a folder")
    probe_in = p if p.is_dir() else p.parent
    while parents and not (probe_in.exists() or probe_in.is_symlink()):
        if probe_in.parent == probe_in:
            break
        probe_in = probe_in.parent  # a link leading nowhere stops it: said below
    if not probe_in.exists():
        raise OutputError(
            f"{option} {p}: folder {probe_in} does not exist — create it or give another path"
        )
    if not probe_in.is_dir():
        raise OutputError(f"{option} {p}: {probe_in} is a file, not a folder")
    _probe(probe_in, p, option)


FILE_STEM_MAX = 200  # bytes of a file name derived from data; longer ones are cut


def file_name(stem: str, suffix: str = "", *, limit: int = FILE_STEM_MAX) -> str:
    """A safe, bounded file name for ``stem`` (often derived from an input's name).

    A stem of letters, digits, ``-``, ``_`` and ``.`` (not leading) of at most
    ``limit`` bytes (UTF-8) is kept as it is; any other is cleaned (other characters
    become ``-``), cut, and gets ``-`` and 8 hex digits of its hash, so different
    stems stay different.

    >>> file_name("self-preference-pairs-csv", ".csv")
    'self-preference-pairs-csv.csv'
    >>> name = file_name("x" * 300, ".csv", limit=100)
    >>> len(name), name[-14:]
    (104, 'x-0d4e2ca9.csv')
    """
    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in stem)
    size = len(safe.encode("utf-8"))
    if safe == stem and stem and not stem.startswith(".") and size <= limit:
        return stem + suffix
    digest = hashlib.sha256(stem.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    cut = safe.encode("utf-8")[: limit - 9].decode("utf-8", "ignore").lstrip(".")
    return f"{cut}-{digest}{suffix}"


def write_bytes(path: str | Path, data: bytes, *, option: str = "--out") -> Path:
    """Write ``data`` to ``path`` atomically (temporary file beside it, then rename); a
    failure's fix names ``option``, the option that gave the path (:func:`output_error`:
    ``certify run --thresholds`` on a full disk said "write elsewhere with --out")."""
    p = Path(path)
    tmp: Path | None = None
    earlier = _is_file(p)
    try:
        fd, tmp = _new_file(p.parent, f".{p.name[:40]}.", ".part")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
        tmp = None
    except OSError as exc:
        raise _earlier_said(output_error(p, exc, option=option), p, earlier) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return p


def _earlier_said(error: OutputError, p: Path, earlier: bool) -> OutputError:
    """``error`` saying that ``p`` (when ``earlier``: a file before the write) stays."""
    if not earlier:  # the old file stays; it is not this run's result
        return error
    return WriteFailed(f"{error} (the {p} from before is left as it was: not this run's result)")


def write_text(path: str | Path, text: str, *, option: str = "--out") -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`write_bytes`)."""
    return write_bytes(path, text.encode("utf-8"), option=option)


def strict_json(value: Any) -> Any:
    """``value`` with NaN and infinities (nested in dicts, lists and tuples; a tuple
    becomes a list) turned into None, so ``json.dumps(..., allow_nan=False)`` writes
    strict JSON: ``null`` where Python's default would write ``NaN``.

    >>> strict_json({"a": float("nan"), "b": (1.0, float("inf")), "c": "x"})
    {'a': None, 'b': [1.0, None], 'c': 'x'}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: strict_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strict_json(v) for v in value]
    return value


def neutralise_formula(value: object) -> object:
    """``value`` with a leading ``'`` when it is text a spreadsheet would run.

    >>> neutralise_formula("=HYPERLINK(1)"), neutralise_formula("-0.5"), neutralise_formula(-0.5)
    ("'=HYPERLINK(1)", "'-0.5", -0.5)
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _text_columns(frame: pd.DataFrame) -> list[object]:
    """The columns of ``frame`` that may hold text (object, string or categorical)."""
    import pandas as pd

    return [
        col
        for col in frame.columns
        if frame[col].dtype == object
        or pd.api.types.is_string_dtype(frame[col])
        or isinstance(frame[col].dtype, pd.CategoricalDtype)
    ]


def csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV text (no index) that reads back exactly: what scripts read.

    Text is written as it is (``+1 when…`` stays ``+1 when…``). Lines end in ``\n``;
    a table with a carriage return in a text cell or header ends its lines in
    ``\r\n`` (RFC 4180), so that the CR is quoted and survives the round trip.
    """
    cells = [frame[col].astype(object) for col in _text_columns(frame)]
    has_cr = any("\r" in str(c) for c in frame.columns) or any(
        column.map(lambda v: isinstance(v, str) and "\r" in v).any() for column in cells
    )
    return frame.to_csv(index=False, lineterminator="\r\n" if has_cr else "\n")


def spreadsheet_csv_text(frame: pd.DataFrame) -> str:
    """``frame`` as CSV text for a spreadsheet: as :func:`csv_text`, with every text
    cell and header name that starts with ``= + - @``, a tab or a carriage return
    prefixed by ``'`` (:func:`neutralise_formula`), so no cell runs as a formula."""
    safe = frame.copy()
    for col in _text_columns(safe):
        safe[col] = safe[col].astype(object).map(neutralise_formula)
    safe.columns = [str(neutralise_formula(str(c))) for c in safe.columns]
    return csv_text(safe)


SPREADSHEET_FOLDER = "for-spreadsheets"  # beside each data CSV: its spreadsheet-safe copy


def csv_files(name: str, frame: pd.DataFrame) -> dict[str, str]:
    """``{relative path: CSV text}`` of table ``frame`` written as ``name`` (``x.csv``
    or ``tables/x.csv``): the exact file and its copy under ``for-spreadsheets/``."""
    path, copy = csv_names(name)
    return {path: csv_text(frame), copy: spreadsheet_csv_text(frame)}


def csv_names(name: str) -> tuple[str, str]:
    """The relative paths :func:`csv_files` writes table ``name`` to: ``name`` and its
    spreadsheet-safe copy under ``for-spreadsheets/``.

    >>> csv_names("tables/x.csv")
    ('tables/x.csv', 'tables/for-spreadsheets/x.csv')
    """
    path = Path(name)
    return path.as_posix(), (path.parent / SPREADSHEET_FOLDER / path.name).as_posix()


def write_csv(path: str | Path, frame: pd.DataFrame) -> tuple[Path, Path]:
    """Write ``frame`` to ``path`` exactly (for scripts), then its spreadsheet-safe copy
    to ``for-spreadsheets/<name>`` beside it, each atomically; returns the two paths.

    A failure writing the first leaves the old file and no new folder; one writing
    the copy (a full disk) or a Ctrl-C between them puts the earlier file back (kept
    as a hard link until both are in place), or removes the new one where there was
    none or it cannot be put back: the command failed (exit 2) and left this run's
    exact file in place, a whole result beside the earlier copy or none. The folder
    is locked for both writes (:func:`locked`): two runs writing one file at once
    each wrote theirs and its copy, which could leave one run's file beside the
    other's copy."""
    p = Path(path)
    copy = p.parent / SPREADSHEET_FOLDER / p.name
    whole = f"{written(p, copy)} are complete and in place"
    with locked(p, complete=whole), undone_on_failure(p):
        write_text(p, csv_text(frame))
        try:
            copy.parent.mkdir(exist_ok=True)
        except OSError as exc:
            raise output_error(copy, exc) from None
        write_text(copy, spreadsheet_csv_text(frame))
    return p, copy


@contextlib.contextmanager
def undone_on_failure(p: Path) -> Iterator[None]:
    """A block that writes the file ``p`` and then others: where it fails (or is
    stopped by a Ctrl-C) the earlier ``p`` is put back (kept as a hard link until the
    block ends), or the new one removed where there was none or it cannot be put
    back, so a failed command leaves no file of its own run (:func:`write_csv`'s
    copy, ``certify run``'s --out after its --thresholds). A Ctrl-C once the block
    ended, as the earlier file's link is removed, is said over whole files (as in
    :func:`staged`): it said "start it over"."""
    kept = _linked_aside(p)
    try:
        yield
    except BaseException:
        with contextlib.suppress(OSError):
            if kept is not None:
                os.replace(kept, p)
            else:
                p.unlink()
        if kept is not None:
            with contextlib.suppress(OSError):
                kept.unlink()
        raise
    if kept is not None:  # the block's files are whole: what follows is cleanup
        try:
            with contextlib.suppress(OSError):
                kept.unlink()
        except KeyboardInterrupt as exc:  # said as staged()'s cleanup is (output_complete)
            words = (
                f"{p} and the files the same step wrote after it are complete and in "
                f"place; cleanup left: {kept.name} beside it (a link to the earlier "
                f"{p.name}, kept until they were) was not removed (delete it)"
            )
            output_complete(words, exc)
            raise


def _linked_aside(p: Path) -> Path | None:
    """A hard link to the file ``p`` under a new hidden name beside it (the earlier
    file, kept while :func:`write_csv` replaces it), or None: no file there, or the
    file system makes no hard links."""
    if not _is_file(p) or p.is_symlink():
        return None
    for _ in range(100):
        aside = p.parent / f".{p.name[:40]}.{secrets.token_hex(6)}.before"
        try:
            os.link(p, aside)
        except FileExistsError:
            continue
        except OSError:
            return None
        return aside
    return None


def written(path: Path, copy: Path | None = None) -> str:
    """How a command names the file it wrote, and the spreadsheet copy :func:`write_csv`
    put beside it, so a folder that appears is never unexplained: ``runs/pairs.csv
    (exact, for scripts) and runs/for-spreadsheets/pairs.csv (for spreadsheets: …)``."""
    if copy is None:
        return str(path)
    return (
        f"{path} (exact, for scripts) and {copy} (for spreadsheets: a text cell starting "
        f"with {FORMULA_WORDS} gets a leading ')"
    )


class Staging:
    """Files written under a hidden folder, moved into ``target`` by :func:`staged`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.names: list[str] = []
        self.removed: list[str] = []

    def remove(self, name: str) -> None:
        """Remove the target's file ``name`` (relative) once the staged files are in
        place, while the folder is still locked (:func:`staged`); a missing one is no
        error."""
        self.removed.append(name)

    def path(self, name: str) -> Path:
        """Where to write ``name`` (a relative path such as ``tables/x.csv``)."""
        p = self.root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if name not in self.names:  # written again: moved in once (the second move found
            self.names.append(name)  # nothing, and the write failed "no file can be created")
        return p

    def write_text(self, name: str, text: str) -> None:
        self.path(name).write_text(text, encoding="utf-8")

    def write_bytes(self, name: str, data: bytes) -> None:
        self.path(name).write_bytes(data)


@contextlib.contextmanager
def staged(target: str | Path) -> Iterator[Staging]:
    """Write a set of files into folder ``target``, all or nothing.

    Files are written under ``target/.recuse-staging-*``; when the block ends without
    an error their folders are made and each file is renamed into place (renames need
    no space). On an error the staging folder is removed, so are files already moved
    and ``target`` itself when this call created it: nothing half-written remains, and
    a file from before that one of them replaced is put back (it is kept, moved aside
    into the staging folder, until all are in place). A rename failing half-way
    (the page after report.json) removed report.json and so the earlier run's, which
    the error then said was left as it was.

    The files this write replaces are moved aside into the staging folder before
    the first rename (renamed, not linked: a symbolic link moves as the link, and a
    file system without hard links keeps them too, where a symlink or such a file
    was replaced and, on an error, not put back while the error said it was left as
    it was), the last written first, and the files move in in the order they were
    written (a report's page last): a process killed while they move in (``kill -9``,
    where nothing can be put back) leaves the new files moved so far and none of the
    old ones beside them, where it left a new table beside the earlier run's
    report.json, which then passed for the new run's; one killed while the old files
    move aside leaves the earlier report.json with all its tables or neither (they
    moved aside in the order written: the earlier report.json stood beside some of
    its tables, the others gone). An old file that cannot be put back is not deleted
    with the staging folder: the error says where it is.

    The folder is locked (:func:`_lock_folder`) from before the block to the last file
    moved in and the last one the block asked removed (:meth:`Staging.remove`), so two
    writes into one folder at once leave one whole write's files, never a mix: the
    second waits for the first, and says so (:class:`WaitingForFolder`); a folder
    removed while it waited is made and locked again (:func:`_made_and_locked`).

    The staging folder records its owner (pid, host, start time: :func:`_write_owner`).
    A later write removes a staging folder left by a killed write whose owner is gone
    (:func:`_owner_alive`): at once where nothing of it had moved in, and after its own
    files are in place where every old file under its ``.before`` is one this write
    replaced. Any other is kept and said (:class:`InterruptedWrite`): one whose owner
    runs (a write into the same folder now), cannot be told (another host, an older
    recuse), or holds an old file this write does not replace.

    A Ctrl-C (or SIGTERM) once every file is in place, during that cleanup, still stops
    the command (its KeyboardInterrupt is raised again), but its words say the files are
    complete and what cleanup is left (:func:`recuse.interrupt.output_complete`; a note
    on the exception for Python callers): they said "interrupted; ... start it over"
    over a whole report; so is one as the folder's lock is let go, once the cleanup
    ended (:func:`recuse.interrupt.complete_over`). The exit code stays 130 (143 for
    SIGTERM): the command was stopped before it ended (what follows the write, its
    summary or a ``--fail-on`` code, did not run), and a script reads 130 as "stopped
    by the user", never as a
    finished run, which 0 would claim.
    """
    out = Path(target)
    held: set[FolderId] = _HELD.__dict__.setdefault("folders", set())
    created, lock = _made_and_locked(out, held)
    key = _folder_id(out)
    mine = {key} - held if key is not None else set()  # none: nested in this thread's
    held |= mine
    locks = [lock] if lock is not None else []
    try:
        with _staging(out, created) as stage:
            yield stage
    except BaseException:
        _release(held, mine, locks)
        raise
    # every file is in place: a stop as the lock is let go is said over whole files
    with complete_over(f"the {len(stage.names)} files written in {out} are complete and in place"):
        _release(held, mine, locks)


_HELD = threading.local()  # .folders: those this thread's writes have locked (FolderId)

#: a folder as the file system knows it: (device, inode)
FolderId = tuple[int, int]


def _folder_id(folder: Path) -> FolderId | None:
    """The folder ``folder`` as the file system knows it, its (device, inode): one
    folder however its path is spelled, or None where it cannot be looked at (gone).
    Its real path told a folder from itself where two spellings lead to it without a
    link (a bind mount; another letter case on a case-insensitive file system, which
    ``realpath`` keeps as typed): a write nested in one of this thread's locked it
    again by another descriptor, and waited on itself for good. A file is no folder:
    None (a write into it says so)."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if S_ISDIR(st.st_mode) else None


def _made_and_locked(out: Path, held: set[FolderId]) -> tuple[bool, int | None]:
    """Make the folder ``out`` and lock it (:func:`_lock_folder`) unless one of this
    thread's writes holds it (its :func:`_folder_id` in ``held``): whether this call created it,
    and the locked descriptor (None: not locked). A lock taken on a folder that is no
    longer ``out`` once the wait ended (the write waited on had created it, failed or
    was stopped, and removed it; another was made in its place) is let go and ``out``
    made and locked again: the write went on holding the lock of a removed folder,
    into a new one that a third write then locked too, or failed with "no file can be
    created in that folder" where ``out`` was gone."""
    while True:
        created = not out.exists()
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise output_error(out, exc) from None
        if _folder_id(out) in held:
            return created, None
        try:
            lock = _lock_folder(out)
        except BaseException:  # a Ctrl-C while waiting: nothing of this write is left
            if created:  # the folder alone: what is in it is the lock holder's
                with contextlib.suppress(OSError):
                    out.rmdir()
            raise
        if lock is None or _is_folder_of(lock, out):
            return created, lock
        os.close(lock)


def _is_folder_of(fd: int, folder: Path) -> bool:
    """Whether the open descriptor ``fd`` is the folder now at ``folder`` (the same
    device and inode)."""
    try:
        here, there = os.fstat(fd), os.stat(folder)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _lock_folder(folder: Path) -> int | None:
    """An open descriptor of ``folder`` holding an exclusive advisory lock on it
    (``flock``), taken once any other write into ``folder`` has released its own, or
    None where the folder cannot be opened or locked (not POSIX, a file system
    without locks): then writes are not kept apart. Two audits with one ``--out`` at
    once each moved their files in, and the one that moved in last kept the other's
    tables its report does not list (it had looked for an earlier report's tables
    before the other wrote any). :func:`lock_folder` with its notes."""
    return lock_folder(folder, wait=True, notes=True)


#: what ``flock`` fails with on a file system without locks (NFS without its lock
#: service: ENOLCK; one that has none: EOPNOTSUPP)
NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP)


def lock_folder(folder: Path, *, wait: bool, notes: bool) -> int | None:
    """An open descriptor of ``folder`` holding an exclusive ``flock`` on it, or None
    where it cannot be opened or locked (not POSIX, no read permission, a file system
    without locks) or, without ``wait``, another process holds it. With ``wait`` a held
    lock is waited for; with ``notes`` the waiting is said first
    (:class:`WaitingForFolder`), and so is a folder that cannot be opened for reading
    (:class:`UnlockedFolder`) or a file system without locks (:data:`NO_LOCKS`), or
    one whose ``flock`` fails otherwise (EIO: :class:`UnlockedFolder`), whose writes
    go on unlocked. The one helper of
    :func:`staged`'s folder lock and the model cache's
    (:mod:`recuse.judging.models`, without notes)."""
    if sys.platform == "win32":
        return None
    import fcntl

    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError as exc:
        if notes and exc.errno in (errno.EACCES, errno.EPERM):  # write, but not list
            _note_unlocked(folder)
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another holds it: said, then waited for (or not)
            if not wait:
                os.close(fd)
                return None
            if notes:
                _note_waiting(folder)
            fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError as exc:  # no locks there (NO_LOCKS), or flock failed otherwise (EIO)
        os.close(fd)
        if notes:
            _note_no_locks(folder, exc)
        return None
    except BaseException:  # a Ctrl-C while waiting: the descriptor is not kept open
        os.close(fd)
        raise
    return fd


def _note_unlocked(folder: Path) -> None:
    """An :class:`UnlockedFolder` note: ``folder`` could not be opened to lock it. A
    lock is taken on the folder opened for reading, which a folder with write but not
    read permission refuses; its writes went on unlocked without a word, where two runs
    at once can leave one run's files beside the other's."""
    warnings.warn(
        UnlockedFolder(
            f"{folder} cannot be locked (no read permission on it; the lock that keeps two "
            "writes into one folder apart opens the folder for reading): this write goes on "
            "unlocked — run one write into it at a time, give it read permission "
            f"(chmod u+r {folder}), or write elsewhere"
        ),
        stacklevel=2,
    )


def _note_no_locks(folder: Path, exc: OSError) -> None:
    """An :class:`UnlockedFolder` note: ``folder``'s file system has no locks
    (:data:`NO_LOCKS`: NFS without its lock service), or ``flock`` failed there for
    another reason (EIO, EACCES or EPERM from a network or FUSE file system: said as
    such, where those writes went on unlocked without a word). Its writes went on
    unlocked without a word, as documented but never said where it happened."""
    why = (
        "its file system has no locks"
        if exc.errno in NO_LOCKS
        else f"locking it failed, {errno.errorcode.get(exc.errno or 0, 'error')}"
    )
    warnings.warn(
        UnlockedFolder(
            f"{folder} cannot be locked ({why}: {exc.strerror or exc}): this write goes on "
            "unlocked — run one write into it at a time, or write to a local folder"
        ),
        stacklevel=3,
    )


@contextlib.contextmanager
def locked(*paths: str | Path, complete: str | None = None) -> Iterator[None]:
    """Hold the folder lock of :func:`staged` (:func:`_lock_folder`) on the folder of
    each of ``paths`` (files a command writes one after the other with
    :func:`write_text`) for the block: two runs writing the same files at once write
    one after the other, each run's files whole, where their writes interleaved (the
    first run's thresholds file beside the second's result naming other thresholds).
    Folders are locked in one order (by :func:`_folder_id`), so two runs never
    each hold the folder the other waits for; one this thread's write already holds
    (however its path is spelled) is not locked again. A folder that is not there is
    not made (the write into it says so) and not locked.

    A Ctrl-C as the locks are released after the block ended (its files complete and
    in place) is said over whole files (:func:`recuse.interrupt.complete_over`):
    ``complete``, the words naming them (default: ``paths``)."""
    held: set[FolderId] = _HELD.__dict__.setdefault("folders", set())
    folders: dict[FolderId, Path] = {}
    for p in paths:
        key = _folder_id(Path(p).parent)
        if key is not None:
            folders.setdefault(key, Path(p).parent)
    locks: list[int] = []
    mine: list[FolderId] = []
    try:
        for key in sorted(folders):
            if key in held:
                continue
            _, lock = _made_and_locked(folders[key], held)
            now = _folder_id(folders[key]) or key  # another, where it was replaced meanwhile
            held.add(now)
            mine.append(now)
            if lock is not None:
                locks.append(lock)
        yield
    except BaseException:
        _release(held, mine, locks)
        raise
    words = complete or f"{', '.join(map(str, paths))} are complete and in place"
    with complete_over(words):  # the block's files are whole: what follows is cleanup
        _release(held, mine, locks)


def _release(held: set[FolderId], mine: Iterable[FolderId], locks: Iterable[int]) -> None:
    """Let go of the folder locks ``locks`` of :func:`staged` / :func:`locked`, ``mine``
    (the folders they locked) no longer ``held`` by this thread."""
    for key in mine:
        held.discard(key)
    for lock in locks:
        os.close(lock)  # and with it the lock


def _note_waiting(folder: Path) -> None:
    """A :class:`WaitingForFolder` note: the write waits for another's lock on
    ``folder``. It waited without a word, for as long as that write took (or for good,
    where that process was suspended with Ctrl-Z), after its last progress line."""
    warnings.warn(
        WaitingForFolder(
            f"another write into {folder} is under way (another recuse run, or this "
            "process's other thread): this one waits for it to end, then writes its files "
            "whole — stop that one, or write elsewhere"
        ),
        stacklevel=2,
    )


@contextlib.contextmanager
def _staging(out: Path, created: bool) -> Iterator[Staging]:
    """The body of :func:`staged` once ``out`` exists (``created`` by it) and is
    locked."""
    left = _left_behind(out)
    try:
        root = _new_folder(out, ".recuse-staging-")
    except OSError as exc:
        _remove_if_empty(out, created)
        raise output_error(out, exc) from None
    try:
        _write_owner(root)
    except OSError as exc:  # a full disk: not even the few bytes of the owner's file
        shutil.rmtree(root, ignore_errors=True)
        _remove_if_empty(out, created)
        raise output_error(out, exc) from None
    stage = Staging(root)
    moved: list[Path] = []
    before: list[tuple[Path, Path]] = []  # a file replaced, and where it was moved aside
    try:
        yield stage
        for name in stage.names:
            (out / name).parent.mkdir(parents=True, exist_ok=True)
        # the old files go first, the last written first (see the docstring)
        for name in reversed(stage.names):
            before += _moved_aside(out / name, root / ".before" / name)
        for name in stage.names:
            os.replace(root / name, out / name)
            moved.append(out / name)
    except BaseException as exc:
        for path in moved:
            with contextlib.suppress(OSError):
                path.unlink()
        lost = _put_back(before)
        if lost:
            _remove_all_but(root, root / ".before")
        else:
            shutil.rmtree(root, ignore_errors=True)
            _remove_if_empty(out, created)
        _settle_left_behind(out, left, written=())
        if isinstance(exc, OSError):
            raise _with_lost(output_error(_failed_at(out, root, exc), exc), lost) from None
        if lost:
            exc.add_note(_lost_words(lost))
        raise
    else:  # every file is in place: the write is whole, what follows is cleanup
        try:
            for name in stage.removed:
                if name not in stage.names:
                    with contextlib.suppress(OSError):
                        (out / name).unlink()
            shutil.rmtree(root, ignore_errors=True)
            _settle_left_behind(out, left, written=stage.names)
        except KeyboardInterrupt as exc:
            # a Ctrl-C (or SIGTERM) here stops the command, but over whole files: said
            # so (recuse.interrupt.say_interrupted), not as a stop mid-write
            words = _complete_words(out, root, stage)
            output_complete(words, exc)
            raise


def _complete_words(out: Path, root: Path, stage: Staging) -> str:
    """What a stop during :func:`_staging`'s cleanup leaves: ``out``'s new files are
    all in place (whole); the staging folder ``root`` if it is still there (the next
    write into ``out`` removes it, or it may be deleted); files of an earlier write the
    block asked removed that are still there."""
    left = [name for name in stage.removed if name not in stage.names and (out / name).exists()]
    words = f"the {len(stage.names)} files written in {out} are complete and in place"
    rest = []
    if root.exists():
        rest.append(
            f"the staging folder {root.name} was not removed (the next write into "
            f"{out} removes it, or delete it)"
        )
    if left:
        rest.append(
            f"{len(left)} earlier file(s) this write replaces were not removed: " + ", ".join(left)
        )
    return words + ("; cleanup left: " + "; ".join(rest) if rest else "")


OWNER_FILE = ".owner"  # in a staging folder: the process writing it (pid, host, start)


def _write_owner(root: Path) -> None:
    """Record in the staging folder ``root`` which process owns it: its pid, the host
    and the process's start time (so a pid reused by another process is not taken for
    the owner), read by :func:`_owner_alive` at a later write."""
    owner = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "start": _started(os.getpid()),
        "machine": _machine(),
    }
    (root / OWNER_FILE).write_text(json.dumps(owner), encoding="utf-8")


def _machine() -> str | None:
    """Which kernel boot and which process-id namespace this process runs in (Linux:
    ``/proc/sys/kernel/random/boot_id`` and the ``/proc/self/ns/pid`` link), or None
    where they cannot be read (no /proc: not Linux). A pid means one process only
    within both: the host name alone took a write in a container sharing the host's
    name (``docker run --network host``) but not its pids, or one from another machine
    of the same name on a shared file system, for a process gone here, and its
    staging folder was removed while it ran."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()
        return f"{boot} {os.readlink('/proc/self/ns/pid')}"
    except OSError:
        return None


def _started(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks after boot, field 22 of
    ``/proc/PID/stat``), or None where that cannot be read (no /proc: not Linux)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _owner_alive(folder: Path) -> bool | None:
    """Whether the process that made the staging folder ``folder`` still runs: False
    when it is gone (no process with its pid, or one started at another time: the pid
    reused), True when it runs, None where that cannot be told (no owner file: a
    folder of an older recuse; a folder written from another host, on a shared file
    system, or from another boot or pid namespace (:func:`_machine`: a container's);
    an owner file that cannot be read)."""
    try:
        owner = json.loads((folder / OWNER_FILE).read_text(encoding="utf-8"))
        pid, host, start = int(owner["pid"]), owner["host"], owner["start"]
        machine = owner.get("machine")
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None
    if host != socket.gethostname() or machine != _machine() or pid <= 0:
        return None
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    except OSError:
        return None
    now = _started(pid)
    return True if now is None or start is None else now == start


def _left_behind(out: Path) -> list[Path]:
    """The staging folders an earlier write left in ``out`` that no running process
    owns or whose owner cannot be told; those without a ``.before`` folder whose owner
    is gone are removed here: that write was stopped before its files moved in, so
    they hold only its own unfinished files (a ``kill -9`` while a report was
    written left them, each with the whole report's files, until removed by hand)."""
    try:
        found = sorted(out.glob(".recuse-staging-*"))
    except OSError:
        return []
    left = []
    for folder in found:
        alive = _owner_alive(folder)
        if alive:
            continue  # a write running now, into the same folder
        if alive is False and not (folder / ".before").is_dir():
            shutil.rmtree(folder, ignore_errors=True)
        elif (folder / ".before").is_dir():
            left.append(folder)
    return left


def _settle_left_behind(out: Path, left: list[Path], *, written: Iterable[str]) -> None:
    """After this write into ``out``: each staging folder in ``left`` (a write killed
    while its files moved in) is removed where its owner is gone and every file under
    its ``.before`` is one this write has ``written`` — those earlier files are then
    replaced, as a finished write would have replaced them; any other is said
    (:func:`_note_interrupted`), and stays."""
    names = set(written)
    for folder in left:
        before = folder / ".before"
        try:
            kept = {p.relative_to(before).as_posix() for p in before.rglob("*") if not p.is_dir()}
        except OSError:
            kept = {""}  # cannot be listed: not removed
        if names and kept <= names and _owner_alive(folder) is False:
            shutil.rmtree(folder, ignore_errors=True)
        else:
            _note_interrupted(folder, out)


def _note_interrupted(folder: Path, out: Path) -> None:
    """An :class:`InterruptedWrite` note for the staging folder ``folder`` in ``out``
    that holds the files a write moved aside (``.before``): that write was killed while
    its files moved in, and ``out`` was left with some of its files and none of the
    ones they replace (no report.json, say), which nothing said."""
    if folder.is_dir():
        warnings.warn(
            InterruptedWrite(
                f"{folder}: an earlier write into {out} was stopped while its files moved in "
                f"(its process killed): the files it replaced are under {folder / '.before'}"
                f", some of its own were moved into {out}; this write replaces those it "
                f"writes — remove {folder} once nothing in it is wanted"
            ),
            stacklevel=5,
        )


def _failed_at(out: Path, root: Path, exc: OSError) -> Path:
    """The path in ``out`` a failed rename went to (a folder where a file goes: the
    error named ``out``, "Is a directory", as if the folder given could not be one), or
    ``out`` itself where the error names no such path (a full disk)."""
    for name in (exc.filename2, exc.filename):
        if name is None:
            continue
        path = Path(os.fsdecode(name))
        if root not in (path, *path.parents) and out in path.parents:
            return path
    return out


def _moved_aside(path: Path, aside: Path) -> list[tuple[Path, Path]]:
    """Rename the file (or symbolic link) ``path`` to ``aside`` so that it can be put
    back: ``[(path, aside)]``, or ``[]`` where there is none (a folder stays: the
    rename over it fails)."""
    if not (path.is_symlink() or path.is_file()):
        return []
    aside.parent.mkdir(parents=True, exist_ok=True)
    os.replace(path, aside)
    return [(path, aside)]


def _put_back(before: list[tuple[Path, Path]]) -> list[tuple[Path, Path]]:
    """Rename each file moved aside back to its place; returns those that could not be."""
    lost = []
    for path, aside in reversed(before):  # the page and report.json last, as moved in
        try:
            os.replace(aside, path)
        except OSError:
            lost.append((path, aside))
    return lost


def _remove_all_but(root: Path, keep: Path) -> None:
    """Remove what is in ``root`` except ``keep`` (where the old files wait)."""
    for item in root.iterdir():
        if item != keep:
            if item.is_dir() and not item.is_symlink():
                shutil.rmtree(item, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    item.unlink()


def _lost_words(lost: list[tuple[Path, Path]]) -> str:
    """Where the old files that could not be put back are."""
    shown = "; ".join(f"{path} is at {aside}" for path, aside in lost[:3])
    more = f" and {len(lost) - 3} more" if lost[3:] else ""
    return (
        f"the earlier files it replaced could not be put back ({shown}{more}): "
        "move them back by hand"
    )


def _with_lost(error: OutputError, lost: list[tuple[Path, Path]]) -> OutputError:
    """``error``, saying where the old files that could not be put back are."""
    return error if not lost else WriteFailed(f"{error} ({_lost_words(lost)})")


def _remove_if_empty(folder: Path, created: bool) -> None:
    """Remove ``folder`` and its empty sub-folders when this run created it."""
    if not created:
        return
    for sub in sorted(folder.rglob("*"), key=lambda q: len(q.parts), reverse=True):
        with contextlib.suppress(OSError):
            sub.rmdir()
    with contextlib.suppress(OSError):
        folder.rmdir()
