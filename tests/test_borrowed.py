"""recuse.borrowed.Borrowed: process-wide settings changed for a block, put back as the
first open block found them once the last ends, however threads' blocks interleave."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from recuse.borrowed import Borrowed

WAIT = 30.0  # seconds: a bound on each wait, never reached when the code is right


def _setting() -> tuple[dict[str, int], Borrowed[int]]:
    state = {"level": 10}

    def change(found: int) -> None:
        state["level"] = found + 30

    return state, Borrowed(lambda: state["level"], change, lambda v: state.update(level=v))


def test_blocks_in_two_threads_put_the_setting_back_once_the_last_ends() -> None:
    # the order that left a save-and-restore block's change in place for good: the
    # second in saved the first's change, and put it back as it left last
    state, borrowed = _setting()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[int] = []

    def first() -> None:
        with borrowed.held():
            first_in.set()
            second_in.wait(WAIT)
        first_out.set()

    def second() -> None:
        first_in.wait(WAIT)
        with borrowed.held():
            second_in.set()
            first_out.wait(WAIT)
            seen.append(state["level"])

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(2 * WAIT)
    assert seen == [40] and state["level"] == 10
    state["level"] = 20  # the caller's own later choice is the one the next block finds
    with borrowed.held():
        assert state["level"] == 50
    assert state["level"] == 20


def test_a_change_that_fails_leaves_the_setting_as_it_was() -> None:
    state = {"a": 1, "b": 2}

    def change(found: dict[str, int]) -> None:
        state["a"] = found["a"] + 8
        raise RuntimeError("half done")

    borrowed = Borrowed(lambda: dict(state), change, lambda v: state.update(v))
    with pytest.raises(RuntimeError, match="half done"), borrowed.held():
        pass
    assert state == {"a": 1, "b": 2}
    level, works = _setting()
    with pytest.raises(KeyError), works.held():  # the block's own error: put back too
        raise KeyError("x")
    assert level == {"level": 10}
    with works.held():  # no block counted open after either
        assert level == {"level": 40}
    assert level == {"level": 10}


def _lines_before_the_block() -> list[int]:
    """The source lines of :meth:`Borrowed.held` from its first to its ``yield``."""
    import inspect

    lines, first = inspect.getsourcelines(inspect_unwrapped_held())
    at_yield = next(i for i, text in enumerate(lines) if text.strip() == "yield")
    # a ``try:`` line runs nothing a signal could land on (an exception raised there by
    # a tracer bypasses the ``with`` around it, which no Ctrl-C can do)
    return [first + i for i in range(at_yield + 1) if lines[i].strip() != "try:"]


def _block_interrupted_at(borrowed: Borrowed[int], line: int) -> None:
    """A block of ``borrowed`` with a KeyboardInterrupt raised as :meth:`Borrowed.held`
    comes to ``line`` (the first time), as a Ctrl-C landing there raises it."""
    import sys
    from types import FrameType

    held_code = inspect_unwrapped_held().__code__
    fired: list[int] = []

    def local(frame: FrameType, event: str, _arg: Any) -> Any:
        if event == "line" and frame.f_lineno == line and not fired:
            fired.append(line)
            raise KeyboardInterrupt
        return local

    def tracer(frame: FrameType, _event: str, _arg: Any) -> Any:
        return local if frame.f_code is held_code else None

    sys.settrace(tracer)
    try:
        with borrowed.held():
            pass
    except KeyboardInterrupt:
        pass
    finally:
        sys.settrace(None)


def inspect_unwrapped_held() -> Any:
    import inspect

    return inspect.unwrap(Borrowed.held)


def test_ctrl_c_anywhere_before_the_block_leaves_nothing_changed() -> None:
    # a KeyboardInterrupt (Ctrl-C) may land between any two lines: one landing after
    # the change but before the block was counted open left the setting changed with
    # no block to put it back, and the next block saved the changed setting as the one
    # it found, so it stayed changed for good
    for line in _lines_before_the_block():
        state, borrowed = _setting()
        _block_interrupted_at(borrowed, line)
        assert state["level"] == 10, f"left changed by a Ctrl-C at line {line}"
        with borrowed.held():  # a later block changes it and puts it back
            assert state["level"] == 40, f"after a Ctrl-C at line {line}"
        assert state["level"] == 10, f"not put back after a Ctrl-C at line {line}"


def test_a_ctrl_c_as_the_setting_is_put_back_leaves_the_next_block_changed() -> None:
    # a Ctrl-C inside put_back (BLAS's threads are put back in steps) ended the last
    # block with the found setting kept to be put back; the next block, taking it for
    # one still changed, ran unchanged (BLAS on all its threads within an audit)
    state = {"level": 10}
    cut = [True]

    def put_back(found: int) -> None:
        try:
            if cut[0]:
                cut[0] = False
                raise KeyboardInterrupt
        finally:
            state["level"] = found  # the put back's own finally still puts it back

    borrowed = Borrowed(lambda: state["level"], lambda f: state.update(level=f + 30), put_back)
    with pytest.raises(KeyboardInterrupt), borrowed.held():
        assert state["level"] == 40
    assert state["level"] == 10
    with borrowed.held():
        assert state["level"] == 40
    assert state["level"] == 10


def test_a_setting_the_caller_changes_while_a_block_is_open_is_theirs_after() -> None:
    # another thread's own choice made during a block (a notebook cell setting csv's
    # field limit while an audit reads) was undone by the block's end
    state, borrowed = _setting()
    with borrowed.held():
        assert state["level"] == 40
        state["level"] = 25  # the caller's own choice, made while the block is open
    assert state["level"] == 25
    with borrowed.held():  # the next block finds the caller's choice and puts it back
        assert state["level"] == 55
    assert state["level"] == 25


def test_the_csv_field_limit_a_caller_sets_during_a_read_is_kept() -> None:
    import csv

    from recuse.data.delimited import wide_csv_fields

    found = csv.field_size_limit()
    try:
        with wide_csv_fields():
            csv.field_size_limit(found + 12345)  # another thread's own setting
        assert csv.field_size_limit() == found + 12345
        with wide_csv_fields():
            pass
        assert csv.field_size_limit() == found + 12345
    finally:
        csv.field_size_limit(found)
