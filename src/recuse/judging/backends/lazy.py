"""A local model loaded only when a judgment is actually needed.

The runner computes every task's content key from ``model_id`` and ``revision`` and
drops those already in the store before it calls a primitive; wrapping the loader in
:class:`LazyBackend` means a rerun with nothing left never loads the weights (about
10 s for the embedded judge on CPU).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from recuse.judging.backends.base import Backend, Failure, Generation, TokenFilter
from recuse.judging.protocols import Prompt

__all__ = ["LazyBackend"]


class LazyBackend(Backend):
    """Stands for the backend ``load()`` returns; calls ``load`` on first use.

    ``model_id``, ``revision`` and ``route`` (the loaded backend's perplexity route)
    must be what the loaded backend will report, since they enter cache keys;
    ``batch_size``, ``concurrency`` and ``hardware`` what the runner reads before the
    first call (prompts per call, calls in flight, device and dtype for the card).
    """

    def __init__(
        self,
        load: Callable[[], Backend],
        *,
        model_id: str,
        revision: str,
        batch_size: int,
        route: str,
        concurrency: int = 1,
        hardware: str = "",
    ) -> None:
        self._load = load
        self._backend: Backend | None = None
        self.model_id = model_id
        self.revision = revision
        self.batch_size = batch_size
        self.concurrency = concurrency
        self.hardware = hardware
        self.supports_prefix = True
        self._route = route
        # a local model's (its route "local") tokenizes whole labels after the prompt
        self.joins_labels = route == "local"

    @property
    def perplexity_route(self) -> str:
        return self._route

    @property
    def loaded(self) -> bool:
        return self._backend is not None

    def backend(self) -> Backend:
        if self._backend is None:
            b = self._load()
            if (b.model_id, b.revision, b.perplexity_route) != (
                self.model_id,
                self.revision,
                self._route,
            ):
                raise RuntimeError("the loaded backend does not match its lazy stand-in")
            self._backend = b
            self.supports_prefix = b.supports_prefix
            self.continuation_refusal = b.continuation_refusal
            self.device_name, self.block_parameters = b.device_name, b.block_parameters
        return self._backend

    async def next_token_logprobs(
        self, prompts: Sequence[Prompt], *, top_k: int = 20, select: TokenFilter | None = None
    ) -> list[dict[str, float] | Failure]:
        return await self.backend().next_token_logprobs(prompts, top_k=top_k, select=select)

    async def continuation_logprobs(
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[np.ndarray | Failure]:
        return await self.backend().continuation_logprobs(prompts, continuations)

    async def label_logprobs(
        self, prompts: Sequence[Prompt], labels: Sequence[str]
    ) -> list[np.ndarray | Failure]:
        return await self.backend().label_logprobs(prompts, labels)

    async def generate(
        self, prompts: Sequence[Prompt], *, max_new_tokens: int, stop: Sequence[str] = (),
        top_k: int = 0, select: TokenFilter | None = None,
    ) -> list[Generation | Failure]:  # fmt: skip
        return await self.backend().generate(
            prompts, max_new_tokens=max_new_tokens, stop=stop, top_k=top_k, select=select
        )

    def usage(self) -> tuple[int, int] | None:
        return None if self._backend is None else self._backend.usage()

    def served(self) -> dict[str, int]:
        return {} if self._backend is None else self._backend.served()

    def token_counts(
        self, prompts: Sequence[Prompt], continuations: Sequence[str] | None = None
    ) -> list[int] | None:
        """The loaded backend's counts (loading it: the runner asks only when there is
        work for it)."""
        return self.backend().token_counts(prompts, continuations)

    def last_pass(self, counts: Sequence[int]) -> list[int]:
        """The loaded backend's (none before it is loaded: nothing was counted)."""
        return [] if self._backend is None else self._backend.last_pass(counts)

    async def aclose(self) -> None:
        if self._backend is not None:
            await self._backend.aclose()
