"""The log-perplexity inputs of the familiarity metrics, in a leaf module.

:mod:`recuse.metrics.familiarity` and the familiarity mediation in
:mod:`recuse.metrics.self_preference` both read ``ppl_a`` / ``ppl_b`` through these
functions; keeping them here (importing nothing else of ``recuse.metrics``) lets
both modules use them without importing each other.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.errors import InputError

__all__ = ["log_perplexity", "log_perplexity_difference"]

FloatArray = NDArray[np.float64]


def log_perplexity(pairs: pd.DataFrame, column: str) -> FloatArray:
    """``log`` of the perplexity ``column`` per row (NaN where it is missing); a
    perplexity <= 0 raises :class:`InputError` naming the row and column."""
    if column not in pairs.columns:
        raise InputError(
            f"the table has no {column} column",
            column=column,
            fix="compute perplexities first (recuse.judging.perplexity.add_perplexities)",
        )
    ppl = pairs[column].to_numpy(dtype=float)
    bad = ppl <= 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"perplexity {ppl[i]:g} is not positive",
            row=i + 1,
            column=column,
            fix="perplexities are exp(mean negative log-prob) >= 1; leave unknown ones empty",
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(ppl)


def log_perplexity_difference(pairs: pd.DataFrame) -> FloatArray:
    """``d = log ppl_a - log ppl_b`` per row (NaN where either perplexity is missing).

    >>> t = pd.DataFrame({"ppl_a": [np.e, 2.0, np.nan], "ppl_b": [1.0, 2.0, 3.0]})
    >>> log_perplexity_difference(t).round(6).tolist()
    [1.0, 0.0, nan]
    """
    return log_perplexity(pairs, "ppl_a") - log_perplexity(pairs, "ppl_b")
