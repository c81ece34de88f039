"""A judge run in a real Jupyter kernel (ipykernel, driven by jupyter_client as a
notebook drives it): a cell judges as a plain run does, and "interrupt the kernel"
stops it as Ctrl-C stops ``recuse judge`` (:func:`recuse.interrupt.run`'s worker).
tests/judging/test_runner.py and tests/test_interrupt.py stand in for the kernel with
``_thread.interrupt_main``; these check what the kernel itself does. One kernel serves
the file; each cell's wait is bounded."""

from __future__ import annotations

import importlib.util
import os
import queue
import re
import sqlite3
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from judging.helpers import FakeBackend, fake_pairs

from recuse.judging import Runner, Store

pytest.importorskip("ipykernel", reason="a real kernel needs ipykernel (the dev extra)")
pytest.importorskip("jupyter_client", reason="a real kernel is driven by jupyter_client")

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"
PAIRS = 6  # 12 judgments, one a call, one call at a time
SLEEP = 0.15  # seconds a call: the run lasts about 1.8 s, an interrupt lands mid-way
COLUMNS = ["key", "item_id", "slot", "status", "value", "mass", "p_tie", "reason"]

# the kernel's imports (what a notebook's first cell does) and its slow judge
_SETUP = f"""
import sys, threading
sys.path.insert(0, {str(TESTS)!r})
import pandas as pd
from judging.helpers import FakeBackend, fake_pairs
from recuse.judging import Runner, Store

def slow_judge():
    judge = FakeBackend(sleep={SLEEP}, batch_size=1)
    judge.concurrency = 1
    return judge

pairs = pd.DataFrame(fake_pairs({PAIRS}))
"""

# docs/python-api.md's example as a cell (its judge and pairs made above), progress bar
# included: plain code, and with a top-level await before it (IPython then runs the
# cell as a coroutine)
_JUDGE = """
judge = slow_judge()
with Store({path!r}) as store:
    summary = Runner(judge, store).pairwise(pairs)
    print(summary.line())
    judged = store.export_pairs()
print("calls", judge.calls, "cached", summary.cached, "ok", summary.ok)
"""
_AWAIT = "import asyncio\nawait asyncio.sleep(0)\n"


@dataclass
class Cell:
    """What a cell sent back: its printed text, what it displayed (as text), and its
    error's name where it raised."""

    text: str = ""
    shown: list[str] = field(default_factory=list)
    error: str | None = None

    def counts(self) -> tuple[int, int, int]:
        """The judge's calls, the judgments already stored and those made, from the
        cell's last line ("calls 12 cached 0 ok 12")."""
        words = self.text.splitlines()[-1].split()
        assert words[::2] == ["calls", "cached", "ok"], self.text
        calls, cached, ok = map(int, words[1::2])
        return calls, cached, ok


