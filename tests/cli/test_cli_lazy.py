"""The front door stays thin: `recuse --help`, `recuse <command> --help` and `recuse
gate` import none of the heavy modules the analyses compute with (docs/architecture.md
"The front door"). Not timed: each runs in a fresh interpreter, and the modules loaded
when it exits are read from ``sys.modules`` (benchmarks/cli_startup.py times it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import recuse

SRC = str(Path(recuse.__file__).resolve().parents[1])
#: what the commands compute with; importing any of them costs the front door 0.3-1.5 s
HEAVY = ("numpy", "pandas", "scipy", "statsmodels", "matplotlib")

# the program as `recuse ARGS` runs it, then the heavy modules loaded when it exits
_RUN_AND_LIST = """
import atexit, json, runpy, sys

def _loaded():
    heavy = sorted(m for m in {heavy!r} if m in sys.modules)
    sys.__stderr__.write("\\nLOADED " + json.dumps(heavy) + "\\n")

atexit.register(_loaded)
sys.argv = ["recuse", *sys.argv[1:]]
runpy.run_module("recuse", run_name="__main__")
"""


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -c CODE ARGS`` in a fresh interpreter, the package from this tree."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env={**os.environ, "PYTHONPATH": SRC, "RECUSE_ROSTER": ""},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _recuse(*args: str) -> tuple[int, str, list[str]]:
    """``recuse ARGS`` in a fresh interpreter: its exit code, its output, and the heavy
    modules it had imported when it exited."""
    done = _python(_RUN_AND_LIST.format(heavy=HEAVY), *args)
    marks = [ln for ln in done.stderr.splitlines() if ln.startswith("LOADED ")]
    assert len(marks) == 1, done.stderr
    return done.returncode, done.stdout + done.stderr, json.loads(marks[0].removeprefix("LOADED "))


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["gate", "--help"],
        ["audit", "--help"],
        ["validate", "--help"],
        ["metrics", "pairs", "--help"],
        ["favoritism", "--help"],
        ["plan", "--help"],
        ["judge", "--help"],
        ["probe", "--help"],
        ["certify", "--help"],
        ["data", "--help"],
    ],
    ids=lambda a: " ".join(a),
)
def test_help_imports_no_heavy_module(args: list[str]) -> None:
    code, out, loaded = _recuse(*args)
    assert code == 0 and "Usage: recuse" in out, out
    assert loaded == [], f"recuse {' '.join(args)} imported {loaded}"


def test_the_check_sees_a_heavy_import() -> None:
    """The check itself: a command that reads a table does import pandas."""
    code, out, loaded = _recuse("validate", "no-such-file.csv")
    assert code == 2, out
    assert "pandas" in loaded


def _report(tmp_path: Path) -> Path:
    finding = {"bias": "position", "judge": "j1", "dataset": "d", "estimate": 0.51,
               "ci_low": 0.49, "ci_high": 0.53, "null": 0.5, "level": 0.9, "n": 100}  # fmt: skip
    path = tmp_path / "report.json"
    report = {"schema_version": 1, "sections": [{"id": "position", "findings": [finding]}]}
    path.write_text(json.dumps(report), "utf-8")
    return path


@pytest.mark.parametrize("module", ["recuse.report.gate", "recuse.report.certified_gate"])
def test_the_gates_own_modules_import_no_heavy_module(module: str) -> None:
    """The gate's reading of a report (its z from the standard library's NormalDist, the
    interval rules of recuse.interval_rules, the recuse.report package loading its
    pandas-backed names on first use) imports none of the heavy modules: recuse.report's
    __init__ loaded the report model (pandas) and report/gate.py SciPy's norm."""
    code = (
        f"import importlib, sys; importlib.import_module({module!r}); "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = _python(code)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "[]", "")


