"""Replay of recorded judge replies: a backend that answers with what a file recorded.

A :class:`~recuse.data.recorded.Recording` (defined by its readers in
:mod:`recuse.data.recorded`, re-exported here) holds a judge's recorded replies over
a set of pairs; :class:`ReplayBackend` answers ``generate`` with the
recorded reply for each prompt, so the runner parses it exactly as a live judge's
(:func:`recuse.judging.replay.replay` drives it). :class:`ReplayProtocol` renders
a prompt that only identifies the reply: the item id and both texts in slot order.
The content key of a replayed judgment hashes the judge id, the file's sha256 (as
the revision), the verdict format and that prompt, so replaying a changed file
never reuses stale rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from recuse.data.recorded import Recorded as Recorded
from recuse.data.recorded import Recording as Recording
from recuse.judging.backends.base import Backend, Failure, Generation, TokenFilter
from recuse.judging.protocols import (
    Message,
    Order,
    Pair,
    PairwiseProtocol,
    Prompt,
    present,
)

__all__ = ["REPLAY_VERSION", "Recorded", "Recording", "ReplayBackend", "ReplayProtocol"]

REPLAY_VERSION = "replay-v1"


@dataclass(frozen=True)
class ReplayProtocol(PairwiseProtocol):
    """Pairwise protocol for recorded replies: the prompt only identifies the reply."""

    mode: Literal["direct", "explain"] = "explain"
    version: str = REPLAY_VERSION

    def prompt(self, pair: Pair, order: Order) -> Prompt:
        shown = present(pair, order)
        text = (
            f"item {pair.item_id}\n\nquestion:\n{pair.prompt}\n\n"
            f"shown first:\n{shown.slot_a}\n\nshown second:\n{shown.slot_b}"
        )
        return Prompt((Message("user", text),))

    def key_params(self) -> dict[str, object]:
        return {"protocol": self.version, "verdict_format": self.verdict.name}


class ReplayBackend(Backend):
    """Answers ``generate`` with the recorded reply for each prompt (no model).

    Stop strings and token limits do not apply: the recorded reply is what the
    judge said. Log-probs other than those recorded are not available.
    """

    def __init__(self, recording: Recording, protocol: ReplayProtocol) -> None:
        self.model_id = recording.judge
        self.revision = recording.revision
        self.batch_size = 1024
        self.concurrency = 1
        self.supports_prefix = False
        self.continuation_refusal = "a replayed judge has only its recorded replies"
        pairs = {
            str(r["item_id"]): Pair(
                str(r["item_id"]), r["prompt"], r["response_a"], r["response_b"]
            )
            for r in recording.pairs.to_dict("records")
        }
        self._by_prompt: dict[str, Recorded] = {}
        for rec in recording.outputs:
            pair = pairs.get(rec.item_id)
            if pair is not None:
                self._by_prompt[protocol.prompt(pair, rec.order).canonical()] = rec

    async def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_new_tokens: int,
        stop: Sequence[str] = (),
        top_k: int = 0,
        select: TokenFilter | None = None,
    ) -> list[Generation | Failure]:
        out: list[Generation | Failure] = []
        for p in prompts:
            rec = self._by_prompt.get(p.canonical())
            if rec is None:
                out.append(Failure("the file holds no reply for this pair and order"))
            elif rec.text is None:
                out.append(Failure(rec.missing or "the file holds no reply"))
            else:
                out.append(
                    Generation(
                        text=rec.text,
                        tokens=rec.tokens,
                        dists=rec.dists,
                        finish_reason=rec.finish_reason,
                    )
                )
        return out

    async def next_token_logprobs(
        self, prompts: Sequence[Prompt], *, top_k: int = 20, select: TokenFilter | None = None
    ) -> list[dict[str, float] | Failure]:
        return [Failure("a replayed judge has only its recorded replies") for _ in prompts]

    async def continuation_logprobs(
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[np.ndarray | Failure]:
        return [Failure("a replayed judge has only its recorded replies") for _ in prompts]
