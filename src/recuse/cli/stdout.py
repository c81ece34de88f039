"""Standard output while a ``recuse`` command runs (:func:`guarded`).

Text goes to the descriptor itself, in a loop until every byte is taken, with the
characters the locale's encoding lacks escaped; a write that fails raises
:class:`StdoutFailed`, so that :func:`recuse.cli.main` tells a full disk on standard
output from an error writing a file (one line, exit 2).
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import sys
from collections.abc import Iterator
from typing import Any, TextIO, cast


class StdoutFailed(OSError):
    """Standard output refused what was printed (a full disk, ``ulimit -f``; a closed
    pipe is click's and :func:`_print_to_reader`'s): raised by :class:`GuardedStdout`."""


def _written(fd: int, data: bytes) -> int:
    """``os.write(fd, data)``, waiting until ``fd`` takes bytes where it is non-blocking
    (a pipe a parent process set so, as Node's child processes have): a full pipe said
    "write could not complete without blocking" (BlockingIOError), a traceback."""
    while True:
        try:
            return os.write(fd, data)
        except BlockingIOError:
            select.select([], [fd], [])


def _encoded(text: str, encoding: str, errors: str) -> bytes:
    """``text.encode(encoding, errors)``, with each character that handler cannot
    write written as ``\\u2014`` instead (backslashreplace). A C locale's standard
    output is ASCII with ``surrogateescape``, which writes a file name's undecodable
    bytes back as they were but no em dash: a table's dash ended the command in a
    traceback (UnicodeEncodeError) there."""
    try:
        return text.encode(encoding, errors)
    except UnicodeEncodeError:
        return b"".join(_encoded_char(c, encoding, errors) for c in text)


def _encoded_char(char: str, encoding: str, errors: str) -> bytes:
    """One character of :func:`_encoded`."""
    try:
        return char.encode(encoding, errors)
    except UnicodeEncodeError:
        return char.encode(encoding, "backslashreplace")


def _write_all(stream: TextIO, fd: int, data: bytes) -> None:
    """Write ``data`` to ``fd``, ``stream``'s descriptor, after what went through the
    stream (so it stays first), until every byte is taken; an ``OSError`` but a closed
    pipe's is raised as :class:`StdoutFailed`."""
    try:
        stream.flush()
        while data:
            data = data[_written(fd, data) :]
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise StdoutFailed(exc.errno, exc.strerror) from exc


class GuardedBytes(io.RawIOBase):
    """``sys.stdout.buffer`` while a command runs (:attr:`GuardedStdout.buffer`): bytes
    written to the descriptor until all are taken, a failure :class:`StdoutFailed`."""

    def __init__(self, stream: TextIO, fd: int) -> None:
        super().__init__()
        self._stream, self._fd = stream, fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, data: Any) -> int:
        raw = bytes(data)
        _write_all(self._stream, self._fd, raw)
        return len(raw)


class GuardedStdout:
    """``sys.stdout`` while a command runs: a write or flush that fails raises
    :class:`StdoutFailed`, so that :func:`main` tells it from an error writing a file.
    Stdout sent to a file on a full disk (or past ``ulimit -f``) gave a traceback and
    exit 1 after a table cut short, or (``--json``, one write) exit 0 and the JSON cut
    short: Python's buffered writer counted the write the system took part of as done,
    and lost the rest with no error. So text goes to the descriptor itself, in a loop
    until every byte is taken (where the stream is a text file: :meth:`_descriptor`),
    with characters the locale's encoding lacks escaped (:meth:`_errors`)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        fd = self._descriptor()
        if fd < 0:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                raise
            except OSError as exc:
                raise StdoutFailed(exc.errno, exc.strerror) from exc
        data = _encoded(text, self._stream.encoding or "utf-8", self._errors())
        _write_all(self._stream, fd, data)
        return len(text)

    @property
    def buffer(self) -> Any:
        """The stream's bytes, guarded as its text is (:class:`GuardedBytes`): click
        writes there under an ASCII locale (it takes such a stream for misconfigured
        and writes UTF-8 to its buffer), and a full disk was unsaid again, exit 0."""
        fd = self._descriptor()
        return self._stream.buffer if fd < 0 else GuardedBytes(self._stream, fd)

    def _descriptor(self) -> int:
        """The descriptor a write goes to directly, or -1 to write through the stream:
        only a text file's own (an :class:`io.TextIOWrapper`, whose writes reach that
        descriptor). Another stream's ``fileno`` need not be where its text goes: a
        Jupyter kernel's stdout gives the kernel's own terminal, where ``main()`` run in
        a notebook cell wrote its tables instead of the cell; a test's capture has none."""
        if not isinstance(self._stream, io.TextIOWrapper):
            return -1
        try:
            return self._stream.fileno()
        except (OSError, ValueError):  # io.UnsupportedOperation, a closed file
            return -1

    def _errors(self) -> str:
        """How a character the output's encoding lacks is written: as Python writes
        it to stderr, ``\\u2014`` (an em dash under a Latin-1 or ASCII locale, where a
        table's dash ended the command in a traceback), unless the stream says
        otherwise."""
        errors = self._stream.errors or "strict"
        return "backslashreplace" if errors == "strict" else errors

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StdoutFailed(exc.errno, exc.strerror) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """``sys.stdout`` wrapped in :class:`GuardedStdout` for the block. Where there is
    none (standard output closed, ``>&-``: Python sets it to None), what is printed
    goes nowhere, as ``print`` and click do then; the guard's wrapping of None gave a
    traceback."""
    stream = sys.stdout
    nowhere = open(os.devnull, "w", encoding="utf-8") if stream is None else None
    sys.stdout = cast(TextIO, GuardedStdout(nowhere or stream))
    try:
        yield
    finally:
        sys.stdout = stream
        if nowhere is not None:
            nowhere.close()
