"""The ``recuse`` program's entry point (:mod:`recuse._program`): a Ctrl-C while the
command line loads is recuse's line and exit 130, as one during a command is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import recuse

SRC = str(Path(recuse.__file__).resolve().parents[1])
WORDS = "recuse: interrupted; run the same command again to start it over\n"

# a Ctrl-C landing while a module of the command line is imported (recuse.cli.app, the
# second or so of pandas, scipy and typer a run starts with), then the program run as
# `python -m recuse` runs it
_CTRL_C_WHILE_LOADING = """
import sys

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            {raise_it}
        return None

sys.meta_path.insert(0, CtrlC())
import runpy
runpy.run_module("recuse", run_name="__main__")
"""


def _python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -c code args`` with recuse's source on the path, its output captured."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _program_interrupted_at(
    module: str, raise_it: str = "raise KeyboardInterrupt", *args: str
) -> subprocess.CompletedProcess[str]:
    code = _CTRL_C_WHILE_LOADING.format(module=module, raise_it=raise_it)
    return _python(code, *(args or ("--help",)))


def test_a_ctrl_c_while_the_command_line_loads_is_recuses_line_and_130() -> None:
    """A Ctrl-C in the first second or two of `recuse judge ...` (the command line
    loading: pandas, scipy, typer) printed Python's KeyboardInterrupt traceback through
    pandas' import machinery and ended the process by the signal; it landed before
    recuse.cli.main's handler existed. Now the entry point holds it: recuse's line, 130,
    wherever the load is (the command line's modules, or the commands' in _register);
    no command has begun, so a rerun starts it over. pandas loads only as a command
    runs (``recuse --help`` loads none of it: tests/cli/test_cli_lazy.py), so its
    Ctrl-C is one in `recuse validate`, which says the same."""
    for module, args in (
        ("recuse.cli.app", ()),
        ("recuse.cli.judge", ()),
        ("pandas", ("validate", "pairs.csv")),
    ):
        done = _program_interrupted_at(module, "raise KeyboardInterrupt", *args)
        assert (done.returncode, done.stderr, done.stdout) == (130, WORDS, ""), module


@pytest.mark.parametrize("module", ["typing", "threading", "recuse.errors", "recuse.interrupt"])
def test_a_real_ctrl_c_in_the_first_milliseconds_is_recuses_line_and_130(module: str) -> None:
    """A SIGINT (a real one: the handler in place then takes it) in the first ~20 ms of
    `recuse judge`, as ``import recuse`` loaded typing and recuse.errors (its threading,
    pathlib) and the entry point loaded recuse.interrupt, before any handler of recuse
    existed: Python's KeyboardInterrupt traceback, and the process ended by the signal
    or with 1. Now the entry point holds Ctrl-C from its first statement and nothing
    heavy loads before it: recuse's line and 130, the command never begun. Each
    ``module`` is where the signal is sent, as it is first imported (deterministic:
    the moment is an import, not a time); had it been imported earlier the command
    would have run (``--help`` on stdout), which the assertion refuses too."""
    kill = "import os; os.kill(os.getpid(), 2)"
    done = _program_interrupted_at(module, raise_it=kill)
    assert "Traceback" not in done.stderr, done.stderr
    assert (done.returncode, done.stderr, done.stdout) == (130, WORDS, ""), module


def test_a_ctrl_c_inside_code_made_by_exec_while_loading_is_130_not_the_signal(
    tmp_path: Path,
) -> None:
    """A Ctrl-C landing in code that exec() runs from a string (a dataclass's methods
    are made so as its module is imported: 1 in 10 Ctrl-Cs at random moments of the
    load of `recuse judge`) said recuse's line, then the process ended by SIGINT (exit
    -2 to a Python parent) instead of 130: CPython took the interrupt for an unhandled
    one at exit (_Py_UnhandledKeyboardInterrupt, set by exec, reset by the next)."""
    # run as `python -m` runs a package: the flag is read where a module run so ends
    wrapper = tmp_path / "ctrl_c_in_exec"
    wrapper.mkdir()
    raise_it = 'exec("raise KeyboardInterrupt")'
    (wrapper / "__main__.py").write_text(
        _CTRL_C_WHILE_LOADING.format(module="recuse.cli.app", raise_it=raise_it)
    )
    done = subprocess.run(
        [sys.executable, "-m", wrapper.name, "--help"],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([SRC, str(tmp_path)])},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr, done.stdout) == (130, WORDS, "")


def test_importing_recuse_loads_nothing_heavy() -> None:
    """`import recuse` (which every entry point runs first, outside any handler) loads
    neither pandas nor the analyses: a Ctrl-C then could only land in recuse's entry
    point. recuse.Roster, PAIRS and the validators load on first use."""
    code = (
        "import sys, recuse; heavy = sorted(m for m in ('pandas', 'numpy', 'scipy') "
        "if m in sys.modules); print(heavy); "
        "from recuse import PAIRS, Roster, validate_pairs; print(Roster.__name__)"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "Roster"], done.stdout


# the program run as `python -m recuse` on a data file that does not exist (an error,
# exit 2), with a Ctrl-C landing in Python's teardown after it: an atexit callback
# (multiprocessing's, where it landed by hand) sends it and waits
_CTRL_C_IN_THE_TEARDOWN = """
import atexit, os, signal, sys, time

SENT = getattr(signal, sys.argv[1])

