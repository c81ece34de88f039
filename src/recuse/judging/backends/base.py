"""The few primitives a judge backend provides; everything else lives in the runner.

A backend answers for a *batch* of prompts at once (a local model runs the batch in
one padded forward pass; an HTTP backend takes batches of one and the runner runs
many concurrently). Per prompt, the answer is either a value or a :class:`Failure`
(a permanent problem with that prompt, e.g. too long for the model). Problems that
may pass (rate limits, server errors, timeouts) are raised as
:class:`TransientError`, which the runner retries with backoff.

A backend that computes one call in several steps (a local model's length buckets, one
forward pass each) calls :func:`report_done` after each step, so the runner's progress
bar moves per step rather than per call.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

from recuse.judging.protocols import Prompt

TokenFilter = Callable[[str], bool]


class TopK(dict[str, float]):
    """A next-token answer cut to the server's top-k: a token absent from it has an
    unknown log-prob (not zero), so Eq. 3 cannot be read when a verdict is absent."""


# Where report_done() goes: set by the runner around each call, per asyncio task, so
# concurrent calls never count into each other's share.
_DONE: ContextVar[Callable[[int], None] | None] = ContextVar("recuse_done", default=None)


def report_done(n: int) -> None:
    """Tell the caller that ``n`` more prompts of the current call are computed."""
    sink = _DONE.get()
    if sink is not None and n > 0:
        sink(n)


@contextmanager
def done_sink(sink: Callable[[int], None]) -> Iterator[None]:
    """Route :func:`report_done` calls made inside the block (this task only) to ``sink``."""
    token = _DONE.set(sink)
    try:
        yield
    finally:
        _DONE.reset(token)


@dataclass(frozen=True)
class Failure:
    """A permanent failure for one prompt; becomes a ``failed`` row with this reason."""

    reason: str


class TransientError(Exception):
    """A failure worth retrying; ``retry_after`` (seconds) when the server said so."""

    def __init__(self, reason: str, *, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


@dataclass(frozen=True)
class Generation:
    """Generated text; ``dists`` holds, when the backend has them, one
    ``{token text: log-prob}`` (top-k) per generated token and ``tokens`` the tokens."""

    text: str
    tokens: tuple[str, ...] = ()
    dists: tuple[dict[str, float], ...] = field(default=())
    finish_reason: str | None = None


class Backend(abc.ABC):
    """A judge model.

    ``model_id`` and ``revision`` identify the weights (they enter cache keys);
    ``batch_size`` is how many prompts one call should carry and ``concurrency`` how
    many calls may be in flight at once. Neither enters cache keys.
    """

    model_id: str
    revision: str
    batch_size: int = 1
    concurrency: int = 1
    #: whether ``next_token_logprobs`` honours a prompt's assistant ``prefix``
    supports_prefix: bool = True
    #: whether :meth:`label_logprobs` tokenizes a label after its prompt's text, where
    #: :meth:`continuation_logprobs` tokenizes it alone (a local model): whole-label
    #: verdicts then enter content keys of their own (the ones stored before read the
    #: label as a text's start)
    joins_labels: bool = False
    #: whether ``continuation_logprobs`` can be answered (perplexity); when not, why
    continuation_refusal: str | None = None
    #: where the model runs and in which precision (``"cuda:0 bfloat16"``) for a local
    #: model; empty where the backend does not know (a server)
    hardware: str = ""
    #: the accelerator's name as its driver gives it (``"NVIDIA H200"``) where a local
    #: model runs on one; empty otherwise (the CPU, a server). With
    #: :attr:`block_parameters` it gives the evaluator card's model FLOP utilisation
    device_name: str = ""
    #: parameters of the transformer blocks (embeddings and LM head left out): a
    #: prompt token costs ``2 * block_parameters`` FLOPs; None where unknown (a server)
    block_parameters: int | None = None
    #: whether the runner keeps the garbage collector quiet while this backend's calls
    #: go out (the heap from before the run frozen, young passes further apart:
    #: ``runner._quiet_collector``): a server's backend, whose event loop handles every
    #: request and answer; not a local model, whose tensors in a reference cycle from
    #: before the run must stay collectable during it
    quiet_collector: bool = False
    #: seconds one request may take before it fails (a server's backend); None where a
    #: call has no such bound (a local model)
    timeout: float | None = None
    #: who wrote the prompt text a server's model read (``"recuse's ChatML over
    #: /v1/completions"``, ``"the server's chat template (/v1/chat/completions)"``),
    #: recorded with each run and said on the evaluator card; empty for a local model
    #: (its own chat template, from its files)
    rendering: str = ""

    #: the name a server's backend asks the server for (the model its verdicts are
    #: answers of, held to one per judge id in a store: :meth:`Store.claim_asked`);
    #: None for a local model, whose weights :attr:`model_id` and :attr:`revision` name
    model_asked: str | None = None

    @property
    def key_params(self) -> dict[str, str]:
        """What of the backend, beside ``model_id`` and ``revision``, changes what the
        model reads or how its answer is read (a server's endpoint: its own chat
        template, or ours); enters the content keys of judgments and rewrites. Empty
        here."""
        return {}

    @property
    def perplexity_route(self) -> str:
        """How this backend computes continuation log-probs; enters perplexity keys."""
        return type(self).__name__

    @abc.abstractmethod
    async def next_token_logprobs(
        self,
        prompts: Sequence[Prompt],
        *,
        top_k: int = 20,
        select: TokenFilter | None = None,
    ) -> list[dict[str, float] | Failure]:
        """Log-probs of the next token after each prompt (prefix included).

        Returns ``{token text: log-prob}`` with the ``top_k`` most likely tokens and,
        where the backend sees the whole vocabulary, every token whose text passes
        ``select``. Distinct ids that decode to the same text are merged
        (log-sum-exp), so each entry is a distinct string.
        """

    @abc.abstractmethod
    async def continuation_logprobs(
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[np.ndarray | Failure]:
        """Log-prob of each token of ``continuations[i]`` following ``prompts[i]``."""

    async def label_logprobs(
        self, prompts: Sequence[Prompt], labels: Sequence[str]
    ) -> list[np.ndarray | Failure]:
        """Log-prob of each token of ``labels[i]`` (a verdict label, ``A>>B]]``) as it
        follows ``prompts[i]``'s text inside a line: the tokens the two together add to
        the prompt's, where a backend tokenizes a continuation on its own otherwise (a
        local model; a server tokenizes prompt and continuation as one text anyway).
        Here :meth:`continuation_logprobs`."""
        return await self.continuation_logprobs(prompts, labels)

    @abc.abstractmethod
    async def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_new_tokens: int,
        stop: Sequence[str] = (),
        top_k: int = 0,
        select: TokenFilter | None = None,
    ) -> list[Generation | Failure]:
        """Greedy continuation of each prompt, cut after the first ``stop`` string.

        With ``top_k > 0`` backends that can also return per-token top-k log-probs.
        ``select`` (a verdict format's :class:`~recuse.verdict_parsing.VerdictTokens`,
        given where the verdict is read from the reply's log-probs) lets a backend
        that can return, at every position, the log-probs of exactly those tokens
        instead (an HTTP judge on vLLM's ``logprob_token_ids``); others ignore it.
        """

    def token_counts(
        self, prompts: Sequence[Prompt], continuations: Sequence[str] | None = None
    ) -> list[int] | None:
        """Tokens of each prompt (and of its continuation, where given) as this model
        reads them, where the backend tokenizes anyway and keeps the ids for the calls
        that follow, so nothing is tokenized twice (a local model); None where it
        cannot count them without extra work (a server: the runner then orders tasks
        by characters). The runner orders a run's tasks by these counts, so the
        backend's length buckets pad as little as one pass over all prompts would."""
        return None

    def last_pass(self, counts: Sequence[int]) -> list[int]:
        """Of prompts with these token counts (as :meth:`token_counts` gave them), sent
        in one call, the indices of those that would make its last forward pass when
        that pass is part-filled: the runner holds them for a later call, so calls run
        whole passes. Empty where a call is not cut into passes by tokens (a server)."""
        return []

    async def aclose(self) -> None:
        """Release connections or memory; the default does nothing."""
        return None

    def usage(self) -> tuple[int, int] | None:
        """Tokens in and out the model's server reported so far (totals), or None
        where it reports none; the runner records the difference over a run."""
        return None

    def served(self) -> dict[str, int]:
        """``{served model name: answers}`` a server's answers so far named as the model
        that answered them (totals; the JSON ``"model"`` field of an OpenAI-compatible
        answer: an alias such as ``gpt-4o`` is answered by a dated snapshot, which
        changes under the alias). Empty where the backend is no server, or its server
        names none; the runner records the difference over a run and stops a judge
        whose verdicts would come from a second served model
        (:func:`recuse.judging.served.second_model`)."""
        return {}
