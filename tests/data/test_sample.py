"""A seeded sample spread over prompts."""

from __future__ import annotations

import doctest

import pandas as pd
import pytest

from recuse.data import sample
from recuse.data.sample import spread_over_prompts
from recuse.errors import ConfigError


def test_doctests() -> None:
    assert doctest.testmod(sample).failed == 0


def test_twenty_of_eighty_prompts() -> None:
    t = pd.DataFrame({"item_id": range(910), "prompt_id": [k % 80 for k in range(910)]})
    t = t.sort_values("prompt_id")  # the first 20 rows would span 2 prompts
    s = spread_over_prompts(t, limit=20, seed=0)
    assert len(s) == 20 and s["prompt_id"].nunique() == 20
    assert s.equals(spread_over_prompts(t, limit=20, seed=0))  # seeded
    p = spread_over_prompts(t, limit=30, prompts=3, seed=0)
    assert p["prompt_id"].nunique() == 3 and len(p) == 30
    with pytest.raises(ConfigError, match="--limit"):
        spread_over_prompts(t, limit=0)
    # numpy's "expected non-negative integer" traceback; the rule and words of every seed
    for seed, said in (
        (-1, "must be 0 or more"),
        (1.5, "must be an integer"),
        (True, "must be an integer"),
    ):
        with pytest.raises(ConfigError, match=rf"^seed {said}"):
            spread_over_prompts(t, limit=5, seed=seed)  # type: ignore[arg-type]
