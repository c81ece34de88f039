"""Work-sharing leases: which run is judging which judgments of a store right now.

Several processes may judge into one store at once (other judges, one judge's items
split between runs). Two runs of one judge over the same items would each send every
judgment still missing, paying twice, so a run reads the store, leases the judgments it
lacks (:meth:`recuse.judging.store.Store.take_leases`, one transaction), reads those
again (another run may have stored some in between) and judges only what is still
missing; judgments leased by another run that is alive are left to it, and the run's
summary says so. A run drops its leases when it ends, however it ends; a run with
nothing to do leases (and writes) nothing. Perplexities and rewrites, stored by
content key alone, are leased the same way, as (model id, kind, content key, "").

A lease is held by a run (:class:`Holder`): a random id, its process id and host, when
it started and its heartbeat, the time of a recent commit to the store (a commit
refreshes it where it is :data:`HEARTBEAT_SECONDS` old; nothing else is written for
it). A holder is alive where

* it is a run of this process that has not ended;
* it is another process on this host (the same host name) that still exists
  (``os.kill(pid, 0)``; a process of another user counts) and, where the system says
  when a process started (Linux), started when the holder's did: a process id reused by
  another program after a crash frees the leases;
* it runs on another host and its heartbeat is under :data:`LEASE_STALE_SECONDS` old.

Any other holder is dead (killed, crashed, its machine gone): its leases are taken over
by the next run, so a killed run never keeps its judgments from being judged.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from recuse.numbers import count

__all__ = [
    "HEARTBEAT_SECONDS",
    "LEASE_STALE_SECONDS",
    "Holder",
    "LeaseId",
    "Leased",
    "left_line",
    "left_to",
]

#: seconds after its heartbeat that a run on another host is taken for dead. A run
#: commits its judgments at least every 0.1 s while they arrive (the heartbeat every
#: :data:`HEARTBEAT_SECONDS`), so only a run whose
#: backend answers nothing for this long (a hung server, long retries) is taken over
#: while alive: its judgments are then judged twice, none lost. The hosts' clocks must
#: agree to well within it.
LEASE_STALE_SECONDS = 600.0

#: a run's commit refreshes its heartbeat where it is this many seconds old (so the
#: heartbeat adds a page to the store's log twice a minute at most, not every commit)
HEARTBEAT_SECONDS = 30.0

#: one leased task: (judge, kind, item id, slot), a judgment's identity in the store;
#: (model id, "perplexity" or "rewrite", content key, "") for a perplexity or a rewrite
LeaseId = tuple[str, str, str, str]

#: the runs of this process that hold leases now (their leases are alive)
_ACTIVE: set[str] = set()


def process_start(pid: int) -> str | None:
    """When process ``pid`` started, as the system counts it (Linux: clock ticks
    since boot, field 22 of ``/proc/PID/stat``); None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # the name, in parentheses, may hold spaces
    return fields[19] if len(fields) > 19 else None


def _exists(pid: int) -> bool:
    """Does process ``pid`` exist on this host (one of another user's too)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


@dataclass(frozen=True)
class Holder:
    """A run holding leases: ``run`` a random id, ``pid`` and ``host`` its process,
    ``started`` and ``heartbeat`` (a recent commit) in seconds since the epoch,
    ``process_start`` when its process started (:func:`process_start`)."""

    run: str
    pid: int
    host: str
    started: float
    heartbeat: float
    process_start: str | None = None

    @classmethod
    def here(cls) -> Holder:
        """A new run of this process, now."""
        now, pid = time.time(), os.getpid()
        return cls(uuid.uuid4().hex[:16], pid, socket.gethostname(), now, now, process_start(pid))

    def alive(self, now: float) -> bool:
        """Is this run still going (see the module's words)? ``now``: seconds since
        the epoch, for the heartbeat of a run on another host."""
        if self.host != socket.gethostname() or os.name == "nt":
            # on Windows os.kill(pid, 0) would end the process: the heartbeat says
            return now - self.heartbeat < LEASE_STALE_SECONDS
        if self.pid == os.getpid():
            return self.run in _ACTIVE
        if not _exists(self.pid):
            return False
        started = process_start(self.pid)
        return started is None or self.process_start is None or started == self.process_start

    def words(self) -> str:
        """``pid 4242 on gpu1, started 2026-11-28 14:03:05`` (local time)."""
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started))
        return f"pid {self.pid} on {self.host}, started {when}"


@dataclass(frozen=True)
class Leased:
    """What :meth:`~recuse.judging.store.Store.take_leases` gave a run: ``mine`` (the
    run) holds every lease it asked for but ``elsewhere``, held by the live runs
    ``holders``."""

    mine: Holder
    elsewhere: frozenset[LeaseId]
    holders: tuple[Holder, ...]


def begin(run: Holder) -> None:
    """Mark ``run`` as a live run of this process (until :func:`end`)."""
    _ACTIVE.add(run.run)


def end(run: Holder) -> None:
    """``run`` has ended: its leases, if still stored, are a dead run's."""
    _ACTIVE.discard(run.run)


def left_to(holders: Sequence[str]) -> str:
    """``left to a run in progress (…)``: the runs ``holders`` (:meth:`Holder.words`)
    that hold what this run left to them."""
    runs = "a run" if len(holders) == 1 else "runs"
    return f"left to {runs} in progress ({'; '.join(holders)})"


def left_line(left: int, what: str, holders: Sequence[str]) -> str:
    """The words a summary adds where ``left`` of its ``what`` (judgments) were leased
    by the runs ``holders`` (:meth:`Holder.words`)."""
    return (
        f"{count(left)} {what} {left_to(holders)}; rerun after it ends to pick up any it "
        "did not finish"
    )