def ctrl_c() -> None:
    os.kill(os.getpid(), SENT)
    time.sleep(0.5)
    print("teardown went on", file=sys.stderr)

atexit.register(ctrl_c)
sys.argv[1:] = ["judge", "--model", "m", "--data", sys.argv[2], "--out", sys.argv[3]]
import runpy
runpy.run_module("recuse", run_name="__main__")
"""


@pytest.mark.parametrize("sent", ["SIGINT", "SIGTERM"])
def test_a_signal_after_the_command_ended_keeps_its_exit_code(sent: str, tmp_path: Path) -> None:
    """A Ctrl-C (or SIGTERM) once the command has said its error or its results, while
    Python tears down (it waits for threads, runs atexit callbacks): the
    KeyboardInterrupt went through the teardown, "Exception ignored in atexit
    callback" and a traceback under recuse's error, and the process ended by the
    signal. Now the process ends at once with the command's code (2 here) and its
    words alone."""
    missing = tmp_path / "missing.jsonl"
    done = _python(_CTRL_C_IN_THE_TEARDOWN, sent, str(missing), str(tmp_path / "s.db"))
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr
        == f"recuse: error: {missing}: file not found — check the path, or give a dataset name\n"
    )


def test_the_entry_point_loads_in_a_thread_other_than_the_main_one() -> None:
    """The entry point takes Ctrl-C over as it is imported, and in a thread other than
    the main one (runpy run in a worker thread) Python refuses that: the import raised
    ValueError ('signal only works in main thread'), where before it loaded, and
    main() ran the command, no handler set. It loads so again, Python's handler kept."""
    code = (
        "import signal, threading\n"
        "got = []\n"
        "def load():\n"
        "    try:\n"
        "        import recuse._program\n"
        "        got.append('loaded')\n"
        "    except Exception as exc:\n"
        "        got.append(repr(exc))\n"
        "t = threading.Thread(target=load); t.start(); t.join()\n"
        "print(got, signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n"
    )
    done = _python(code, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "['loaded'] True\n", "")


def test_importing_the_entry_point_without_running_it_keeps_ctrl_c() -> None:
    """The entry point holds Ctrl-C (counting it, nothing more) from its first line
    until main() takes it over; a process that imported it and never ran main()
    (``pytest --doctest-modules src``) had every later Ctrl-C swallowed. Once it has
    loaded, Python's handler is back: a Ctrl-C is KeyboardInterrupt again."""
    code = (
        "import os, signal, time\n"
        "import recuse._program\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    time.sleep(2)\n"
        "    print('swallowed')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n"
    )
    done = _python(code, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "interrupted\n", "")


def test_a_ctrl_c_as_the_command_line_reads_its_words_is_said_of_that_command() -> None:
    """A Ctrl-C after the commands loaded, while click's form of every command was built
    to read the words given (recuse.cli.help_when_bare, ~50 ms: a real SIGINT 0.15 s
    into `recuse audit llmbar-mtbench` lands there once the front door is lazy), reached
    the entry point's last handler, which says a judge's words: an audit, which keeps
    nothing and had not begun, said 'finished work is kept — run the same command again
    to go on where it stopped'. Now it is said as a Ctrl-C before any command is."""
    code = (
        "import runpy, typer.main\n"
        "def stop(*args, **kwargs):\n"
        "    raise KeyboardInterrupt\n"
        "typer.main.get_command = stop\n"
        "runpy.run_module('recuse', run_name='__main__')\n"
    )
    done = _python(code, "audit", "llmbar-mtbench", "--out", "never-written")
    assert (done.returncode, done.stderr, done.stdout) == (130, WORDS, "")


@pytest.mark.parametrize("name", ["recuse", "recuse.data", "recuse.judging", "recuse.report"])
def test_a_package_whose_names_load_on_first_use_lists_them(name: str) -> None:
    """recuse.data and recuse.judging load their names on first use (the command line's
    front door), as recuse does: ``dir()`` of each, which a REPL's and an editor's
    completion read, listed none of them (``'load' in dir(recuse.data)`` was False,
    True before the front door was made lazy). Run in a fresh interpreter, so that no
    other test has loaded them."""
    code = (
        "import importlib, sys\n"
        "m = importlib.import_module(sys.argv[1])\n"
        "print(sorted(set(m.__all__) - set(dir(m))))\n"
    )
    done = _python(code, name)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "[]", "")


def test_a_ctrl_c_as_an_error_is_said_is_said_of_the_command() -> None:
    """A Ctrl-C landing as the command line says a command's error (``recuse: error:
    ...``) reaches the entry point's last handler, which said a judge's words whatever
    the command: an audit of a missing file, stopped there, said 'finished work is kept
    — run the same command again to go on where it stopped'. It says the words of the
    command named, as recuse.cli.main does (an audit starts over; a judge goes on)."""
    code = (
        "import runpy, recuse.cli\n"
        "def stop(*args, **kwargs):\n"
        "    raise KeyboardInterrupt\n"
        "recuse.cli.one_line = stop\n"
        "runpy.run_module('recuse', run_name='__main__')\n"
    )
    done = _python(code, "audit", "no-such-file.csv", "--out", "never-written")
    assert (done.returncode, done.stderr, done.stdout) == (130, WORDS, "")
    judged = _python(code, "judge", "--data", "no-such-file.csv", "--out", "never.db")
    assert judged.returncode == 130
    assert judged.stderr.endswith("go on where it stopped\n"), judged.stderr
