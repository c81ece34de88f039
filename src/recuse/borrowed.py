"""Process-wide settings a library call changes for a while, put back after.

Some settings recuse needs changed while it works are the process's own, not the
call's (a library's progress-bar switch, a logger's level): a call that changed them
and left them so changed the caller's process for good. :class:`Borrowed` changes them
for a block and puts them back as the block found them; blocks open in several
threads at once (two audits or judge runs in threads, a notebook's workers) change
them once, as the first block in found them, and put them back once the last block
ends: each block saving and restoring on its own, the first out put them back under
the second's feet, and the second out left the first's changes in place for good.
A setting the caller changes while a block is open is the caller's: the last block's
end leaves it as they set it.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

__all__ = ["Borrowed"]

_T = TypeVar("_T")


class Borrowed(Generic[_T]):
    """Settings that ``save()`` reads, ``change(saved)`` changes and ``put_back(saved)``
    restores; :meth:`held` is a block (it may be open in several threads at once)
    within which they are changed."""

    def __init__(
        self,
        save: Callable[[], _T],
        change: Callable[[_T], None],
        put_back: Callable[[_T], None],
        *,
        as_made: Callable[[_T, _T], bool] = operator.eq,
    ) -> None:
        self._save, self._change, self._put_back = save, change, put_back
        #: ``as_made(now, made)``: the settings ``save()`` reads now are still as the
        #: change made them (else the caller changed them, and they are kept)
        self._as_made = as_made
        self._lock = threading.Lock()
        self._open: set[object] = set()  # the blocks open now, each by its token
        #: the settings the first block found, from before they are changed until they
        #: are put back (so a Ctrl-C between any two steps leaves them to be put back)
        self._found: list[_T] = []
        #: the settings as the change made them (read back by ``save()``), while changed
        self._made: list[_T] = []

    @contextmanager
    def held(self) -> Iterator[None]:
        """Within the block the settings are changed; after the last block open in the
        process, they are as the first found them. Every step is within the block's
        ``finally``: a KeyboardInterrupt (Ctrl-C) landing after the change but before
        the block was counted open left the settings changed with no block to put them
        back, and the next block took them for the ones it found (changed for good).

        Settings the caller changes themselves while a block is open (another
        thread's ``csv.field_size_limit(...)`` during an audit) are theirs: found
        otherwise than the change made them, they are left as the caller set them
        (put back, the caller's own limit was undone and their next read failed).

        A Ctrl-C as the last block puts them back leaves the settings it found to be
        put back by the next block's end, and the next block changes them again (it
        ran unchanged: BLAS on all its threads within the next audit's block)."""
        block = object()
        try:
            with self._lock:
                if not self._open and not self._found:
                    self._found.append(self._save())
                if not self._open and not self._made:  # a put back cut short: again
                    try:
                        self._change(self._found[0])
                        self._made.append(self._save())
                    except BaseException:
                        self._made.clear()
                        self._put_back(self._found.pop())
                        raise
                self._open.add(block)
            yield
        finally:
            with self._lock:
                self._open.discard(block)
                if not self._open and self._found:
                    self._end()

    def _end(self) -> None:
        """The last block's end: the settings put back as the first block found them,
        unless the caller changed them since (then the caller's are kept)."""
        made = self._made[:1]
        self._made.clear()
        found = self._found[0]
        if not made or self._as_made(self._save(), made[0]):
            self._put_back(found)
        self._found.clear()
