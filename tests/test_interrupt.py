"""The program's stop on Ctrl-C and SIGTERM (:mod:`recuse.interrupt`), in a subprocess
each: signals are the process's own. The stop of a judge run end to end is in
tests/judging/test_robustness.py."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import recuse

SRC = str(Path(recuse.__file__).resolve().parents[1])

# an event loop run by interrupt.run whose main task sends its own process the signals
# of argv[1] (comma-separated), sleeps argv[3] seconds, and sends those of argv[2] in
# its `finally`, which awaits too; then recuse's words as the program's, and whether
# SIGINT is ignored after them. With argv[4] "cell", run is called inside a running
# event loop (as in a notebook cell: its loop then runs in a worker thread)
_STOPPED_LOOP = """
import asyncio, os, signal, sys
from recuse.interrupt import run, say_interrupted, stop_on_signals, stopped_code

def send(names: str) -> None:
    for name in filter(None, names.split(",")):
        os.kill(os.getpid(), getattr(signal, name))

async def main() -> None:
    try:
        send(sys.argv[1])
        await asyncio.sleep(float(sys.argv[3]))
        print("not stopped")
    finally:
        send(sys.argv[2])
        await asyncio.sleep(0.05)
        print("cleaned up")

async def cell() -> None:
    run(main)

stop_on_signals()
try:
    if sys.argv[4] == "cell":
        asyncio.new_event_loop().run_until_complete(cell())
    else:
        run(main)
    print("ended")
