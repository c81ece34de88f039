"""Running judges: protocols, backends, the SQLite store and the runner.

Heavy optional dependencies (torch, transformers) load only with the local backend.
"""

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
