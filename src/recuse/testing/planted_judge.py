"""A judge without a model whose sensitivities to the probes' edits are planted.

It reads the two answers out of the pairwise prompt and gives slot A the probability

    P(A) = clip(0.5 + q(A) − q(B) + Σ_k sensitivity_k · (edit_k in A − edit_k in B)
                + noise, 0.02, 0.98)

``q`` is a fixed quality in [−0.15, 0.15] drawn from a hash of the answer with every
probe edit undone (an edit never changes it), ``noise`` in [−0.03, 0.03] a hash of
the whole prompt (any change of bytes, the placebo's included, moves it: the noise
the placebo measures). The probe effect (treated share with the edit minus with the
placebo) is then ``sensitivity_k`` in expectation when no clipping occurs (the
ranges above keep 0.5 ± 0.33 plus a sensitivity ≤ 0.15 inside the clip).

Its *own* answers are those containing ``signature``. Asked which better, it adds
``self_preference`` for its own (``+ self_preference · (own(A) − own(B))``); asked which
one it wrote, it answers ``P(A) = clip(0.5 + recognition · (own(A) − own(B)) + noise)``,
so its self-recognition accuracy is ``0.5 + recognition`` in expectation. ``length``
adds ``length · (log words(A) − log words(B))`` to the quality question.

Asked to rewrite an answer (:mod:`recuse.probes.rewrite`) it writes, deterministically,
its first sentence (concise) or the answer twice over (verbose); an answer containing
``[no rewrite]`` gets an empty rewrite (unusable).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence

import numpy as np

from recuse.judging.backends.base import Backend, Failure, Generation, TokenFilter
from recuse.judging.protocols import AUTHORSHIP_SYSTEM, Prompt
from recuse.probes.rewrite import REWRITE_SYSTEM
from recuse.probes.transforms import BANDWAGON, PROBES, undo

__all__ = ["PlantedJudge"]

_A = ("=== Answer A (start) ===\n", "\n=== Answer A (end) ===")
_B = ("=== Answer B (start) ===\n", "\n=== Answer B (end) ===")


def _between(text: str, marks: tuple[str, str]) -> str:
    start = text.index(marks[0]) + len(marks[0])
    return text[start : text.index(marks[1], start)]


def _unit(text: str) -> float:
    """A number in [0, 1) from a hash of ``text``."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def _edits(answer: str, me: str) -> tuple[str, set[str]]:
    """The answer with every probe edit undone, and the edits found (an attribution
    label naming ``me`` is ``attribution-self``, any other ``attribution-other``)."""
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name in PROBES:
            if PROBES[name].target != "answer":
                continue
            try:
                _, undone = undo(name, "", answer)
            except ValueError:
                continue
            if name.startswith("attribution"):
                label = answer[: len(answer) - len(undone)]
                name = "attribution-self" if f" {me}]" in label else "attribution-other"
            found.add(name)
            answer = undone
            changed = True
    return answer, found


class PlantedJudge(Backend):
    """Planted sensitivities per probe (e.g. ``{"authority": 0.15, "padding": 0.0}``)."""

    def __init__(
        self,
        sensitivities: Mapping[str, float],
        *,
        batch_size: int = 8,
        model_id: str = "planted-judge",
        signature: str | None = None,
        self_preference: float = 0.0,
        recognition: float = 0.0,
        length: float = 0.0,
    ) -> None:
        self.model_id = model_id
        self.revision = "1"
        self.batch_size = batch_size
        self.concurrency = 1
        self.supports_prefix = True
        self.sensitivities = dict(sensitivities)
        self.signature = signature
        self.self_preference = self_preference
        self.recognition = recognition
        self.length = length
        self.calls = 0

    def _own(self, answer: str) -> int:
        return int(self.signature is not None and self.signature in answer)

    def p_slot_a(self, prompt: Prompt) -> float:
        user = next(m.content for m in prompt.messages if m.role == "user")
        a, found_a = _edits(_between(user, _A), self.model_id)
        b, found_b = _edits(_between(user, _B), self.model_id)
        noise = 0.06 * (_unit(prompt.canonical()) - 0.5)
        own = self._own(a) - self._own(b)
        if any(m.content == AUTHORSHIP_SYSTEM for m in prompt.messages):
            return float(np.clip(0.5 + self.recognition * own + noise, 0.02, 0.98))
        note = BANDWAGON.split("{")[0]
        if note in user:
            quoted = user[user.rindex(note) + len(note) :].split("\u201d")[0]
            found_a |= {"bandwagon"} if a.startswith(quoted) else set()
            found_b |= {"bandwagon"} if b.startswith(quoted) else set()
        shift = sum(s * ((k in found_a) - (k in found_b)) for k, s in self.sensitivities.items())
        q = 0.3 * (_unit(a) - _unit(b))
        shift += self.self_preference * own + self.length * (_log_words(a) - _log_words(b))
        return float(np.clip(0.5 + q + shift + noise, 0.02, 0.98))

    async def next_token_logprobs(
        self, prompts: Sequence[Prompt], *, top_k: int = 20, select: TokenFilter | None = None
    ) -> list[dict[str, float] | Failure]:
        self.calls += 1
        out: list[dict[str, float] | Failure] = []
        for p in prompts:
            pa = self.p_slot_a(p)
            out.append({"A": math.log(pa), "B": math.log(1 - pa)})
        return out

    async def continuation_logprobs(
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[np.ndarray | Failure]:
        return [Failure("the planted judge scores no perplexities") for _ in prompts]

    async def generate(
        self, prompts: Sequence[Prompt], *, max_new_tokens: int, stop: Sequence[str] = (),
        top_k: int = 0, select: TokenFilter | None = None,
    ) -> list[Generation | Failure]:  # fmt: skip
        out: list[Generation | Failure] = []
        for p in prompts:
            if p.messages[0].content == REWRITE_SYSTEM:
                out.append(Generation(text=_rewrite(p.messages[-1].content), finish_reason="stop"))
            else:
                out.append(Generation(text=f"[[{'A' if self.p_slot_a(p) >= 0.5 else 'B'}]]"))
        return out


def _log_words(text: str) -> float:
    return math.log(max(1, len(text.split())))


def _rewrite(user: str) -> str:
    """The planted rewrite of the answer quoted in a rewrite request."""
    answer = user.split("The answer to rewrite:\n", 1)[1]
    if "[no rewrite]" in answer:
        return ""
    if "as short as possible" in user:
        return answer.split(". ")[0].rstrip(".") + "."
    return f"{answer} To put it another way: {answer}"
