"""The intervals of the verbosity curves' bins (:func:`recuse.metrics.bootstrap.share_interval`
in :func:`recuse.metrics.verbosity.curve_table`)
against Wilson's score interval from statsmodels and a planted agreement.

The bootstrap's own BCa ends had zero width at 1 for a bin whose pairs all agree and
held a planted agreement of 0.9 / 0.7 in 0.65 of the bins of 5–9 pairs of simulated
tables of 51 pairs (``benchmarks/metric_coverage.py``, section ``curve bins``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.verbosity import human_alignment_curve, human_verbosity_curve
from recuse.tables import validate_pairs


def _table(human: np.ndarray, pick_a: np.ndarray, chosen: np.ndarray, rejected: np.ndarray,
           prompt: np.ndarray) -> pd.DataFrame:  # fmt: skip
    """One judged order per pair; ``chosen`` / ``rejected``: the lengths of the human's
    pick and of the other answer."""
    n = len(human)
    return validate_pairs(
        pd.DataFrame(
            {
                "item_id": [f"i{k}" for k in range(n)],
                "prompt_id": [f"p{p}" for p in prompt],
                "model_a": None,
                "model_b": None,
                "judge": "j",
                "human": human.astype(float),
                "p_a_first": pick_a.astype(float),
                "p_a_second": None,
                "p_a": None,
                "len_a": np.where(human > 0.5, chosen, rejected),
                "len_b": np.where(human > 0.5, rejected, chosen),
            }
        )
    )


def test_a_bin_whose_pairs_all_agree_reads_wilsons_interval_not_zero_width() -> None:
    """8 pairs on 8 prompts in the bin [0.4, 0.6), every one agreeing: the resamples all
    read 1, and the interval is Wilson's for 8 of 8 at 90% (statsmodels), 0.7473 to 1
    (hand: z = 1.6449, (1 + z²/16 − z²/16) / (1 + z²/8) = 0.7473), not [1, 1]."""
    n = 8
    human = np.ones(n)
    c = human_alignment_curve(
        _table(human, human, np.full(n, 150), np.full(n, 100), np.arange(n)),
        boot=Resampling(n_boot=300, seed=1),
    )
    assert c[["bin_low", "n", "mean"]].values.tolist() == [[pytest.approx(0.4), n, 1.0]]
    low, high = proportion_confint(n, n, alpha=0.1, method="wilson")
    assert (c["ci_low"].iloc[0], c["ci_high"].iloc[0]) == pytest.approx((low, high), abs=1e-9)
    assert low == pytest.approx(0.7473, abs=1e-4)


def test_a_bin_of_single_pair_prompts_reads_wilsons_interval_for_its_pairs() -> None:
    """14 of 20 pairs agree, each pair its own prompt: the bootstrap's standard error is
    √(p (1 − p) / n · (n − 1) / n), so the effective pairs are the 20 and the interval is
    Wilson's for 14 of 20 (0.516 to 0.836) to the resampling's error (4,000 resamples);
    the bootstrap's own BCa ends were off by more than 0.01. The human curve's bins, on
    its −1..+1 scale, read Wilson's intervals mapped by ``2 p − 1``."""
    n, k = 20, 14
    agree = np.arange(n) < k
    human = np.ones(n)
    t = _table(human, agree, np.full(n, 150), np.full(n, 100), np.arange(n))
    boot = Resampling(n_boot=4000, seed=3)
    c = human_alignment_curve(t, boot=boot)
    low, high = proportion_confint(k, n, alpha=0.1, method="wilson")
    assert (c["ci_low"].iloc[0], c["ci_high"].iloc[0]) == pytest.approx((low, high), abs=0.008)
    # human curve: a = chosen is longer for the agreeing pairs' humans, b for the others
    h = human_verbosity_curve(
        _table(agree.astype(float), agree, np.full(n, 150), np.full(n, 100), np.arange(n)),
        boot=boot,
    )
    # a longer by 50%: the human +1 on 14 pairs of 14 prompts, Wilson's 14 of 14 mapped
    row = h[h["bin_low"] > 0].iloc[0]
    assert (row["n"], row["mean"]) == (k, 1.0)
    low, high = proportion_confint(k, k, alpha=0.1, method="wilson")
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((2 * low - 1, 2 * high - 1))
    # b longer (x = −1/3): the human −1 on 6: Wilson's 0 of 6 mapped
    flipped = h[h["bin_low"] < 0].iloc[0]
    assert (flipped["n"], flipped["mean"]) == (n - k, -1.0)
    low, high = proportion_confint(0, n - k, alpha=0.1, method="wilson")
    assert (flipped["ci_low"], flipped["ci_high"]) == pytest.approx((2 * low - 1, 2 * high - 1))


