"""A seeded sample of a table's items spread over its prompts (trial runs that estimate)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from recuse.cells import among
from recuse.errors import ConfigError
from recuse.metrics.bootstrap import check_seed

__all__ = ["spread_over_prompts"]


def spread_over_prompts(
    frame: pd.DataFrame, *, limit: int | None = None, prompts: int | None = None, seed: int = 0
) -> pd.DataFrame:
    """At most ``limit`` rows from at most ``prompts`` prompts (``prompt_id``; the row's
    ``item_id`` when there is none), chosen by a seeded shuffle and taken round-robin over
    the prompts: the first row of every chosen prompt, then the second, and so on — so 20
    rows of a table with 80 prompts cover 20 prompts, not the first two.

    >>> t = pd.DataFrame({"item_id": range(8), "prompt_id": [0, 0, 0, 0, 1, 1, 2, 3]})
    >>> sorted(spread_over_prompts(t, limit=4, seed=1)["prompt_id"])
    [0, 1, 2, 3]
    >>> spread_over_prompts(t, prompts=1, seed=1)["prompt_id"].nunique()
    1
    """
    for name, value in (("--limit", limit), ("--prompts", prompts)):
        if value is not None and value < 1:
            raise ConfigError(f"{name} must be 1 or more; got {value}")
    check_seed(seed)
    key = frame["prompt_id"] if "prompt_id" in frame.columns else frame["item_id"]
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(frame))
    shuffled = frame.iloc[order]
    keys = key.iloc[order]
    if prompts is not None:
        chosen = pd.unique(keys)[:prompts]
        mask = among(keys, chosen)
        shuffled, keys = shuffled[mask], keys[mask]
    rank = keys.groupby(keys, sort=False).cumcount().to_numpy()
    out = shuffled.iloc[np.argsort(rank, kind="stable")]
    return out.head(limit) if limit is not None else out
