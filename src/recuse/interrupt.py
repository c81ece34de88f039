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

__all__ = ["INTERRUPTED", "TERMINATED", "say_interrupted", "stop_on_term", "stopped_code"]

INTERRUPTED = 130  # the shell's code for a run stopped by Ctrl-C (128 + SIGINT)
TERMINATED = 143  # and by SIGTERM (128 + 15): kill, docker stop, a scheduler's limit

#: the SIGTERM that stopped the command, once received (:func:`stop_on_term`)
_terminated: list[int] = []


def stop_on_term() -> None:
    """SIGTERM (``kill``, ``docker stop``, a batch scheduler's time limit) stops the
    program as Ctrl-C does: it raises KeyboardInterrupt in the main thread, so the run
    commits what it finished and drops its leases, the words say what stopped it and
    the exit code is :data:`TERMINATED`. Python's default ends the process at once:
    the answers received since the last commit (paid calls) were lost, and the run's
    leases waited for a rerun to take them over. For the program only (the entry
    point), never for Python code that calls the command line."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _as_interrupt)


def _as_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM handed to the SIGINT handler of the moment, so it stops what runs as a
    Ctrl-C would: Python's raises KeyboardInterrupt; asyncio.run's cancels its main task
    and raises it once the loop has stopped (raised here, it landed in one of the
    loop's tasks and Python printed "Task exception was never retrieved" and its
    traceback under recuse's line). With SIGINT ignored (a background job), raised."""
    _terminated.append(signum)
    on_sigint = signal.getsignal(signal.SIGINT)
    if callable(on_sigint):
        on_sigint(signal.SIGINT, frame)
        return
    raise KeyboardInterrupt


def stopped_code() -> int:
    """The exit code of a stopped command: :data:`TERMINATED` after a SIGTERM, else
    :data:`INTERRUPTED`."""
    return TERMINATED if _terminated else INTERRUPTED


def say_interrupted(program: bool) -> None:
    """Recuse's words for Ctrl-C (or SIGTERM, :func:`stop_on_term`). As the program
    (``program``: not called by Python code), another Ctrl-C or SIGTERM from here on
    ends the process at once, with the same exit code and nothing more said: Python's
    teardown after the words takes a moment, and a second press there printed
    "Exception ignored in ... threading" and a KeyboardInterrupt traceback. The store
    is closed by now."""
    if program and threading.current_thread() is threading.main_thread():
        ender = _ender(sys.stdout, sys.stderr, os._exit, stopped_code())
        signal.signal(signal.SIGINT, ender)
        signal.signal(signal.SIGTERM, ender)
    what = "terminated (SIGTERM)" if _terminated else "interrupted"
    print(
        f"recuse: {what}; finished work is kept — run the same command again to go on "
        "where it stopped",
        file=sys.stderr,
        flush=True,
    )


def _ender(
    out: TextIO, err: TextIO, end: Callable[[int], NoReturn], code: int = INTERRUPTED
) -> Callable[[int, FrameType | None], None]:
    """The SIGINT (and SIGTERM) handler :func:`say_interrupted` installs: what was
    printed flushed, then the process ended with ``code``. It holds what it calls, as
    the modules' names are cleared while Python tears down."""

    def now(_signum: int, _frame: FrameType | None) -> None:
        for stream in (out, err):
            try:
                stream.flush()
            except Exception:  # a closed pipe: nothing more to keep
                pass
        end(code)

    return now
