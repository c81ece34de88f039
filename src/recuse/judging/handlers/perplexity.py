"""Perplexity tasks: the log-probs of a response after its prompt
(:func:`recuse.judging.protocols.perplexity_key` names them) into
:class:`~recuse.judging.store.Perplexity` rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from recuse.judging.backends.base import Backend, Failure
from recuse.judging.store import Perplexity
from recuse.judging.tasks import Task


@dataclass(frozen=True)
class PerplexityHandler:
    """Each task's continuation scored after its prompt by the backend's
    ``continuation_logprobs``."""

    backend: Backend

    async def run(self, batch: Sequence[Task]) -> list[Perplexity]:
        results = await self.backend.continuation_logprobs(
            [t.prompt for t in batch], [t.continuation for t in batch]
        )
        return [perplexity_row(t.key, r) for t, r in zip(batch, results, strict=True)]

    def fail(self, task: Task, reason: str) -> Perplexity:
        return Perplexity(task.key, "failed", reason=reason)


def perplexity_row(key: str, res: np.ndarray | Failure) -> Perplexity:
    """A perplexity row from a backend's answer: ok only for finite log-probs <= 0."""
    if isinstance(res, Failure):
        return Perplexity(key, "failed", reason=res.reason)
    if len(res) == 0:
        return Perplexity(key, "failed", reason="the response has no tokens")
    if not np.isfinite(res).all() or (res > 1e-6).any():
        return Perplexity(key, "failed", len(res), reason="log-probs are not finite and <= 0")
    return Perplexity(key, "ok", len(res), float(np.sum(res, dtype=np.float64)))
