"""Likert tasks (:class:`~recuse.judging.protocols.LikertProtocol`): a generated reply
per response and dimension, read on the dimension's scale."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from recuse.judging.backends.base import Backend, Failure
from recuse.judging.handlers.base import failed_judgment
from recuse.judging.protocols import LikertProtocol, parse_rating
from recuse.judging.store import Judgment
from recuse.judging.tasks import Task


@dataclass(frozen=True)
class LikertHandler:
    """Generates each task's reply and reads ``Answer: <label>`` on its dimension."""

    backend: Backend
    judge: str
    protocol: LikertProtocol

    async def run(self, batch: Sequence[Task]) -> list[Judgment]:
        gens = await self.backend.generate(
            [t.prompt for t in batch], max_new_tokens=self.protocol.max_new_tokens
        )
        out = []
        for t, g in zip(batch, gens, strict=True):
            if isinstance(g, Failure):
                out.append(failed_judgment(t, self.judge, g.reason))
                continue
            assert t.dimension is not None
            r = parse_rating(g.text, t.dimension)
            out.append(
                Judgment(
                    key=t.key,
                    kind="likert",
                    judge=self.judge,
                    item_id=t.item_id,
                    slot=t.slot,
                    status=r.status,
                    value=r.value,
                    label=r.label,
                    text=g.text,
                    reason=None if r.status == "ok" else "no 'Answer: <label>' on the scale",
                )
            )
        return out

    def fail(self, task: Task, reason: str) -> Judgment:
        return failed_judgment(task, self.judge, reason)


def reference_value(v: object) -> float | None:
    """A ``reference_<dimension>`` cell as a number (None: empty or not a number)."""
    try:
        f = float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f
