"""How the program stops on Ctrl-C and SIGTERM (:func:`stop_on_signals`, the event
loop of a run included: :func:`run`), and recuse's words and exit code for it, shared by
the program's entry point (:mod:`recuse._program`, a Ctrl-C while the command line
loads) and the command line (:func:`recuse.cli.main`, one during a command). A leaf: it
imports nothing of recuse, so the entry point can load it before anything heavy."""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import AbstractContextManager
from types import FrameType
from typing import TYPE_CHECKING, Any, Generic, NoReturn, TextIO, TypeVar, cast

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "HUNG_UP",
    "INTERRUPTED",
    "RESUMING",
    "TERMINATED",
    "complete_over",
    "end_on_signals",
    "hurried_resumes",
    "hurries",
    "on_first_stop",
    "on_hurry",
    "output_complete",
    "raise_if_stopped",
    "resumes",
    "run",
    "say_interrupted",
    "shielded",
    "stop_on_signals",
    "stop_received",
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
#: what each worker of :func:`run` (a notebook cell's run) has said at its first stop
#: (:func:`on_first_stop`), by the worker
_worker_notes: dict[threading.Thread, list[Callable[[int], None]]] = {}
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
#: what a stop that came once a command's output was whole leaves to say: the folder
#: and the cleanup left (:func:`output_complete`), said by :func:`say_interrupted`
_complete: list[str] = []


