"""Time several candidates in turns, so a busy machine slows them alike.

On a shared machine another process's burst lands on whichever run is timed at that
moment. Timing all repeats of one candidate and then all of the other (A A A B B B) lets
one burst fall on one side only and swing a ratio across its target; taking turns
(A B A B A B) spreads the bursts over both, and the best (least) time of each, after a
warm-up turn that is not kept (first-call imports, caches, the allocator), is the
least disturbed run of each:

    best_k = min over rounds r of t[r][k]      (r = 1 … repeat, after one warm-up round)

``clock`` is the timer: ``time.process_time`` (this process's CPU seconds, user +
system, every thread) where the timed work runs on this process's threads, so the time
another process holds the CPU is not counted; ``time.perf_counter`` (wall seconds) where
the work waits on something else (a server, another process, a device).

CPU seconds sum every thread of this process, so they are the work's own cost only
when the work runs on one thread: a BLAS or Arrow pool of two threads adds its second
thread's time (and its spin-waits) to whichever candidate calls it, and a benchmark run
without ``OMP_NUM_THREADS=1`` (``make bench``) read 28-50% of the CPU seconds of
bootstrap_pairs' timed parts, and of many_models' one-step Jacobians, on threads other
than the main one (2026-12-01). :func:`one_thread` pins them; a benchmark timed in CPU
seconds calls it before it times anything. A library already loaded (NumPy's BLAS reads
``OMP_NUM_THREADS`` when NumPy is imported, so setting it later does nothing) is pinned
through threadpoolctl, and the pools' variables are set for a library loaded later.
"""

from __future__ import annotations

import gc
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from threadpoolctl import threadpool_limits

#: the variables BLAS and OpenMP pools read when their library loads
POOL_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def one_thread() -> None:
    """Pin every thread pool this process has loaded to one thread: BLAS and OpenMP
    (threadpoolctl, for the rest of the process) and Arrow's CPU pool (when pyarrow is
    loaded), so CPU seconds are the work of the one thread that runs it; and set the
    pools' variables to 1 for a library loaded later."""
    for name in POOL_VARIABLES:
        os.environ[name] = "1"
    threadpool_limits(limits=1)
    if "pyarrow" in sys.modules:
        sys.modules["pyarrow"].set_cpu_count(1)


def in_turns(
    candidates: Sequence[Callable[[], Any]],
    *,
    repeat: int,
    clock: Callable[[], float] = time.process_time,
    warm_up: bool = True,
) -> tuple[list[float], list[Any]]:
    """The best time of each candidate over ``repeat`` rounds taken in turns (one call of
    each a round, in the given order), and each candidate's result from its last call.

    With ``warm_up`` one round runs first and is not timed. The garbage collector runs
    before each timed call, so one candidate's garbage is not collected on another's time.
    Thread pools are pinned to one thread (:func:`one_thread`) before the first call and
    again before the timed rounds (a library the warm-up loaded).
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    one_thread()
    results: list[Any] = [None] * len(candidates)
    if warm_up:
        results = [fn() for fn in candidates]
        one_thread()
    best = [float("inf")] * len(candidates)
    for _ in range(repeat):
        for k, fn in enumerate(candidates):
            gc.collect()
            t = clock()
            results[k] = fn()
            best[k] = min(best[k], clock() - t)
    return best, results
