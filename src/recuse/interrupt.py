"""Recuse's words for Ctrl-C and its exit code, shared by the program's entry point
(:mod:`recuse._program`, a Ctrl-C while the command line loads) and the command line
(:func:`recuse.cli.main`, one during a command). A leaf: it imports nothing of recuse,
so the entry point can load it before anything heavy."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import NoReturn, TextIO

__all__ = ["INTERRUPTED", "say_interrupted"]

INTERRUPTED = 130  # the shell's code for a run stopped by Ctrl-C (128 + SIGINT)


def say_interrupted(program: bool) -> None:
    """Recuse's words for Ctrl-C. As the program (``program``: not called by Python
    code), another Ctrl-C from here on ends the process at once, with the same exit
    code and nothing more said: Python's teardown after the words takes a moment, and
    a second press there printed "Exception ignored in ... threading" and a
    KeyboardInterrupt traceback. The store is closed by now."""
    if program and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _ender(sys.stdout, sys.stderr, os._exit))
    print(
        "recuse: interrupted; finished work is kept — run the same command again to go on "
        "where it stopped",
        file=sys.stderr,
        flush=True,
    )


def _ender(
    out: TextIO, err: TextIO, end: Callable[[int], NoReturn]
) -> Callable[[int, FrameType | None], None]:
    """The SIGINT handler :func:`say_interrupted` installs: what was printed flushed,
    then the process ended with :data:`INTERRUPTED`. It holds what it calls, as the
    modules' names are cleared while Python tears down."""

    def now(_signum: int, _frame: FrameType | None) -> None:
        for stream in (out, err):
            try:
                stream.flush()
            except Exception:  # a closed pipe: nothing more to keep
                pass
        end(INTERRUPTED)

    return now
