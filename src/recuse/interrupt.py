"""How the program stops on Ctrl-C and SIGTERM (:func:`stop_on_signals`, the event
loop of a run included: :func:`run`), and recuse's words and exit code for it, shared by
the program's entry point (:mod:`recuse._program`, a Ctrl-C while the command line
loads) and the command line (:func:`recuse.cli.main`, one during a command). A leaf: it
imports nothing of recuse, so the entry point can load it before anything heavy."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine, Iterator
from types import FrameType
from typing import Any, NoReturn, TextIO, TypeVar, cast

__all__ = [
    "HUNG_UP",
    "INTERRUPTED",
    "RESUMING",
    "TERMINATED",
    "end_on_signals",
    "hurried_resumes",
    "hurries",
    "on_hurry",
    "run",
    "say_interrupted",
    "shielded",
    "stop_on_signals",
    "stopped_code",
]

_T = TypeVar("_T")

INTERRUPTED = 130  # the shell's code for a run stopped by Ctrl-C (128 + SIGINT)
TERMINATED = 143  # and by SIGTERM (128 + 15): kill, docker stop, a scheduler's limit
HUNG_UP = 129  # and by SIGHUP (128 + 1): its terminal closed, an ssh session dropped

#: the signals received since :func:`stop_on_signals`: the first stopped the program,
#: the later ones came while it stopped
_received: list[int] = []
#: the stop of the event loop that :func:`run` runs, while it runs one
_loop_stops: list[Callable[[], None]] = []
#: what a second signal does before the process ends (:func:`on_hurry`), innermost last
_hurries: list[Callable[[], str | None]] = []
#: the blocks a signal waits for (:func:`shielded`) and what it left to do at their end
_shields: list[bool] = []
_due: list[str] = []  # "stop": KeyboardInterrupt; "hurry": the second signal's end
#: True once :func:`stop_on_signals` made :func:`_stop` the program's handler
_program: list[bool] = []
#: False where the command a second signal ends keeps nothing for a rerun
#: (:func:`hurried_resumes`)
_resumes: list[bool] = [True]


def stop_on_signals() -> None:
    """Ctrl-C (SIGINT) and SIGTERM (``kill``, ``docker stop``, a batch scheduler's time
    limit) stop the program the same way: the first raises KeyboardInterrupt in the main
    thread (or, while :func:`run` runs an event loop, cancels its main task, as
    asyncio.run does on Ctrl-C), so the run commits what it finished and drops its
    leases, recuse's line says what stopped it and the exit code is
    :data:`INTERRUPTED` or :data:`TERMINATED`. Another Ctrl-C or SIGTERM while it stops
    is taken as the same stop: it does not cut the commit short (Python's handler, or
    asyncio's, raised it wherever the program was, in one of the loop's tasks too, and
    Python printed its traceback; what was received since the last commit was lost).
    Where a run is in progress (it registered what to keep: :func:`on_hurry`), another
    one stops at once instead (:func:`hurries`): what is finished is committed, the
    work in progress (a local model's pass) is dropped, a line says so and the process
    ends with the same exit code, its threads (a GPU's passes) not waited for.

    A SIGINT that the shell ignores (a script's job started with ``&``) stays ignored:
    SIGTERM still stops the program. Python's default for SIGTERM ends the process at
    once: the answers received since the last commit (paid calls) were lost, and the
    run's leases waited for a rerun to take them over. SIGHUP (the terminal closed, an
    ssh session dropped) ended it so too, without a word; it stops the program the same
    way (exit :data:`HUNG_UP`), except where it is ignored (``nohup``): that stays so.
    For the program only (the entry point), never for Python code that calls the
    command line."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not ignored
        signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    if signal.getsignal(signal.SIGHUP) is signal.SIG_DFL:  # not nohup's
        signal.signal(signal.SIGHUP, _stop)
    _program[:] = [True]


def _stop(signum: int, _frame: FrameType | None) -> None:
    """The program's SIGINT and SIGTERM handler (:func:`stop_on_signals`)."""
    _received.append(signum)
    if len(_received) > 1:
        if not _hurries or "hurrying" in _due:
            return  # the program stops already, and says so once it has
        if _shields:
            _due.append("hurry")  # a commit is being written: it ends first
            return
        _hurry()
    if _loop_stops:
        _loop_stops[-1]()
        return
    if _shields:
        _due.append("stop")
        return
    raise KeyboardInterrupt


def hurries() -> bool:
    """Whether a second Ctrl-C or SIGTERM now stops the program at once (:func:`_stop`
    is its handler, a run registered what to keep: :func:`on_hurry`); else it is the
    same stop as the first (Python code calling recuse: asyncio's or Python's own)."""
    return bool(_hurries and _program)


@contextlib.contextmanager
def on_hurry(keep: Callable[[], str | None]) -> Iterator[None]:
    """Within the block, a second signal of the program (:func:`stop_on_signals`)
    calls ``keep`` before the process ends: it commits what is finished (a run's
    judgments, its leases dropped) and may return words for the line said then
    ("12 judgments of this run are stored"). The innermost block's ``keep`` is called
    first; an error in one is not said (the process ends), the others still run."""
    _hurries.append(keep)
    try:
        yield
    finally:
        _hurries.remove(keep)


@contextlib.contextmanager
def shielded() -> Iterator[None]:
    """A block the program's signals do not cut (a commit): a first signal's
    KeyboardInterrupt (raised wherever the main thread is, outside an event loop: a
    Ray run's driver) is raised as it ends, and a second signal's end
    (:func:`on_hurry`) comes once it has ended, so what it writes is written whole,
    not left out of the commit a hurried stop makes. A block that raises is not
    overruled: its error stops the program."""
    _shields.append(True)
    try:
        yield
    finally:
        _shields.pop()
    if not _shields and _due and "hurrying" not in _due:
        due = _due[:]
        _due.clear()
        if "hurry" in due:
            _hurry()
        raise KeyboardInterrupt


def hurried_resumes(resumes: bool) -> None:
    """Whether the command running now goes on from its stored work when run again
    (:data:`RESUMING`; the command line says so as it starts it): a second signal's
    line then says what is stored, else that a rerun starts the command over (an
    audit's judgments and perplexities are not kept for it)."""
    _resumes[:] = [resumes]


def _hurry() -> NoReturn:
    """A second signal's stop: each :func:`on_hurry` keeper, innermost first, recuse's
    line with their words, and the process ends at once with :func:`stopped_code`.
    A signal meanwhile changes nothing."""
    _due[:] = ["hurrying"]
    words = []
    for keep in reversed(_hurries[:]):
        try:
            said = keep()
        except BaseException:  # the process ends: the others keep what they can
            continue
        if said:
            words.append(said)
    code = stopped_code()
    what = {TERMINATED: "terminated (SIGTERM)", HUNG_UP: "hung up (SIGHUP)"}
    stored, then = ";", "go on where it stopped" if _resumes[0] else "start it over"
    if words and _resumes[0]:  # what an audit stores is not kept for its rerun
        stored = f"; {'; '.join(words)}, the work in progress is not —"
    try:
        print(
            f"recuse: {what.get(code, 'interrupted')} again: stopped now{stored} run the same "
            f"command again to {then}",
            file=sys.stderr,
            flush=True,
        )
    except OSError:
        pass
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    os._exit(code)


def run(main: Callable[..., Coroutine[Any, Any, _T]], *args: Any) -> _T:
    """``asyncio.run(main(*args))``, stopped by the program's Ctrl-C or SIGTERM
    (:func:`stop_on_signals`) as asyncio.run stops on Ctrl-C by itself: the main task is
    cancelled (its ``finally`` commits and closes), then KeyboardInterrupt is raised
    here. asyncio.run does that only where SIGINT has Python's own handler; its second
    Ctrl-C raised KeyboardInterrupt in whatever ran, a task of the loop too, and a
    SIGTERM raised it that way whenever the shell ignored SIGINT. The coroutine is made
    in the loop's main task, so a stop at any moment leaves none unawaited. Elsewhere
    (Python code calling recuse, another thread) it is asyncio.run."""
    import asyncio

    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(main(*args))
    stopped: list[bool] = []
    started: list[asyncio.Task[_T]] = []

    def stop() -> None:  # in the main thread, as the loop: what asyncio.run does
        stopped.append(True)
        for task in started:
            if task.cancel():  # its tasks not yet begun never begin
                task.get_loop().call_soon_threadsafe(_nothing)  # the loop wakes up

    async def in_main_task() -> _T:
        started.append(cast("asyncio.Task[_T]", asyncio.current_task()))
        if stopped:  # before the task began
            raise asyncio.CancelledError
        return await main(*args)

    _loop_stops.append(stop)
    try:
        done = asyncio.run(in_main_task())
    except asyncio.CancelledError:
        if not stopped:
            raise
    finally:
        _loop_stops.remove(stop)
    if stopped:
        raise KeyboardInterrupt
    return done


def _nothing() -> None:
    pass


def stopped_code() -> int:
    """The exit code of a stopped command: :data:`TERMINATED` after a SIGTERM,
    :data:`HUNG_UP` after a SIGHUP (and no SIGTERM), else :data:`INTERRUPTED`."""
    if _terminated():
        return TERMINATED
    return HUNG_UP if signal.SIGHUP in _received else INTERRUPTED


def _terminated() -> bool:
    """Whether a SIGTERM stopped the program, or came while it stopped: a scheduler or
    ``docker stop`` that sent it is told 143 (two signals at once are handled in the
    order of their numbers, SIGINT's first, whichever came first)."""
    return signal.SIGTERM in _received


#: the commands whose finished work is stored as it finishes (a judge's store), so that
#: the same command run again goes on from it
RESUMING = ("judge", "probe")


def say_interrupted(program: bool, resumes: bool = True) -> None:
    """Recuse's words for Ctrl-C (or SIGTERM, :func:`stop_on_signals`): where the
    command ``resumes`` (:data:`RESUMING`), that its finished work is kept and a rerun
    goes on from it; else that a rerun starts it over (an audit stopped half-way said
    its finished work was kept and a rerun would go on where it stopped: it keeps
    nothing of it and starts again). As the program
    (``program``: not called by Python code), another Ctrl-C or SIGTERM from here on
    ends the process at once, with the same exit code and nothing more said: Python's
    teardown after the words takes a moment (it waits for threads), and a second press
    there printed "Exception ignored in ... threading" and a KeyboardInterrupt
    traceback. A SIGINT the shell ignores stays ignored. The store is closed by now."""
    code = stopped_code()
    if program:
        end_on_signals(code)
    what = {TERMINATED: "terminated (SIGTERM)", HUNG_UP: "hung up (SIGHUP)"}
    then = (
        "finished work is kept — run the same command again to go on where it stopped"
        if resumes
        else "run the same command again to start it over"
    )
    try:
        print(
            f"recuse: {what.get(code, 'interrupted')}; {then}",
            file=sys.stderr,
            flush=True,
        )
    except OSError:  # the terminal that hung up takes no words: the code says it
        pass


def end_on_signals(code: int) -> None:
    """From here on a Ctrl-C, SIGTERM or SIGHUP ends the process at once with ``code``,
    what was printed flushed and nothing more said: the program's command has ended
    (stopped, :func:`say_interrupted`, or done), and Python's teardown takes a moment
    (it waits for threads). A Ctrl-C there, once an error or a finished run was said,
    raised KeyboardInterrupt through the teardown: the process ended by the signal
    instead of with the command's code, now and then under "Exception ignored in
    atexit callback" and a traceback. A signal ignored stays ignored. The program's
    only (the main thread's handlers)."""
    if threading.current_thread() is not threading.main_thread():
        return
    ender = _ender(sys.stdout, sys.stderr, os._exit, code)
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, ender)


def _ender(
    out: TextIO, err: TextIO, end: Callable[[int], NoReturn], code: int = INTERRUPTED
) -> Callable[[int, FrameType | None], None]:
    """The SIGINT (SIGTERM, SIGHUP) handler :func:`end_on_signals` installs: what was
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
