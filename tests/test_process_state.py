"""recuse used as a library leaves the caller's process as it found it: audits run in
threads give each its numbers alone, and nothing process-wide (loggers, warnings
filters, NumPy's error handling and global generator, pandas options, signal
handlers, hooks, the environment, the current folder, the decimal context, the
garbage collector, matplotlib's settings) is left changed by an audit or its report."""

from __future__ import annotations

import decimal
import gc
import logging
import os
import random
import signal
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import recuse

WAIT = 120.0  # seconds: a bound on each thread, never reached when the code is right
#: real data: LLMBar's pairs judged by MT-Bench's judges, and Play Favorites' ratings
AUDITS: dict[str, dict[str, Any]] = {
    "llmbar-mtbench": {"only": ["position", "self-preference", "verbosity"], "n_boot": 200},
    "play-favorites": {"only": ["self-preference", "favoritism"], "n_boot": 100},
}


def _process() -> dict[str, object]:
    """What a library call must leave as it found it."""
    import matplotlib

    loggers = {
        name: (lg.level, tuple(lg.handlers), lg.propagate, lg.disabled)
        for name, lg in logging.Logger.manager.loggerDict.items()
        if isinstance(lg, logging.Logger) and (lg.level or lg.handlers or lg.disabled)
    }
    return {
        "loggers": loggers,
        "root": (logging.root.level, tuple(logging.root.handlers), logging.root.manager.disable),
        "warnings": (tuple(warnings.filters), warnings.showwarning),
        "numpy": (np.geterr(), np.get_printoptions(), repr(np.random.get_state())),
        "random": random.getstate(),
        "pandas": [pd.get_option(f"display.{o}") for o in ("max_rows", "precision", "width")],
        "signals": [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)],
        "hooks": (sys.excepthook, sys.unraisablehook, threading.excepthook, sys.displayhook),
        "environ": dict(os.environ),
        "cwd": os.getcwd(),
        "sys.path": list(sys.path),
        "decimal": str(decimal.getcontext()),
        "gc": (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()),
        "matplotlib": dict(matplotlib.rcParams),
    }


def _numbers(report: recuse.Report) -> pd.DataFrame:
    return report.findings.reset_index(drop=True)


def test_audits_in_threads_give_their_numbers_alone_and_leave_the_process_as_found(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECUSE_DATA_DIR", str(shared_data))
    recuse.audit("llmbar-mtbench", only=["position"], n_boot=100).write(tmp_path / "first")
    decimal.getcontext().clear_flags()
    before = _process()  # the modules an audit uses loaded (their imports change things)
    running = {t.ident for t in threading.enumerate()}
    reports = {name: recuse.audit(name, **kw) for name, kw in AUDITS.items()}
    alone = {name: _numbers(report) for name, report in reports.items()}
    reports["llmbar-mtbench"].write(tmp_path / "alone")
    got: dict[int, object] = {}

    def audit(k: int, name: str) -> None:
        try:
            report = recuse.audit(name, **AUDITS[name])
            report.write(tmp_path / f"report-{k}")  # figures drawn, tables and page written
            got[k] = _numbers(report)
        except BaseException as exc:  # said below
            got[k] = exc

    names = ["llmbar-mtbench", "play-favorites", "llmbar-mtbench"]
    threads = [threading.Thread(target=audit, args=(k, n)) for k, n in enumerate(names)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    for k, name in enumerate(names):
        assert isinstance(got[k], pd.DataFrame), got[k]
        pd.testing.assert_frame_equal(got[k], alone[name])  # every number, exactly
    after = _process()
    assert {k: v for k, v in after.items() if v != before[k]} == {}
    # no thread left running (one of an earlier test's may have ended meanwhile)
    assert {t.ident for t in threading.enumerate()} <= running
