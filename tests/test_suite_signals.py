"""The suite's Ctrl-C tests hold wherever it is started: with SIGINT ignored (a
background job of a non-interactive shell) about 30 of them failed, as the ignore passed
to the suite and to every program its tests start."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).resolve().parent / "conftest.py"
# loads the suite's conftest as pytest does, then says whether a Ctrl-C raises
# KeyboardInterrupt here and in a program started from here
_PROBE = f"""
import runpy, signal, subprocess, sys
print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
runpy.run_path({str(CONFTEST)!r})
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)
child = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True).stdout)
"""


def test_a_suite_started_with_sigint_ignored_still_takes_ctrl_c() -> None:
    run = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120,
        check=False, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )  # fmt: skip
    assert (run.returncode, run.stdout.split()) == (0, ["True", "True", "True"]), run.stderr