except KeyboardInterrupt:
    print("stopped", stopped_code())
    say_interrupted(program=True)
    print("SIGINT ignored:", signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
"""


def _loop(
    first: str,
    second: str,
    *,
    sleep: float = 30,
    sigint: signal.Handlers = signal.SIG_DFL,
    where: str = "plain",
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _STOPPED_LOOP, first, second, str(sleep), where],
        env={**os.environ, "PYTHONPATH": SRC},
        preexec_fn=lambda: signal.signal(signal.SIGINT, sigint),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("first", "second", "code"),
    [("SIGINT", "SIGINT", 130), ("SIGTERM", "SIGINT", 143), ("SIGINT", "SIGTERM", 143)],
)
@pytest.mark.parametrize("where", ["plain", "cell"])
def test_a_signal_cancels_the_loop_and_a_second_one_lets_it_clean_up(
    first: str, second: str, code: int, where: str
) -> None:
    """The first signal cancels the loop's main task (its sleep of 30 s ends at once);
    the second, while the task's `finally` runs, is the same stop: the clean-up ends
    (asyncio's own handler raised KeyboardInterrupt in it), then KeyboardInterrupt
    leaves run, with the exit code of a SIGTERM where one came; recuse's line once.
    The same where run is called inside a running event loop (a notebook cell), whose
    loop then runs in a worker thread that the main thread, taking the signals, stops
    (asyncio.run refused to start there)."""
    done = _loop(first, second, where=where)
    assert (done.returncode, done.stdout) == (
        0, f"cleaned up\nstopped {code}\nSIGINT ignored: False\n"
    )  # fmt: skip
    what = "terminated (SIGTERM)" if code == 143 else "interrupted"
    assert done.stderr.startswith(f"recuse: {what};") and done.stderr.count("\n") == 1


def test_a_sigint_the_shell_ignores_stays_ignored() -> None:
    """With SIGINT ignored (a script's background job: `recuse judge ... &`), a SIGINT
    changes nothing: the loop runs on and ends by itself. SIGTERM stops it, a SIGINT
    while it cleans up changes nothing either, and after recuse's words SIGINT is still
    ignored."""
    ran = _loop("SIGINT", "SIGINT", sleep=0.1, sigint=signal.SIG_IGN)
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "not stopped\ncleaned up\nended\n", "")
    done = _loop("SIGINT,SIGTERM", "SIGINT", sigint=signal.SIG_IGN)
    assert (done.returncode, done.stdout) == (0, "cleaned up\nstopped 143\nSIGINT ignored: True\n")
    assert done.stderr.startswith("recuse: terminated (SIGTERM);")


@pytest.mark.parametrize("command", [["judge"], ["probe"]])
def test_the_commands_that_run_a_judge_name_every_stop_code_in_their_help(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`recuse judge --help` and `recuse probe --help` gave 130 as the code of an
    interrupted run; a SIGTERM ends one with 143 and a SIGHUP with 129."""
    from recuse.cli import main
    from recuse.interrupt import HUNG_UP, INTERRUPTED, TERMINATED

    assert main([*command, "--help"]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert re.search(rf"\b{INTERRUPTED} (when )?interrupted by Ctrl-C, {TERMINATED} by SIGTERM, "
                     rf"{HUNG_UP} by SIGHUP \(finished work is kept\)", said), said  # fmt: skip


# a program (its handlers) that is sent SIGINT, then SIGINT again as it commits
# (`shielded`), with a run's keeper registered (`on_hurry`) where argv[1] is "run" or
# "audit" (a command that keeps nothing for its rerun)
_STOPPED_THEN_HURRIED = """
import contextlib, os, signal, sys
from recuse.interrupt import hurried_resumes, on_hurry, shielded, stop_on_signals, stopped_code

def keep() -> str:
    print("kept")
    return "3 judgments of this run are stored"

stop_on_signals()
hurried_resumes(sys.argv[1] != "audit")
with on_hurry(keep) if sys.argv[1] != "none" else contextlib.nullcontext():
    try:
        with shielded():
            os.kill(os.getpid(), signal.SIGINT)
            print("the first waits for the commit")
        print("not stopped")
    except KeyboardInterrupt:
        with shielded():
            os.kill(os.getpid(), signal.SIGINT)
            print("committed")
        print("stopped once", stopped_code())
"""


@pytest.mark.parametrize("run", ["run", "audit", "none"])
def test_a_second_signal_while_a_run_stops_ends_it_after_its_commit(run: str) -> None:
    """Outside an event loop the first signal raises KeyboardInterrupt, but not inside
    a commit (`shielded`): as it ends. A second one, where a run registered what to
    keep (`on_hurry`), ends the program at once once the commit in progress ends: the
    keeper runs, recuse's line with its words, the exit code of the stop; with none
    registered it is the same stop as before. A command whose rerun starts over (an
    audit) is said so, without what its run stored."""
    done = subprocess.run(
        [sys.executable, "-c", _STOPPED_THEN_HURRIED, run],
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    first = "the first waits for the commit\ncommitted\n"
    if run == "none":
        assert (done.returncode, done.stdout, done.stderr) == (0, f"{first}stopped once 130\n", "")
        return
    assert (done.returncode, done.stdout) == (130, f"{first}kept\n")
    if run == "audit":
        assert done.stderr == (
            "recuse: interrupted again: stopped now; run the same command again to start it over\n"
        )
        return
    assert done.stderr == (
        "recuse: interrupted again: stopped now; 3 judgments of this run are stored, the work "
        "in progress is not — run the same command again to go on where it stopped\n"
    )


# a run's keepers that fail as a second SIGTERM ends it: a full disk met by two of them,
# and a bug's KeyError; the outermost still keeps what it can
_KEEPERS_FAIL = """
import os, signal, time
from recuse.errors import OutputError
from recuse.interrupt import on_hurry, stop_on_signals

def full() -> str:
    raise OutputError("cannot write s.db: the disk is full")

def bug() -> str:
    raise KeyError("slot")

def kept() -> str:
    return "3 judgments of this run are stored"

stop_on_signals()
with on_hurry(kept), on_hurry(full), on_hurry(bug), on_hurry(full):
    try:
        os.kill(os.getpid(), signal.SIGTERM)
    except KeyboardInterrupt:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
"""


def test_a_keepers_error_at_a_second_signal_is_said_before_the_line() -> None:
    """A keeper of a hurried stop that fails (the commit of the finished judgments on
    a full disk) was not said: the line read as though all were kept. Each error is
    said once, on a line of its own, in recuse's words where it is recuse's and with
    its type where it is not; the other keepers still run and the exit code is the
    signal's."""
    done = subprocess.run(
        [sys.executable, "-c", _KEEPERS_FAIL], env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (143, "")
    assert done.stderr == (
        "recuse: cannot write s.db: the disk is full\n"
        "recuse: KeyError: 'slot'\n"
        "recuse: terminated (SIGTERM) again: stopped now; 3 judgments of this run are stored, "
        "the work in progress is not — run the same command again to go on where it stopped\n"
    )


# a run started in a running event loop (a notebook cell), Ctrl-C handled in the waiting
# thread at the first Python call after its worker's start() returned (a trace function
# makes that moment exact); the process ends with os._exit: a worker left behind would
# hold it up for good
_CTRL_C_AS_THE_WORKER_STARTS = """
import _thread, asyncio, contextlib, os, sys, threading
from recuse.interrupt import run

started, said = [], []

def tracer(frame, event, arg):
    if started and event == "call":
        sys.settrace(None)
        _thread.interrupt_main()  # raised in the frame being called
        return None
    if event == "call" and frame.f_code is threading.Thread.start.__code__:
        return returned
    return None

def returned(frame, event, arg):
    if event == "return":
        started.append(True)
    return returned

async def main() -> str:
    said.append("began")
    return "done"

@contextlib.contextmanager
def lend(worker):
    said.append("lent")
    try:
        yield
    finally:
        said.append("back")

async def cell() -> str:
    sys.settrace(tracer)
    try:
        return run(main, lend=lend)
    finally:
        sys.settrace(None)

try:
    print(asyncio.new_event_loop().run_until_complete(cell()))
except KeyboardInterrupt:
    said.append("interrupted")
workers = [t for t in threading.enumerate() if t.name == "recuse-run"]
for t in workers:
    t.join(2)
print(*said, any(t.is_alive() for t in workers), flush=True)
os._exit(0)
"""


def test_ctrl_c_as_a_cells_worker_starts_stops_the_run_and_its_worker() -> None:
    """Ctrl-C in a notebook cell the moment the run's worker thread has started: it
    was raised before the wait for the worker began, and the worker, waiting to be
    let begin, was left waiting for good (a thread the process or kernel never ends).
    Now it stops the run before it begins: the cell gets KeyboardInterrupt, the store
    is given back, and the worker ends."""
    done = subprocess.run(
        [sys.executable, "-c", _CTRL_C_AS_THE_WORKER_STARTS],
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "lent back interrupted False\n"), done.stderr


def test_a_sigint_as_a_cells_run_ends_leaves_the_callers_handler_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """While the main thread waits for a cell's run, the caller's SIGINT handler is
    wrapped (interrupt._relayed): called, then the run stopped where it did nothing. A
    SIGINT that lands as the wrapper is being taken off (here: as it reads the handler
    to put the caller's back) is the caller's alone, the run being over, and the
    caller's handler is back in place. Before, the wrapper raised KeyboardInterrupt
    there, which cut the restoring short: the wrapper stayed the handler for good."""
    from recuse import interrupt

    calls: list[int] = []

    def theirs(signum: int, _frame: object) -> None:  # neither raises nor cancels
        calls.append(signum)

    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, theirs)
    real = signal.getsignal
    armed: list[bool] = []

    def getsignal(signum: int) -> object:
        handler = real(signum)
        if armed:  # the press lands now
            armed.clear()
            signal.raise_signal(signal.SIGINT)
        return handler

    raised = False
    try:
        block = interrupt._relayed(None)
        with block:
            assert real(signal.SIGINT) is not theirs  # wrapped while the run runs
            monkeypatch.setattr(signal, "getsignal", getsignal)
            armed.append(True)
    except KeyboardInterrupt:
        raised = True
    finally:
        monkeypatch.undo()
        now = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, before)
    assert not armed and calls == [signal.SIGINT]  # the press came, and was theirs
    assert not raised and now is theirs


# the program's handlers, then a signal that lands while Python runs a finaliser
# (__del__, a weakref's callback, as the garbage collector calls them mid-audit), where
# Python prints "Exception ignored in" for the KeyboardInterrupt and goes on
_SIGNAL_IN_A_FINALISER = """
import os, signal, sys
from recuse.interrupt import stop_on_signals, stopped_code

stop_on_signals()

class Collected:
    def __del__(self) -> None:
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))
        for _ in range(100_000):  # the handler runs here, in the finaliser
            pass

try:
    Collected()
    for _ in range(5_000_000):  # 0.1-0.3 s: the stop, sent again 10 ms on, comes in it
        pass
    print("ran on")
except KeyboardInterrupt:
    print("stopped", stopped_code())
"""


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_signal_landing_in_a_finaliser_still_stops_the_program(name: str, code: int) -> None:
    """A SIGTERM whose KeyboardInterrupt is raised in a finaliser (Python cannot raise
    it from there: "Exception ignored in ..." and its traceback) stops the program
    where it goes on. Before, ``recuse audit llmbar-mtbench`` sent SIGTERM 1.8 s in
    printed that traceback from a WeakKeyDictionary's callback, ran to its end, wrote
    its report and exited 0."""
    done = subprocess.run(
        [sys.executable, "-c", _SIGNAL_IN_A_FINALISER, name],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip
    assert (done.stdout, done.stderr) == (f"stopped {code}\n", "")


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_stop_sent_again_before_the_hook_returns_is_not_lost(name: str, code: int) -> None:
    """The stop a finaliser swallowed is sent again only once the unraisable hook
    that started its timer has returned: sent while the hook still waited for the
    timer's thread to start (a busy machine; here the timer's delay is 0), its
    KeyboardInterrupt was raised in the hook, 'Exception ignored in
    sys.unraisablehook', and the program ran on (fails before, every run; about 1 run
    in 40 with the 10 ms delay on a loaded machine)."""
    script = _SIGNAL_IN_A_FINALISER.replace(
        "stop_on_signals()\n", "stop_on_signals()\nimport recuse.interrupt\n"
        "recuse.interrupt._AGAIN_S = 0.0\n", 1,
    )  # fmt: skip
    assert "_AGAIN_S = 0.0" in script
    done = subprocess.run(
        [sys.executable, "-c", script, name],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip
    assert (done.stdout, done.stderr) == (f"stopped {code}\n", "")


_SIGNAL_IN_A_FINALISER_THEN_A_WAIT = """
import os, signal, sys, threading, time
from recuse.interrupt import stop_on_signals, stopped_code

stop_on_signals()

class Collected:
    def __del__(self) -> None:
        os.kill(os.getpid(), getattr(signal, sys.argv[1]))
        for _ in range(100_000):  # the handler runs here, in the finaliser
            pass

start = time.monotonic()
try:
    Collected()
    if sys.argv[2] == "sleep":
        time.sleep(20)
    else:  # a lock's wait: a thread's join, a queue's get
        threading.Event().wait(20)
    print("ran on")
except KeyboardInterrupt:
    print("stopped", stopped_code(), time.monotonic() - start < 5)
"""


@pytest.mark.parametrize("wait", ["sleep", "event"])
@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_a_stop_sent_again_ends_the_wait_the_main_thread_is_in(
    name: str, code: int, wait: str
) -> None:
    """A stop that landed in a finaliser, sent again, ends a wait the main thread is in
    at once (a 20 s sleep, an event's wait), as the signal itself ends it: sent with
    ``_thread.interrupt_main``, which only marks the signal received, the program
    stopped when the wait ended, 20 s later (fails before: 'stopped 143 False')."""
    done = subprocess.run(
        [sys.executable, "-c", _SIGNAL_IN_A_FINALISER_THEN_A_WAIT, name, wait],
        capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": SRC},
    )  # fmt: skip
    assert (done.stdout, done.stderr) == (f"stopped {code} True\n", "")


def test_an_error_after_a_stop_signal_is_said_as_the_stop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A SIGTERM whose KeyboardInterrupt landed in a compiled module's import comes out
    as ImportError: ``recuse audit llmbar-mtbench`` sent SIGTERM 1.8 s in (as the report
    imported matplotlib) said 'this feature needs the optional package 'matplotlib''
    and exited 2. An error after the program received a stop is the stop: its line and
    143, no error, no report."""
    import recuse.interrupt as interrupt
    import recuse.report.figures as figures
    from recuse.cli import main
    from recuse.errors import MissingDependencyError
    from recuse.simulate.pairs import simulate_pairs

    path = tmp_path / "p.csv"
    simulate_pairs(n_prompts=20, seed=1).pairs.to_csv(path, index=False)

    def cut_short() -> None:  # the signal received, its KeyboardInterrupt turned
        interrupt._received.append(signal.SIGTERM)
        raise MissingDependencyError("matplotlib", "plots")

    monkeypatch.setattr(interrupt, "_received", [])
    monkeypatch.setattr(figures, "_mpl", cut_short)
    code = main(["audit", str(path), "--out", str(tmp_path / "out"), "--n-boot", "100"])
    err = capsys.readouterr().err
    assert (code, err.splitlines()[-1]) == (
        143,
        "recuse: terminated (SIGTERM); run the same command again to start it over",
    )
    assert "matplotlib" not in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize("where", ["a step", "the last step"])
def test_a_stop_a_library_dropped_stops_the_audit_before_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """A Ctrl-C received whose KeyboardInterrupt never reached the audit (raised in a
    compiled module's import it came out as ImportError, which a library's ``except
    ImportError`` dropped): the audit stops at its next step, or before it writes,
    with its line and 130. Before, a SIGINT 1.2 s into ``recuse audit llmbar-mtbench``
    (about one run in 60) let it run on, write its report and exit 0."""
    import recuse.driver as driver
    import recuse.interrupt as interrupt
    from recuse.cli import main
    from recuse.simulate.pairs import simulate_pairs

    path = tmp_path / "p.csv"
    simulate_pairs(n_prompts=20, seed=1).pairs.to_csv(path, index=False)
    audit_input = driver._audit_input

    def dropped(*args: Any, **kwargs: Any) -> None:
        if where == "a step":
            interrupt._received.append(signal.SIGINT)  # received, its raise dropped
        audit_input(*args, **kwargs)
        if where == "the last step":
            interrupt._received.append(signal.SIGINT)

    monkeypatch.setattr(interrupt, "_received", [])
    monkeypatch.setattr(driver, "_audit_input", dropped)
    code = main(["audit", str(path), "--out", str(tmp_path / "out"), "--n-boot", "100"])
    err = capsys.readouterr().err
    assert (code, err.splitlines()[-1]) == (
        130,
        "recuse: interrupted; run the same command again to start it over",
    )
    assert not (tmp_path / "out").exists()
