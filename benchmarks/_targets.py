"""The targets a benchmark prints, checked: a missed one makes the run exit with status 1.

Each target is printed next to the value measured against it, with ``met`` or
``MISSED``; :meth:`Targets.finish` ends the run with status 1 (and the list of missed
targets) when any was missed, so ``make bench`` and anyone reading exit codes see it.

Targets are ratios measured in the same run (ours against a bare baseline timed a
moment before or after), which a noisy machine moves far less than absolute seconds;
an absolute time is used only where the issue names one.

``RECUSE_BENCH_TARGET_SCALE`` (default 1) makes every speed, ratio and memory target
harder by that factor: an "at least" target is multiplied by it, an "at most" target
divided, a range shrunk around its middle. ``RECUSE_BENCH_TARGET_SCALE=1000 python
benchmarks/x.py`` must exit 1: it shows that the benchmark fails when its timing target
is missed. Correctness checks (the same answers as a baseline, a tolerance, a coverage
floor, a count that must hold) pass ``scaled=False`` and are never scaled, so a raised
scale shows a timing target failing while the answers still check out; their lines
read ``[correctness, not scaled]``. Every check says which it is: ``scaled`` has no
default, so a new check left unmarked is a TypeError, not a correctness check that a
raised scale fails whatever the code does (which would let a run "fail" at scale 1000
without its timing target being checked at all).
"""

from __future__ import annotations

import math
import os

SCALE_ENV = "RECUSE_BENCH_TARGET_SCALE"


def target_scale() -> float:
    """The factor from ``RECUSE_BENCH_TARGET_SCALE`` (1 when unset)."""
    raw = os.environ.get(SCALE_ENV, "").strip()
    if not raw:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        raise SystemExit(f"{SCALE_ENV} must be a positive number, got {raw!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise SystemExit(f"{SCALE_ENV} must be a positive number, got {raw!r}")
    return value


def coverage_floor(target: float, reps: int, *, checks: int = 1, false_miss: float = 0.01) -> float:
    """The lowest coverage share, over ``reps`` simulated tables, that still meets a
    coverage ``target``, when ``checks`` such shares are checked together.

    Each share is a binomial count over ``reps`` tables: an interval whose true coverage
    is exactly ``target`` reads below the floor in some one of the ``checks`` shares
    with probability at most ``false_miss`` (Bonferroni: ``false_miss / checks`` each,
    from the exact binomial distribution). Fewer tables give a lower floor, so a short
    run (``make bench-quick``) does not fail by chance; the benchmark prints the floor
    and this reason.
    """
    from scipy.stats import binom

    return float(binom.ppf(false_miss / checks, reps, target)) / reps


class Targets:
    """The targets of one benchmark run; :meth:`finish` exits 1 if any was missed."""

    def __init__(self) -> None:
        self.scale = target_scale()
        self.missed: list[str] = []
        self.checked = 0

    def _record(self, ok: bool, line: str) -> bool:
        self.checked += 1
        print(f"target: {line} — {'met' if ok else 'MISSED'}")
        if not ok:
            self.missed.append(line)
        return ok

    def _factor(self, scaled: bool) -> float:
        return self.scale if scaled else 1.0

    @staticmethod
    def _tag(scaled: bool) -> str:
        return "" if scaled else " [correctness, not scaled]"

    def at_least(
        self, what: str, value: float, target: float, unit: str = "", *, scaled: bool
    ) -> bool:
        """``value >= target`` (``target`` times the scale when ``scaled``, a timing
        target; as given when not, a correctness check); NaN misses."""
        goal = target * self._factor(scaled)
        line = f"{what} {value:.3g}{unit} >= {goal:.3g}{unit}{self._tag(scaled)}"
        return self._record(value >= goal, line)

    def at_most(
        self, what: str, value: float, target: float, unit: str = "", *, scaled: bool
    ) -> bool:
        """``value <= target`` (``target`` divided by the scale when ``scaled``, a timing
        target; as given when not, a correctness check); NaN misses."""
        goal = target / self._factor(scaled)
        line = f"{what} {value:.3g}{unit} <= {goal:.3g}{unit}{self._tag(scaled)}"
        return self._record(value <= goal, line)

    def within(self, what: str, value: float, low: float, high: float, *, scaled: bool) -> bool:
        """``low <= value <= high`` (the range shrunk around its middle by the scale when
        ``scaled``, a timing target; as given when not, a correctness check)."""
        mid, half = (low + high) / 2, (high - low) / 2 / self._factor(scaled)
        lo, hi = mid - half, mid + half
        line = f"{what} {value:.3g} in [{lo:.3g}, {hi:.3g}]{self._tag(scaled)}"
        return self._record(lo <= value <= hi, line)

    def finish(self) -> None:
        """Exit with status 1 and the missed targets when any was missed."""
        scaled = f" (targets scaled by {self.scale:g})" if self.scale != 1 else ""
        if self.missed:
            raise SystemExit(
                f"FAILED: {len(self.missed)} of {self.checked} targets missed{scaled}: "
                + "; ".join(self.missed)
            )
        print(f"all {self.checked} targets met{scaled}")
