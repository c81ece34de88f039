"""What a run asks of a backend, as data: one :class:`Task` per judgment, perplexity or
rewrite, and the :class:`Work` a run's tasks share.

The runner (:mod:`recuse.judging.runner`) schedules tasks; the handler of each kind
(:mod:`recuse.judging.handlers`) turns the backend's answers to a batch of them into
rows. Both read this module, so neither imports the other's internals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from recuse.judging.protocols import (
    Dimension,
    LikertProtocol,
    Order,
    PairwiseProtocol,
    Prompt,
    content_key,
)

TaskKind = Literal["pairwise", "likert", "perplexity", "rewrite"]


@dataclass(frozen=True)
class Keying:
    """What a judgment's content key hashes beside its prompt: the model's id and
    revision and the protocol's parameters (see :func:`content_key`). One object is
    shared by a run's tasks."""

    model_id: str
    revision: str
    params: Mapping[str, object]

    def key(self, prompt: Prompt) -> str:
        return content_key(
            model_id=self.model_id,
            revision=self.revision,
            prompt=prompt.canonical(),
            params=self.params,
        )


@dataclass(frozen=True)
class Task:
    """One judgment, perplexity or rewrite. ``key_from`` is its content key, or the
    :class:`Keying` it is computed from when first read: a run on a store with
    nothing to reuse computes keys as outcomes are stored, beside the device's
    passes, not all of them before the first one."""

    key_from: str | Keying
    kind: TaskKind
    item_id: str
    slot: str  # order for pairwise, dimension name for Likert, "" for perplexity
    prompt: Prompt
    order: Order | None = None
    dimension: Dimension | None = None
    continuation: str = ""  # perplexity: the text scored after the prompt

    @cached_property
    def key(self) -> str:
        k = self.key_from
        return k if isinstance(k, str) else k.key(self.prompt)

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
