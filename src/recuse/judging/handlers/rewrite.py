"""Rewrite tasks: a rewriting model's greedy generations (the probes' model rewrites,
:mod:`recuse.probes.rewrite`) into :class:`~recuse.judging.store.Rewrite` rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recuse.judging.backends.base import Backend, Failure, Generation
from recuse.judging.store import Rewrite
from recuse.judging.tasks import Task


@dataclass(frozen=True)
class RewriteHandler:
    """Greedy generations of at most ``max_new_tokens``: empty or cut is ``unparsed``."""

    backend: Backend
    max_new_tokens: int

    async def run(self, batch: Sequence[Task]) -> list[Rewrite]:
        gens = await self.backend.generate(
            [t.prompt for t in batch], max_new_tokens=self.max_new_tokens
        )
        return [
            rewrite_row(t.key, g, self.max_new_tokens) for t, g in zip(batch, gens, strict=True)
        ]

    def fail(self, task: Task, reason: str) -> Rewrite:
        return Rewrite(task.key, "failed", reason=reason)


def rewrite_row(key: str, g: Generation | Failure, max_new_tokens: int) -> Rewrite:
    """A rewrite row: the stripped text, unparsed when empty or cut at the limit."""
    if isinstance(g, Failure):
        return Rewrite(key, "failed", reason=g.reason)
    text = g.text.strip()
    if not text:
        return Rewrite(key, "unparsed", g.text, reason="the rewrite is empty")
    if g.finish_reason == "length":
        return Rewrite(key, "unparsed", g.text, reason=f"cut at {max_new_tokens} tokens")
    return Rewrite(key, "ok", text)
