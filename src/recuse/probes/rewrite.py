"""Model-written rewrites for the verbosity probe (Saito et al., Section 4: a concise and
a verbose version of the *same* source answer, so content is held fixed and length
varies).

A rewriting model (named by the user; by default the local one) is asked, greedily, to
rewrite the treated answer concisely and verbosely. In the probe table the treated
answer is replaced by each rewrite (probes ``concise`` and ``verbose``); the other answer
is never touched. Besides each rewrite's effect against the placebo, the verbosity
contrast is ``s_verbose − s_concise``: the shift in the treated answer's share of the win
between the two rewrites of one source, against the same opponent. A rewrite that is
empty or cut at the token limit is never used: its rows are left out and counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from recuse.judging.protocols import Message, Prompt
from recuse.probe_edits import REWRITES

if TYPE_CHECKING:  # the runner is imported by those who run one
    from recuse.judging.runner import Runner, RunSummary

__all__ = ["REWRITES", "REWRITE_VERSION", "Rewriter", "RunnerRewriter", "rewrite_prompt"]

REWRITE_VERSION = "rewrite-v1"

_ASK = {
    "concise": (
        "Rewrite the answer below to be as short as possible. Keep every fact, step and "
        "the final answer; remove repetition, filler and pleasantries. Do not add "
        "anything new."
    ),
    "verbose": (
        "Rewrite the answer below to be about twice as long, by explaining its points "
        "more fully in more words. Keep every fact, step and the final answer as they "
        "are; do not add new facts or claims, and do not change what it concludes."
    ),
}
REWRITE_SYSTEM = "You rewrite answers as asked. Reply with the rewritten answer only, nothing else."
_USER = "{ask}\n\nThe question was:\n{question}\n\nThe answer to rewrite:\n{answer}"

#: ``(pairs of (question, answer), style) -> one rewrite or None per pair``
Rewriter = Callable[[Sequence[tuple[str, str]], str], list[str | None]]


def rewrite_prompt(question: str, answer: str, style: str) -> Prompt:
    """The request to rewrite ``answer`` (to ``question``) in ``style``.

    >>> rewrite_prompt("Q?", "A.", "concise").messages[1].content.endswith("rewrite:\\nA.")
    True
    """
    if style not in _ASK:
        raise KeyError(f"unknown rewrite style {style!r}; known: {', '.join(_ASK)}")
    user = _USER.format(ask=_ASK[style], question=question, answer=answer)
    return Prompt((Message("system", REWRITE_SYSTEM), Message("user", user)), "")


class RunnerRewriter:
    """A :data:`Rewriter` generating with ``runner`` (a
    :class:`~recuse.judging.runner.Runner` over the rewriting model): stored and resumed
    like any judgment; an unusable rewrite is None. ``summaries`` holds each call's
    :class:`~recuse.judging.runner.RunSummary`."""

    def __init__(self, runner: Runner, *, max_new_tokens: int = 512) -> None:
        self.runner = runner
        self.max_new_tokens = max_new_tokens
        self.summaries: list[RunSummary] = []

    def __call__(self, items: Sequence[tuple[str, str]], style: str) -> list[str | None]:
        prompts = [rewrite_prompt(q, a, style) for q, a in items]
        keys, rows, summary = self.runner.rewrite(
            prompts, max_new_tokens=self.max_new_tokens, version=REWRITE_VERSION
        )
        self.summaries.append(summary)
        return [rows[k].text if k in rows and rows[k].status == "ok" else None for k in keys]