def stop_on_signals(
    *, received: list[int] | None = None, replacing: Callable[..., object] | None = None
) -> None:
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
    command line.

    ``replacing``: the entry point's own SIGINT handler, installed before this module
    loaded (:mod:`recuse._program`), taken over as Python's own is; the signals it
    ``received`` meanwhile (read once it is replaced, so none is missed) count as
    received here (:func:`stopped_code`)."""
    if threading.current_thread() is not threading.main_thread():
        return
    held = signal.getsignal(signal.SIGINT)
    if held is signal.default_int_handler or (replacing is not None and held is replacing):
        signal.signal(signal.SIGINT, _stop)  # not ignored
    signal.signal(signal.SIGTERM, _stop)
    if signal.getsignal(signal.SIGHUP) is signal.SIG_DFL:  # not nohup's
        signal.signal(signal.SIGHUP, _stop)
    if not _program:
        sys.unraisablehook = _stop_raised_again(sys.unraisablehook)
    _program[:] = [True]
    _received.extend(received or ())


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


#: seconds after a finaliser swallowed a stop that it is sent again (:func:`_stop_raised_again`)
_AGAIN_S = 0.01
#: not empty while the program's unraisable hook starts the timer that sends a stop
#: again (emptied by ``del``, no call: no signal's handler runs before the hook returns)
_in_hook: list[bool] = []


def _stop_raised_again(
    hook: Callable[[Any], object],
) -> Callable[[Any], object]:
    """The program's ``sys.unraisablehook``: a first signal's KeyboardInterrupt
    (:func:`_stop`) that landed in a finaliser (``__del__``, a weakref's callback, as
    the garbage collector calls them), from where Python cannot raise it, is raised
    again where the program goes on, where Python printed "Exception ignored in" with a
    traceback and the program ran on: ``recuse audit`` sent SIGTERM mid-run wrote its
    report and exited 0. The signal is counted once and sent again to the main thread
    a moment later (from a timer's thread: sent from the hook, its handler ran in the
    hook, which cannot raise either). Anything else goes to ``hook``."""

    def seen(unraisable: Any) -> None:
        tb = unraisable.exc_traceback
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        ours = tb is not None and tb.tb_frame.f_code is _stop.__code__
        if unraisable.exc_type is KeyboardInterrupt and ours and len(_received) == 1:
            _in_hook.append(True)  # the timer sends it once the hook has returned
            try:
                again = threading.Timer(_AGAIN_S, _send_again, (_received.pop(),))
                again.daemon = True
                again.start()
            finally:
                del _in_hook[:]
            return
        hook(unraisable)

    return seen


def _send_again(signum: int) -> None:
    """``signum`` sent again to the main thread as a signal (``pthread_kill``), so a
    wait it is in (a sleep, a lock, a thread's join) ends as the first signal's would
    have ended it: ``_thread.interrupt_main`` only marks the signal as received, and
    the main thread ran on until its wait ended (a 3 s sleep stopped after 3 s, a
    pass a thread runs after the pass). Where there is no ``pthread_kill``, that.
    Not while the hook that started its timer runs (the thread's start waits there):
    the stop was raised in the hook, where it was lost again ('Exception ignored in
    sys.unraisablehook', the program ran on: a timer's thread slow to start on a
    busy machine, about 1 run in 40)."""
    while _in_hook:
        time.sleep(_AGAIN_S)
    kill = getattr(signal, "pthread_kill", None)
    main = threading.main_thread().ident
    if kill is None or main is None:
        _thread.interrupt_main(signal.Signals(signum))
        return
    with contextlib.suppress(OSError):  # the main thread has ended: nothing to stop
        kill(main, signum)


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
    audit's judgments and perplexities are not kept for it). A new command also forgets
    an earlier one's :func:`output_complete` words (a Python caller that caught that
    stop would have them said over the next command's interrupt)."""
    _resumes[:] = [resumes]
    _complete.clear()


def resumes() -> bool:
    """What :func:`hurried_resumes` was last told: whether the command the command line
    named goes on from its stored work when run again (True until it is told)."""
    return _resumes[0]


def _hurry() -> NoReturn:
    """A second signal's stop: each :func:`on_hurry` keeper, innermost first, recuse's
    line with their words, and the process ends at once with :func:`stopped_code`.
    A keeper's error (a full disk: the finished judgments not committed) is said on a
    line of its own before it (the line said only that the rerun goes on where it
    stopped, as though they were kept). A signal meanwhile changes nothing."""
    _due[:] = ["hurrying"]
    words = []
    errors: list[str] = []
    for keep in reversed(_hurries[:]):
        try:
            said = keep()
        except BaseException as exc:  # the process ends: the others keep what they can
            error = _error_words(exc)
            if error and error not in errors:  # the store's full disk, met by each
                errors.append(error)
            continue
        if said:
            words.append(said)
    with contextlib.suppress(OSError):
        for error in errors:
            print(f"recuse: {error}", file=sys.stderr, flush=True)
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


def _error_words(exc: BaseException) -> str:
    """What a keeper's error says on recuse's line: a recuse error's own words (one
    line, with its fix), another's with its type (a bug's KeyError says only its key);
    nothing for a signal's KeyboardInterrupt."""
    if not isinstance(exc, Exception):
        return ""
    words = " ".join(str(exc).split())
    if type(exc).__module__ == "recuse.errors" and words:
        return words
    return f"{type(exc).__name__}: {words}" if words else type(exc).__name__


def run(
    main: Callable[..., Coroutine[Any, Any, _T]],
    *args: Any,
    lend: Callable[[threading.Thread], AbstractContextManager[object]] | None = None,
) -> _T:
    """``asyncio.run(main(*args))``, stopped by the program's Ctrl-C or SIGTERM
    (:func:`stop_on_signals`) as asyncio.run stops on Ctrl-C by itself: the main task is
    cancelled (its ``finally`` commits and closes), then KeyboardInterrupt is raised
    here. asyncio.run does that only where SIGINT has Python's own handler; its second
    Ctrl-C raised KeyboardInterrupt in whatever ran, a task of the loop too, and a
    SIGTERM raised it that way whenever the shell ignored SIGINT. The coroutine is made
    in the loop's main task, so a stop at any moment leaves none unawaited. Elsewhere
    (Python code calling recuse, another thread) it is asyncio.run.

    Where an event loop already runs in this thread (a notebook cell: Jupyter runs its
    cells in one; an ``async def``), which asyncio.run refuses, the loop runs in a
    worker thread and this one waits for it (:func:`_in_a_worker`); ``lend(worker)``
    hands the worker, for that while, what only one thread may use (a run's store)."""
    import asyncio

    if _loop_running():
        return _in_a_worker(_MainTask(main, args), lend)
    if threading.current_thread() is not threading.main_thread():
        return asyncio.run(main(*args))
    run = _MainTask(main, args)

    def stop() -> None:  # in the main thread, as the loop: what asyncio.run does
        run.stopped = True
        if run.task is not None and run.task.cancel():  # its tasks not yet begun never begin
            run.task.get_loop().call_soon_threadsafe(_nothing)  # the loop wakes up

    _loop_stops.append(stop)
    try:
        done = asyncio.run(run())
    except asyncio.CancelledError:
        if not run.stopped:
            raise
    finally:
        _loop_stops.remove(stop)
    if run.stopped:
        raise KeyboardInterrupt
    return done


class _MainTask(Generic[_T]):
    """The main task of :func:`run`'s event loop: calling it makes ``main(*args)`` in
    the task and awaits it; ``stopped`` (set by a stop) before the task began cancels it
    there, ``task`` is the task once it began."""

    def __init__(self, main: Callable[..., Coroutine[Any, Any, _T]], args: tuple[Any, ...]) -> None:
        self.main, self.args = main, args
        self.stopped = False
        self.task: asyncio.Task[_T] | None = None

    async def __call__(self) -> _T:
        import asyncio

        self.task = cast("asyncio.Task[_T]", asyncio.current_task())
        if self.stopped:  # before the task began
            raise asyncio.CancelledError
        return await self.main(*self.args)


def _loop_running() -> bool:
    """Whether an event loop runs in this thread (a notebook cell, an ``async def``)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _in_a_worker(
    run: _MainTask[_T], lend: Callable[[threading.Thread], AbstractContextManager[object]] | None
) -> _T:
    """``run``'s event loop in a worker thread (with this thread's context variables,
    as ``asyncio.to_thread``), this thread waiting for it: :func:`run` where a loop runs
    in this thread already. The worker installs no signal handler (Python allows that
    to the main thread only, and asyncio.run does not try elsewhere): a Ctrl-C (Jupyter's
    "interrupt kernel") raises KeyboardInterrupt here, in the waiting thread, and it
    stops the run as it stops a run in this thread: the worker's main task is
    cancelled (its ``finally`` commits what it finished), this thread goes on waiting
    for it to end, then KeyboardInterrupt is raised here. The program's SIGTERM
    (:func:`stop_on_signals`) stops it so too. Another Ctrl-C while it stops is taken
    as the same stop: it does not cut the commit short, nor leave the worker using
    what it was lent. Whatever else the wait raises stops the run the same way and is
    raised once it ended; an error of the run is raised here as it was raised there.

    Under ``asyncio.run`` (an ``async def`` main, not Jupyter's loop) the first Ctrl-C
    raises nothing: asyncio's handler cancels its main task, which cannot act while
    this thread waits. That cancellation of the calling task, seen here, stops the run
    the same way, and CancelledError is raised here once it ended (asyncio.run then
    raises KeyboardInterrupt, as it does on Ctrl-C).

    A SIGINT handler of the caller's that neither raises nor cancels the calling task
    leaves its work to this thread's event loop, which cannot run while this thread
    waits: ipykernel's, in a cell with a top-level ``await`` (IPython runs it as a
    coroutine), only asks the loop to cancel the cell, so "interrupt kernel" did
    nothing until every judgment was made. While this thread waits, the caller's
    handler is still called first, then the run is stopped as by Ctrl-C
    (:func:`_relayed`)."""
    import asyncio
    import contextvars

    ended = threading.Event()
    go = threading.Event()  # the run begins once this thread waits for it
    outcome: list[_T] = []
    raised: list[BaseException] = []

    def work() -> None:
        go.wait()
        try:
            outcome.append(asyncio.run(run()))
        except BaseException as exc:  # said by the waiting thread
            raised.append(exc)
        finally:
            ended.set()

    notes: list[Callable[[int], None]] = []

    def stop() -> None:  # in the waiting thread: the task is cancelled in its own
        if run.stopped:
            return  # the same stop
        run.stopped = True
        try:
            for say in list(notes):
                with contextlib.suppress(Exception):
                    say(_received[0] if _received else signal.SIGINT)
        finally:  # cancelled even where another Ctrl-C cut the note short
            task = run.task  # else the task, once it begins, sees ``stopped``
            if task is not None:
                with contextlib.suppress(RuntimeError):  # the loop closed: the run ended
                    task.get_loop().call_soon_threadsafe(task.cancel)

    context = contextvars.copy_context()
    worker = threading.Thread(target=context.run, args=(work,), name="recuse-run")
    caller = asyncio.current_task()  # None where the loop runs a callback
    cancelled = caller.cancelling() if caller is not None else 0
    first: BaseException | None = None
    waiter = threading.current_thread() is threading.main_thread()
    relay = _relayed(caller) if waiter else contextlib.nullcontext()
    if waiter:
        _loop_stops.append(stop)
    _worker_notes[worker] = notes
    try:
        with relay, lend(worker) if lend is not None else contextlib.nullcontext():
            try:
                worker.start()
            except BaseException:  # a Ctrl-C before the run began: it never begins
                run.stopped = True
                go.set()
                raise
            # every step from here on is in the try: a Ctrl-C handled as worker.start()
            # returned was raised in the loop's test, before the run was let begin, and
            # left the worker waiting for it for good (the process never ended)
            while True:
                try:
                    go.set()  # here, where a Ctrl-C the run causes is taken
                    if caller is not None and caller.cancelling() > cancelled and first is None:
                        first = asyncio.CancelledError()  # asyncio.run's Ctrl-C: see above
                    if first is not None:
                        stop()
                    if ended.wait(_WAIT_SECONDS):
                        worker.join()
                        break
                except BaseException as exc:  # a Ctrl-C while it waits
                    first = first or exc
    finally:
        del _worker_notes[worker]
        if waiter:
            _loop_stops.remove(stop)
    if raised and not (run.stopped and isinstance(raised[0], asyncio.CancelledError)):
        raise raised[0]
    if first is not None:
        raise first
    if run.stopped:  # the program's SIGTERM
        raise KeyboardInterrupt
    return outcome[0]


def _relayed(caller: asyncio.Task[Any] | None) -> AbstractContextManager[None]:
    """Where the main thread's SIGINT handler is the caller's own (not Python's, which
    raises KeyboardInterrupt, nor the program's :func:`_stop`, which stops the run), a
    block in which a SIGINT calls it, then raises KeyboardInterrupt where it neither
    raised nor cancelled ``caller`` (asyncio.run's handler cancels its main task, which
    the waiting thread sees): it left its work to the loop that the run holds up. The
    caller's handler is put back as the block ends; a SIGINT meanwhile is the caller's
    alone (it raised KeyboardInterrupt in the restoring, which left this block's handler
    in place for good). Elsewhere (SIGINT ignored, or a handler set in C) a block that
    does nothing."""
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler) or handler in (signal.default_int_handler, _stop):
        return contextlib.nullcontext()
    theirs = handler
    ended: list[bool] = []

    def relayed(signum: int, frame: FrameType | None) -> None:
        if ended:  # as the block ends (the run is over): theirs alone, back in place first
            if signal.getsignal(signal.SIGINT) is relayed:
                signal.signal(signal.SIGINT, theirs)
            theirs(signum, frame)
            return
        cancelling = caller.cancelling() if caller is not None else 0
        theirs(signum, frame)  # may raise: the waiting thread takes it as a Ctrl-C
        if caller is None or caller.cancelling() == cancelling:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def block() -> Iterator[None]:
        signal.signal(signal.SIGINT, relayed)
        try:
            yield
        finally:
            ended.append(True)  # a SIGINT now cannot cut the restoring short
            if signal.getsignal(signal.SIGINT) is relayed:
                signal.signal(signal.SIGINT, theirs)

    return block()


@contextlib.contextmanager
def on_first_stop(say: Callable[[int], None]) -> Iterator[bool]:
    """Within the block, where this thread is the worker of a run that :func:`run` runs
    for a thread with a loop of its own (a notebook cell's run), ``say(signum)`` is
    called at the run's first stop, in the waiting thread, before the run's task is
    cancelled: what a handler on the main thread says at once (the signal handler of
    a run in the main thread). Yields whether it will be (False elsewhere)."""
    notes = _worker_notes.get(threading.current_thread())
    if notes is None:
        yield False
        return
    notes.append(say)
    try:
        yield True
    finally:
        notes.remove(say)


#: how long the thread waiting for :func:`_in_a_worker`'s worker waits at a time
#: (a wait without a timeout takes no Ctrl-C on Windows)
_WAIT_SECONDS = 0.1


def _nothing() -> None:
    pass


def stop_received() -> bool:
    """Whether the program (:func:`stop_on_signals`) received a Ctrl-C, SIGTERM or
    SIGHUP: a missing package the command ends with after it is the stop's (a
    KeyboardInterrupt raised in a compiled module's import comes out as ImportError:
    ``recuse audit`` sent SIGTERM as it imported matplotlib said matplotlib was not
    installed, exit 2)."""
    return bool(_received)


def raise_if_stopped() -> None:
    """Raise the KeyboardInterrupt of a stop the program received (Ctrl-C, SIGTERM,
    SIGHUP) that never reached it, at a point the command chooses (the audit's steps,
    before it writes its report): one raised in a compiled module's import comes out
    as ImportError, which a library's ``try: import ... except ImportError`` then
    drops, and the audit ran on, wrote its report and exited 0 (a SIGINT 1.2 s into
    ``recuse audit llmbar-mtbench``, about one run in 60). Nothing while a
    :func:`shielded` block or an event loop (:func:`run`) has the stop in hand."""
    if _received and not _shields and not _loop_stops and "hurrying" not in _due:
        raise KeyboardInterrupt


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


def output_complete(words: str, stop: BaseException | None = None) -> None:
    """Record that the stop being raised came once the command's output files were all
    in place (``words``: where, and the cleanup left undone): :func:`say_interrupted`
    says so instead of words that read as if the output were unfinished; ``stop`` (the
    KeyboardInterrupt raised on) carries them as a note for a Python caller."""
    _complete.append(words)
    if stop is not None:
        stop.add_note(words)


@contextlib.contextmanager
def complete_over(words: str) -> Iterator[None]:
    """A block that runs once the command's output files are all complete and in
    place (the release of a write's lock, the "wrote ..." lines): a Ctrl-C (or
    SIGTERM) in it still stops the command, exit 130 (143), but is said over whole
    files, ``words`` naming them (:func:`output_complete`), not "run the same command
    again to start it over", which read as if the files were unfinished. Words
    recorded already (a stop in an inner block's cleanup) are not said twice."""
    try:
        yield
    except KeyboardInterrupt as exc:
        if not any(note in _complete for note in getattr(exc, "__notes__", ())):
            output_complete(words, exc)
        raise


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
        _handled()
    what = {TERMINATED: "terminated (SIGTERM)", HUNG_UP: "hung up (SIGHUP)"}
    then = (
        "finished work is kept — run the same command again to go on where it stopped"
        if resumes
        else "run the same command again to start it over"
    )
    if _complete:  # the files were whole: the stop cut the cleanup (or what followed)
        then = (
            f"{'; '.join(_complete)}. The command's steps after that write did not run: "
            "run the same command again to finish them"
        )
        _complete.clear()
    try:
        print(
            f"recuse: {what.get(code, 'interrupted')}; {then}",
            file=sys.stderr,
            flush=True,
        )
    except OSError:  # the terminal that hung up takes no words: the code says it
        pass


def _handled() -> None:
    """Tell CPython the KeyboardInterrupt the program caught is handled. Raised inside
    code that exec() ran from a string (a dataclass's methods are made so as its module
    is imported: about 1 in 10 Ctrl-Cs at random moments of `recuse judge`'s first
    seconds), it set CPython's "unhandled KeyboardInterrupt" flag, which only the next
    exec() of a string clears; under ``python -m recuse`` the process then ended by
    SIGINT at exit (-2 to a Python parent), not with the code returned. An empty exec()
    clears it."""
    exec("")


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
