"""The ``recuse`` program's entry point (the console script and ``python -m recuse``).

It imports nothing heavy before its ``try``: the command line (:mod:`recuse.cli`)
takes a second or two to load (pandas, scipy, typer), and a Ctrl-C pressed then
printed Python's KeyboardInterrupt traceback through pandas' import machinery and
ended the process by the signal, where a Ctrl-C later says recuse's line and exits
130. Here a Ctrl-C at any moment is recuse's line and 130
(:func:`recuse.interrupt.say_interrupted`); so is a SIGTERM, with exit 143 (a SIGHUP:
129), and a second signal while the program stops
(:func:`recuse.interrupt.stop_on_signals`).
"""

from __future__ import annotations

from recuse.interrupt import end_on_signals, say_interrupted, stop_on_signals, stopped_code

__all__ = ["main"]


def main() -> int:
    """Load the command line and run it (:func:`recuse.cli.main`); returns the exit
    code. A Ctrl-C while it loads is said as one during a command is; one after the
    command has ended (Python's teardown) ends the process with the command's code."""
    stop_on_signals()  # Ctrl-C and SIGTERM stop it alike, finished work kept
    try:
        from recuse.cli import main as run
    except KeyboardInterrupt:  # no command has begun
        say_interrupted(program=True, resumes=False)
        return stopped_code()
    try:
        code = run()
    except KeyboardInterrupt:  # one landing as the command line said its error
        say_interrupted(program=True)
        return stopped_code()
    end_on_signals(code)  # the command has ended: a Ctrl-C in the teardown ends it so
    return code
