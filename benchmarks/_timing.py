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
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from typing import Any


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
    """
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    results: list[Any] = [None] * len(candidates)
    if warm_up:
        results = [fn() for fn in candidates]
    best = [float("inf")] * len(candidates)
    for _ in range(repeat):
        for k, fn in enumerate(candidates):
            gc.collect()
            t = clock()
            results[k] = fn()
            best[k] = min(best[k], clock() - t)
    return best, results
