"""One handler per task kind, each beside its protocol: it turns a backend's answers
to a batch of tasks into rows (:class:`~recuse.judging.handlers.base.Handler`).

- :mod:`~recuse.judging.handlers.pairwise` — verdicts under a
  :class:`~recuse.judging.protocols.PairwiseProtocol`;
- :mod:`~recuse.judging.handlers.likert` — ratings under a
  :class:`~recuse.judging.protocols.LikertProtocol`;
- :mod:`~recuse.judging.handlers.perplexity` — a response's log-probs;
- :mod:`~recuse.judging.handlers.rewrite` — a rewriting model's greedy generations.

The runner (:mod:`recuse.judging.runner`) schedules: batches, concurrency, the retry
loop, resume and progress; it calls a handler per batch and commits its rows.
"""

from __future__ import annotations

from typing import Any

from recuse.judging.backends.base import Backend
from recuse.judging.handlers.base import Handler
from recuse.judging.handlers.likert import LikertHandler
from recuse.judging.handlers.pairwise import PairwiseHandler
from recuse.judging.handlers.perplexity import PerplexityHandler
from recuse.judging.handlers.rewrite import RewriteHandler
from recuse.judging.protocols import LikertProtocol, PairwiseProtocol
from recuse.judging.tasks import Work

__all__ = [
    "Handler",
    "LikertHandler",
    "PairwiseHandler",
    "PerplexityHandler",
    "RewriteHandler",
    "handler_for",
]


def handler_for(work: Work, backend: Backend, judge: str) -> Handler[Any]:
    """The handler computing ``work``'s tasks with ``backend`` (rows for ``judge``)."""
    protocol = work.protocol
    if work.kind == "pairwise" and isinstance(protocol, PairwiseProtocol):
        return PairwiseHandler(backend, judge, protocol)
    if work.kind == "likert" and isinstance(protocol, LikertProtocol):
        return LikertHandler(backend, judge, protocol)
    if work.kind == "perplexity":
        return PerplexityHandler(backend)
    raise ValueError(f"no handler for {work!r}")