class Kernel:
    """One ipykernel process, started as Jupyter starts it, and its client."""

    def __init__(self, folder: Path) -> None:
        from jupyter_client import KernelManager
        from jupyter_client.kernelspec import KernelSpec

        env = {
            **os.environ,
            "PYTHONPATH": str(SRC),
            "IPYTHONDIR": str(folder / "ipython"),  # not the user's profile and history
            "JUPYTER_RUNTIME_DIR": str(folder / "runtime"),
        }
        self.manager = KernelManager(transport="ipc", connection_file=str(folder / "kernel.json"))
        self.manager._kernel_spec = KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name="recuse tests",
            language="python",
        )
        self.manager.start_kernel(env=env, cwd=str(folder))
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def send(self, code: str) -> str:
        return str(self.client.execute(code))

    def wait(self, msg_id: str, timeout: float = 20) -> Cell:
        """The cell's output once the kernel is idle again after it, within ``timeout``."""
        cell = Cell()
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the cell did not end in {timeout} s; it printed {cell.text!r}")
            try:
                msg: dict[str, Any] = self.client.get_iopub_msg(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream" and content["name"] == "stdout":
                cell.text += content["text"]
            elif kind == "display_data":
                cell.shown.append(content["data"].get("text/plain", ""))
            elif kind == "error":
                cell.error = content["ename"]
            elif kind == "status" and content["execution_state"] == "idle":
                return cell

    def run(self, code: str, timeout: float = 20) -> Cell:
        return self.wait(self.send(code), timeout)

    def close(self) -> None:
        try:
            self.client.stop_channels()
        finally:
            self.manager.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    started = Kernel(tmp_path_factory.mktemp("kernel"))
    try:
        setup = started.run(_SETUP, timeout=60)
        assert setup.error is None, setup
        yield started
    finally:
        started.close()


def _plain(text: str) -> str:
    """``text`` without its terminal colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def _table(path: Path) -> pd.DataFrame:
    with Store(path) as store:
        table = store.judgments()[COLUMNS]
    return table.sort_values(["item_id", "slot"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """What a plain run (this process, no event loop) stores for the same pairs."""
    path = tmp_path_factory.mktemp("plain") / "plain.sqlite"
    with Store(path) as store:
        Runner(FakeBackend(batch_size=1), store, progress=False).pairwise(
            pd.DataFrame(fake_pairs(PAIRS))
        )
    return _table(path)


def _stored(path: Path) -> int:
    """How many judgments the store holds, read as another process reads it (read-only,
    while the kernel writes); 0 before the store exists."""
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])
    except sqlite3.OperationalError:  # its tables not made yet
        return 0


def _threads(kernel: Kernel) -> list[str]:
    cell = kernel.run("print(*sorted(t.name for t in threading.enumerate()), sep='\\n')")
    assert cell.error is None, cell
    return cell.text.splitlines()


@pytest.mark.parametrize("cell", ["plain", "await"])
def test_a_cell_judges_what_a_plain_run_judges(
    kernel: Kernel, plain: pd.DataFrame, tmp_path: Path, cell: str
) -> None:
    """docs/python-api.md's example as a notebook cell, and in a cell with a top-level
    await: the kernel runs the cell in its event loop (asyncio.run refused to start
    there), the run's loop runs in a worker thread, and the judgments stored are a
    plain run's, key for key and value for value; no worker thread is left. The bar is
    drawn by rich in an ipywidgets widget, and its last drawing is the run's end (rich
    draws no final state in a notebook: it stayed at its last refresh, 11/12); without
    ipywidgets rich says to install it (as the docs say)."""
    path = tmp_path / "cell.sqlite"
    done = kernel.run((_AWAIT if cell == "await" else "") + _JUDGE.format(path=str(path)))
    assert done.error is None, done
    if importlib.util.find_spec("ipywidgets") is None:
        assert any('install "ipywidgets" for Jupyter support' in s for s in done.shown), done
    else:
        bars = [s for s in done.shown if "judging with fake-judge" in s]
        assert bars and " 12/12 " in _plain(bars[-1]), done.shown[-3:]
    assert done.counts() == (12, 0, 12)
    pd.testing.assert_frame_equal(_table(path), plain)
    assert "recuse-run" not in _threads(kernel)


@pytest.mark.parametrize("cell", ["plain", "await"])
def test_interrupting_the_kernel_keeps_what_finished_and_a_rerun_judges_the_rest(
    kernel: Kernel, plain: pd.DataFrame, tmp_path: Path, cell: str
) -> None:
    """Interrupting the kernel (the SIGINT jupyter_client sends it) while the run is
    mid-way: the cell ends with KeyboardInterrupt, the judgments finished before it
    are stored (a plain run's values), no "recuse-run" thread is left, the kernel
    takes the next cell, and running the cell again calls the judge for the rest only
    and stores what a plain run stores. In a cell with a top-level await, ipykernel's
    SIGINT handler only asks its event loop to cancel the cell, and that loop waited
    for the run: the interrupt did nothing until every judgment was made."""
    path = tmp_path / "cell.sqlite"
    code = (_AWAIT if cell == "await" else "") + _JUDGE.format(path=str(path))
    msg_id = kernel.send(code)
    end = time.monotonic() + 20
    while _stored(path) < 3:
        assert time.monotonic() < end, "the cell stored no 3 judgments in 20 s"
        time.sleep(0.02)
    kernel.manager.interrupt_kernel()
    stopped = kernel.wait(msg_id)
    assert stopped.error == "KeyboardInterrupt", stopped
    kept = _table(path)
    assert 3 <= len(kept) < 12 and set(kept["status"]) == {"ok"}
    expected = plain[plain["key"].isin(kept["key"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, expected)
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        assert db.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0
    assert "recuse-run" not in _threads(kernel)
    assert kernel.manager.is_alive()

    again = kernel.run(code)
    assert again.error is None, again
    rest = 12 - len(kept)
    assert again.counts() == (rest, len(kept), rest)
    pd.testing.assert_frame_equal(_table(path), plain)
    assert "recuse-run" not in _threads(kernel)
