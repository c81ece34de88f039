"""What a run asks of a backend, as data: one :class:`Task` per judgment, perplexity or
rewrite, and the :class:`Work` a run's tasks share.

The runner (:mod:`recuse.judging.runner`) schedules tasks; the handler of each kind
(:mod:`recuse.judging.handlers`) turns the backend's answers to a batch of them into
rows. Both read this module, so neither imports the other's internals.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from recuse.judging.protocols import (
    Dimension,
    LikertProtocol,
    Order,
    PairwiseProtocol,
    Prompt,
)

TaskKind = Literal["pairwise", "likert", "perplexity", "rewrite"]


@dataclass(frozen=True)
class Task:
    key: str
    kind: TaskKind
    item_id: str
    slot: str  # order for pairwise, dimension name for Likert, "" for perplexity
    prompt: Prompt
    order: Order | None = None
    dimension: Dimension | None = None
    continuation: str = ""  # perplexity: the text scored after the prompt

    @cached_property
    def size(self) -> int:
        """Length used to put similar tasks in one batch (computed once: the runner
        reads it four times a task before the first call)."""
        return len(self.prompt.canonical()) + len(self.continuation)


@dataclass(frozen=True)
class Work:
    """What a run's tasks ask of the backend, as data another process can receive:
    pairwise or Likert judgments under their protocol, or perplexities."""

    kind: Literal["pairwise", "likert", "perplexity"]
    protocol: PairwiseProtocol | LikertProtocol | None = None
