"""The CLI's console: tables that stay readable on a narrow terminal."""

from __future__ import annotations

import io
import os
import sys

import pytest
from rich.console import Console

from recuse.cli.console import TerminalTable

NAMES = ("mt-bench-human", "llmbar-mtbench", "alpaca-eval")


def _table() -> TerminalTable:
    t = TerminalTable(title="Datasets")
    for col in ("name", "table", "folders", "what"):
        t.add_column(col, overflow="fold")
    for name in NAMES:
        t.add_row(
            name, "pairs", f"{name.replace('-', '_')}, mt_bench", "[green]yes[/] " + "word " * 20
        )
    return t


def _shown(table: TerminalTable, width: int, *, terminal: bool = True) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, force_terminal=terminal, color_system=None).print(table)
    return buf.getvalue()


def test_a_narrow_terminal_gets_one_block_per_row_with_every_name_whole() -> None:
    out = _shown(_table(), 40)
    lines = out.splitlines()
    assert "┃" not in out and "│" not in out  # no table drawn
    assert lines[0] == "Datasets"
    assert all(len(line) <= 40 for line in lines)
    for name in NAMES:  # the first column heads its block, whole, on a line of its own
        assert name in lines
        block = lines[lines.index(name) + 1 :]
        assert block[0] == "  table: pairs"
        assert block[1] == f"  folders: {name.replace('-', '_')}, mt_bench"
        assert block[2].startswith("  what: yes word")  # markup read as the table reads it
        assert block[3].startswith("  word")  # a long value wraps under its own indent


def test_a_wide_terminal_and_a_pipe_get_the_table() -> None:
    assert "┃ name" in _shown(_table(), 200)
    # at 40 columns too where the output is not a terminal: the CLI's console for a pipe
    # is never wrapped (console.UNWRAPPED), so the table is drawn at its full width
    from recuse.cli.console import console

    pipe = console()
    assert pipe.width > 40
    with pipe.capture() as cap:
        pipe.print(_table())
    assert "┃ name" in cap.get()


def test_a_table_without_headers_shows_its_values_alone() -> None:
    t = TerminalTable(title="row 0", show_header=False)
    t.add_column("column")
    t.add_column("value")
    t.add_row("a_rather_long_column_name", "a value of several words " * 3)
    t.add_row("judge", "gpt-4")
    lines = _shown(t, 30).splitlines()
    assert lines[:2] == ["row 0", "a_rather_long_column_name"]
    assert lines[2].startswith("  a value of")
    assert "judge" in lines and "  gpt-4" in lines


def test_a_narrow_terminal_keeps_the_caption() -> None:
    # `recuse favoritism` says under its tables what the estimate is and what the "*" of
    # sig. means: in the one-block-per-row form that caption was left out
    t = _table()
    t.caption = "sig. * = the 95% interval excludes 0"
    lines = _shown(t, 40).splitlines()
    assert "┃" not in "".join(lines) and lines[-1] == "sig. * = the 95% interval excludes 0"
    assert lines[0] == "Datasets"


def test_standard_output_waits_on_a_full_non_blocking_pipe() -> None:
    """A parent that sets its pipe non-blocking (Node's child processes do): a full pipe
    made a write fail with BlockingIOError (a traceback, the rest of the output lost).
    The guarded stdout waits until the reader takes more, and every byte arrives."""
    import fcntl
    import select
    import threading
    import time

    from recuse.cli.stdout import GuardedStdout

    read, write = os.pipe()
    fcntl.fcntl(write, fcntl.F_SETFL, fcntl.fcntl(write, fcntl.F_GETFL) | os.O_NONBLOCK)
    text = "x" * 300_000  # more than any pipe holds at once (64 KiB on Linux)
    stream = open(write, "w", encoding="utf-8", closefd=True)
    failed: list[BaseException] = []

    def write_all() -> None:
        try:
            GuardedStdout(stream).write(text)
        except BaseException as exc:  # the assertion below names it
            failed.append(exc)
        finally:
            stream.close()

    writer = threading.Thread(target=write_all)
    writer.start()
    # read only once the pipe is full (not writable) or the writer has ended: the
    # writer then surely met a full pipe, whatever the machine's speed
    deadline = time.monotonic() + 60
    while writer.is_alive() and select.select([], [write], [], 0)[1]:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    got = b""
    with open(read, "rb") as reader:
        while chunk := reader.read(65536):
            got += chunk
    writer.join(timeout=60)
    assert failed == []
    assert got == text.encode()


class _KernelStdout(io.TextIOBase):
    """A Jupyter kernel's ``sys.stdout`` (ipykernel's OutStream): text written to it
    goes to the notebook cell; its ``fileno()`` is the kernel's own terminal."""

    def __init__(self, terminal: int) -> None:
        self.cell: list[str] = []
        self._terminal = terminal

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # as OutStream: text only
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.cell.append(text)
        return len(text)

    def fileno(self) -> int:
        return self._terminal


def test_main_in_a_notebook_cell_prints_into_the_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    """``recuse.cli.main([...])`` run in a notebook cell: the guard wrote to the stream's
    descriptor, and a kernel's stdout gives its own terminal there, so the tables went to
    the Jupyter server's log instead of the cell. Text reaches the stream's own write
    (the descriptor is written directly only for a text file), and sys.stdout is the
    kernel's again after the command."""
    from recuse.cli import main

    read, write = os.pipe()
    kernel = _KernelStdout(write)
    monkeypatch.setattr("sys.stdout", kernel)
    assert main(["analyses"]) == 0
    assert sys.stdout is kernel
    os.close(write)
    with open(read, "rb") as terminal:
        assert terminal.read() == b""
    assert "".join(kernel.cell).startswith("self-preference — Self-preference (pairs)\n")