def test_certify_imports_no_regression(tmp_path: Path) -> None:
    """``recuse certify`` imports recuse.mitigation.selective, and with it the package,
    whose debias module imported the favoritism regression at its top: statsmodels and
    formulaic (0.1-0.2 s of the command's start), which certifying never uses."""
    from recuse.simulate.pairs import simulate_pairs

    path = tmp_path / "pairs.csv"
    simulate_pairs(n_prompts=60, seed=1).pairs.to_csv(path, index=False)
    heavy = ("statsmodels", "formulaic", "recuse.regression")
    done = _python(_RUN_AND_LIST.format(heavy=heavy), "certify", str(path))
    marks = [ln for ln in done.stderr.splitlines() if ln.startswith("LOADED ")]
    assert done.returncode == 0 and "certif" in done.stdout, done.stdout + done.stderr
    assert marks == ["LOADED []"], done.stderr


@pytest.mark.parametrize("json_out", [[], ["--json"]], ids=["lines", "json"])
def test_gate_imports_no_heavy_module(tmp_path: Path, json_out: list[str]) -> None:
    """The gate reads each bias's scope from the analyses' light headings
    (recuse.biases), not from recuse.analyses.REGISTRY, whose analyses import their
    statistics (pandas, SciPy, statsmodels) with their words."""
    code, out, loaded = _recuse("gate", str(_report(tmp_path)), "--max", "position=0.05", *json_out)
    assert code == 0 and "PASS: position of j1" in out, out
    assert loaded == [], f"recuse gate imported {loaded}"


def test_gate_runs_on_the_small_report(tmp_path: Path) -> None:
    """The gate of the test above passes (so only its imports can fail it)."""
    code, out, _ = _recuse("gate", str(_report(tmp_path)), "--max", "position=0.05")
    assert code == 0 and "PASS: position of j1" in out, out


@pytest.mark.parametrize(
    "args", [["--help"], ["audit", "--help"], ["judge", "--help"], ["data", "list", "--help"]]
)
def test_help_reads_alike_under_python_dash_oo(args: list[str]) -> None:
    """``python -OO`` (PYTHONOPTIMIZE=2) drops the docstrings most commands take their
    help from: ``recuse --help`` listed audit, validate, plan... with no words and
    ``recuse audit --help`` said nothing of what it does. Each reads as without it."""

    def shown(*flags: str) -> str:
        done = subprocess.run(
            [sys.executable, *flags, "-m", "recuse", *args],
            env={**os.environ, "PYTHONPATH": SRC, "RECUSE_ROSTER": "", "COLUMNS": "200"},
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        return done.stdout

    plain = shown()
    assert plain.splitlines()[2].strip()  # the line that says what it does
    assert shown("-OO") == plain


_COUNT_BUILDS = """
import sys, typer.main
built = []
plain = typer.main.get_command
typer.main.get_command = lambda app: built.append(1) or plain(app)
from recuse.cli import main
codes = [main(sys.argv[1:]), main(sys.argv[1:])]
sys.__stderr__.write("\\nBUILT " + str(len(built)) + " " + str(codes) + "\\n")
"""


@pytest.mark.parametrize("args", [["--help"], ["audit", "--out", "o", "--help"], ["data"]])
def test_a_start_builds_the_commands_click_form_once(args: list[str]) -> None:
    """typer builds the click form of every command from their signatures (~50 ms); the
    empty-value check, the bare-group help and the run each built it again, a third of
    ``recuse --help``. Once a start, and not again for a second call in the process."""
    done = _python(_COUNT_BUILDS, *args)
    marks = [ln for ln in done.stderr.splitlines() if ln.startswith("BUILT ")]
    assert marks == ["BUILT 1 [0, 0]"], done.stderr[-2000:]


def test_the_click_form_asked_for_before_main_holds_every_command() -> None:
    """``click_command()`` asked for first in a process (a script that inspects the
    commands): it was built, and kept, before the commands were registered, and a later
    ``main(["validate", "--help"])`` on a terminal said "No such command"."""
    script = (
        "from recuse.cli import click_command, main\n"
        "print(sorted(click_command().commands)[-1], main(['validate', '--help']))\n"
    )
    done = _python(script)
    assert done.stdout.rstrip().endswith("validate 0"), done.stdout[-500:] + done.stderr[-2000:]
