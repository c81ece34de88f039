"""The CPU time each thread of this process spent over a stretch of a benchmark: where
the host's time goes while a device runs (Linux only; elsewhere nothing is shown).

Python threads are read from their own CPU clocks (``time.pthread_getcpuclockid``, to
the nanosecond) and named as ``threading`` names them; the others (a tokenizer's Rust
pool, CUDA's and torch's own) from ``/proc/self/task`` (clock ticks, 10 ms), summed by
their kernel name. A Python thread's CPU time is at most the time it held the GIL plus
what it ran with the GIL released (a tokenizer's Rust call, SQLite, a device wait that
spins): their sum near the wall time says the host, not the device, sets the pace.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from pathlib import Path

TASKS = Path("/proc/self/task")


def _python_threads() -> dict[int, tuple[str, float]]:
    """Native id -> (name, CPU seconds) of every live Python thread."""
    out = {}
    for t in threading.enumerate():
        if t.ident is None or t.native_id is None:
            continue
        try:
            clock = time.pthread_getcpuclockid(t.ident)
            out[t.native_id] = (t.name, time.clock_gettime(clock))
        except (OSError, AttributeError, ProcessLookupError):
            continue
    return out


def _tasks() -> dict[int, tuple[str, float]]:
    """Native id -> (kernel name, CPU seconds) of every thread of this process."""
    if not TASKS.is_dir():
        return {}
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for task in TASKS.iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        out[int(task.name)] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return out


class ThreadTimes:
    """CPU seconds per thread between :meth:`start` and :meth:`stop` (a thread started
    meanwhile counts from zero; one that ended before :meth:`stop` is not seen)."""

    def __init__(self) -> None:
        self._py: dict[int, tuple[str, float]] = {}
        self._all: dict[int, tuple[str, float]] = {}
        self._t0 = self._cpu0 = self.wall = self.process = 0.0
        self.python: defaultdict[str, float] = defaultdict(float)  # by Python thread name
        self.others: defaultdict[str, float] = defaultdict(float)  # the rest, by kernel name

    def start(self) -> None:
        self._py, self._all = _python_threads(), _tasks()
        self._t0, self._cpu0 = time.perf_counter(), time.process_time()

    def stop(self) -> None:
        self.wall = time.perf_counter() - self._t0
        self.process = time.process_time() - self._cpu0
        py, every = _python_threads(), _tasks()
        self.python, self.others = defaultdict(float), defaultdict(float)
        for tid, (name, cpu) in py.items():  # two threads of one name are summed
            self.python[name] += cpu - self._py.get(tid, (name, 0.0))[1]
        for tid, (name, cpu) in every.items():
            if tid not in py:
                self.others[name] += cpu - self._all.get(tid, (name, 0.0))[1]

    def line(self) -> str:
        """The process's CPU over the wall time, then each Python thread's CPU."""
        busy = sorted(((s, n) for n, s in self.python.items() if s >= 0.0005), reverse=True)
        rest = sorted(((s, n) for n, s in self.others.items() if s >= 0.01), reverse=True)
        py = ", ".join(f"{n} {s:.3f}" for s, n in busy)
        native = ", ".join(f"{n} {s:.2f}" for s, n in rest[:4])
        gone = self.process - sum(self.python.values()) - sum(self.others.values())
        return (
            f"host CPU {self.process:.3f} s in {self.wall:.3f} s; Python threads "
            f"{sum(self.python.values()):.3f} s ({py}); others: {native or 'none'}; "
            f"threads ended meanwhile about {max(gone, 0.0):.2f} s"
        )
