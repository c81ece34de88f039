"""The rate of a judging run: one clock and one division, for every place that says it.

A run's rate is the tasks it finished (answered or failed: each one the backend was
asked and the run counted, as the progress bar counts them) over the run's wall time
from its first call to its last outcome (:class:`RunClock`): the time spent reading
the store, counting tokens or loading a model before the first call is not in it,
nor the commit after the last outcome. The progress bar's final figure, the summary
line (:meth:`recuse.judging.runner.RunSummary.line`) and the evaluator card
(:mod:`recuse.judging.card`, over the seconds each run recorded) all divide by this
clock. The card counts answered judgments only (ok or unparsed: its cost per
judgment leaves out failed ones, which report no usage), and its label says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

__all__ = ["RunClock", "per_second"]


@dataclass
class RunClock:
    """The wall time of a run, from its first call to its last outcome.

    :meth:`call` is marked as each call (a batch to the backend, or the tasks to an
    executor) goes out and :meth:`outcome` as each call's outcomes are counted; only
    the first of the one and the last of the other are kept. With an executor (Ray)
    the runner does not see its workers' calls: the clock starts as the tasks are
    handed over, so the workers' start (a model loading on each) is inside it."""

    first: float | None = None
    last: float | None = None

    def call(self) -> None:
        if self.first is None:
            self.first = time.perf_counter()

    def outcome(self, now: float | None = None) -> None:
        self.last = time.perf_counter() if now is None else now

    @property
    def seconds(self) -> float:
        """First call to last outcome; 0.0 where no call went out or none came back."""
        if self.first is None or self.last is None:
            return 0.0
        return max(0.0, self.last - self.first)


def per_second(n: int, seconds: float) -> float | None:
    """``n`` over ``seconds``: the one rate division (None where no time passed)."""
    return n / seconds if seconds > 0 else None
