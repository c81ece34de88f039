"""Moved to :mod:`recuse.judging.perplexity` (perplexity is a task kind of the judging
runner); these names stay importable from here for older scripts."""

from recuse.judging.perplexity import (
    PERPLEXITY_VERSION,
    PerplexityRun,
    add_perplexities,
    attach_stored_perplexities,
    judge_perplexities,
    perplexities,
    response_prompt,
)

__all__ = [
    "PERPLEXITY_VERSION",
    "PerplexityRun",
    "add_perplexities",
    "attach_stored_perplexities",
    "judge_perplexities",
    "perplexities",
    "response_prompt",
]
