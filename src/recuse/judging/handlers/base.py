"""What every task kind's handler is, and the judgment rows the kinds share.

A handler turns a backend's answers to one batch of tasks into rows (:meth:`Handler.run`)
and makes the row of a task that failed for good (:meth:`Handler.fail`). It neither
retries, batches nor stores: the runner (:mod:`recuse.judging.runner`) does that.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol, TypeVar

from recuse.judging.store import Judgment
from recuse.judging.tasks import Task

Row = TypeVar("Row")


class Handler(Protocol[Row]):
    """One task kind: the rows of a batch from the backend, and a failed task's row."""

    async def run(self, batch: Sequence[Task]) -> list[Row]:
        """One row per task of ``batch``, in its order; a
        :class:`~recuse.judging.backends.base.TransientError` propagates (the runner
        retries the batch)."""
        ...

    def fail(self, task: Task, reason: str) -> Row:
        """The row of ``task`` failed with ``reason`` (its retries spent)."""
        ...


def failed_judgment(t: Task, judge: str, reason: str) -> Judgment:
    """A failed pairwise or Likert row saying why."""
    assert t.kind == "pairwise" or t.kind == "likert"
    return Judgment(
        key=t.key,
        kind=t.kind,
        judge=judge,
        item_id=t.item_id,
        slot=t.slot,
        status="failed",
        reason=reason,
    )


def usable(j: Judgment) -> Judgment:
    """``j``, or a failed row when it says ok without a usable value (a backend's
    numbers that are not finite, or not a probability): never stored as ok."""
    if j.status != "ok":
        return j
    bad = not math.isfinite(j.value)
    if j.kind == "pairwise":
        bad = bad or not 0.0 <= j.value <= 1.0 or not math.isfinite(j.p_slot_a)
    if not bad:
        return j
    return replace(
        j,
        status="failed",
        value=math.nan,
        p_slot_a=math.nan,
        reason=f"the judge's numbers are not usable (value {j.value!r})",
    )


def reusable(j: Judgment) -> bool:
    """Final, and (pairwise ok) holding the slot-frame probability a copy needs."""
    if j.status == "failed":
        return False
    return not (j.kind == "pairwise" and j.status == "ok" and math.isnan(j.p_slot_a))
