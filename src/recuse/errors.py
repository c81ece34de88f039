"""One small exception hierarchy. Every user-facing error says what to fix.

The CLI catches :class:`RecuseError`, prints ``str(error)`` on one line and exits
with code 2. Library users can catch the subclasses they care about.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from recuse.terminal import unbroken

#: held around every ``warnings.catch_warnings`` block of recuse: the warnings state
#: (its filters, its recorder) is one per process, and two such blocks entered and
#: left out of order in two threads lose one thread's notes, or leave one block's
#: recorder in place for good
WARNINGS_LOCK = threading.RLock()


@contextmanager
def fit_warnings_hidden() -> Iterator[None]:
    """Hide what a statsmodels fit warns (its spurious "perfect separation" for
    fractional outcomes, convergence and domain warnings, NumPy's overflow in its
    link functions) and nothing else: a note another thread issues meanwhile (a
    :class:`ReaderNote`) is told as ever. A bare ``simplefilter("ignore")`` would hide
    every warning of the process while the block is open, the warnings filters being
    one per process; the lock orders the block with recuse's other ones."""
    from statsmodels.tools.sm_exceptions import ModelWarning

    with WARNINGS_LOCK, warnings.catch_warnings():
        # statsmodels' own warnings, NumPy's floating-point ones (raised in statsmodels'
        # code, so also named by its module), and any other warning from its modules
        warnings.filterwarnings("ignore", category=ModelWarning)
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        warnings.filterwarnings("ignore", module=r"statsmodels(\.|$)")
        yield


#: per thread, the (text, name) pairs :func:`notes_naming` has this thread's notes write
_NAMING = threading.local()


@contextmanager
def notes_naming(text: str, name: str) -> Iterator[None]:
    """Within the block, every :class:`ReaderNote` this thread makes writes ``name`` where
    its message says ``text`` (a DataFrame's reader names the DataFrame, not the
    temporary file it reads it from). Nothing global changes: recording the notes in a
    ``catch_warnings(record=True)`` block to tell them again renamed lost them, or put
    the recorder in place for good, when another thread's code (pandas', the user's,
    none taking :data:`WARNINGS_LOCK`) opened or closed a block meanwhile."""
    old: tuple[tuple[str, str], ...] = getattr(_NAMING, "pairs", ())
    _NAMING.pairs = (*old, (text, name))
    try:
        yield
    finally:
        _NAMING.pairs = old


class ReaderNote(UserWarning):
    """Something the reader noticed that the user should know, printed by the CLI as one
    ``recuse: note:`` line (the run goes on). Made inside :func:`notes_naming`, its
    message names what that block says."""

    def __init__(self, *args: object) -> None:
        pairs: tuple[tuple[str, str], ...] = getattr(_NAMING, "pairs", ())
        if pairs and args and isinstance(args[0], str):
            text = args[0]
            for old, new in pairs:
                text = text.replace(old, new)
            args = (text, *args[1:])
        super().__init__(*args)


class RecuseError(Exception):
    r"""Base class of every error recuse raises on purpose.

    Its message is one line, with each name it quotes as read: a line break in it
    (a judge's name ``"a\nb"`` from the data) is written as its escape
    (:func:`recuse.terminal.unbroken`), as the terminal shows such a name, so it reads
    ``a\nb``, apart from ``a b`` and ``a  b``. A backslash is not escaped (Windows
    paths stay readable), so a name holding the two characters ``\n`` reads as one
    holding a line break.

    >>> str(RecuseError("no judge 'a\nb' in the data"))
    "no judge 'a\\nb' in the data"
    """

    def __init__(self, *args: object) -> None:
        if args and isinstance(args[0], str):
            args = (unbroken(args[0]), *args[1:])
        super().__init__(*args)


class InputError(RecuseError):
    """Input data that cannot be used: names the file, row and column and the fix.

    ``row`` is the 1-based number of the data record in its file (the header and blank
    lines not counted; for JSON arrays the element number, for JSONL the non-blank
    line's number), or in a frame its position; ``line`` the 1-based line of the file
    the record starts on, where known (an editor's "go to line"). The message says
    ``line 12 (data row 11)``, or ``data row 11`` / ``line 12`` alone.
    """

    def __init__(
        self,
        reason: str,
        *,
        file: str | Path | None = None,
        row: int | None = None,
        column: str | None = None,
        fix: str | None = None,
        line: int | None = None,
    ) -> None:
        self.reason = reason
        self.file = str(file) if file is not None else None
        self.row = row
        self.column = column
        self.fix = fix
        self.line = line
        super().__init__(self._format())

    def locate(self, line: int | None) -> None:
        """Say ``line`` as the line of the file the row starts on (None: unknown)."""
        if line is not None:
            self.line = line
            self.args = (unbroken(self._format()), *self.args[1:])

    def _format(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.line is not None:
            where.append(f"line {self.line}" + (f" (data row {self.row})" if self.row else ""))
        elif self.row is not None:
            where.append(f"data row {self.row}")
        if self.column is not None:
            where.append(f"column '{self.column}'")
        text = ", ".join(where) + ": " + self.reason if where else self.reason
        if self.fix:
            text += f" — {self.fix}"
        return text  # one line: RecuseError escapes its line breaks (names kept as read)


class DatasetNotFoundError(RecuseError):
    """A named dataset is unknown or its files are not on disk."""


class ConfigError(RecuseError):
    """A bad option, roster entry or setting."""


class EstimationError(RecuseError):
    """An estimate cannot be made from the data given (e.g. a group is too small)."""


class MissingDependencyError(RecuseError):
    """An optional dependency is not installed; names the extra that provides it."""

    def __init__(self, package: str, extra: str) -> None:
        self.package, self.extra = package, extra
        super().__init__(
            f"this feature needs the optional package '{package}' — "
            f"install it with: pip install 'recuse[{extra}]'"
        )

    def __reduce__(self) -> tuple[type[MissingDependencyError], tuple[str, str]]:
        """Pickled as what it was made of (raised in a Ray worker without the package,
        it is sent back pickled): Python's own pickling calls the class with the message
        alone, which it refuses."""
        return type(self), (self.package, self.extra)


class OutputError(RecuseError):
    """An output cannot be written (missing folder, read-only, disk full, bad name)."""


class FetchError(RecuseError):
    """Downloading a dataset from upstream failed."""


class JudgeError(RecuseError):
    """Running a judge failed in a way the runner cannot record as a row."""