def test_the_bins_hold_a_planted_agreement_about_nine_times_in_ten() -> None:
    """40 tables of 51 pairs on 1–3-pair prompts, a pick judge agreeing with the human
    0.9 of the time where the chosen answer is longer, 0.7 where shorter, shifted per
    prompt by Uniform(−0.1, 0.1): every bin of 5–19 pairs with an interval, pooled
    (about 190 bins), holds its planted value at least 0.85 of the time (measured 0.95
    at 300 tables; the BCa ends 0.71)."""
    held = []
    for r in range(40):
        rng = np.random.default_rng(500 + r)
        n = 51
        sizes = rng.choice([1, 2, 3], size=n, p=[0.65, 0.32, 0.03])
        prompt = np.repeat(np.arange(n), sizes)[:n]
        shift = rng.uniform(-0.1, 0.1, n)[prompt]
        human = (rng.random(n) < 0.5).astype(float)
        rejected = rng.integers(40, 300, n).astype(float)
        chosen = np.maximum(np.round(rejected * np.exp(rng.normal(0.05, 0.45, n))), 1.0)
        longer = chosen >= rejected
        agree = rng.random(n) < np.where(longer, 0.9, 0.7) + shift
        pick_a = np.where(human > 0.5, agree, ~agree)
        c = human_alignment_curve(
            _table(human, pick_a, chosen, rejected, prompt), boot=Resampling(n_boot=200, seed=r)
        )
        c = c[c["ci_low"].notna() & (c["n"] < 20)]
        truth = np.where(c["bin_low"] >= 0, 0.9, 0.7)
        held += list((c["ci_low"] <= truth) & (truth <= c["ci_high"]))
    assert len(held) >= 120
    assert np.mean(held) >= 0.85, (np.mean(held), len(held))


@pytest.mark.parametrize("clusters", [1, 2, 5, 9, 15, 33])
def test_share_interval_is_wilsons_and_holds_its_estimate_at_zero_and_one(clusters: int) -> None:
    """Every pair reads 0 (or 1), so the resamples do not vary (standard error 0): the
    interval is Wilson's for 0 of G (G of G) prompts, statsmodels' ``proportion_confint``,
    closed at the estimate. The formula's rounding gave 0 [1.4e-17, 0.15] at 15 prompts
    (the ladder's harmful_own_both on JudgeBench: an interval that does not hold its
    estimate) and 1 [0.65, 0.99999999999999989] at 5; one prompt read Wilson's for two
    (0.425, not 0.270)."""
    from recuse.metrics.bootstrap import share_interval

    for p, k in ((0.0, 0), (1.0, clusters)):
        low, high = share_interval(p, n=clusters, std_error=0.0, clusters=clusters, level=0.9)
        want = proportion_confint(k, clusters, alpha=0.1, method="wilson")
        assert (low, high) == pytest.approx(want, abs=1e-12)
        assert low <= p <= high
        assert (low if p == 0 else high) == p  # exactly, not to rounding
    # on the −1..+1 scale of the verbosity curves, mapped by 2 p − 1, the same holds
    low, high = share_interval(-1.0, n=15, std_error=0.0, clusters=15, level=0.9, span=(-1, 1))
    wilson = proportion_confint(0, 15, alpha=0.1, method="wilson")
    assert low == -1.0 and high == pytest.approx(2 * wilson[1] - 1)


def test_share_interval_at_a_non_integer_effective_n_and_level_99() -> None:
    """p = 0.3 with a bootstrap standard error of 0.08 over 20 prompts: s = 0.08 √(20/19),
    m = 0.21 / s² = 31.17 effective pairs, and the interval is statsmodels' Wilson for
    0.3 · m of m at 90% and 99% (it accepts a count that is not whole). A standard error
    that is not a number (no resamples) gives no interval, where it read Wilson's at G."""
    import math

    from recuse.metrics.bootstrap import share_interval

    m = 0.21 / (0.08**2 * 20 / 19)
    for level in (0.9, 0.99):
        got = share_interval(0.3, n=40, std_error=0.08, clusters=20, level=level)
        assert got == pytest.approx(
            proportion_confint(0.3 * m, m, alpha=1 - level, method="wilson"), abs=1e-12
        )
    low, high = share_interval(0.3, n=40, std_error=math.nan, clusters=20, level=0.9)
    assert math.isnan(low) and math.isnan(high)


def test_a_bin_whose_pairs_all_read_one_inner_value_is_wilsons_at_its_prompts() -> None:
    """13 pairs on 13 prompts, the human giving each longer answer 0.7 of the votes: every
    pair reads 2 · 0.7 − 1 = 0.4, the resamples' means all 0.4 but for rounding (a
    standard error of about 1e-17), which read as 10³² effective pairs: 0.4 [0.4, 0.4]
    (the bootstrap's own zero width). Now Wilson's for 0.7 of 13 (statsmodels), mapped by
    2 p − 1: −0.055 to 0.718."""
    n = 13
    h = human_verbosity_curve(
        _table(np.full(n, 0.7), np.ones(n), np.full(n, 150), np.full(n, 100), np.arange(n)),
        boot=Resampling(n_boot=300, seed=1),
    )
    (row,) = h.itertuples()
    assert (row.n, row.n_clusters, row.mean) == (n, n, pytest.approx(0.4))
    low, high = proportion_confint(0.7 * n, n, alpha=0.1, method="wilson")
    assert (row.ci_low, row.ci_high) == pytest.approx((2 * low - 1, 2 * high - 1), abs=1e-9)
    assert (round(row.ci_low, 3), round(row.ci_high, 3)) == (-0.055, 0.718)
