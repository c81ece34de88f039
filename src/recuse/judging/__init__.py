"""Running judges: protocols, backends, the SQLite store and the one runner.

Imports flow one way: ``protocols`` (over the leaf :mod:`recuse.verdict_parsing`,
which the readers of recorded replies share) and ``secrets`` (leaves) <- ``backends/*``
(leaves over ``backends/base``; ``replay`` takes its Recording from
:mod:`recuse.data.recorded`) <- ``store`` (all SQL) <- ``runner`` (judgments and
perplexities: batching, concurrency, retries, resume, progress) <- ``perplexity``
and ``replay`` (drivers over the runner) and ``distributed`` (the runner's tasks on a
Ray cluster); ``card`` computes typed numbers that ``analyses/card.py`` renders.
Heavy optional dependencies (torch, transformers; ray) load only with the local
backend (with ``--ray``).
"""

from typing import TYPE_CHECKING

from recuse.lazy import first_use

__all__ = [
    "DIMENSIONS",
    "ORDERS",
    "LikertProtocol",
    "Pair",
    "PairwiseProtocol",
    "Prompt",
    "RetryPolicy",
    "RunSummary",
    "Runner",
    "Store",
    "present",
    "to_ab",
]

if TYPE_CHECKING:
    from recuse.judging.protocols import (
        DIMENSIONS,
        ORDERS,
        LikertProtocol,
        Pair,
        PairwiseProtocol,
        Prompt,
        present,
        to_ab,
    )
    from recuse.judging.runner import RetryPolicy, Runner, RunSummary
    from recuse.judging.store import Store

#: the module of each name, loaded on first use: ``recuse.judging.device`` and the
#: other light modules of the package import without pandas (the command line's front
#: door, tests/cli/test_cli_lazy.py)
_LAZY = {
    **dict.fromkeys(
        ("DIMENSIONS", "ORDERS", "LikertProtocol", "Pair", "PairwiseProtocol", "Prompt",
         "present", "to_ab"),
        "recuse.judging.protocols",
    ),
    **dict.fromkeys(("RetryPolicy", "Runner", "RunSummary"), "recuse.judging.runner"),
    "Store": "recuse.judging.store",
}  # fmt: skip


__getattr__, __dir__ = first_use("recuse.judging", _LAZY, __all__)
