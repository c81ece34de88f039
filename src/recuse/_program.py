"""The ``recuse`` program's entry point (the console script and ``python -m recuse``).

It imports nothing heavy before its ``try``: the command line (:mod:`recuse.cli`)
takes a second or two to load (pandas, scipy, typer), and a Ctrl-C pressed then
printed Python's KeyboardInterrupt traceback through pandas' import machinery and
ended the process by the signal, where a Ctrl-C later says recuse's line and exits
130. Here a Ctrl-C at any moment is recuse's line and 130
(:func:`recuse.interrupt.say_interrupted`); so is a SIGTERM, with exit 143 (a SIGHUP:
129), and a second signal while the program stops
(:func:`recuse.interrupt.stop_on_signals`).

Its first statement takes Ctrl-C over (:func:`_early_stop`, which only counts it;
Python's own handler is back once it has loaded, and :func:`main` takes it over
next), before anything else loads: ``import recuse`` (typing, recuse.errors: 13 ms) and
:mod:`recuse.interrupt` (3 ms) were loaded before any handler, and a Ctrl-C in those
first ~20 ms of ``recuse judge`` printed Python's traceback (and ended the process by
the signal). What is left is Python's own start, before any code of recuse runs (its
site, the console script's ``import re``): no program written in Python can hold a
Ctrl-C there.
"""

import signal  # the one import before Ctrl-C is held (no __future__: 0.1 ms more)

#: the Ctrl-Cs received before :func:`main` took over (:func:`_early_stop`)
_early: list[int] = []


def _early_stop(signum: int, _frame: object) -> None:
    """The SIGINT handler while the entry point loads: the signal counted, nothing
    raised (a KeyboardInterrupt in an import is Python's traceback); :func:`main`
    then says it and ends with 130 before the command line loads."""
    _early.append(signum)


# a SIGINT the shell ignores (a job started with ``&``) stays ignored; imported in a
# thread other than the main one (runpy in a worker), no handler can be set, and none is
if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    try:
        signal.signal(signal.SIGINT, _early_stop)
    except ValueError:  # not the main thread: Python's own handler stays
        pass

from recuse.interrupt import (  # noqa: E402 - after Ctrl-C is held
    end_on_signals,
    resumes,
    say_interrupted,
    stop_on_signals,
    stopped_code,
)

__all__ = ["main"]

# loaded: the caller runs main() next (the console script, ``python -m recuse``), which
# holds Ctrl-C again from its first statement. Python's own handler is back for the
# microseconds between, so that code that imports this module and never runs main()
# (``pytest --doctest-modules``, a tool listing modules) keeps its Ctrl-C: held here,
# every Ctrl-C of that process was counted and nothing more, for good
if signal.getsignal(signal.SIGINT) is _early_stop:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def main() -> int:
    """Load the command line and run it (:func:`recuse.cli.main`); returns the exit
    code. A Ctrl-C while it loads is said as one during a command is; one after the
    command has ended (Python's teardown) ends the process with the command's code."""
    try:
        # Ctrl-C and SIGTERM stop it alike, finished work kept; one received as the
        # entry point loaded stops it now
        stop_on_signals(received=_early, replacing=_early_stop)
        if _early:
            raise KeyboardInterrupt
        from recuse.cli import main as run
    except KeyboardInterrupt:  # no command has begun
        say_interrupted(program=True, resumes=False)
        return stopped_code()
    try:
        code = run()
    except KeyboardInterrupt:  # one landing as the command line said its error
        say_interrupted(program=True, resumes=resumes())  # of the command it named
        return stopped_code()
    end_on_signals(code)  # the command has ended: a Ctrl-C in the teardown ends it so
    return code
