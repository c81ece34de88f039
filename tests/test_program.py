"""The ``recuse`` program's entry point (:mod:`recuse._program`): a Ctrl-C while the
command line loads is recuse's line and exit 130, as one during a command is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import recuse

SRC = str(Path(recuse.__file__).resolve().parents[1])
WORDS = (
    "recuse: interrupted; finished work is kept — run the same command again to go on "
    "where it stopped\n"
)

# a Ctrl-C landing while a module of the command line is imported (recuse.cli.app, the
# second or so of pandas, scipy and typer a run starts with), then the program run as
# `python -m recuse` runs it
_CTRL_C_WHILE_LOADING = """
import sys

class CtrlC:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, CtrlC())
import runpy
runpy.run_module("recuse", run_name="__main__")
"""


def _program_interrupted_at(module: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _CTRL_C_WHILE_LOADING.format(module=module), "--help"],
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_ctrl_c_while_the_command_line_loads_is_recuses_line_and_130() -> None:
    """A Ctrl-C in the first second or two of `recuse judge ...` (the command line
    loading: pandas, scipy, typer) printed Python's KeyboardInterrupt traceback through
    pandas' import machinery and ended the process by the signal; it landed before
    recuse.cli.main's handler existed. Now the entry point holds it: recuse's line, 130,
    wherever the load is (the command line's modules, or the commands' in _register)."""
    for module in ("recuse.cli.app", "recuse.cli.judge", "pandas"):
        done = _program_interrupted_at(module)
        assert (done.returncode, done.stderr, done.stdout) == (130, WORDS, ""), module


def test_importing_recuse_loads_nothing_heavy() -> None:
    """`import recuse` (which every entry point runs first, outside any handler) loads
    neither pandas nor the analyses: a Ctrl-C then could only land in recuse's entry
    point. recuse.Roster, PAIRS and the validators load on first use."""
    code = (
        "import sys, recuse; heavy = sorted(m for m in ('pandas', 'numpy', 'scipy') "
        "if m in sys.modules); print(heavy); "
        "from recuse import PAIRS, Roster, validate_pairs; print(Roster.__name__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.split() == ["[]", "Roster"], done.stdout
