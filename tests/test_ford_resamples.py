"""benchmarks/ford_resamples.py --by-share: the count of prompts the judge's own model
lost on, and the coverage tables read by it (hand-built tables, counted by hand)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from ford_resamples import excess_table, lost_on, zero_by_prompts


def _pairs() -> pd.DataFrame:
    """Four prompts; m0 loses as a on p0, as b on p1 (twice: counted once), ties on
    p2 and wins there; a duplicate row of one item (another judge) and an unlabelled
    loss must not count."""
    rows = [
        ("p0-m0-m1", "p0", "m0", "m1", 0.0),  # lost as a
        ("p0-m0-m2", "p0", "m0", "m2", 1.0),
        ("p1-m1-m0", "p1", "m1", "m0", 1.0),  # lost as b
        ("p1-m2-m0", "p1", "m2", "m0", 1.0),  # lost as b, same prompt
        ("p1-m2-m0", "p1", "m2", "m0", 1.0),  # the same item judged again
        ("p2-m0-m1", "p2", "m0", "m1", 0.5),  # a tie is not a loss
        ("p2-m2-m0", "p2", "m2", "m0", 0.0),  # won as b
        ("p3-m0-m1", "p3", "m0", "m1", np.nan),  # unlabelled
        ("p3-m1-m2", "p3", "m1", "m2", 0.0),  # m0 not in it
    ]
    return pd.DataFrame(rows, columns=["item_id", "prompt_id", "model_a", "model_b", "human"])


def test_lost_on_counts_prompts_with_a_labelled_loss_once() -> None:
    pairs = _pairs()
    assert lost_on(pairs, "m0") == 2  # p0 (as a) and p1 (as b, twice)
    assert lost_on(pairs, "m1") == 1  # p3 (as a); p0 and p1 won, p2 a tie
    assert lost_on(pairs, "m2") == 2  # p0 (as b) and p2 (as a); p1 and p3 won
    assert lost_on(pairs, "m9") == 0


def _tables() -> pd.DataFrame:
    """Two cells (prompts 10, 20); lost_on chosen so each cell's mean is 3."""
    rows = [
        # prompts, tau, share, holds, width, error, lost_on
        (10, 0.0, 0.2, True, 0.1, -0.01, 1),  # excess -2
        (10, 0.0, 0.1, True, 0.1, 0.00, 3),  # 0
        (10, 0.0, 0.0, False, 0.1, 0.04, 5),  # +2
        (20, 0.0, 0.3, False, 0.1, -0.03, 0),  # -3
        (20, 0.0, 0.0, True, 0.1, 0.01, 3),  # 0
        (20, 0.0, 0.0, False, 0.1, 0.05, 6),  # +3
        (20, 0.0, 0.05, True, 0.1, 0.02, 3),  # 0
    ]
    columns = ["prompts", "tau", "share", "holds", "width", "error", "lost_on"]
    return pd.DataFrame(rows, columns=columns)


def test_excess_bins_by_the_cell_mean_and_split_by_zero_share() -> None:
    t = excess_table(_tables()).set_index("excess lost on")
    low, mid, up, top = t.iloc[0], t.iloc[1], t.iloc[2], t.iloc[3]
    assert (low["tables"], low["coverage"], low["none break"]) == (2, 0.5, 0)
    assert math.isclose(low["mean error"], (-0.01 - 0.03) / 2)
    assert (mid["tables"], mid["coverage"]) == (3, 1.0)
    assert (mid["none break"], mid["their coverage"], mid["some break"]) == (1, 1.0, 2)
    assert (up["tables"], up["coverage"], up["none break"], up["their coverage"]) == (
        1,
        0.0,
        1,
        0.0,
    )
    assert math.isnan(up["theirs"])  # no table with some breaking resamples there
    assert (top["tables"], top["coverage"], top["none break"]) == (1, 0.0, 1)
    assert math.isclose(low["se"], math.sqrt(0.5 * 0.5 / 2))


def test_zero_share_per_prompt_count() -> None:
    z = zero_by_prompts(_tables()).set_index(["prompts", "resamples"])
    assert z.loc[(10, "none break"), "tables"] == 1
    assert z.loc[(10, "none break"), "coverage"] == 0.0
    assert z.loc[(20, "none break"), "tables"] == 2
    assert z.loc[(20, "none break"), "coverage"] == 0.5
    assert z.loc[(20, "none break"), "mean lost on"] == 4.5
    assert z.loc[(20, "some break"), "coverage"] == 0.5
    assert math.isclose(z.loc[(20, "some break"), "mean error"], (-0.03 + 0.02) / 2)
