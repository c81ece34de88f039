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


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'recuse.judging' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with those loaded on first use (``dir()``, a REPL's or an
    editor's completion, ``help()``), listed before any is loaded."""
    return sorted({*globals(), *__all__})
